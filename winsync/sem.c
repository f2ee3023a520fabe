/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Semaphores: the head's value is the count, aux the maximum. */
#include "fault.h"
#include "locked.h"

int ws_sem_create(ws_arena *arena, uint32_t count, uint32_t max, ws_handle *sem)
{
	if (!arena || !sem || max == 0 || count > max)
		return -EINVAL;
	return ws_object_create(arena, WS_TYPE_SEM, count, max, sem);
}

struct release {
	uint32_t count;
	uint32_t prev;
};

static int add_units(struct ws_object *obj, uint32_t *value, uint32_t count)
{
	if (count > ws_get(&obj->aux) - *value)
		return -EOVERFLOW;
	*value += count;
	return 0;
}

static int release_locked(struct ws_object *obj, void *ctx)
{
	struct release *r = ctx;
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);
	uint32_t value = ws_head_value(head);
	int ret;

	r->prev = value;
	ret = add_units(obj, &value, r->count);
	if (!ret)
		ws_head_write(obj, ws_head_tag(head), value);
	return ret;
}

int ws_sem_release(ws_arena *arena, ws_handle sem, uint32_t count, uint32_t *prev_count)
{
	struct release r = { count, 0 };
	uint32_t slot;
	uint64_t head;
	int ret;

	/* Windows rejects a release of nothing, too. */
	if (!arena || count == 0)
		return -EINVAL;
	for (int i = 0; i < WS_FAST_TRIES; i++) {
		uint32_t value;

		ret = ws_handle_lookup(arena, sem, WS_TYPE_SEM, &slot, &head);
		if (ret)
			return ret;
		/* Queued waiters are owed the units: the locked path hands them over. */
		if (ws_head_tag(head) & (WS_HEAD_LOCKED | WS_HEAD_QUEUED))
			break;
		value = ws_head_value(head);
		r.prev = value;
		ret = add_units(&arena->objects[slot], &value, count);
		if (ret)
			return ret;
		if (atomic_compare_exchange_weak_explicit(&arena->objects[slot].head, &head,
							  ws_make_head(ws_head_tag(head), value),
							  memory_order_release,
							  memory_order_relaxed))
			goto done;
	}
	ret = ws_locked_call(arena, sem, WS_TYPE_SEM, WS_AFTER_SETTLE, release_locked, &r);
	if (ret)
		return ret;
done:
	WS_FAULT();
	if (prev_count)
		*prev_count = r.prev;
	return 0;
}

struct sem_state {
	uint32_t count;
	uint32_t max;
};

static int read_locked(struct ws_object *obj, void *ctx)
{
	struct sem_state *s = ctx;

	s->count = ws_head_value(atomic_load_explicit(&obj->head, memory_order_relaxed));
	s->max = ws_get(&obj->aux);
	return 0;
}

int ws_sem_read(ws_arena *arena, ws_handle sem, uint32_t *count, uint32_t *max)
{
	struct sem_state s;
	uint32_t slot;
	uint64_t head;
	int ret;

	if (!arena || !count || !max)
		return -EINVAL;
	ret = ws_handle_lookup(arena, sem, WS_TYPE_SEM, &slot, &head);
	if (ret)
		return ret;
	if (ws_head_tag(head) & WS_HEAD_LOCKED) {
		ret = ws_locked_call(arena, sem, WS_TYPE_SEM, WS_AFTER_NOTHING, read_locked, &s);
		if (ret)
			return ret;
	} else {
		s.count = ws_head_value(head);
		s.max = ws_get(&arena->objects[slot].aux);
	}
	*count = s.count;
	*max = s.max;
	return 0;
}
