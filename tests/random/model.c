/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The exact model of the objects one actor owns: nobody else touches them,
 * so every result of every call on them is known in advance.
 */
#include "rt.h"

#include <string.h>

bool rt_own_ready(const struct rt_own *o, uint32_t owner)
{
	switch (o->type) {
	case RT_SEM:
		return o->count > 0;
	case RT_EVENT:
		return o->signaled;
	case RT_MUTEX:
		/* A recursion count at UINT32_MAX cannot grow: not ready for its owner. */
		return o->owner == 0 || (o->owner == owner && o->rec < UINT32_MAX);
	default:
		return false;
	}
}

/* Acquires a ready object for `owner`: true if that took an abandoned mutex. */
bool rt_own_take(struct rt_own *o, uint32_t owner)
{
	bool abandoned;

	switch (o->type) {
	case RT_SEM:
		o->count--;
		return false;
	case RT_EVENT:
		if (!o->manual)
			o->signaled = false;
		return false;
	case RT_MUTEX:
		if (o->owner == owner) {
			o->rec++;
			return false;
		}
		abandoned = o->abandoned;
		o->owner = owner;
		o->rec = 1;
		o->abandoned = false;
		return abandoned;
	default:
		return false;
	}
}

struct rt_own *rt_own_find(struct rt_ctx *c, ws_handle h)
{
	for (uint32_t i = 0; i < c->nown; i++)
		if (c->own[i].h == h)
			return &c->own[i];
	return NULL;
}

void rt_own_add(struct rt_ctx *c, const struct rt_own *o)
{
	c->own[c->nown++] = *o;
	for (int i = 0; i < RT_OWN_MAX; i++) {
		ws_handle expected = 0;

		if (atomic_compare_exchange_strong(&c->me->own[i], &expected, o->h))
			return;
	}
}

void rt_own_remove(struct rt_ctx *c, struct rt_own *o)
{
	ws_handle h = o->h;

	for (int i = 0; i < RT_OWN_MAX; i++) {
		ws_handle expected = h;

		if (atomic_compare_exchange_strong(&c->me->own[i], &expected, 0))
			break;
	}
	*o = c->own[--c->nown];
	c->closed[c->nclosed++ % 64] = h;
	rt_closed_add(h);
}

bool rt_owner_is_mine(struct rt_ctx *c, uint32_t owner)
{
	for (int i = 0; i < RT_OWNERS; i++)
		if (c->me->owners[i] == owner)
			return true;
	return false;
}

/* Reads an own object through the blocking pointer and compares with the model. */
void rt_own_verify(struct rt_ctx *c, struct rt_own *o)
{
	ws_arena *saved = c->cur;
	struct rt_oprec *op;
	uint32_t x = 0, y = 0;
	bool s = false, m = false;
	int rc, want = 0;

	c->cur = c->arena;
	switch (o->type) {
	case RT_SEM:
		op = rt_begin(c, C_SEM_READ);
		op->a[0] = o->h;
		rc = ws_sem_read(c->arena, o->h, &x, &y);
		op->out[0] = x;
		op->out[1] = y;
		rt_end(c, op, rc);
		if (rt_expect(c, op, rc, B(RC_OK), "verify own semaphore") && (x != o->count || y != o->max))
			rt_fail(c, "ws_sem_read: own semaphore differs from its model",
				"handle %#x: read count %u max %u, model count %u max %u", o->h, x, y,
				o->count, o->max);
		break;
	case RT_EVENT:
		op = rt_begin(c, C_EVENT_READ);
		op->a[0] = o->h;
		rc = ws_event_read(c->arena, o->h, &s, &m);
		op->out[0] = s;
		op->out[1] = m;
		rt_end(c, op, rc);
		if (rt_expect(c, op, rc, B(RC_OK), "verify own event") &&
		    (s != o->signaled || m != o->manual))
			rt_fail(c, "ws_event_read: own event differs from its model",
				"handle %#x: read signaled %d manual %d, model %d %d", o->h, s, m,
				o->signaled, o->manual);
		break;
	case RT_MUTEX:
		op = rt_begin(c, C_MUTEX_READ);
		op->a[0] = o->h;
		rc = ws_mutex_read(c->arena, o->h, &x, &y);
		op->out[0] = x;
		op->out[1] = y;
		rt_end(c, op, rc);
		want = o->abandoned ? -EOWNERDEAD : 0;
		if (rt_expect(c, op, rc, B(rt_bucket(want)), "verify own mutex") &&
		    (x != o->rec || y != o->owner))
			rt_fail(c, "ws_mutex_read: own mutex differs from its model",
				"handle %#x: read count %u owner %#x, model %u %#x", o->h, x, y, o->rec,
				o->owner);
		break;
	default:
		break;
	}
	c->cur = saved;
}

/*
 * After a violation the model may be wrong (the call did something else than
 * predicted): take the arena's word for every own object and pool mutex, so
 * that a --keep-going run reports the next kind, not the same one again.
 */
void rt_resync(struct rt_ctx *c)
{
	ws_arena *a = c->arena;

	c->resync = false;
	for (uint32_t i = 0; i < c->nown; i++) {
		struct rt_own *o = &c->own[i];
		uint32_t x = 0, y = 0;
		bool s = false, m = false;
		int rc;

		switch (o->type) {
		case RT_SEM:
			if (ws_sem_read(a, o->h, &x, &y) == 0)
				o->count = x, o->max = y;
			break;
		case RT_EVENT:
			if (ws_event_read(a, o->h, &s, &m) == 0)
				o->signaled = s, o->manual = m;
			break;
		case RT_MUTEX:
			rc = ws_mutex_read(a, o->h, &x, &y);
			if (rc == 0 || rc == -EOWNERDEAD)
				o->rec = x, o->owner = y, o->abandoned = rc == -EOWNERDEAD;
			break;
		default:
			break;
		}
	}
	for (uint32_t p = 0; p < rt_shm->pool_count; p++) {
		struct rt_pool_obj *obj = &rt_pool[p];
		struct rt_held *held;
		uint32_t x = 0, y = 0;
		int rc;

		if (obj->type != RT_MUTEX)
			continue;
		rc = ws_mutex_read(a, obj->h, &x, &y);
		if (rc != 0 && rc != -EOWNERDEAD)
			continue;
		held = rt_held_find(c, p);
		if (rt_owner_is_mine(c, y)) {
			if (!held && c->nheld < RT_HELD_MAX)
				held = &c->held[c->nheld++];
			if (held) {
				*held = (struct rt_held){ p, y, x };
				atomic_store(&obj->holder, y);
			}
		} else if (held) {
			uint32_t expected = held->owner;

			atomic_compare_exchange_strong(&obj->holder, &expected, 0);
			*held = c->held[--c->nheld];
		}
	}
}
