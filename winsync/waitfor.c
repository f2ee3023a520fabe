/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "waitfor.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

/* Who answers for an owner id, best first: its current waiter, a live user, a dead one. */
enum rank {
	RANK_WAITING,
	RANK_LIVE,
	RANK_DEAD,
};

struct owner_ref {
	uint32_t id;
	uint32_t rank;
	uint32_t thread;
};

static int by_id_rank(const void *a, const void *b)
{
	const struct owner_ref *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->thread > y->thread) - (x->thread < y->thread);
}

/* The thread that answers for owner id `id`: the first of its run in the sorted table. */
static uint32_t owner_thread(const struct owner_ref *refs, uint32_t n, uint32_t id)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (refs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && refs[lo].id == id ? refs[lo].thread : WS_SNAPSHOT_NONE;
}

static int resolve_owners(const struct ws_waitfor *g)
{
	struct owner_ref *refs = malloc((2 * (size_t)g->thread_count + 1) * sizeof(*refs));
	uint32_t n = 0;

	if (!refs)
		return -ENOMEM;
	for (uint32_t t = 0; t < g->thread_count; t++) {
		const struct ws_snapshot_thread *th = &g->threads[t];
		bool live = th->state == WS_SNAPSHOT_LIVE;

		if (th->wait != WS_SNAPSHOT_NO_WAIT && th->wait_owner)
			refs[n++] = (struct owner_ref){ th->wait_owner,
							live ? RANK_WAITING : RANK_DEAD, t };
		if (th->owner)
			refs[n++] = (struct owner_ref){ th->owner, live ? RANK_LIVE : RANK_DEAD, t };
	}
	qsort(refs, n, sizeof(*refs), by_id_rank);
	for (uint32_t o = 0; o < g->object_count; o++) {
		struct ws_snapshot_object *obj = &g->objects[o];

		obj->owner_thread = obj->type == WS_SNAPSHOT_MUTEX && obj->owner
					    ? owner_thread(refs, n, obj->owner)
					    : WS_SNAPSHOT_NONE;
	}
	free(refs);
	return 0;
}

/* The thread that holds object `h` against waiter `t` (a mutex held by another), else NONE. */
static uint32_t holder(const struct ws_waitfor *g, uint32_t t, ws_handle h)
{
	uint32_t o = h ? g->object_of(g->ctx, h) : WS_SNAPSHOT_NONE;
	const struct ws_snapshot_object *obj;

	if (o == WS_SNAPSHOT_NONE)
		return WS_SNAPSHOT_NONE;
	obj = &g->objects[o];
	if (obj->type != WS_SNAPSHOT_MUTEX || obj->owner_thread == t)
		return WS_SNAPSHOT_NONE;
	return obj->owner_thread;
}

/*
 * Can `t` never run again while every thread in `stuck` stays stuck?  It
 * needs a mutex held by a stuck thread (any of a wait-all's objects, and
 * for a wait-any every object that is still open: a closed one never
 * signals, but alone it makes a hang, not a deadlock).
 */
static bool still_stuck(const struct ws_waitfor *g, const bool *stuck, uint32_t t)
{
	const struct ws_snapshot_thread *th = &g->threads[t];
	uint32_t held = 0;

	for (uint32_t i = 0; i < th->count; i++) {
		ws_handle h = th->objects[i];
		uint32_t by = holder(g, t, h);

		if (by != WS_SNAPSHOT_NONE && stuck[by])
			held++;
		else if (h && g->object_of(g->ctx, h) != WS_SNAPSHOT_NONE &&
			 th->wait == WS_SNAPSHOT_WAIT_ANY)
			return false;
	}
	return held > 0;
}

static bool candidate(const struct ws_snapshot_thread *th)
{
	return th->state == WS_SNAPSHOT_LIVE && th->wait != WS_SNAPSHOT_NO_WAIT && !th->alert &&
	       (th->flags & WS_SNAPSHOT_FOREVER) && !(th->flags & WS_SNAPSHOT_TORN);
}

/* The next link of t's chain: a mutex held by another thread, a stuck one first. */
static void pick_blocker(const struct ws_waitfor *g, const bool *stuck, uint32_t t)
{
	struct ws_snapshot_thread *th = &g->threads[t];

	th->blocker = WS_SNAPSHOT_NONE;
	th->blocked_on = 0;
	for (uint32_t i = 0; i < th->count; i++) {
		uint32_t by = holder(g, t, th->objects[i]);

		if (by == WS_SNAPSHOT_NONE)
			continue;
		if (th->blocker == WS_SNAPSHOT_NONE || (stuck[t] && stuck[by] && !stuck[th->blocker])) {
			th->blocker = by;
			th->blocked_on = th->objects[i];
		}
	}
}

int ws_waitfor_analyze(const struct ws_waitfor *g)
{
	bool *stuck = calloc(g->thread_count + 1, sizeof(*stuck));
	bool changed = true;
	int ret, flagged = 0;

	if (!stuck)
		return -ENOMEM;
	ret = resolve_owners(g);
	if (ret) {
		free(stuck);
		return ret;
	}
	/* The greatest fixed point: start from every candidate, drop those that may run. */
	for (uint32_t t = 0; t < g->thread_count; t++)
		stuck[t] = candidate(&g->threads[t]);
	while (changed) {
		changed = false;
		for (uint32_t t = 0; t < g->thread_count; t++) {
			if (stuck[t] && !still_stuck(g, stuck, t)) {
				stuck[t] = false;
				changed = true;
			}
		}
	}
	for (uint32_t t = 0; t < g->thread_count; t++) {
		struct ws_snapshot_thread *th = &g->threads[t];

		if (th->wait != WS_SNAPSHOT_NO_WAIT)
			pick_blocker(g, stuck, t);
		if (stuck[t]) {
			th->flags |= WS_SNAPSHOT_DEADLOCKED;
			flagged++;
		}
	}
	free(stuck);
	return flagged;
}
