/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vc_check (check.h): groups, stretches, and the failure's counterexample. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "shrink.h"

struct group {
	uint32_t nobjects;
	uint32_t *objects;   /* history numbers, ascending */
	uint32_t nops;
	uint32_t *ops;       /* history op indexes, by order key */
	uint64_t first;      /* the first invocation */
};

struct checker {
	const struct vh_history *h;
	const struct vc_options *o;
	struct vc_report *r;
	uint64_t *key_invoke, *key_ret;
	uint32_t *root;      /* union-find over objects */
	struct group *groups;
	uint32_t ngroups;
	uint64_t deadline;
	uint64_t done_ops, total_ops;
};

static uint32_t find(uint32_t *root, uint32_t x)
{
	while (root[x] != x)
		x = root[x] = root[root[x]];
	return x;
}

static void unite(uint32_t *root, uint32_t a, uint32_t b)
{
	a = find(root, a);
	b = find(root, b);
	if (a != b)
		root[a < b ? b : a] = a < b ? a : b;
}

static const struct vh_history *sort_ctx;

static int cmp_thread_invoke(const void *a, const void *b)
{
	const struct vh_op *x = &sort_ctx->ops[*(const uint32_t *)a];
	const struct vh_op *y = &sort_ctx->ops[*(const uint32_t *)b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->invoke != y->invoke)
		return x->invoke < y->invoke ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static uint64_t *sort_keys;

static int cmp_key(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (sort_keys[x] != sort_keys[y])
		return sort_keys[x] < sort_keys[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * Order keys: times doubled, and a call at the very time its thread's
 * previous operation returned comes after that return (one clock reading
 * serves both); otherwise equal times are concurrent.
 */
static int order_keys(struct checker *c)
{
	const struct vh_history *h = c->h;
	uint32_t *idx = malloc((h->nops + 1) * sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->nops; i++)
		idx[i] = i;
	sort_ctx = h;
	qsort(idx, h->nops, sizeof(*idx), cmp_thread_invoke);
	for (uint32_t k = 0; k < h->nops; k++) {
		const struct vh_op *op = &h->ops[idx[k]];
		const struct vh_op *before = k ? &h->ops[idx[k - 1]] : NULL;

		c->key_invoke[idx[k]] = 2 * op->invoke +
			(before && before->thread == op->thread && before->ret == op->invoke);
		c->key_ret[idx[k]] = op->ret == VH_PENDING ? VS_NEVER : 2 * op->ret;
	}
	free(idx);
	return 0;
}

static int add_op(struct group *g, uint32_t op)
{
	uint32_t *ops = realloc(g->ops, (g->nops + 1) * sizeof(*ops));

	if (!ops)
		return -ENOMEM;
	g->ops = ops;
	g->ops[g->nops++] = op;
	return 0;
}

/* The groups of objects that waits tie together, and their operations. */
static int make_groups(struct checker *c)
{
	const struct vh_history *h = c->h;
	uint32_t *group_of = malloc((h->nobjects + 1) * sizeof(*group_of));
	int ret = -ENOMEM;

	c->root = malloc((h->nobjects + 1) * sizeof(*c->root));
	c->groups = calloc(h->nobjects + 1, sizeof(*c->groups));
	if (!group_of || !c->root || !c->groups)
		goto out;
	for (uint32_t i = 0; i < h->nobjects; i++)
		c->root[i] = i;
	for (uint32_t i = 0; i < h->nops; i++) {
		const struct nt_op *call = &h->ops[i].call;

		for (unsigned k = 1; k < call->nobj; k++)
			unite(c->root, call->obj[0], call->obj[k]);
		if (call->has_alert && call->nobj)
			unite(c->root, call->obj[0], call->alert);
	}
	for (uint32_t i = 0; i < h->nobjects; i++)
		group_of[i] = UINT32_MAX;
	for (uint32_t i = 0; i < h->nops; i++) {
		const struct nt_op *call = &h->ops[i].call;
		uint32_t obj, root, g;

		if (call->kind == NT_DIE || (call->nobj == 0 && !call->has_alert))
			continue;
		obj = call->nobj ? call->obj[0] : call->alert;
		root = find(c->root, obj);
		if (group_of[root] == UINT32_MAX) {
			group_of[root] = c->ngroups++;
			c->groups[group_of[root]].first = c->key_invoke[i];
		}
		g = group_of[root];
		if (add_op(&c->groups[g], i))
			goto out;
	}
	for (uint32_t i = 0; i < h->nobjects; i++) {
		uint32_t root = find(c->root, i), g = group_of[root];
		struct group *gr;
		uint32_t *objects;

		if (g == UINT32_MAX)
			continue;
		gr = &c->groups[g];
		objects = realloc(gr->objects, (gr->nobjects + 1) * sizeof(*objects));
		if (!objects)
			goto out;
		gr->objects = objects;
		gr->objects[gr->nobjects++] = i;
	}
	/* Deaths: a copy in each group whose operations or mutexes the owner had. */
	for (uint32_t i = 0; i < h->nops; i++) {
		const struct vh_op *die = &h->ops[i];

		if (die->call.kind != NT_DIE)
			continue;
		for (uint32_t g = 0; g < c->ngroups; g++) {
			struct group *gr = &c->groups[g];
			bool used = false;

			for (uint32_t k = 0; k < gr->nops && !used; k++)
				used = h->ops[gr->ops[k]].owner == die->owner;
			for (uint32_t k = 0; k < gr->nobjects && !used; k++)
				used = h->objects[gr->objects[k]].type == NT_MUTEX &&
				       h->objects[gr->objects[k]].owner == die->owner;
			if (used && add_op(gr, i))
				goto out;
		}
	}
	sort_keys = c->key_invoke;
	for (uint32_t g = 0; g < c->ngroups; g++)
		qsort(c->groups[g].ops, c->groups[g].nops, sizeof(uint32_t), cmp_key);
	ret = 0;
out:
	free(group_of);
	return ret;
}

static uint32_t local_index(const struct group *g, uint32_t object)
{
	for (uint32_t i = 0; i < g->nobjects; i++)
		if (g->objects[i] == object)
			return i;
	return 0;
}

static void make_op(const struct checker *c, const struct group *g, uint32_t index, struct vs_op *v)
{
	const struct vh_op *op = &c->h->ops[index];

	memset(v, 0, sizeof(*v));
	v->call = op->call;
	for (unsigned k = 0; k < op->call.nobj; k++)
		v->call.obj[k] = (uint16_t)local_index(g, op->call.obj[k]);
	if (op->call.has_alert)
		v->call.alert = (uint16_t)local_index(g, op->call.alert);
	v->result = op->result;
	v->invoke = c->key_invoke[index];
	v->ret = c->key_ret[index];
	v->pending = op->ret == VH_PENDING;
	v->impossible = op->error != 0;
	v->tag = index;
}

int vc_format_state(char *buf, size_t size, const struct nt_state *s, const uint32_t *objects)
{
	size_t n = 0;

	if (size)
		buf[0] = 0;
	for (uint32_t i = 0; i < s->nobjects; i++) {
		const struct nt_object *o = &s->obj[i];
		char one[96];

		if (o->type == NT_EVENT)
			snprintf(one, sizeof(one), "%" PRIu32 " %s %s", objects[i],
				 (o->flags & NT_MANUAL) ? "manual" : "auto",
				 (o->flags & NT_SIGNALED) ? "set" : "reset");
		else if (o->type == NT_SEM)
			snprintf(one, sizeof(one), "%" PRIu32 " sem %" PRIu32 "/%" PRIu32, objects[i],
				 o->count, o->max);
		else if (o->owner)
			snprintf(one, sizeof(one), "%" PRIu32 " mutex o%" PRIu32 "x%" PRIu32, objects[i],
				 o->owner, o->count);
		else
			snprintf(one, sizeof(one), "%" PRIu32 " mutex free%s", objects[i],
				 (o->flags & NT_ABANDONED) ? " abandoned" : "");
		if (o->flags & NT_CLOSED)
			strncat(one, " closed", sizeof(one) - strlen(one) - 1);
		n += (size_t)snprintf(buf + (n < size ? n : size), n < size ? size - n : 0, "%s%s",
				      i ? ", " : "", one);
	}
	return (int)n;
}

static uint32_t local_of(const struct vc_failure *f, uint32_t object)
{
	for (uint32_t i = 0; i < f->nobjects; i++)
		if (f->objects[i] == object)
			return i;
	return 0;
}

/* What the model allows the stuck operation at the end of the trace. */
static void explain(struct vc_failure *f, const struct vs_outcome *out)
{
	struct nt_op *calls = malloc((f->history.nops + 1) * sizeof(*calls));
	static struct nt_state states[64];
	static struct nt_result results[64];
	static bool done[64];
	struct nt_successors succ = { states, results, done, 64, 0, false };
	struct nt_model m = { NULL, NULL, NULL };
	const struct vh_op *stuck = &f->history.ops[out->stuck];
	char call[160], got[64], allowed[256] = "";
	size_t n = 0;
	bool begun;

	if (!calls)
		return;
	for (uint32_t i = 0; i < f->history.nops; i++) {
		const struct nt_op *call = &f->history.ops[i].call;

		calls[i] = *call;
		for (unsigned k = 0; k < call->nobj; k++)
			calls[i].obj[k] = (uint16_t)local_of(f, call->obj[k]);
		if (call->has_alert)
			calls[i].alert = (uint16_t)local_of(f, call->alert);
	}
	m.ops = calls;
	begun = nt_state_waiting(&out->at, out->stuck);
	nt_step(&m, &out->at, out->stuck, begun ? NT_END : NT_BEGIN, NULL, &succ);
	for (unsigned i = 0; i < succ.count; i++) {
		struct vh_op shown = *stuck;
		char one[64];

		if (!done[i]) {
			snprintf(one, sizeof(one), "it blocks");
		} else {
			shown.result = results[i];
			shown.error = 0;
			vh_format_result(one, sizeof(one), &shown);
		}
		if (strstr(allowed, one))
			continue;
		n += (size_t)snprintf(allowed + n, n < sizeof(allowed) ? sizeof(allowed) - n : 0, "%s%s",
				      n ? " or " : "", one);
	}
	vh_format_call(call, sizeof(call), &stuck->call, stuck->timeout_ms);
	vh_format_result(got, sizeof(got), stuck);
	/* The recorded result is allowed here: the dead end is further on. */
	for (unsigned i = 0; i < succ.count && !stuck->error; i++) {
		if (done[i] && nt_result_match(&stuck->result, &results[i])) {
			snprintf(f->why, sizeof(f->why),
				 "t%" PRIu32 " '%s -> %s' must take effect before it returns; it can here, but "
				 "then no order of the operations left works either (every one was tried)",
				 stuck->thread, call, got);
			free(calls);
			return;
		}
	}
	if (stuck->error)
		snprintf(f->why, sizeof(f->why),
			 "t%" PRIu32 " '%s' returned error %" PRId32 ", which NT never returns", stuck->thread,
			 call, stuck->error);
	else
		snprintf(f->why, sizeof(f->why),
			 "t%" PRIu32 " '%s -> %s' must take effect before it returns, but %s%s%s",
			 stuck->thread, call, got, begun ? "it is blocked and " : "",
			 succ.count ? "the NT model gives " : "the NT model allows no step of it here",
			 allowed);
	free(calls);
}

/* Shrinks the failing stretch and fills r->failure. */
static int report_failure(struct checker *c, const struct group *g, const struct vs_op *ops, uint32_t n,
			  const struct nt_state *starts, uint32_t nstarts)
{
	struct vc_failure *f = &c->r->failure;
	uint8_t *keep = malloc(n + 1);
	struct vs_outcome out;
	uint64_t t0 = vs_now_ns();
	uint32_t m = 0;
	int ret = -ENOMEM;

	memset(&out, 0, sizeof(out));
	if (!keep)
		goto done;
	if (c->o->shrink) {
		if (vc_shrink(ops, n, starts, nstarts, c->deadline, c->o->memory_limit, c->o->shrink_steps, keep, &out))
			goto done;
		f->shrunk = true;
	} else {
		struct vs_problem p = { ops, n, starts, nstarts, false, true, c->deadline, c->o->memory_limit, 0, 0 };

		memset(keep, VC_SHOWN, n);
		if (vs_search(&p, &out))
			goto done;
	}
	c->r->shrink_seconds = (double)(vs_now_ns() - t0) / 1e9;
	f->stretch_ops = n;
	f->history = (struct vh_history){ 0 };
	snprintf(f->history.backend, sizeof(f->history.backend), "%s", c->h->backend);
	f->history.seed = c->h->seed;
	f->history.threads = c->h->threads;
	f->history.nobjects = c->h->nobjects;
	f->history.objects = malloc((c->h->nobjects + 1) * sizeof(struct nt_object));
	f->source = malloc((n + 1) * sizeof(uint32_t));
	f->objects = malloc((g->nobjects + 1) * sizeof(uint32_t));
	f->starts = malloc((nstarts + 1) * sizeof(struct nt_state));
	if (!f->history.objects || !f->source || !f->objects || !f->starts)
		goto done;
	memcpy(f->history.objects, c->h->objects, c->h->nobjects * sizeof(struct nt_object));
	memcpy(f->objects, g->objects, g->nobjects * sizeof(uint32_t));
	f->nobjects = g->nobjects;
	memcpy(f->starts, starts, nstarts * sizeof(struct nt_state));
	f->nstarts = nstarts;
	/*
	 * What to show: the operations the proof needs, those running at its
	 * end, the dropped ones the explanation made take effect, and as
	 * context a few more that ran alongside the impossible one.  The final
	 * search numbered the operations not cut away, in order.
	 */
	{
		uint32_t *sel = calloc(n + 1, sizeof(*sel)), *map = calloc(n + 1, sizeof(*map));
		bool *used = calloc(n + 1, sizeof(*used));
		uint32_t nsel = 0, stuck = UINT32_MAX, context = 0, k = 0;
		uint64_t from = 0, to = 0;

		if (!sel || !map || !used) {
			free(sel);
			free(map);
			free(used);
			goto done;
		}
		for (uint32_t i = 0; i < n; i++)
			if (keep[i] != VC_CUT)
				sel[nsel++] = i;
		for (uint32_t t = 0; t < out.ntrace; t++)
			if (!out.trace[t].skipped)
				used[sel[out.trace[t].op]] = true;
		if (out.verdict == VS_FAIL) {
			stuck = sel[out.stuck];
			used[stuck] = true;
			from = ops[stuck].invoke;
			to = keep[stuck] == VC_SHOWN_PENDING ? VS_NEVER : ops[stuck].ret;
		}
		f->context = calloc(n + 1, 1);
		if (!f->context) {
			free(sel);
			free(map);
			free(used);
			goto done;
		}
		for (uint32_t i = 0; i < n; i++) {
			bool needed = keep[i] == VC_SHOWN || keep[i] == VC_SHOWN_PENDING;
			bool ctx = !needed && !used[i] && stuck != UINT32_MAX && context < 6 &&
				   ops[i].invoke <= to && ops[i].ret >= from;
			struct vh_op *op;

			map[i] = UINT32_MAX;
			if (!needed && !used[i] && !ctx)
				continue;
			if (!(op = vh_append(&f->history))) {
				free(sel);
				free(map);
				free(used);
				goto done;
			}
			*op = c->h->ops[ops[i].tag];
			if (keep[i] == VC_SHOWN_PENDING)
				op->ret = VH_PENDING;
			map[i] = f->history.nops - 1;
			f->context[map[i]] = needed ? VC_ROLE_NEEDED : ctx ? VC_ROLE_CONTEXT : VC_ROLE_USED;
			context += ctx;
			f->source[map[i]] = ops[i].tag;
			m++;
		}
		/* The trace without the operations it left out, in the history's numbers. */
		for (uint32_t t = 0; t < out.ntrace; t++) {
			if (out.trace[t].skipped)
				continue;
			out.trace[k] = out.trace[t];
			out.trace[k++].op = map[sel[out.trace[t].op]];
		}
		out.ntrace = k;
		if (out.verdict == VS_FAIL) {
			out.stuck = map[stuck];
			for (uint32_t j = 0; j < out.at.nwaiters; j++)
				out.at.wait[j].op = map[sel[out.at.wait[j].op]];
		}
		free(sel);
		free(map);
		free(used);
	}
	f->trace = out.trace;
	f->ntrace = out.ntrace;
	out.trace = NULL;
	f->stuck = out.stuck;
	f->start = out.start;
	f->at = out.at;
	if (out.verdict == VS_FAIL && m) {
		explain(f, &out);
	} else {
		f->stuck = UINT32_MAX;
		snprintf(f->why, sizeof(f->why), "the search for an explanation ran out of time");
	}
	c->r->has_failure = true;
	ret = 0;
done:
	vs_outcome_free(&out);
	free(keep);
	return ret;
}

static void progress(struct checker *c, uint32_t ops)
{
	c->done_ops += ops;
	if (c->o->progress)
		c->o->progress(c->o->progress_ctx, c->done_ops, c->total_ops);
}

/* Steps a stretch may take to list its orders: generous, but not the whole time bound. */
static uint64_t stretch_steps(uint32_t n)
{
	return 2000000ull + 2000ull * n;
}

/*
 * One search of the whole group from its initial state, to the first
 * linearization, in at most `steps` steps (0: until the time or memory
 * bound): VC_OK, VC_UNKNOWN (also when it finds none: the stretches decide
 * that), or -ENOMEM.
 */
static int whole_group(struct checker *c, const struct group *g, const struct vs_op *ops, uint64_t steps)
{
	const struct vh_history *h = c->h;
	struct nt_state start;
	struct vs_problem p = { ops, g->nops, &start, 1, false, false, c->deadline, c->o->memory_limit, 0, steps };
	struct vs_outcome out;

	nt_state_init(&start);
	for (uint32_t i = 0; i < g->nobjects; i++)
		nt_state_add(&start, &h->objects[g->objects[i]]);
	if (vs_search(&p, &out))
		return -ENOMEM;
	if (getenv("VERIFY_DEBUG_CHECK"))
		fprintf(stderr, "whole group of %" PRIu32 " operations: verdict %d after %" PRIu64 " steps (%s)\n",
			g->nops, out.verdict, out.nodes, out.unknown ? out.unknown : "-");
	c->r->nodes += out.nodes;
	if (out.memory > c->r->peak_memory)
		c->r->peak_memory = out.memory;
	vs_outcome_free(&out);
	if (out.verdict == VS_FAIL && !steps) {
		/* Every order was tried: no stretch could say where, so the whole group is the failure. */
		if (report_failure(c, g, ops, g->nops, &start, 1))
			return -ENOMEM;
		return VC_FAIL;
	}
	if (out.verdict != VS_OK)
		return VC_UNKNOWN;
	c->r->stretches++;
	if (g->nops > c->r->largest_stretch)
		c->r->largest_stretch = g->nops;
	progress(c, g->nops);
	return VC_OK;
}

/* Checks one group stretch by stretch: VC_OK, VC_FAIL or VC_UNKNOWN (<0: -ENOMEM). */
static int check_group(struct checker *c, const struct group *g)
{
	const struct vh_history *h = c->h;
	struct vs_op *ops = malloc((g->nops + 1) * sizeof(*ops));
	struct nt_state *starts = malloc(sizeof(*starts));
	uint32_t nstarts = 1, threads = 0, *seen = NULL;
	int verdict = -ENOMEM;

	if (!ops || !starts)
		goto out;
	if (g->nobjects > NT_MAX_OBJECTS) {
		snprintf(c->r->unknown, sizeof(c->r->unknown),
			 "%" PRIu32 " objects waited on together: the model takes %d", g->nobjects,
			 NT_MAX_OBJECTS);
		verdict = VC_UNKNOWN;
		goto out;
	}
	seen = calloc(h->threads + 1, sizeof(*seen));
	if (!seen)
		goto out;
	for (uint32_t i = 0; i < g->nops; i++)
		if (!seen[h->ops[g->ops[i]].thread]++)
			threads++;
	if (threads > NT_MAX_WAITERS) {
		snprintf(c->r->unknown, sizeof(c->r->unknown),
			 "%" PRIu32 " threads use one group of objects: the model takes %d", threads,
			 NT_MAX_WAITERS);
		verdict = VC_UNKNOWN;
		goto out;
	}
	nt_state_init(&starts[0]);
	for (uint32_t i = 0; i < g->nobjects; i++)
		nt_state_add(&starts[0], &h->objects[g->objects[i]]);
	for (uint32_t i = 0; i < g->nops; i++)
		make_op(c, g, g->ops[i], &ops[i]);
	/*
	 * First the whole group, stopping at the first linearization: for a
	 * history that is linearizable this goes almost straight through.  It
	 * gets a bounded number of steps; a failure (or running out) is then
	 * decided and located stretch by stretch.
	 */
	if (!c->o->stretches_only) {
		verdict = whole_group(c, g, ops, 64ull * g->nops + 100000);
		if (verdict < 0 || verdict == VC_OK)
			goto out;
	}
	for (uint32_t begin = 0; begin < g->nops;) {
		uint64_t reach = ops[begin].ret;
		uint32_t end = begin + 1;
		struct vs_problem p;
		struct vs_outcome out;

		/* The stretch: until an operation starts after all before it returned. */
		while (end < g->nops && ops[end].invoke <= reach) {
			if (ops[end].ret > reach)
				reach = ops[end].ret;
			end++;
		}
		/* Operation numbers are the stretch's: the model indexes them from 0. */
		p = (struct vs_problem){ ops + begin, end - begin, starts, nstarts, end < g->nops, false,
					 c->deadline, c->o->memory_limit, 0,
					 stretch_steps(end - begin) };
		if (vs_search(&p, &out))
			goto out;
		c->r->stretches++;
		c->r->nodes += out.nodes;
		if (out.memory > c->r->peak_memory)
			c->r->peak_memory = out.memory;
		if (end - begin > c->r->largest_stretch)
			c->r->largest_stretch = end - begin;
		if (out.verdict == VS_FAIL) {
			vs_outcome_free(&out);
			if (report_failure(c, g, ops + begin, end - begin, starts, nstarts))
				goto out;
			verdict = VC_FAIL;
			goto out;
		}
		if (out.verdict == VS_UNKNOWN && out.unknown && !strcmp(out.unknown, "steps")) {
			/*
			 * Too many orders to list in this stretch (many threads
			 * at once): what is left of the time goes to one search
			 * of the whole group, which needs only one order.
			 */
			vs_outcome_free(&out);
			verdict = whole_group(c, g, ops, 0);
			if (verdict == VC_UNKNOWN)
				snprintf(c->r->unknown, sizeof(c->r->unknown),
					 "a stretch of %" PRIu32 " operations (objects %" PRIu32 "..., from t=%" PRIu64
					 " ns) has too many orders to list, and the search of the whole group ran out"
					 " of time or memory", end - begin, g->objects[0], h->ops[ops[begin].tag].invoke);
			goto out;
		}
		if (out.verdict == VS_UNKNOWN) {
			snprintf(c->r->unknown, sizeof(c->r->unknown),
				 "the %s bound was hit in a stretch of %" PRIu32 " operations (objects %" PRIu32
				 "...), from t=%" PRIu64 " ns",
				 out.unknown ? out.unknown : "search", end - begin, g->objects[0],
				 h->ops[ops[begin].tag].invoke);
			vs_outcome_free(&out);
			verdict = VC_UNKNOWN;
			goto out;
		}
		if (p.collect) {
			free(starts);
			starts = out.ends;
			nstarts = out.nends;
			out.ends = NULL;
		}
		vs_outcome_free(&out);
		progress(c, end - begin);
		begin = end;
	}
	verdict = VC_OK;
out:
	free(ops);
	free(starts);
	free(seen);
	return verdict;
}

int vc_check(const struct vh_history *h, const struct vc_options *o, struct vc_report *r)
{
	struct checker c;
	uint64_t t0 = vs_now_ns();
	bool unknown = false, failed = false;
	int ret = -ENOMEM;

	memset(r, 0, sizeof(*r));
	memset(&c, 0, sizeof(c));
	c.h = h;
	c.o = o;
	c.r = r;
	c.deadline = o->time_limit > 0 ? t0 + (uint64_t)(o->time_limit * 1e9) : 0;
	c.key_invoke = malloc((h->nops + 1) * sizeof(uint64_t));
	c.key_ret = malloc((h->nops + 1) * sizeof(uint64_t));
	if (!c.key_invoke || !c.key_ret || order_keys(&c) || make_groups(&c))
		goto out;
	for (uint32_t g = 0; g < c.ngroups; g++)
		c.total_ops += c.groups[g].nops;
	r->groups = c.ngroups;
	for (uint32_t g = 0; g < c.ngroups && !failed; g++) {
		int v = check_group(&c, &c.groups[g]);

		if (v < 0)
			goto out;
		r->ops += c.groups[g].nops;
		failed |= v == VC_FAIL;
		unknown |= v == VC_UNKNOWN;
	}
	r->verdict = failed ? VC_FAIL : unknown ? VC_UNKNOWN : VC_OK;
	ret = 0;
out:
	r->seconds = (double)(vs_now_ns() - t0) / 1e9;
	for (uint32_t g = 0; c.groups && g < c.ngroups; g++) {
		free(c.groups[g].objects);
		free(c.groups[g].ops);
	}
	free(c.groups);
	free(c.root);
	free(c.key_invoke);
	free(c.key_ret);
	return ret;
}

void vc_report_free(struct vc_report *r)
{
	struct vc_failure *f = &r->failure;

	vh_free(&f->history);
	free(f->source);
	free(f->context);
	free(f->objects);
	free(f->starts);
	free(f->trace);
	memset(r, 0, sizeof(*r));
}
