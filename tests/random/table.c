/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Handles known to be closed (they must stay -EBADF for ever), and the
 * close/reuse table: shared entries that actors fill with new objects and
 * close while others read, release, set and wait on them.  An entry's word
 * carries the handle with its type and creation parameter, so whoever read
 * the word knows what that handle's object is: any answer must be one of its
 * real states, or -EBADF.
 */
#include "rt.h"

#define TW_RESERVED (1ull << 63)

void rt_closed_add(ws_handle h)
{
	uint32_t n = atomic_fetch_add(&rt_shm->closed_next, 1);

	atomic_store(&rt_shm->closed[n % RT_CLOSED_RING], h);
}

ws_handle rt_closed_pick(struct rt_rng *rng)
{
	uint32_t n = atomic_load(&rt_shm->closed_next);

	if (!n)
		return 0;
	return atomic_load(&rt_shm->closed[rt_below(rng, n < RT_CLOSED_RING ? n : RT_CLOSED_RING)]);
}

static struct rt_table_entry *entry(uint32_t i)
{
	return &rt_shm->table[i];
}

/* A published entry: its word, or 0. */
static uint64_t pick_live(struct rt_ctx *c, uint32_t *index)
{
	uint32_t n = rt_shm->mode.table;

	for (int tries = 0; tries < 4; tries++) {
		uint32_t i = rt_below(&c->rng, n);
		uint64_t w = atomic_load(&entry(i)->word);

		if (w && !(w & TW_RESERVED)) {
			*index = i;
			return w;
		}
	}
	return 0;
}

static void table_create(struct rt_ctx *c)
{
	uint32_t n = rt_shm->mode.table, i = rt_below(&c->rng, n);
	uint64_t expected = 0, w;
	enum rt_type type = (enum rt_type)rt_range(&c->rng, RT_SEM, RT_EVENT);
	uint32_t v1 = 0, v2 = 0, param = 0, units = 0;
	struct rt_oprec *op;
	ws_handle h = 0;
	int rc;

	if (!atomic_compare_exchange_strong(&entry(i)->word, &expected, TW_RESERVED))
		return;
	switch (type) {
	case RT_SEM:
		/* Small maxima overflow; the big ones only when something is wrong. */
		param = rt_pct(&c->rng, 50) ? rt_range(&c->rng, 1, 6) : 1u << 24;
		v1 = units = rt_below(&c->rng, (param > 6 ? 3 : param) + 1);
		v2 = param;
		break;
	case RT_EVENT:
		param = v1 = rt_pct(&c->rng, 50);
		v2 = rt_pct(&c->rng, 50);
		break;
	default:
		break;
	}
	c->cur = rt_pick_arena(c);
	rc = rt_create_call(c, type, v1, v2, false, &h, &op);
	if (rc) {
		rt_expect(c, op, rc, B(RC_ENOSPC) | (c->cur == c->nb ? B(RC_EAGAIN) : 0),
			  "create for the table");
		atomic_store(&entry(i)->word, 0);
		return;
	}
	atomic_store(&entry(i)->units, (uint64_t)h << 32 | units);
	w = TW_MAKE(h, type, param);
	atomic_store(&entry(i)->word, w);
}

static void table_close(struct rt_ctx *c)
{
	uint32_t i;
	uint64_t w = pick_live(c, &i);

	if (!w || !atomic_compare_exchange_strong(&entry(i)->word, &w, 0))
		return;
	/* Claimed: this thread is the one closer of that handle. */
	c->cur = c->arena;
	rt_close_call(c, TW_HANDLE(w), B(RC_OK), "close of a claimed table entry");
}

/* Units released so far on handle h (initial included), or UINT32_MAX if unknown. */
static uint32_t units_bound(uint32_t i, ws_handle h)
{
	uint64_t u = atomic_load(&entry(i)->units);

	return (ws_handle)(u >> 32) == h ? (uint32_t)u : UINT32_MAX;
}

/* Counts `count` units about to be released on h (before the call: a bound
 * for every call that ends after it). */
static void units_add(uint32_t i, ws_handle h, uint32_t count)
{
	uint64_t u = atomic_load(&entry(i)->units);

	while ((ws_handle)(u >> 32) == h &&
	       !atomic_compare_exchange_weak(&entry(i)->units, &u, u + count))
		;
}

void rt_table_op(struct rt_ctx *c, enum rt_kind kind);
void rt_table_op(struct rt_ctx *c, enum rt_kind kind)
{
	uint32_t i, x = 0, y = 0, bound;
	uint64_t w;
	ws_handle h;
	struct rt_oprec *op;
	bool s = false, m = false, nb;
	int rc;

	if (kind == K_CREATE) {
		table_create(c);
		return;
	}
	if (kind == K_CLOSE) {
		table_close(c);
		return;
	}
	w = pick_live(c, &i);
	if (!w)
		return;
	h = TW_HANDLE(w);
	c->cur = rt_pick_arena(c);
	nb = c->cur == c->nb;
	switch (kind) {
	case K_SEM_READ:
	case K_SEM_RELEASE:
		if (TW_TYPE(w) != RT_SEM)
			return;
		if (kind == K_SEM_READ) {
			op = rt_begin(c, C_SEM_READ);
			op->a[0] = h;
			rc = ws_sem_read(c->cur, h, &x, &y);
			op->out[0] = x;
			op->out[1] = y;
			rt_end(c, op, rc);
			if (!rt_expect(c, op, rc, B(RC_OK) | B(RC_EBADF) | (nb ? B(RC_EAGAIN) : 0),
				       "read of a table semaphore that may be closing") || rc)
				return;
			bound = units_bound(i, h);
			if (y != TW_PARAM(w) || x > y || (bound != UINT32_MAX && x > bound))
				rt_fail(c, "ws_sem_read: a state the semaphore never had",
					"handle %#x (created with max %u, at most %u units so far): "
					"read count %u max %u", h, TW_PARAM(w), bound, x, y);
		} else {
			uint32_t count = rt_range(&c->rng, 1, 3);

			units_add(i, h, count);
			op = rt_begin(c, C_SEM_RELEASE);
			op->a[0] = h;
			op->a[1] = count;
			rc = ws_sem_release(c->cur, h, count, &x);
			op->out[0] = x;
			rt_end(c, op, rc);
			if (!rt_expect(c, op, rc, B(RC_OK) | B(RC_EBADF) | B(RC_EOVERFLOW) |
				       (nb ? B(RC_EAGAIN) : 0), "release of a table semaphore that may be closing"))
				return;
			/*
			 * Read after the call, the bound counts every release that took
			 * effect before ours (each counts its units before its call), and
			 * ours: below the maximum, nothing can have overflowed.
			 */
			bound = units_bound(i, h);
			if (rc == -EOVERFLOW && bound != UINT32_MAX && bound <= TW_PARAM(w))
				rt_fail(c, "ws_sem_release: -EOVERFLOW for a release that cannot overflow",
					"handle %#x (max %u): at most %u units ever, this release of %u "
					"included", h, TW_PARAM(w), bound, count);
			if (rc == 0 && (x + count > TW_PARAM(w) || x + count < x))
				rt_fail(c, "ws_sem_release: a previous count the semaphore never had",
					"handle %#x (max %u): prev %u + %u", h, TW_PARAM(w), x, count);
		}
		return;
	case K_EVENT_READ:
		if (TW_TYPE(w) != RT_EVENT)
			return;
		op = rt_begin(c, C_EVENT_READ);
		op->a[0] = h;
		rc = ws_event_read(c->cur, h, &s, &m);
		op->out[0] = s;
		op->out[1] = m;
		rt_end(c, op, rc);
		if (rt_expect(c, op, rc, B(RC_OK) | B(RC_EBADF) | (nb ? B(RC_EAGAIN) : 0),
			      "read of a table event that may be closing") && rc == 0 &&
		    m != (TW_PARAM(w) != 0))
			rt_fail(c, "ws_event_read: a state the event never had",
				"handle %#x created %s: read manual_reset %d", h,
				TW_PARAM(w) ? "manual-reset" : "auto-reset", m);
		return;
	case K_EVENT_SET:
	case K_EVENT_RESET:
	case K_EVENT_PULSE: {
		static const enum rt_call calls[] = { C_EVENT_SET, C_EVENT_RESET, C_EVENT_PULSE };
		enum rt_call call = calls[kind - K_EVENT_SET];

		if (TW_TYPE(w) != RT_EVENT)
			return;
		op = rt_begin(c, call);
		op->a[0] = h;
		rc = call == C_EVENT_SET ? ws_event_set(c->cur, h, &s) :
		     call == C_EVENT_RESET ? ws_event_reset(c->cur, h, &s) :
					     ws_event_pulse(c->cur, h, &s);
		op->out[0] = s;
		rt_end(c, op, rc);
		rt_expect(c, op, rc, B(RC_OK) | B(RC_EBADF) | (nb ? B(RC_EAGAIN) : 0),
			  "change of a table event that may be closing");
		return;
	}
	case K_MUTEX_READ:
		if (TW_TYPE(w) != RT_MUTEX)
			return;
		op = rt_begin(c, C_MUTEX_READ);
		op->a[0] = h;
		rc = ws_mutex_read(c->cur, h, &x, &y);
		op->out[0] = x;
		op->out[1] = y;
		rt_end(c, op, rc);
		if (rt_expect(c, op, rc, B(RC_OK) | B(RC_EOWNERDEAD) | B(RC_EBADF) |
			      (nb ? B(RC_EAGAIN) : 0), "read of a table mutex that may be closing") &&
		    (rc == 0 || rc == -EOWNERDEAD) && ((x == 0) != (y == 0) || x > 1))
			rt_fail(c, "ws_mutex_read: a state the mutex never had",
				"handle %#x: count %u owner %#x (table mutexes are held once at most)",
				h, x, y);
		return;
	default:
		return;
	}
}
