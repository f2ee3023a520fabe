/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vs_search (search.h).  The list of entries is a doubly linked list over
 * an array with a sentinel: lifting an operation out unlinks its entries,
 * and backtracking puts them back in the reverse order.  The memo holds the
 * canonical bytes of (state, linearized set); the linearized set is written
 * relative to its first gap: the first operation not yet linearized, then
 * the bits of those after it that are (every operation linearized before a
 * gap overlaps the gap's operation, so that window stays small).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search.h"

#define SUCC_CAP 256
#define DEFAULT_MAX_ENDS 4096

uint64_t vs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* --- The memo: a set of byte strings --------------------------------------- */

struct slot {
	uint64_t hash;
	uint32_t offset;
	uint32_t length; /* 0: empty */
};

struct memo {
	struct slot *slots;
	size_t mask;
	size_t count;
	uint8_t *bytes;
	size_t used;
	size_t capacity;
};

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15u ^ n;

	while (n >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdu;
		h ^= h >> 32;
		p += 8;
		n -= 8;
	}
	if (n) {
		uint64_t w = 0;

		memcpy(&w, p, n);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9u;
	return h ^ (h >> 31);
}

static size_t memo_bytes(const struct memo *m)
{
	return (m->mask + 1) * sizeof(struct slot) + m->capacity;
}

static int memo_grow(struct memo *m)
{
	size_t size = m->slots ? 2 * (m->mask + 1) : 1 << 12;
	struct slot *slots = calloc(size, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; m->slots && i <= m->mask; i++) {
		size_t j;

		if (!m->slots[i].length)
			continue;
		for (j = m->slots[i].hash & (size - 1); slots[j].length; j = (j + 1) & (size - 1))
			;
		slots[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = slots;
	m->mask = size - 1;
	return 0;
}

/* 1 if the key was new (and is now in), 0 if seen, -ENOMEM. */
static int memo_insert(struct memo *m, const uint8_t *key, size_t n)
{
	uint64_t h = hash_bytes(key, n);
	size_t j;

	if (!m->slots || 2 * (m->count + 1) > m->mask + 1)
		if (memo_grow(m))
			return -ENOMEM;
	for (j = h & m->mask; m->slots[j].length; j = (j + 1) & m->mask)
		if (m->slots[j].hash == h && m->slots[j].length == n &&
		    !memcmp(m->bytes + m->slots[j].offset, key, n))
			return 0;
	if (m->used + n > m->capacity) {
		size_t capacity = m->capacity ? 2 * m->capacity : 1 << 16;
		uint8_t *bytes;

		while (capacity < m->used + n)
			capacity *= 2;
		if (capacity > UINT32_MAX || !(bytes = realloc(m->bytes, capacity)))
			return -ENOMEM;
		m->bytes = bytes;
		m->capacity = capacity;
	}
	memcpy(m->bytes + m->used, key, n);
	m->slots[j].hash = h;
	m->slots[j].offset = (uint32_t)m->used;
	m->slots[j].length = (uint32_t)n;
	m->used += n;
	m->count++;
	return 1;
}

static void memo_free(struct memo *m)
{
	free(m->slots);
	free(m->bytes);
	memset(m, 0, sizeof(*m));
}

/* --- The search -------------------------------------------------------------- */

struct frame {
	uint32_t op;
	uint32_t entry;    /* the call entry it stepped */
	uint8_t phase;     /* the operation's progress before: 0 untouched, 1 begun */
	uint8_t done;      /* the applied successor returned the operation */
	uint32_t next;     /* the applied successor */
	uint32_t count;    /* successors */
	uint32_t skip;     /* the successor that leaves an optional operation out, or UINT32_MAX */
	size_t saved;      /* pool offset of the state before (its key) */
	size_t succ;       /* pool offset of the successors: [done][result][len][key] each */
	size_t top;        /* pool top before the frame */
};

struct search {
	const struct vs_problem *p;
	struct nt_model model;
	uint32_t nentries;  /* the sentinel is entry nentries */
	uint32_t *entry_op;
	uint8_t *entry_ret;
	uint32_t *next, *prev;
	uint32_t *call_entry, *ret_entry;
	uint8_t *progress;  /* per op: 0 untouched, 1 begun, 2 linearized */
	uint64_t *lifted;   /* bitset */
	uint32_t low;       /* first op not linearized */
	uint32_t high;      /* one past the last op linearized */
	uint32_t remaining; /* return entries still in the list */
	struct nt_state cur;
	struct memo memo;
	struct frame *frames;
	uint32_t nframes, frames_cap;
	uint8_t *pool;
	size_t pool_top, pool_cap;
	uint8_t *key;
	struct nt_state *succ_states;
	struct nt_result *succ_results;
	bool *succ_done;
	uint64_t iterations;
	size_t peak;
	const char *unknown;
	struct vs_outcome *out;
	uint64_t best;      /* the score of the kept trace */
	uint32_t start;
};

/* Does taking effect with its recorded result leave every object as it was? */
static bool inert(const struct vs_op *o)
{
	switch (o->result.status) {
	case NT_TIMEOUT:
	case NT_EBADF:
	case NT_EPERM:
	case NT_EOVERFLOW:
	case NT_EINVAL:
	case NT_ECANCELED:
		return true;
	default:
		return o->call.kind == NT_READ;
	}
}

static bool accept(void *ctx, uint32_t op, const struct nt_result *r)
{
	const struct vs_op *o = &((const struct search *)ctx)->p->ops[op];

	return o->pending || nt_result_match(&o->result, r);
}

static int cmp_entry(const void *a, const void *b, void *ctx)
{
	const struct search *s = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct vs_op *ox = &s->p->ops[s->entry_op[x]], *oy = &s->p->ops[s->entry_op[y]];
	uint64_t tx = s->entry_ret[x] ? ox->ret : ox->invoke;
	uint64_t ty = s->entry_ret[y] ? oy->ret : oy->invoke;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	/* Calls first at equal keys: concurrent. */
	if (s->entry_ret[x] != s->entry_ret[y])
		return s->entry_ret[x] ? 1 : -1;
	return x < y ? -1 : x > y;
}

static void unlink_entry(struct search *s, uint32_t e)
{
	s->next[s->prev[e]] = s->next[e];
	s->prev[s->next[e]] = s->prev[e];
}

static void relink_entry(struct search *s, uint32_t e)
{
	s->next[s->prev[e]] = e;
	s->prev[s->next[e]] = e;
}

static bool bit(const uint64_t *b, uint32_t i)
{
	return (b[i >> 6] >> (i & 63)) & 1;
}

static void lift(struct search *s, uint32_t op)
{
	s->lifted[op >> 6] |= 1ull << (op & 63);
	if (op == s->low)
		while (s->low < s->p->nops && bit(s->lifted, s->low))
			s->low++;
	if (op + 1 > s->high)
		s->high = op + 1;
}

static void unlift(struct search *s, uint32_t op)
{
	s->lifted[op >> 6] &= ~(1ull << (op & 63));
	if (op < s->low)
		s->low = op;
	if (op + 1 == s->high)
		while (s->high > s->low && !bit(s->lifted, s->high - 1))
			s->high--;
}

/* The memo key of (state, linearized set). */
static size_t make_key(const struct search *s, const struct nt_state *st)
{
	uint8_t *k = s->key;
	size_t n = nt_state_digest(st, k);
	uint32_t low = s->low;

	memcpy(k + n, &low, sizeof(low));
	n += sizeof(low);
	for (uint32_t b = low + 1; b < s->high; b += 64) {
		uint32_t w = b >> 6, sh = b & 63;
		uint64_t v = s->lifted[w] >> sh;

		if (sh && b + (64 - sh) < s->high)
			v |= s->lifted[w + 1] << (64 - sh);
		if (s->high - b < 64)
			v &= (1ull << (s->high - b)) - 1;
		memcpy(k + n, &v, sizeof(v));
		n += sizeof(v);
	}
	return n;
}

static int pool_reserve(struct search *s, size_t n)
{
	if (s->pool_top + n <= s->pool_cap)
		return 0;
	size_t cap = s->pool_cap ? 2 * s->pool_cap : 1 << 16;
	uint8_t *pool;

	while (cap < s->pool_top + n)
		cap *= 2;
	if (!(pool = realloc(s->pool, cap)))
		return -ENOMEM;
	s->pool = pool;
	s->pool_cap = cap;
	return 0;
}

static size_t usage(const struct search *s)
{
	return memo_bytes(&s->memo) + s->pool_cap + s->frames_cap * sizeof(struct frame);
}

static bool over_limits(struct search *s)
{
	size_t used = usage(s);

	if (used > s->peak)
		s->peak = used;
	if (s->p->memory_limit && used > s->p->memory_limit) {
		s->unknown = "memory";
		return true;
	}
	if (s->p->deadline_ns && vs_now_ns() > s->p->deadline_ns) {
		s->unknown = "time";
		return true;
	}
	return false;
}

/* Successor i of frame f: its state, whether it returned the op, its result. */
static void successor(const struct search *s, const struct frame *f, uint32_t i, struct nt_state *st,
		      uint8_t *done, struct nt_result *result)
{
	size_t at = f->succ;

	for (;;) {
		uint16_t len;

		memcpy(&len, s->pool + at + 1 + sizeof(*result), sizeof(len));
		if (i-- == 0) {
			*done = s->pool[at];
			memcpy(result, s->pool + at + 1, sizeof(*result));
			nt_state_unkey(s->pool + at + 1 + sizeof(*result) + sizeof(len), st);
			return;
		}
		at += 1 + sizeof(*result) + sizeof(len) + len;
	}
}

/* Pushes a frame for stepping `op` at `entry`: the current state and every successor. */
static int push_frame(struct search *s, uint32_t op, uint32_t entry, unsigned count, uint32_t skip)
{
	struct frame *f;
	size_t n;

	if (s->nframes == s->frames_cap) {
		uint32_t cap = s->frames_cap ? 2 * s->frames_cap : 1024;
		struct frame *frames = realloc(s->frames, cap * sizeof(*frames));

		if (!frames)
			return -ENOMEM;
		s->frames = frames;
		s->frames_cap = cap;
	}
	f = &s->frames[s->nframes++];
	f->op = op;
	f->entry = entry;
	f->phase = s->progress[op];
	f->count = count;
	f->skip = skip;
	f->top = s->pool_top;
	if (pool_reserve(s, nt_key_max()))
		return -ENOMEM;
	f->saved = s->pool_top;
	s->pool_top += nt_state_key(&s->cur, s->pool + s->pool_top);
	f->succ = s->pool_top;
	for (unsigned i = 0; i < count; i++) {
		uint16_t len;
		size_t at;

		if (pool_reserve(s, 1 + sizeof(struct nt_result) + sizeof(len) + nt_key_max()))
			return -ENOMEM;
		at = s->pool_top;
		s->pool[at] = s->succ_done[i];
		memcpy(s->pool + at + 1, &s->succ_results[i], sizeof(struct nt_result));
		n = nt_state_key(&s->succ_states[i], s->pool + at + 1 + sizeof(struct nt_result) + sizeof(len));
		len = (uint16_t)n;
		memcpy(s->pool + at + 1 + sizeof(struct nt_result), &len, sizeof(len));
		s->pool_top += 1 + sizeof(struct nt_result) + sizeof(len) + n;
	}
	return 0;
}

static void apply_done(struct search *s, uint32_t op)
{
	unlink_entry(s, s->call_entry[op]);
	if (s->ret_entry[op] != UINT32_MAX) {
		unlink_entry(s, s->ret_entry[op]);
		s->remaining--;
	}
	s->progress[op] = 2;
}

/* Undoes the applied successor of the top frame (the state comes back too). */
static void undo(struct search *s, struct frame *f)
{
	if (f->done) {
		if (s->ret_entry[f->op] != UINT32_MAX) {
			relink_entry(s, s->ret_entry[f->op]);
			s->remaining++;
		}
		relink_entry(s, s->call_entry[f->op]);
		unlift(s, f->op);
	}
	s->progress[f->op] = f->phase;
	nt_state_unkey(s->pool + f->saved, &s->cur);
}

/* Applies the first successor from `from` on whose (state, set) the memo has not seen: 1, 0, -ENOMEM. */
static int try_from(struct search *s, struct frame *f, uint32_t from)
{
	for (uint32_t i = from; i < f->count; i++) {
		struct nt_state st;
		struct nt_result result;
		uint8_t done;
		int fresh;

		successor(s, f, i, &st, &done, &result);
		if (done)
			lift(s, f->op);
		fresh = memo_insert(&s->memo, s->key, make_key(s, &st));
		if (fresh <= 0) {
			if (done)
				unlift(s, f->op);
			if (fresh < 0)
				return fresh;
			continue;
		}
		s->out->nodes++;
		f->next = i;
		f->done = done;
		nt_state_copy(&s->cur, &st);
		if (done)
			apply_done(s, f->op);
		else
			s->progress[f->op] = 1;
		return 1;
	}
	return 0;
}

static void pop_frame(struct search *s)
{
	s->pool_top = s->frames[--s->nframes].top;
}

static int add_end(struct search *s)
{
	struct vs_outcome *out = s->out;
	uint32_t max = s->p->max_ends ? s->p->max_ends : DEFAULT_MAX_ENDS;

	for (uint32_t i = 0; i < out->nends; i++)
		if (nt_state_equal(&out->ends[i], &s->cur))
			return 0;
	if (out->nends == max) {
		s->unknown = "too many end states";
		return -1;
	}
	if (!(out->nends & (out->nends + 1)) || !out->ends) {
		struct nt_state *ends = realloc(out->ends, (2 * out->nends + 2) * sizeof(*ends));

		if (!ends)
			return -ENOMEM;
		out->ends = ends;
	}
	nt_state_copy(&out->ends[out->nends++], &s->cur);
	return 0;
}

/*
 * The explanation kept for a failure: the partial linearization with the
 * most steps of operations that are not optional, and among those the one
 * that makes the fewest optional operations take effect.
 */
static void keep_deepest(struct search *s, uint32_t stuck)
{
	struct vs_outcome *out = s->out;
	struct vs_step *trace;
	uint64_t score = 0;

	for (uint32_t i = 0; i < s->nframes; i++) {
		const struct frame *f = &s->frames[i];

		if (!s->p->ops[f->op].optional)
			score += 1ull << 20;
		else if (f->next != f->skip)
			score -= 1;
	}
	score += (1ull << 19); /* above any count of optional steps: 0 means none kept yet */
	if (score <= s->best)
		return;
	trace = realloc(out->trace, (s->nframes + 1) * sizeof(*trace));
	if (!trace)
		return;
	out->trace = trace;
	for (uint32_t i = 0; i < s->nframes; i++) {
		const struct frame *f = &s->frames[i];
		struct nt_state st;
		uint8_t done;

		trace[i].op = f->op;
		trace[i].phase = f->phase ? NT_END : NT_BEGIN;
		trace[i].skipped = f->next == f->skip;
		successor(s, f, f->next, &st, &done, &trace[i].result);
		trace[i].done = done;
	}
	out->ntrace = s->nframes;
	out->stuck = stuck;
	out->start = s->start;
	nt_state_copy(&out->at, &s->cur);
	s->best = score;
}

static void debug_linearization(const struct search *s)
{
	fprintf(stderr, "linearization of %u ops:", s->p->nops);
	for (uint32_t i = 0; i < s->nframes; i++) {
		const struct frame *f = &s->frames[i];

		fprintf(stderr, " %u%s%s", s->p->ops[f->op].tag, f->next == f->skip ? "s" : "",
			f->phase ? "e" : "");
	}
	fprintf(stderr, "\n");
}

/* One search from one start state: VS_OK, VS_FAIL or VS_UNKNOWN. */
static enum vs_verdict run(struct search *s, const struct nt_state *start)
{
	const struct vs_problem *p = s->p;
	uint32_t sentinel = s->nentries, e;
	int ret;

	memset(s->progress, 0, p->nops);
	memset(s->lifted, 0, ((p->nops + 63) / 64 + 1) * sizeof(uint64_t));
	s->low = s->high = 0;
	s->remaining = 0;
	for (uint32_t i = 0; i < p->nops; i++)
		s->remaining += s->ret_entry[i] != UINT32_MAX;
	s->nframes = 0;
	s->pool_top = 0;
	nt_state_copy(&s->cur, start);
	if (memo_insert(&s->memo, s->key, make_key(s, &s->cur)) == 0)
		return VS_FAIL; /* this start was explored already, from an equal state */
	e = s->next[sentinel];
	for (;;) {
		if ((++s->iterations & 1023) == 0 && over_limits(s))
			return VS_UNKNOWN;
		if (p->max_nodes && s->out->nodes > p->max_nodes) {
			s->unknown = "steps";
			return VS_UNKNOWN;
		}
		if (s->remaining == 0) {
			if (!p->collect) {
				if (getenv("VERIFY_DEBUG_LIN"))
					debug_linearization(s);
				return VS_OK;
			}
			if ((ret = add_end(s)))
				return ret == -ENOMEM ? (s->unknown = "memory", VS_UNKNOWN) : VS_UNKNOWN;
			goto backtrack;
		}
		if (e == sentinel)
			goto backtrack;
		if (!s->entry_ret[e]) {
			uint32_t op = s->entry_op[e];
			const struct vs_op *o = &p->ops[op];
			struct nt_successors succ = { s->succ_states, s->succ_results, s->succ_done, SUCC_CAP, 0, false };
			unsigned n = 0;
			uint32_t skip = UINT32_MAX;

			/*
			 * An optional operation whose result changes nothing (a
			 * read, a timeout, an error) only adds constraints when
			 * it takes effect: leaving it out is always as good.
			 */
			if (!o->impossible && !(o->optional && !s->progress[op] && inert(o)))
				n = nt_step(&s->model, &s->cur, op, s->progress[op] ? NT_END : NT_BEGIN,
					    o->pending ? NULL : &o->result, &succ);
			if (succ.overflow) {
				s->unknown = "model branching";
				return VS_UNKNOWN;
			}
			/*
			 * An optional operation not begun may also never take
			 * effect: tried first, so that an explanation uses as
			 * few of them as it can.
			 */
			if (o->optional && !s->progress[op] && n < SUCC_CAP) {
				memmove(&s->succ_states[1], &s->succ_states[0], n * sizeof(s->succ_states[0]));
				memmove(&s->succ_results[1], &s->succ_results[0], n * sizeof(s->succ_results[0]));
				memmove(&s->succ_done[1], &s->succ_done[0], n * sizeof(s->succ_done[0]));
				nt_state_copy(&s->succ_states[0], &s->cur);
				memset(&s->succ_results[0], 0, sizeof(s->succ_results[0]));
				s->succ_done[0] = true;
				skip = 0;
				n++;
			}
			if (n == 0) {
				e = s->next[e];
				continue;
			}
			if (push_frame(s, op, e, n, skip)) {
				s->unknown = "memory";
				return VS_UNKNOWN;
			}
			ret = try_from(s, &s->frames[s->nframes - 1], 0);
			if (ret < 0) {
				s->unknown = "memory";
				return VS_UNKNOWN;
			}
			if (ret) {
				e = s->next[sentinel];
				continue;
			}
			pop_frame(s);
			e = s->next[e];
			continue;
		}
		if (p->trace)
			keep_deepest(s, s->entry_op[e]);
backtrack:
		for (;;) {
			struct frame *f;

			if (s->nframes == 0)
				return VS_FAIL;
			f = &s->frames[s->nframes - 1];
			undo(s, f);
			ret = try_from(s, f, f->next + 1);
			if (ret < 0) {
				s->unknown = "memory";
				return VS_UNKNOWN;
			}
			if (ret) {
				e = s->next[sentinel];
				break;
			}
			e = s->next[f->entry];
			pop_frame(s);
			break;
		}
	}
}

int vs_search(const struct vs_problem *p, struct vs_outcome *out)
{
	struct search s;
	uint32_t *order = NULL;
	bool unknown = false, ok = false;
	int ret = -ENOMEM;

	memset(out, 0, sizeof(*out));
	memset(&s, 0, sizeof(s));
	s.p = p;
	s.out = out;
	s.model.ops = NULL;
	s.model.accept = accept;
	s.model.ctx = &s;
	s.nentries = 0;
	for (uint32_t i = 0; i < p->nops; i++)
		s.nentries += 1 + !p->ops[i].pending;
	/* The model indexes operations by id: hand it the calls. */
	struct nt_op *calls = malloc((p->nops + 1) * sizeof(*calls));
	s.entry_op = malloc((s.nentries + 1) * sizeof(uint32_t));
	s.entry_ret = malloc(s.nentries + 1);
	s.next = malloc((s.nentries + 1) * sizeof(uint32_t));
	s.prev = malloc((s.nentries + 1) * sizeof(uint32_t));
	s.call_entry = malloc((p->nops + 1) * sizeof(uint32_t));
	s.ret_entry = malloc((p->nops + 1) * sizeof(uint32_t));
	s.progress = malloc(p->nops + 1);
	s.lifted = calloc((p->nops + 63) / 64 + 2, sizeof(uint64_t));
	s.key = malloc(nt_key_max() + 16 + (p->nops / 64 + 2) * 8);
	s.succ_states = malloc(SUCC_CAP * sizeof(struct nt_state));
	s.succ_results = malloc(SUCC_CAP * sizeof(struct nt_result));
	s.succ_done = malloc(SUCC_CAP * sizeof(bool));
	order = malloc((s.nentries + 1) * sizeof(uint32_t));
	if (!calls || !s.entry_op || !s.entry_ret || !s.next || !s.prev || !s.call_entry ||
	    !s.ret_entry || !s.progress || !s.lifted || !s.key || !s.succ_states ||
	    !s.succ_results || !s.succ_done || !order)
		goto done;
	for (uint32_t i = 0; i < p->nops; i++)
		calls[i] = p->ops[i].call;
	s.model.ops = calls;
	{
		uint32_t e = 0;

		for (uint32_t i = 0; i < p->nops; i++) {
			s.entry_op[e] = i;
			s.entry_ret[e] = 0;
			e++;
			if (!p->ops[i].pending) {
				s.entry_op[e] = i;
				s.entry_ret[e] = 1;
				e++;
			}
		}
	}
	for (uint32_t i = 0; i < s.nentries; i++)
		order[i] = i;
	qsort_r(order, s.nentries, sizeof(*order), cmp_entry, &s);
	/* Link in time order; each op's entries by their place in it. */
	{
		uint32_t prev = s.nentries;

		for (uint32_t k = 0; k < s.nentries; k++) {
			uint32_t e = order[k];

			s.prev[e] = prev;
			s.next[prev] = e;
			prev = e;
		}
		s.next[prev] = s.nentries;
		s.prev[s.nentries] = prev;
		if (s.nentries == 0)
			s.next[0] = s.prev[0] = 0;
	}
	for (uint32_t i = 0; i < p->nops; i++)
		s.ret_entry[i] = UINT32_MAX;
	for (uint32_t e = 0; e < s.nentries; e++) {
		if (s.entry_ret[e])
			s.ret_entry[s.entry_op[e]] = e;
		else
			s.call_entry[s.entry_op[e]] = e;
	}
	/* Each run starts from the full list: keep it. */
	{
		uint32_t *next0 = malloc((s.nentries + 1) * sizeof(uint32_t));
		uint32_t *prev0 = malloc((s.nentries + 1) * sizeof(uint32_t));

		if (!next0 || !prev0) {
			free(next0);
			free(prev0);
			goto done;
		}
		memcpy(next0, s.next, (s.nentries + 1) * sizeof(uint32_t));
		memcpy(prev0, s.prev, (s.nentries + 1) * sizeof(uint32_t));
		for (uint32_t i = 0; i < p->nstarts && !(ok && !p->collect); i++) {
			enum vs_verdict v;

			memcpy(s.next, next0, (s.nentries + 1) * sizeof(uint32_t));
			memcpy(s.prev, prev0, (s.nentries + 1) * sizeof(uint32_t));
			s.start = i;
			v = run(&s, &p->starts[i]);
			if (v == VS_OK)
				ok = true;
			else if (v == VS_UNKNOWN)
				unknown = true;
			if (unknown)
				break;
		}
		free(next0);
		free(prev0);
	}
	if (p->collect)
		out->verdict = unknown ? VS_UNKNOWN : out->nends ? VS_OK : VS_FAIL;
	else
		out->verdict = ok ? VS_OK : unknown ? VS_UNKNOWN : VS_FAIL;
	out->unknown = out->verdict == VS_UNKNOWN ? s.unknown : NULL;
	ret = 0;
done:
	out->memory = s.peak > usage(&s) ? s.peak : usage(&s);
	memo_free(&s.memo);
	free(calls);
	free(s.entry_op);
	free(s.entry_ret);
	free(s.next);
	free(s.prev);
	free(s.call_entry);
	free(s.ret_entry);
	free(s.progress);
	free(s.lifted);
	free(s.key);
	free(s.succ_states);
	free(s.succ_results);
	free(s.succ_done);
	free(s.frames);
	free(s.pool);
	free(order);
	return ret;
}

void vs_outcome_free(struct vs_outcome *out)
{
	free(out->ends);
	free(out->trace);
	out->ends = NULL;
	out->trace = NULL;
	out->nends = out->ntrace = 0;
}
