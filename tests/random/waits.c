/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ws_wait_any and ws_wait_all over sets mixing own objects (their states are
 * known), pool objects, table objects, the beacon (always ready), closed
 * handles and garbage, with alerts of every type and deadlines of every
 * kind.  What is checked: the errors the arguments call for, the
 * lowest-index rule against the objects known ready, -ETIMEDOUT never early
 * and never with a known-ready object in the set, the exact effect on own
 * objects, and the pool's invariants for what was acquired.
 */
#include "rt.h"

#include <string.h>
#include <time.h>

enum esrc { E_OWN, E_POOL, E_TABLE, E_BEACON, E_BAD, E_KICK };

struct entry {
	enum esrc src;
	enum rt_type type;        /* RT_NONE when unknown (bad handles) */
	ws_handle h;
	uint32_t idx;             /* own index, pool index or table index */
};

#define MAX_SET (WS_MAX_WAIT_OBJECTS + 8)

struct wset {
	struct entry e[MAX_SET];
	ws_handle h[MAX_SET];
	uint32_t count;
	struct entry alert;       /* h == 0: none */
	uint32_t owner;
	bool mutexes;             /* may hold mutexes (owner is not the wait-only id) */
};

static bool in_set(const struct wset *w, ws_handle h)
{
	for (uint32_t i = 0; i < w->count; i++)
		if (w->h[i] == h)
			return true;
	return false;
}

/* One entry of a set; false if nothing fits. */
static bool pick_entry(struct rt_ctx *c, struct wset *w, bool all, bool bad, struct entry *e)
{
	const struct rt_mode *m = &rt_shm->mode;
	uint32_t pool_n = rt_shm->pool_count;

	memset(e, 0, sizeof *e);
	for (int tries = 0; tries < 8; tries++) {
		uint32_t r = rt_below(&c->rng, 100);

		if (bad && r < 50) {
			e->src = E_BAD;
			e->h = rt_pct(&c->rng, 10) ? 0 : rt_garbage(c);
		} else if (rt_shm->beacon != UINT32_MAX && r < 3) {
			e->src = E_BEACON;
			e->idx = rt_shm->beacon;
			e->type = RT_EVENT;
			e->h = rt_pool[e->idx].h;
		} else if (m->table && rt_pct(&c->rng, m->pool_pct)) {
			uint32_t i = rt_below(&c->rng, m->table);
			uint64_t word = atomic_load(&rt_shm->table[i].word);

			if (!word || (word >> 63))
				continue;
			e->src = E_TABLE;
			e->idx = i;
			e->type = (enum rt_type)TW_TYPE(word);
			e->h = TW_HANDLE(word);
		} else if (pool_n && (rt_pct(&c->rng, m->pool_pct) || !c->nown)) {
			e->src = E_POOL;
			e->idx = rt_below(&c->rng, pool_n);
			e->type = (enum rt_type)rt_pool[e->idx].type;
			e->h = rt_pool[e->idx].h;
			if (e->idx == rt_shm->beacon)
				e->src = E_BEACON;
		} else if (c->nown) {
			e->src = E_OWN;
			e->idx = rt_below(&c->rng, c->nown);
			e->type = (enum rt_type)c->own[e->idx].type;
			e->h = c->own[e->idx].h;
		} else {
			return false;
		}
		if (e->src != E_BAD && e->type == RT_MUTEX) {
			if (!w->mutexes)
				continue;
			/* Pool mutexes block others: few at a time, but recursion is fine. */
			if (e->src == E_POOL && c->nheld >= 4 && !rt_held_find(c, e->idx))
				continue;
		}
		if (all && in_set(w, e->h))
			continue;
		return true;
	}
	return false;
}

/*
 * A thread that polls the same set again (winsync remembers a set it found
 * valid until a close): sets of four or more objects without mutexes are
 * kept, and a later wait of the same kind may take the kept set again, each
 * entry as it stands now: an own object closed since names nothing.
 */
#define REPEAT_MIN 4
#define REPEAT_PCT 30

static void keep_set(struct rt_ctx *c, bool all, const struct wset *w)
{
	struct rt_repeat *k = &c->repeat;

	if (w->count < REPEAT_MIN || w->count > WS_MAX_WAIT_OBJECTS)
		return;
	for (uint32_t i = 0; i < w->count; i++)
		if (w->e[i].type == RT_MUTEX || w->e[i].src == E_KICK)
			return;
	k->count = w->count;
	k->all = all;
	for (uint32_t i = 0; i < w->count; i++) {
		k->src[i] = (uint8_t)w->e[i].src;
		k->type[i] = (uint8_t)w->e[i].type;
		k->idx[i] = w->e[i].idx;
		k->h[i] = w->e[i].h;
	}
}

static bool set_again(struct rt_ctx *c, bool all, struct wset *w)
{
	const struct rt_repeat *k = &c->repeat;

	if (!k->count || k->all != all || !rt_pct(&c->rng, REPEAT_PCT))
		return false;
	for (uint32_t i = 0; i < k->count; i++) {
		struct entry *e = &w->e[i];

		*e = (struct entry){ (enum esrc)k->src[i], (enum rt_type)k->type[i], k->h[i], k->idx[i] };
		if (e->src == E_OWN) {
			const struct rt_own *o = rt_own_find(c, e->h);

			if (o)
				e->idx = (uint32_t)(o - c->own);
			else
				*e = (struct entry){ E_BAD, RT_NONE, k->h[i], 0 };
		}
		w->h[i] = e->h;
	}
	w->count = k->count;
	atomic_fetch_add(&rt_shm->waits_again, 1);
	return true;
}

/*
 * Whether a wait took a mutex: 1, 0, or -1 if it cannot be known (no index
 * came back, or a bad handle's type is unknown).  Even where the result is
 * wrong (a mutex alert taken), it says what the core did.
 */
static int type_is_mutex(const struct entry *e)
{
	return e->type == RT_MUTEX ? 1 : e->type == RT_NONE ? -1 : 0;
}

static int acquired_mutex(const struct wset *w, bool all, uint32_t count, int rc, uint32_t index)
{
	int got = 0;

	if (rc == -EOWNERDEAD)
		return 1;
	if (rc != 0)
		return 0;
	if (index == UINT32_MAX)
		return -1;
	if (count > w->count)
		count = w->count;
	if (index == count)
		return w->alert.h ? type_is_mutex(&w->alert) : 0;
	if (!all)
		return index < count ? type_is_mutex(&w->e[index]) : -1;
	for (uint32_t i = 0; index == 0 && i < count; i++) {
		int m = type_is_mutex(&w->e[i]);

		if (m > 0)
			return 1;
		got |= m;
	}
	return got;
}

/* An alert: none, or an event; a semaphore, a mutex or a bad handle for bad input. */
static void pick_alert(struct rt_ctx *c, struct wset *w, bool bad, struct entry *a)
{
	uint32_t r = rt_below(&c->rng, 100);

	memset(a, 0, sizeof *a);
	if (r < 40)
		return;
	if (bad && r < 50) {
		a->src = E_BAD;
		a->h = rt_garbage(c);
		return;
	}
	/* Alerts of every type: the ones that are not events are bad input. */
	for (int tries = 0; tries < 6; tries++) {
		struct entry e;

		if (!pick_entry(c, w, false, false, &e) || e.src == E_BAD)
			continue;
		if (e.type != RT_EVENT && !bad && !rt_pct(&c->rng, 10))
			continue;
		*a = e;
		return;
	}
}

static uint64_t ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

void rt_wait_op(struct rt_ctx *c, bool all)
{
	const struct rt_mode *m = &rt_shm->mode;
	struct wset w;
	struct ws_wait wait;
	struct timespec dl, after;
	struct rt_oprec *op;
	uint32_t index = 0xdead, count, nulls = 0, flags = 0, first_ready = UINT32_MAX;
	bool bad = rt_bad(c), forever = false, all_ready = true, alert_ready = false, nb;
	bool maybe_badf = false, maybe_abandoned = false, may_acquire;
	int32_t timeout_us;
	const char *why = NULL;
	uint32_t errs = 0;
	clockid_t clock = CLOCK_MONOTONIC;
	int rc;

	memset(&w, 0, sizeof w);
	w.owner = rt_pick_owner(c, true);
	if (rt_pct(&c->rng, 20))
		w.owner = c->me->owners[RT_OWNERS - 1];
	w.mutexes = w.owner != c->me->owners[RT_OWNERS - 1];
	if (!set_again(c, all, &w)) {
		if (rt_pct(&c->rng, m->big_wait_pct))
			count = rt_range(&c->rng, 30, WS_MAX_WAIT_OBJECTS);
		else
			count = rt_pct(&c->rng, 5) ? 0 : rt_range(&c->rng, 1, 5);
		for (uint32_t i = 0; i < count; i++) {
			if (!pick_entry(c, &w, all, bad && rt_pct(&c->rng, 10), &w.e[w.count]))
				break;
			w.h[w.count] = w.e[w.count].h;
			w.count++;
		}
		keep_set(c, all, &w);
	}
	count = w.count;
	/* wait_all of nothing acquires the empty set: its alert would be ambiguous. */
	if (!(all && count == 0))
		pick_alert(c, &w, bad, &w.alert);
	/* Deadlines: polls, short, long; forever only with the kick as alert. */
	if (rt_pct(&c->rng, m->poll_pct)) {
		timeout_us = -2;
	} else {
		uint32_t r = rt_below(&c->rng, 100);

		if (r < 2)
			timeout_us = -1;
		else if (r < 2 + m->long_wait_pct)
			timeout_us = (int32_t)rt_range(&c->rng, 20000, 200000);
		else if (r < 65)
			timeout_us = (int32_t)rt_below(&c->rng, 500);
		else
			timeout_us = (int32_t)rt_range(&c->rng, 500, 5000);
	}
	if (timeout_us == -1) {
		ws_handle kick = atomic_load(&c->me->kick);

		if (kick && !(all && count == 0)) {
			w.alert = (struct entry){ E_KICK, RT_EVENT, kick, 0 };
			forever = true;
		} else {
			timeout_us = -2;
		}
	}
	if (rt_pct(&c->rng, 10)) {
		flags = WS_WAIT_REALTIME;
		clock = CLOCK_REALTIME;
	}
	clock_gettime(clock, &dl);
	if (timeout_us == -2)
		dl.tv_sec -= 1;
	else if (timeout_us >= 0) {
		uint64_t t = ts_ns(&dl) + (uint64_t)timeout_us * 1000u;

		dl.tv_sec = (time_t)(t / 1000000000u);
		dl.tv_nsec = (long)(t % 1000000000u);
	}
	/* Bad input: one argument at a time. */
	if (bad) {
		switch (rt_below(&c->rng, 10)) {
		case 0: nulls |= 1; why = "NULL arena"; break;
		case 1: nulls |= 2; why = "NULL wait"; break;
		case 2: nulls |= 4; why = "NULL index"; break;
		case 3: if (count) { nulls |= 8; why = "NULL objects with a count"; } break;
		case 4: count = WS_MAX_WAIT_OBJECTS + 1 + rt_below(&c->rng, 3); why = "count above 64";
			if (rt_pct(&c->rng, 30)) count = UINT32_MAX;
			break;
		case 5: w.owner = 0; why = "owner 0"; break;
		case 6: flags |= 2u << rt_below(&c->rng, 30); why = "unknown flags"; break;
		case 7: if (!forever) { dl.tv_nsec = rt_pct(&c->rng, 50) ? -1 : 1000000000;
				why = "deadline nanoseconds out of range"; }
			break;
		case 8: if (all && count >= 2) { w.h[count - 1] = w.h[0]; w.e[count - 1] = w.e[0];
				why = "an object twice in a wait_all"; }
			break;
		default: break;
		}
		if (why)
			errs |= B(RC_EINVAL);
	}
	/* The errors the handles call for. */
	if (w.alert.h && w.alert.src != E_BAD && w.alert.type != RT_EVENT) {
		errs |= B(RC_EINVAL);
		if (!why)
			why = w.alert.type == RT_SEM ? "the alert is a semaphore" : "the alert is a mutex";
	}
	if (count <= WS_MAX_WAIT_OBJECTS && !(nulls & 8)) {
		for (uint32_t i = 0; i < count; i++) {
			if (w.e[i].src == E_BAD) {
				errs |= B(RC_EBADF);
				if (!why)
					why = "a handle that names nothing";
			}
			if (w.e[i].src == E_TABLE)
				maybe_badf = true;
		}
	}
	if (w.alert.src == E_BAD && w.alert.h) {
		errs |= B(RC_EBADF);
		if (!why)
			why = "an alert that names nothing";
	}
	if (w.alert.src == E_TABLE)
		maybe_badf = true;
	/* What is known ready: own objects by the model, and the beacon. */
	for (uint32_t i = 0; i < w.count; i++) {
		const struct entry *e = &w.e[i];
		bool ready = (e->src == E_OWN && rt_own_ready(&c->own[e->idx], w.owner)) ||
			     e->src == E_BEACON;

		if (ready && first_ready == UINT32_MAX)
			first_ready = i;
		all_ready &= ready;
		if (e->type == RT_MUTEX && (e->src != E_OWN || c->own[e->idx].abandoned))
			maybe_abandoned = true;
	}
	alert_ready = w.alert.h && ((w.alert.src == E_OWN && rt_own_ready(&c->own[w.alert.idx], w.owner)) ||
				    w.alert.src == E_BEACON);

	memset(&wait, 0, sizeof wait);
	wait.objects = nulls & 8 ? NULL : w.h;
	wait.count = count;
	wait.owner = w.owner;
	wait.alert = w.alert.h;
	wait.flags = flags;
	wait.deadline = forever ? NULL : &dl;
	c->cur = rt_pick_arena(c);
	nb = c->nb && c->cur == c->nb;
	op = rt_begin(c, all ? C_WAIT_ALL : C_WAIT_ANY);
	op->a[0] = count;
	op->a[1] = w.owner;
	op->a[2] = w.alert.h;
	op->a[3] = flags;
	op->a[5] = nulls;
	__atomic_store_n(&op->timeout_us, forever ? -1 : timeout_us, __ATOMIC_RELAXED);
	op->nobj = (uint8_t)w.count;
	memcpy(op->objs, w.h, w.count * sizeof(ws_handle));
	if (forever)
		atomic_store(&c->me->forever, 1);
	/* A mutex alert is bad input, but a core that takes it makes w.owner the last. */
	may_acquire = w.mutexes || (w.alert.h && (w.alert.type == RT_MUTEX || w.alert.type == RT_NONE));
	if (may_acquire)
		rt_acq_begin(c, w.owner);
	atomic_fetch_add(&rt_shm->waiting_ub, w.count + (w.alert.h != 0));
	rc = all ? ws_wait_all(nulls & 1 ? NULL : c->cur, nulls & 2 ? NULL : &wait,
			       nulls & 4 ? NULL : &index)
		 : ws_wait_any(nulls & 1 ? NULL : c->cur, nulls & 2 ? NULL : &wait,
			       nulls & 4 ? NULL : &index);
	atomic_fetch_sub(&rt_shm->waiting_ub, w.count + (w.alert.h != 0));
	clock_gettime(clock, &after);
	op->out[0] = index;
	rt_returned(c, op, rc);
	if (forever)
		atomic_store(&c->me->forever, 0);
	if (may_acquire)
		rt_acq_end(c, w.owner, acquired_mutex(&w, all, count, rc, nulls & 4 ? UINT32_MAX : index));

	/* What was acquired, by the pool's book-keeping, before the ring says done. */
	{
		uint32_t allowed_set;
		bool got = rc == 0 || rc == -EOWNERDEAD;

		if (errs) {
			allowed_set = errs;
		} else {
			allowed_set = B(RC_OK);
			if (maybe_abandoned)
				allowed_set |= B(RC_EOWNERDEAD);
			if (!forever && !(all ? all_ready : first_ready != UINT32_MAX) && !alert_ready)
				allowed_set |= B(RC_ETIMEDOUT);
			if (!w.mutexes)
				allowed_set |= B(RC_ECANCELED);
			if (!why)
				why = first_ready != UINT32_MAX || (all && all_ready) ? "a known-ready object" :
				      alert_ready ? "a known-ready alert" : "wait";
		}
		if (maybe_badf)
			allowed_set |= B(RC_EBADF);
		if (nb)
			allowed_set |= B(RC_EAGAIN);
		/* Unexpected or not, what was acquired is accounted (and the model re-read). */
		rt_expect(c, op, rc, allowed_set, why);
		if (rc == -ETIMEDOUT && ts_ns(&after) < ts_ns(&dl)) {
			rt_end(c, op, rc);
			rt_fail(c, "-ETIMEDOUT before the deadline",
				"%s returned -ETIMEDOUT %llu ns before its deadline (%s clock)",
				rt_call_name(op->call), (unsigned long long)(ts_ns(&dl) - ts_ns(&after)),
				flags & WS_WAIT_REALTIME ? "realtime" : "monotonic");
			return;
		}
		if (!got) {
			rt_end(c, op, rc);
			return;
		}
	}
	if (count > w.count)
		count = w.count; /* a bad count succeeded: only the real entries are known */
	if (!all && index < count) {
		struct entry *e = &w.e[index];
		bool abandoned = false;

		if (index > first_ready)
			rt_fail(c, "ws_wait_any: not the lowest-index ready object",
				"acquired index %u while index %u was known ready", index, first_ready);
		if (e->src == E_OWN) {
			struct rt_own *o = &c->own[e->idx];

			if (!rt_own_ready(o, w.owner))
				rt_fail(c, "ws_wait_any: acquired an own object that was not ready",
					"index %u, handle %#x", index, e->h);
			else
				abandoned = rt_own_take(o, w.owner);
			if (abandoned != (rc == -EOWNERDEAD))
				rt_fail(c, "ws_wait_any: -EOWNERDEAD wrong for an own mutex",
					"index %u handle %#x: rc %s, model abandoned %d", index, e->h,
					rt_errname(rc), abandoned);
		} else if (e->src == E_POOL) {
			if (rc == -EOWNERDEAD && e->type != RT_MUTEX)
				rt_fail(c, "ws_wait_any: -EOWNERDEAD for an object that is no mutex",
					"index %u handle %#x", index, e->h);
			rt_pool_acquired(c, e->idx, w.owner, rc == -EOWNERDEAD, true);
		} else if (e->src == E_BEACON && rc != 0) {
			rt_fail(c, "ws_wait_any: -EOWNERDEAD for an object that is no mutex",
				"index %u (the beacon)", index);
		} else if (e->src == E_TABLE && e->type == RT_MUTEX) {
			struct rt_oprec *u;
			int urc;

			rt_end(c, op, rc);
			u = rt_begin(c, C_MUTEX_UNLOCK);
			u->a[0] = e->h;
			u->a[1] = w.owner;
			urc = ws_mutex_unlock(c->arena, e->h, w.owner, NULL);
			rt_end(c, u, urc);
			rt_expect(c, u, urc, B(RC_OK) | B(RC_EBADF), "unlock of a table mutex just acquired");
			return;
		}
	} else if (index == count && w.alert.h && (!all || count > 0)) {
		if (!all && first_ready != UINT32_MAX)
			rt_fail(c, "ws_wait_any: the alert ended a wait with a known-ready object",
				"index %u (the alert) while index %u was known ready", index, first_ready);
		if (all && all_ready)
			rt_fail(c, "ws_wait_all: the alert ended a wait whose objects were all known ready",
				"index %u (the alert)", index);
		if (rc != 0)
			rt_fail(c, "wait: -EOWNERDEAD for the alert", "alert %#x", w.alert.h);
		if (w.alert.src == E_OWN) {
			if (!rt_own_ready(&c->own[w.alert.idx], w.owner))
				rt_fail(c, "wait: acquired an own alert that was not set",
					"alert %#x", w.alert.h);
			else
				rt_own_take(&c->own[w.alert.idx], w.owner);
		} else if (w.alert.src == E_POOL) {
			rt_pool_acquired(c, w.alert.idx, w.owner, false, true);
		}
	} else if (all && index == 0) {
		bool abandoned = false, own_abandoned = false;

		for (uint32_t i = 0; i < count; i++) {
			struct entry *e = &w.e[i];

			if (e->src == E_OWN) {
				struct rt_own *o = &c->own[e->idx];

				if (!rt_own_ready(o, w.owner)) {
					rt_fail(c, "ws_wait_all: acquired an own object that was not ready",
						"index %u, handle %#x", i, e->h);
					continue;
				}
				abandoned = rt_own_take(o, w.owner);
				own_abandoned |= abandoned;
			} else if (e->src == E_POOL) {
				rt_pool_acquired(c, e->idx, w.owner, rc == -EOWNERDEAD, false);
			}
		}
		if (own_abandoned && rc != -EOWNERDEAD)
			rt_fail(c, "ws_wait_all: an abandoned own mutex acquired without -EOWNERDEAD",
				"rc %s", rt_errname(rc));
		if (rc == -EOWNERDEAD && !maybe_abandoned)
			rt_fail(c, "ws_wait_all: -EOWNERDEAD with no abandoned mutex in the set", "rc %s",
				rt_errname(rc));
		for (uint32_t i = 0; i < count; i++) {
			struct entry *e = &w.e[i];

			if (e->src == E_TABLE && e->type == RT_MUTEX) {
				struct rt_oprec *u = rt_begin(c, C_MUTEX_UNLOCK);
				int urc;

				u->a[0] = e->h;
				u->a[1] = w.owner;
				urc = ws_mutex_unlock(c->arena, e->h, w.owner, NULL);
				rt_end(c, u, urc);
				rt_expect(c, u, urc, B(RC_OK) | B(RC_EBADF), "unlock of a table mutex just acquired");
			}
		}
	} else {
		rt_fail(c, "wait: an index outside the set",
			"%s returned %s with index %u (count %u, alert %#x)", rt_call_name(op->call),
			rt_errname(rc), index, count, w.alert.h);
	}
	rt_end(c, op, rc);
}
