/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pool: shared objects that every actor of every process uses and
 * nobody closes.  Their states are unknown while the run goes on, so what
 * is checked are invariants kept by counters in shared memory:
 *   - semaphore units are conserved (initial + released - acquired = count),
 *   - auto-reset event tokens: every acquisition was given by a set or a pulse,
 *   - mutual exclusion: a holder word each mutex's owner claims after every
 *     acquisition and clears before the last unlock,
 *   - the beacon, a manual event set for ever, is always ready.
 * An actor that died inside a call leaves slack (its call may or may not
 * have happened): the final checks allow exactly that much.
 */
#include "rt.h"

#include <stdlib.h>
#include <string.h>

static uint32_t *sorted_index(void)
{
	return (uint32_t *)(rt_pool + rt_shm->pool_count);
}

int rt_pool_create(struct rt_ctx *c, uint32_t events, uint32_t sems, uint32_t mutexes,
		   struct rt_rng *rng)
{
	uint32_t n = 0, total = events + sems + mutexes;
	uint32_t *sorted = sorted_index();

	rt_shm->beacon = UINT32_MAX;
	for (uint32_t i = 0; i < total; i++) {
		struct rt_pool_obj *p = &rt_pool[n];
		struct rt_oprec *op;
		int rc;

		memset(p, 0, sizeof *p);
		if (i < events) {
			p->type = RT_EVENT;
			p->beacon = i == 0 && events > 2;
			p->manual = p->beacon || rt_pct(rng, 35);
			p->initial = p->beacon || rt_pct(rng, 30);
			rc = rt_create_call(c, RT_EVENT, p->manual, p->initial, false, &p->h, &op);
		} else if (i < events + sems) {
			p->type = RT_SEM;
			p->big = rt_pct(rng, 50);
			p->max = p->big ? 1u << 30 : rt_range(rng, 1, 6);
			p->initial = rt_below(rng, (p->big ? 3 : p->max) + 1);
			rc = rt_create_call(c, RT_SEM, p->initial, p->max, false, &p->h, &op);
		} else {
			p->type = RT_MUTEX;
			rc = rt_create_call(c, RT_MUTEX, 0, 0, false, &p->h, &op);
		}
		if (rc) {
			fprintf(stderr, "winsync-random: creating the pool: %s\n", rt_errname(rc));
			return rc;
		}
		if (p->beacon)
			rt_shm->beacon = n;
		sorted[n] = n;
		n++;
	}
	/* Handle order, for finding a pool object by handle (slack of dead actors). */
	for (uint32_t i = 1; i < n; i++) {
		uint32_t v = sorted[i], j = i;

		while (j > 0 && rt_pool[sorted[j - 1]].h > rt_pool[v].h) {
			sorted[j] = sorted[j - 1];
			j--;
		}
		sorted[j] = v;
	}
	return 0;
}

int32_t rt_pool_index(ws_handle h)
{
	const uint32_t *sorted = sorted_index();
	uint32_t lo = 0, hi = rt_shm->pool_count;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		ws_handle m = rt_pool[sorted[mid]].h;

		if (m == h)
			return (int32_t)sorted[mid];
		if (m < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Is the actor that used `owner` gone (or being killed)?  Synthetic ids only. */
bool rt_owner_dead(uint32_t owner)
{
	uint32_t serial;

	if (owner < RT_OWNER_BASE)
		return false;
	serial = (owner - RT_OWNER_BASE) >> 2;
	for (int i = 0; i < RT_MAX_ACTORS; i++) {
		struct rt_actor *a = &rt_shm->actors[i];
		int state = atomic_load(&a->state);

		if (a->serial == serial && (state == A_RUNNING || state == A_DONE))
			return false;
	}
	return true;
}

void rt_acq_begin(struct rt_ctx *c, uint32_t owner)
{
	atomic_store(&c->me->pending_acq, owner);
}

/*
 * acquired: 1 yes, 0 no, -1 unknown (then no id is known to be the last
 * until the next acquisition).  Last is stored before pending is cleared: a
 * death in between leaves both equal.
 */
void rt_acq_end(struct rt_ctx *c, uint32_t owner, int acquired)
{
	if (acquired)
		atomic_store(&c->me->last_acq, acquired > 0 ? owner : RT_ACQ_UNKNOWN);
	atomic_store(&c->me->pending_acq, 0);
}

/*
 * Which of a dead actor's owner ids must see their mutexes abandoned: all of
 * them if ws_owner_died told it; else the one it used last to acquire, unless
 * it died in a call that may have acquired under another id (then either
 * could be the last, and neither is required).
 */
void rt_abandon_rule_set(struct rt_actor *a, bool told)
{
	uint32_t serial = atomic_load(&a->serial), last = atomic_load(&a->last_acq);
	uint32_t pending = atomic_load(&a->pending_acq), mask = 0;

	if (told) {
		mask = (1u << RT_OWNERS) - 1;
	} else if (last && (!pending || pending == last)) {
		for (int k = 0; k < RT_OWNERS; k++)
			if (atomic_load(&a->owners[k]) == last)
				mask |= 1u << k;
	}
	atomic_store(&rt_shm->abandon_rule[serial % RT_SERIALS],
		     (uint64_t)serial << 32 | 1u << 31 | mask);
}

/* Whether the header says a dead owner's mutexes are abandoned. */
static bool must_abandon(uint32_t owner)
{
	uint32_t serial = (owner - RT_OWNER_BASE) >> 2, k = (owner - RT_OWNER_BASE) & 3;
	uint64_t rule = atomic_load(&rt_shm->abandon_rule[serial % RT_SERIALS]);

	return (uint32_t)(rule >> 32) == serial && (rule & 1u << 31) && (rule & 1u << k);
}

struct rt_held *rt_held_find(struct rt_ctx *c, uint32_t pool)
{
	for (uint32_t i = 0; i < c->nheld; i++)
		if (c->held[i].pool == pool)
			return &c->held[i];
	return NULL;
}

/*
 * A wait acquired pool object `pool` for `owner`.  abandoned_ok: the wait said
 * -EOWNERDEAD, so a mutex may come from a dead holder.
 */
void rt_pool_acquired(struct rt_ctx *c, uint32_t pool, uint32_t owner, bool abandoned_ok,
		      bool single)
{
	struct rt_pool_obj *p = &rt_pool[pool];
	struct rt_held *held;
	uint32_t seen = 0;

	switch (p->type) {
	case RT_SEM:
		atomic_fetch_add(&p->acq, 1);
		return;
	case RT_EVENT:
		if (!p->manual)
			atomic_fetch_add(&p->acq, 1);
		return;
	default:
		break;
	}
	held = rt_held_find(c, pool);
	if (held) {
		if (held->owner != owner)
			rt_fail(c, "wait acquired a mutex another owner id holds",
				"pool mutex %#x held by %#x (count %u) acquired by %#x", p->h,
				held->owner, held->count, owner);
		else if (single && abandoned_ok)
			rt_fail(c, "wait said -EOWNERDEAD for a mutex its owner holds",
				"pool mutex %#x held by %#x", p->h, owner);
		seen = atomic_load(&p->holder);
		if (seen != held->owner)
			rt_fail(c, "mutual exclusion: holder word changed under its holder",
				"pool mutex %#x: holder word %#x, held by %#x", p->h, seen, held->owner);
		held->count++;
		return;
	}
	if (!atomic_compare_exchange_strong(&p->holder, &seen, owner)) {
		if (abandoned_ok && rt_owner_dead(seen)) {
			atomic_store(&p->holder, owner);
		} else {
			rt_fail(c, "mutual exclusion: mutex acquired while another owner holds it",
				"pool mutex %#x acquired by %#x (rc %s) while the holder word says %#x "
				"(%s)", p->h, owner, abandoned_ok ? "-EOWNERDEAD" : "0", seen,
				rt_owner_dead(seen) ? "dead" : "alive");
			atomic_store(&p->holder, owner);
		}
	}
	if (c->nheld < RT_HELD_MAX) {
		c->held[c->nheld++] = (struct rt_held){ pool, owner, 1 };
	} else {
		rt_fail(c, "tester: too many held mutexes", "pool mutex %#x", p->h);
	}
}

/* Releases every pool mutex the actor holds (the holder word first). */
void rt_pool_release_all(struct rt_ctx *c)
{
	ws_arena *saved = c->cur;

	c->cur = c->arena;
	while (c->nheld) {
		struct rt_held *h = &c->held[c->nheld - 1];
		struct rt_pool_obj *p = &rt_pool[h->pool];
		uint32_t expected = h->owner;

		if (!atomic_compare_exchange_strong(&p->holder, &expected, 0))
			rt_fail(c, "mutual exclusion: holder word changed under its holder",
				"pool mutex %#x: holder word %#x, held by %#x", p->h, expected, h->owner);
		for (uint32_t left = h->count; left > 0; left--) {
			struct rt_oprec *op = rt_begin(c, C_MUTEX_UNLOCK);
			uint32_t prev = 0;
			int rc;

			op->a[0] = p->h;
			op->a[1] = h->owner;
			rc = ws_mutex_unlock(c->arena, p->h, h->owner, &prev);
			op->out[0] = prev;
			rt_end(c, op, rc);
			if (!rt_expect(c, op, rc, B(RC_OK), "unlock of a held pool mutex"))
				break;
			if (prev != left)
				rt_fail(c, "ws_mutex_unlock: wrong previous count of a held mutex",
					"pool mutex %#x: prev %u, held %u times", p->h, prev, left);
		}
		c->nheld--;
	}
	c->cur = saved;
}

/* An actor died inside `op`: widen the checks of the objects it touched. */
void rt_pool_slack(const struct rt_oprec *op)
{
	int32_t i;

	switch (op->call) {
	case C_WAIT_ANY:
	case C_WAIT_ALL:
		for (uint32_t k = 0; k < op->nobj && k < WS_MAX_WAIT_OBJECTS; k++) {
			i = rt_pool_index(op->objs[k]);
			if (i >= 0)
				atomic_fetch_add(&rt_pool[i].slack_acq, 1);
		}
		i = op->a[2] ? rt_pool_index(op->a[2]) : -1;
		if (i >= 0)
			atomic_fetch_add(&rt_pool[i].slack_acq, 1);
		break;
	case C_SEM_RELEASE:
		i = rt_pool_index(op->a[0]);
		if (i >= 0)
			atomic_fetch_add(&rt_pool[i].slack_rel, op->a[1]);
		break;
	case C_EVENT_SET:
		i = rt_pool_index(op->a[0]);
		if (i >= 0)
			atomic_fetch_add(&rt_pool[i].slack_set, 1);
		break;
	case C_EVENT_RESET:
	case C_EVENT_PULSE:
		i = rt_pool_index(op->a[0]);
		if (i >= 0)
			atomic_fetch_add(&rt_pool[i].slack_tokens, 1);
		break;
	default:
		break;
	}
}

/*
 * A mutex a dead owner left: the next waiter must get it, abandoned, within
 * 100 ms (2 s allowed).  After 3 that time out the rest only count, so that
 * the end of a run stays bounded however many mutexes a bug leaves behind.
 */
static void probe_abandoned(struct rt_ctx *c, struct rt_pool_obj *p, uint32_t dead_owner)
{
	static int timeouts;
	uint32_t owner = c->me->owners[0], index = 99;
	struct timespec dl;
	struct ws_wait w = { .objects = &p->h, .count = 1, .owner = owner, .deadline = &dl };
	struct rt_oprec *op;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	if (timeouts < 3)
		dl.tv_sec += 2;
	op = rt_begin(c, C_WAIT_ANY);
	op->a[0] = 1;
	op->a[1] = owner;
	op->nobj = 1;
	op->objs[0] = p->h;
	op->timeout_us = 2000000;
	atomic_fetch_add(&rt_shm->waiting_ub, 1);
	rc = ws_wait_any(c->arena, &w, &index);
	atomic_fetch_sub(&rt_shm->waiting_ub, 1);
	op->out[0] = index;
	rt_end(c, op, rc);
	if (rc == -ETIMEDOUT) {
		uint32_t serial = (dead_owner - RT_OWNER_BASE) >> 2;

		for (int i = 0; i < RT_MAX_ACTORS && timeouts < 3; i++) {
			if (atomic_load(&rt_shm->actors[i].serial) == serial) {
				rt_lock(&rt_shm->print_lock);
				fprintf(stderr, "\nthe dead owner's actor:\n");
				rt_print_ring(&rt_shm->actors[i], 2);
				rt_unlock(&rt_shm->print_lock);
			}
		}
		timeouts++;
		rt_fail(c, "a mutex whose owner died was never abandoned",
			"pool mutex %#x still owned by %#x (its actor is gone) after a 2 s wait",
			p->h, dead_owner);
		return;
	}
	if (rt_expect(c, op, rc, B(RC_OK) | B(RC_EOWNERDEAD), "final wait on a dead owner's mutex")) {
		uint32_t prev = 0;

		op = rt_begin(c, C_MUTEX_UNLOCK);
		op->a[0] = p->h;
		op->a[1] = owner;
		rc = ws_mutex_unlock(c->arena, p->h, owner, &prev);
		rt_end(c, op, rc);
		rt_expect(c, op, rc, B(RC_OK), "unlock after the final wait");
	}
}

/* After every actor ended: each pool object against its counters. */
void rt_pool_final(struct rt_ctx *c)
{
	c->cur = c->arena;
	for (uint32_t i = 0; i < rt_shm->pool_count; i++) {
		struct rt_pool_obj *p = &rt_pool[i];
		struct rt_oprec *op;
		uint32_t x = 0, y = 0;
		bool s = false, m = false;
		int rc;

		switch (p->type) {
		case RT_SEM: {
			int64_t acq = (int64_t)p->acq, rel = (int64_t)p->rel_units;
			int64_t lo = p->initial + rel - acq - p->slack_acq;
			int64_t hi = p->initial + rel + p->slack_rel - acq;

			op = rt_begin(c, C_SEM_READ);
			op->a[0] = p->h;
			rc = ws_sem_read(c->arena, p->h, &x, &y);
			rt_end(c, op, rc);
			if (!rt_expect(c, op, rc, B(RC_OK), "final read of a pool semaphore"))
				break;
			if (y != p->max || (int64_t)x < lo || (int64_t)x > hi)
				rt_fail(c, "semaphore units not conserved",
					"pool semaphore %#x: count %u max %u; initial %u + released %lld - "
					"acquired %lld (slack: %u acquisitions, %u units released) "
					"allows %lld..%lld, max %u",
					p->h, x, y, p->initial, (long long)rel, (long long)acq,
					p->slack_acq, p->slack_rel, (long long)lo, (long long)hi, p->max);
			break;
		}
		case RT_EVENT:
			op = rt_begin(c, C_EVENT_READ);
			op->a[0] = p->h;
			rc = ws_event_read(c->arena, p->h, &s, &m);
			rt_end(c, op, rc);
			if (!rt_expect(c, op, rc, B(RC_OK), "final read of a pool event"))
				break;
			if (m != p->manual || (p->beacon && !s)) {
				rt_fail(c, "pool event changed kind or the beacon went out",
					"pool event %#x: signaled %d manual %d, created manual %d beacon %d",
					p->h, s, m, p->manual, p->beacon);
				break;
			}
			if (!p->manual) {
				/* acquisitions = initial + created - destroyed - final + what pulses gave */
				int64_t acq = (int64_t)p->acq;
				int64_t base = (int64_t)p->initial + (int64_t)p->created -
					       (int64_t)p->reset_true - (int64_t)p->pulse_true - s;
				int64_t pulses = (int64_t)(p->pulse_true + p->pulse_false);

				if (acq > base + p->slack_set + pulses + p->slack_tokens ||
				    acq + p->slack_acq < base - p->slack_tokens)
					rt_fail(c, "auto-reset event tokens not conserved",
						"pool event %#x: acquired %lld; initial %u + sets that "
						"signaled %llu - resets that cleared %llu - pulses that "
						"cleared %llu - final %d = %lld, pulses %lld may add; slack "
						"acq %u set %u tokens %u", p->h, (long long)acq, p->initial,
						(unsigned long long)p->created,
						(unsigned long long)p->reset_true,
						(unsigned long long)p->pulse_true, s, (long long)base,
						(long long)pulses, p->slack_acq, p->slack_set,
						p->slack_tokens);
			}
			break;
		case RT_MUTEX: {
			uint32_t holder = atomic_load(&p->holder);

			op = rt_begin(c, C_MUTEX_READ);
			op->a[0] = p->h;
			rc = ws_mutex_read(c->arena, p->h, &x, &y);
			op->out[0] = x;
			op->out[1] = y;
			rt_end(c, op, rc);
			if (!rt_expect(c, op, rc, B(RC_OK) | B(RC_EOWNERDEAD), "final read of a pool mutex"))
				break;
			if ((holder && !rt_owner_dead(holder)) || (y && !rt_owner_dead(y)) ||
			    (x == 0) != (y == 0)) {
				rt_fail(c, "a pool mutex is held after every live actor released it",
					"pool mutex %#x: count %u owner %#x, holder word %#x", p->h, x, y,
					holder);
				break;
			}
			if (y && must_abandon(y))
				probe_abandoned(c, p, y);
			else if (y)
				atomic_fetch_add(&rt_shm->kept_owned, 1);
			break;
		}
		default:
			break;
		}
	}
}
