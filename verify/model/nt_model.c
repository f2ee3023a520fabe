/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The NT model's steps (nt_model.h).  The rules, as the tests in
 * verify/tests/test_model.c state them one by one:
 *
 * - An object is ready for a wait when it is an event that is signaled, a
 *   semaphore whose count is above 0, or a mutex that is free or owned by
 *   the waiting owner (recursion).  A closed object keeps its state for
 *   the waits already blocked on it (in NT they hold a reference to it).
 * - To acquire: an auto-reset event is reset (a manual one stays set), a
 *   semaphore loses one unit, a mutex becomes the owner's (once more if it
 *   is already); an abandoned mutex is acquired with WAIT_ABANDONED and is
 *   no longer abandoned.
 * - Wait-any acquires the lowest-index ready object (the alert after all
 *   objects); wait-all acquires every object at once or none, or else the
 *   alert alone.  A poll that acquires nothing times out at once; any other
 *   wait blocks.
 * - A signal (set, pulse, release, unlock to 0, kill, death) hands the
 *   object, inside its own step, to blocked waits that it makes ready, in
 *   any order NT might pick, until no blocked wait is ready: a blocked wait
 *   never stays blocked on something it could acquire.
 * - Pulse: set, the hand-off, reset: only waits blocked before it are
 *   released (all it can satisfy for a manual event, one for auto reset).
 * - A blocked wait returns what it was handed, or times out if nothing was
 *   (never, without a timeout).
 * - Death of an owner: its blocked waits end (ECANCELED), each mutex it
 *   holds is abandoned (free, recursion count 0) and handed on, one after
 *   the other in any order.
 * - Close: every later use of the handle is EBADF; a wait blocked on the
 *   object goes on waiting, and may still take it (a wait-all, with the
 *   rest of its objects).  MSDN leaves this undefined; Windows and Wine's
 *   server keep the object alive while a wait holds it.  winsync does not
 *   (ws_close(3): the slot is freed at once), which a checker can meet
 *   only when a wait-all blocked on a closed object that was ready.
 */
#include <string.h>

#include "nt_model.h"

void nt_state_init(struct nt_state *s)
{
	memset(s, 0, sizeof(*s));
}

int nt_state_add(struct nt_state *s, const struct nt_object *o)
{
	if (s->nobjects >= NT_MAX_OBJECTS || o->type > NT_MUTEX)
		return -1;
	if (o->type == NT_SEM && (o->max == 0 || o->count > o->max))
		return -1;
	if (o->type == NT_MUTEX && (o->owner == 0) != (o->count == 0))
		return -1;
	s->obj[s->nobjects] = *o;
	s->obj[s->nobjects].pad = 0;
	return (int)s->nobjects++;
}

void nt_state_copy(struct nt_state *dst, const struct nt_state *src)
{
	dst->nobjects = src->nobjects;
	dst->nwaiters = src->nwaiters;
	memcpy(dst->obj, src->obj, src->nobjects * sizeof(src->obj[0]));
	memcpy(dst->wait, src->wait, src->nwaiters * sizeof(src->wait[0]));
}

bool nt_state_equal(const struct nt_state *a, const struct nt_state *b)
{
	return a->nobjects == b->nobjects && a->nwaiters == b->nwaiters &&
	       !memcmp(a->obj, b->obj, a->nobjects * sizeof(a->obj[0])) &&
	       !memcmp(a->wait, b->wait, a->nwaiters * sizeof(a->wait[0]));
}

size_t nt_key_max(void)
{
	return 2 + NT_MAX_OBJECTS * sizeof(struct nt_object) + NT_MAX_WAITERS * sizeof(struct nt_waiter);
}

size_t nt_state_key(const struct nt_state *s, uint8_t *buf)
{
	size_t n = 0, size;

	buf[n++] = (uint8_t)s->nobjects;
	buf[n++] = (uint8_t)s->nwaiters;
	size = s->nobjects * sizeof(s->obj[0]);
	memcpy(buf + n, s->obj, size);
	n += size;
	size = s->nwaiters * sizeof(s->wait[0]);
	memcpy(buf + n, s->wait, size);
	return n + size;
}

void nt_state_unkey(const uint8_t *buf, struct nt_state *s)
{
	size_t n = 2;

	s->nobjects = buf[0];
	s->nwaiters = buf[1];
	memcpy(s->obj, buf + n, s->nobjects * sizeof(s->obj[0]));
	n += s->nobjects * sizeof(s->obj[0]);
	memcpy(s->wait, buf + n, s->nwaiters * sizeof(s->wait[0]));
}

static size_t varint(uint8_t *buf, uint32_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		buf[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	buf[n++] = (uint8_t)v;
	return n;
}

size_t nt_state_digest(const struct nt_state *s, uint8_t *buf)
{
	size_t n = 0;

	/* The count first: what follows the digest in a memo key cannot pass for a waiter. */
	buf[n++] = (uint8_t)s->nwaiters;
	for (uint32_t i = 0; i < s->nobjects; i++) {
		const struct nt_object *o = &s->obj[i];

		buf[n++] = (uint8_t)(o->type << 4 | o->flags);
		if (o->type == NT_SEM) {
			n += varint(buf + n, o->count);
		} else if (o->type == NT_MUTEX) {
			n += varint(buf + n, o->owner);
			n += varint(buf + n, o->count);
		}
	}
	for (uint32_t i = 0; i < s->nwaiters; i++) {
		n += varint(buf + n, s->wait[i].op);
		buf[n++] = s->wait[i].status;
		buf[n++] = s->wait[i].index;
	}
	return n;
}

static int find_waiter(const struct nt_state *s, uint32_t op)
{
	for (uint32_t i = 0; i < s->nwaiters; i++)
		if (s->wait[i].op == op)
			return (int)i;
	return -1;
}

bool nt_state_waiting(const struct nt_state *s, uint32_t op)
{
	return find_waiter(s, op) >= 0;
}

bool nt_result_match(const struct nt_result *want, const struct nt_result *got)
{
	unsigned both = want->known & got->known;

	if (want->status != got->status)
		return false;
	for (unsigned i = 0; i < 2; i++)
		if ((both & (1u << i)) && want->v[i] != got->v[i])
			return false;
	return true;
}

static bool obj_ready(const struct nt_object *o, uint32_t owner)
{
	switch (o->type) {
	case NT_EVENT:
		return o->flags & NT_SIGNALED;
	case NT_SEM:
		return o->count > 0;
	default:
		return o->owner == 0 || o->owner == owner;
	}
}

bool nt_ready(const struct nt_state *s, uint32_t index, uint32_t owner)
{
	return index < s->nobjects && obj_ready(&s->obj[index], owner);
}

/* Acquires a ready object; true when it was an abandoned mutex. */
static bool obj_take(struct nt_object *o, uint32_t owner)
{
	bool abandoned = false;

	switch (o->type) {
	case NT_EVENT:
		if (!(o->flags & NT_MANUAL))
			o->flags &= (uint8_t)~NT_SIGNALED;
		break;
	case NT_SEM:
		o->count--;
		break;
	default:
		abandoned = o->flags & NT_ABANDONED;
		o->flags &= (uint8_t)~NT_ABANDONED;
		o->owner = owner;
		o->count++;
		break;
	}
	return abandoned;
}

/*
 * What a wait would acquire in s now: its index (op->nobj for the alert),
 * or -1 for nothing.  Wait-any: the lowest-index ready object, then the
 * alert.  Wait-all: every object, else the alert.
 */
static int wait_pick(const struct nt_state *s, const struct nt_op *op)
{
	if (op->kind == NT_WAIT_ANY) {
		for (unsigned i = 0; i < op->nobj; i++)
			if (obj_ready(&s->obj[op->obj[i]], op->owner))
				return (int)i;
	} else {
		unsigned i;

		for (i = 0; i < op->nobj; i++)
			if (!obj_ready(&s->obj[op->obj[i]], op->owner))
				break;
		if (i == op->nobj)
			return 0;
	}
	if (op->has_alert && obj_ready(&s->obj[op->alert], op->owner))
		return op->nobj;
	return -1;
}

/* Acquires what wait_pick chose; the wait's status. */
static uint8_t wait_take(struct nt_state *s, const struct nt_op *op, int index)
{
	bool abandoned = false;

	if ((unsigned)index == op->nobj && (op->has_alert && (op->kind == NT_WAIT_ANY || op->nobj > 0)))
		abandoned = obj_take(&s->obj[op->alert], op->owner);
	else if (op->kind == NT_WAIT_ANY)
		abandoned = obj_take(&s->obj[op->obj[index]], op->owner);
	else
		for (unsigned i = 0; i < op->nobj; i++)
			abandoned |= obj_take(&s->obj[op->obj[i]], op->owner);
	return abandoned ? NT_ABANDONED_WAIT : NT_OK;
}

/* --- Successors and hand-offs ------------------------------------------ */

struct step {
	const struct nt_model *m;
	struct nt_successors *out;
	struct nt_result result; /* the stepping operation's own result */
	bool done;
	bool clear_after;        /* pulse: reset the event once the hand-off is over */
	uint16_t pulsed;
	uint32_t dying;          /* NT_DIE: the owner */
	unsigned nodes;
};

typedef void (*step_cont)(struct step *st, struct nt_state *s);

static bool accepts(const struct step *st, uint32_t op, const struct nt_result *r)
{
	return !st->m->accept || st->m->accept(st->m->ctx, op, r);
}

static void emit(struct step *st, struct nt_state *s)
{
	struct nt_successors *out = st->out;

	if (st->clear_after)
		s->obj[st->pulsed].flags &= (uint8_t)~NT_SIGNALED;
	for (unsigned i = 0; i < out->count; i++)
		if (out->done[i] == st->done && nt_state_equal(&out->state[i], s) &&
		    (!st->done || !memcmp(&out->result[i], &st->result, sizeof(st->result))))
			return;
	if (out->count == out->cap) {
		out->overflow = true;
		return;
	}
	nt_state_copy(&out->state[out->count], s);
	out->result[out->count] = st->result;
	out->done[out->count] = st->done;
	out->count++;
}

/* Gives wait i (ready in s) what it acquires now, and its result in *r. */
static void grant(const struct step *st, struct nt_state *s, uint32_t i, struct nt_result *r)
{
	const struct nt_op *op = &st->m->ops[s->wait[i].op];
	int index = wait_pick(s, op);

	r->known = 1;
	r->pad = 0;
	r->v[0] = op->kind == NT_WAIT_ALL && (unsigned)index != op->nobj ? 0 : (uint32_t)index;
	r->v[1] = 0;
	r->status = wait_take(s, op, index);
	s->wait[i].status = r->status;
	s->wait[i].index = (uint8_t)r->v[0];
}

/* grant(), unless `accept` refuses that result: then false, s unchanged. */
static bool satisfy(struct step *st, struct nt_state *s, uint32_t i)
{
	struct nt_state probe;
	struct nt_result r;

	nt_state_copy(&probe, s);
	grant(st, &probe, i, &r);
	if (!accepts(st, s->wait[i].op, &r))
		return false;
	nt_state_copy(s, &probe);
	return true;
}

static bool blocked_ready(const struct step *st, const struct nt_state *s, uint32_t i)
{
	return s->wait[i].status == NT_BLOCKED && wait_pick(s, &st->m->ops[s->wait[i].op]) >= 0;
}

/*
 * Every maximal set of blocked waits the signal can satisfy, each reached
 * once: waits are picked in increasing position, which reaches every such
 * set, since what one wait takes does not depend on the order (before a
 * hand-off no blocked wait is ready, and one object changed).
 */
static void handoff_from(struct step *st, struct nt_state *s, uint32_t from, step_cont cont)
{
	bool any = false;

	if (++st->nodes > NT_MAX_BRANCH) {
		st->out->overflow = true;
		return;
	}
	for (uint32_t i = 0; i < s->nwaiters; i++) {
		struct nt_state next;

		if (!blocked_ready(st, s, i))
			continue;
		any = true;
		if (i < from)
			continue;
		nt_state_copy(&next, s);
		if (satisfy(st, &next, i))
			handoff_from(st, &next, i + 1, cont);
	}
	if (!any)
		cont(st, s);
}

static void handoff(struct step *st, struct nt_state *s, step_cont cont)
{
	struct nt_state all;
	struct nt_result r[NT_MAX_WAITERS];
	bool was_ready[NT_MAX_WAITERS];
	uint32_t i, ready = 0;

	for (i = 0; i < s->nwaiters; i++)
		ready += was_ready[i] = blocked_ready(st, s, i);
	if (!ready) {
		cont(st, s);
		return;
	}
	/*
	 * When every ready wait can have its share at once, that is the only
	 * outcome NT allows, and a wait among them that refuses its result
	 * leaves none.  Otherwise they compete: every maximal choice.
	 */
	nt_state_copy(&all, s);
	for (i = 0; i < s->nwaiters; i++) {
		if (!was_ready[i])
			continue;
		if (!blocked_ready(st, &all, i)) {
			handoff_from(st, s, 0, cont);
			return;
		}
		grant(st, &all, i, &r[i]);
	}
	for (i = 0; i < s->nwaiters; i++)
		if (was_ready[i] && !accepts(st, s->wait[i].op, &r[i]))
			return;
	cont(st, &all);
}

/* NT_DIE: abandons the dying owner's mutexes one at a time, in every order. */
static void abandon_rest(struct step *st, struct nt_state *s)
{
	bool any = false, contested = false;

	for (uint32_t i = 0; i < s->nobjects; i++) {
		if (s->obj[i].type != NT_MUTEX || s->obj[i].owner != st->dying)
			continue;
		any = true;
		for (uint32_t w = 0; w < s->nwaiters && !contested; w++) {
			const struct nt_op *op = &st->m->ops[s->wait[w].op];

			if (s->wait[w].status != NT_BLOCKED)
				continue;
			for (unsigned k = 0; k < op->nobj; k++)
				contested |= op->obj[k] == i;
		}
	}
	if (!any) {
		emit(st, s);
		return;
	}
	if (!contested) {
		/* Nobody waits for them: the order cannot show. */
		for (uint32_t i = 0; i < s->nobjects; i++) {
			struct nt_object *o = &s->obj[i];

			if (o->type == NT_MUTEX && o->owner == st->dying) {
				o->owner = 0;
				o->count = 0;
				o->flags |= NT_ABANDONED;
			}
		}
		emit(st, s);
		return;
	}
	for (uint32_t i = 0; i < s->nobjects; i++) {
		struct nt_state next;

		if (s->obj[i].type != NT_MUTEX || s->obj[i].owner != st->dying)
			continue;
		if (++st->nodes > NT_MAX_BRANCH) {
			st->out->overflow = true;
			return;
		}
		nt_state_copy(&next, s);
		next.obj[i].owner = 0;
		next.obj[i].count = 0;
		next.obj[i].flags |= NT_ABANDONED;
		handoff(st, &next, abandon_rest);
	}
}

static void set_result(struct step *st, uint8_t status, unsigned known, uint32_t v0, uint32_t v1)
{
	st->result.status = status;
	st->result.known = (uint8_t)known;
	st->result.v[0] = v0;
	st->result.v[1] = v1;
	st->done = true;
}

static void insert_waiter(struct nt_state *s, uint32_t op)
{
	uint32_t i = s->nwaiters;

	while (i > 0 && s->wait[i - 1].op > op) {
		s->wait[i] = s->wait[i - 1];
		i--;
	}
	s->wait[i].op = op;
	s->wait[i].status = NT_BLOCKED;
	s->wait[i].index = 0;
	s->wait[i].pad = 0;
	s->nwaiters++;
}

static void remove_waiter(struct nt_state *s, uint32_t i)
{
	memmove(&s->wait[i], &s->wait[i + 1], (s->nwaiters - i - 1) * sizeof(s->wait[0]));
	s->nwaiters--;
}

/* The checks every call makes first: EBADF, then EINVAL.  0 when fine. */
static uint8_t check_wait(const struct nt_state *s, const struct nt_op *op)
{
	if (op->nobj > NT_MAX_WAIT)
		return NT_EINVAL;
	for (unsigned i = 0; i < op->nobj; i++)
		if (op->obj[i] >= s->nobjects || (s->obj[op->obj[i]].flags & NT_CLOSED))
			return NT_EBADF;
	if (op->has_alert && (op->alert >= s->nobjects || (s->obj[op->alert].flags & NT_CLOSED)))
		return NT_EBADF;
	if (op->has_alert && s->obj[op->alert].type != NT_EVENT)
		return NT_EINVAL;
	if (op->kind == NT_WAIT_ALL)
		for (unsigned i = 0; i < op->nobj; i++)
			for (unsigned j = i + 1; j < op->nobj; j++)
				if (op->obj[i] == op->obj[j])
					return NT_EINVAL;
	return 0;
}

static const uint8_t kind_type[NT_KINDS] = {
	[NT_SET] = NT_EVENT, [NT_RESET] = NT_EVENT, [NT_PULSE] = NT_EVENT,
	[NT_RELEASE] = NT_SEM, [NT_UNLOCK] = NT_MUTEX, [NT_KILL] = NT_MUTEX,
};

static void begin(struct step *st, const struct nt_state *from, uint32_t id)
{
	const struct nt_op *op = &st->m->ops[id];
	struct nt_state s;
	struct nt_object *o = NULL;
	uint32_t prev;

	nt_state_copy(&s, from);
	if (op->kind != NT_DIE && op->kind != NT_WAIT_ANY && op->kind != NT_WAIT_ALL) {
		if (op->nobj < 1 || op->obj[0] >= s.nobjects || (s.obj[op->obj[0]].flags & NT_CLOSED)) {
			set_result(st, NT_EBADF, 0, 0, 0);
			emit(st, &s);
			return;
		}
		o = &s.obj[op->obj[0]];
		if (op->kind <= NT_KILL && o->type != kind_type[op->kind]) {
			set_result(st, NT_EINVAL, 0, 0, 0);
			emit(st, &s);
			return;
		}
	}
	switch (op->kind) {
	case NT_SET:
	case NT_PULSE:
		prev = (o->flags & NT_SIGNALED) != 0;
		set_result(st, NT_OK, 1, prev, 0);
		o->flags |= NT_SIGNALED;
		st->clear_after = op->kind == NT_PULSE;
		st->pulsed = op->obj[0];
		handoff(st, &s, emit);
		return;
	case NT_RESET:
		set_result(st, NT_OK, 1, (o->flags & NT_SIGNALED) != 0, 0);
		o->flags &= (uint8_t)~NT_SIGNALED;
		break;
	case NT_RELEASE:
		if (op->arg == 0) {
			set_result(st, NT_EINVAL, 0, 0, 0);
			break;
		}
		if (op->arg > o->max - o->count) {
			set_result(st, NT_EOVERFLOW, 0, 0, 0);
			break;
		}
		set_result(st, NT_OK, 1, o->count, 0);
		o->count += op->arg;
		handoff(st, &s, emit);
		return;
	case NT_UNLOCK:
		if (o->owner == 0 || o->owner != op->owner) {
			set_result(st, NT_EPERM, 0, 0, 0);
			break;
		}
		set_result(st, NT_OK, 1, o->count, 0);
		if (--o->count == 0) {
			o->owner = 0;
			handoff(st, &s, emit);
			return;
		}
		break;
	case NT_KILL:
		if (o->owner == 0 || o->owner != op->owner) {
			set_result(st, NT_EPERM, 0, 0, 0);
			break;
		}
		set_result(st, NT_OK, 0, 0, 0);
		o->owner = 0;
		o->count = 0;
		o->flags |= NT_ABANDONED;
		handoff(st, &s, emit);
		return;
	case NT_READ:
		if (o->type == NT_EVENT)
			set_result(st, NT_OK, 3, (o->flags & NT_SIGNALED) != 0, (o->flags & NT_MANUAL) != 0);
		else if (o->type == NT_SEM)
			set_result(st, NT_OK, 3, o->count, o->max);
		else
			set_result(st, (o->flags & NT_ABANDONED) ? NT_ABANDONED_WAIT : NT_OK, 3,
				   o->count, o->owner);
		break;
	case NT_CLOSE:
		set_result(st, NT_OK, 0, 0, 0);
		o->flags |= NT_CLOSED;
		break;
	case NT_WAIT_ANY:
	case NT_WAIT_ALL: {
		uint8_t error = check_wait(&s, op);
		int index;

		if (error) {
			set_result(st, error, 0, 0, 0);
			break;
		}
		index = wait_pick(&s, op);
		if (index >= 0) {
			uint8_t status = wait_take(&s, op, index);

			set_result(st, status, 1,
				   op->kind == NT_WAIT_ALL && (unsigned)index != op->nobj ? 0 : (uint32_t)index, 0);
		} else if (op->timeout == NT_POLL) {
			set_result(st, NT_TIMEOUT, 0, 0, 0);
		} else if (s.nwaiters == NT_MAX_WAITERS) {
			st->out->overflow = true;
			return;
		} else {
			insert_waiter(&s, id);
			st->done = false;
		}
		break;
	}
	case NT_DIE:
		set_result(st, NT_OK, 0, 0, 0);
		st->dying = op->owner;
		for (uint32_t w = 0; w < s.nwaiters; w++) {
			struct nt_result r = { NT_ECANCELED, 0, 0, { 0, 0 } };

			if (s.wait[w].status != NT_BLOCKED || st->m->ops[s.wait[w].op].owner != op->owner)
				continue;
			if (!accepts(st, s.wait[w].op, &r))
				return;
			s.wait[w].status = NT_ECANCELED;
		}
		abandon_rest(st, &s);
		return;
	default:
		set_result(st, NT_EINVAL, 0, 0, 0);
		break;
	}
	emit(st, &s);
}

static void end(struct step *st, const struct nt_state *from, uint32_t id)
{
	const struct nt_op *op = &st->m->ops[id];
	int i = find_waiter(from, id);
	struct nt_state s;

	if (i < 0)
		return;
	nt_state_copy(&s, from);
	if (s.wait[i].status != NT_BLOCKED) {
		uint8_t status = s.wait[i].status;

		set_result(st, status, status == NT_ECANCELED ? 0 : 1, s.wait[i].index, 0);
	} else if (op->timeout != NT_INFINITE) {
		set_result(st, NT_TIMEOUT, 0, 0, 0);
	} else {
		return;
	}
	remove_waiter(&s, (uint32_t)i);
	emit(st, &s);
}

unsigned nt_step(const struct nt_model *m, const struct nt_state *s, uint32_t op,
		 enum nt_phase phase, const struct nt_result *expect, struct nt_successors *out)
{
	struct step st;
	unsigned kept = 0;

	memset(&st, 0, sizeof(st));
	st.m = m;
	st.out = out;
	out->count = 0;
	out->overflow = false;
	if (phase == NT_BEGIN)
		begin(&st, s, op);
	else
		end(&st, s, op);
	if (!expect)
		return out->count;
	/* Keep what matches the recorded result; a blocked wait may still end as recorded. */
	for (unsigned i = 0; i < out->count; i++) {
		bool keep;

		if (out->done[i])
			keep = nt_result_match(expect, &out->result[i]);
		else
			keep = expect->status == NT_OK || expect->status == NT_ABANDONED_WAIT ||
			       expect->status == NT_TIMEOUT || expect->status == NT_ECANCELED;
		if (!keep)
			continue;
		if (kept != i) {
			nt_state_copy(&out->state[kept], &out->state[i]);
			out->result[kept] = out->result[i];
			out->done[kept] = out->done[i];
		}
		kept++;
	}
	out->count = kept;
	return kept;
}
