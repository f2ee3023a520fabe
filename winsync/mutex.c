/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mutexes: the head's value is the owner id (0: free), aux the acquisitions
 * beyond the first, and WS_HEAD_ABANDONED says the last owner died holding
 * it and nobody has acquired it since.  aux is 0 whenever the mutex is free.
 */
#include "fault.h"
#include "locked.h"

int ws_mutex_create(ws_arena *arena, uint32_t owner, uint32_t count, ws_handle *mutex)
{
	if (!arena || !mutex || (owner == 0) != (count == 0))
		return -EINVAL;
	return ws_object_create(arena, WS_TYPE_MUTEX, owner, count ? count - 1 : 0, mutex);
}

struct unlock {
	uint32_t owner;
	uint32_t prev;
	bool kill;
};

static int unlock_locked(struct ws_object *obj, void *ctx)
{
	struct unlock *u = ctx;
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);
	uint32_t extra = ws_get(&obj->aux);

	if (ws_head_value(head) != u->owner)
		return -EPERM;
	u->prev = extra + 1;
	if (u->kill) {
		ws_head_write(obj, ws_head_tag(head) | WS_HEAD_ABANDONED, 0);
		ws_put(&obj->aux, 0);
	} else if (extra) {
		ws_put(&obj->aux, extra - 1);
	} else {
		ws_head_write(obj, ws_head_tag(head), 0);
	}
	return 0;
}

int ws_mutex_unlock(ws_arena *arena, ws_handle mutex, uint32_t owner, uint32_t *prev_count)
{
	struct unlock u = { owner, 1, false };
	struct ws_object *obj;
	uint32_t slot;
	uint64_t head;
	int ret;

	if (!arena || owner == 0)
		return -EINVAL;
	for (int i = 0; i < WS_FAST_TRIES; i++) {
		ret = ws_handle_lookup(arena, mutex, WS_TYPE_MUTEX, &slot, &head);
		if (ret)
			return ret;
		if (ws_head_tag(head) & WS_HEAD_LOCKED)
			break;
		if (ws_head_value(head) != owner)
			return -EPERM;
		obj = &arena->objects[slot];
		/* The last release with nobody queued frees it in one step. */
		if ((ws_head_tag(head) & WS_HEAD_QUEUED) || ws_get(&obj->aux))
			break;
		if (atomic_compare_exchange_weak_explicit(&obj->head, &head,
							  ws_make_head(ws_head_tag(head), 0),
							  memory_order_release,
							  memory_order_relaxed))
			goto done;
	}
	ret = ws_locked_call(arena, mutex, WS_TYPE_MUTEX, WS_AFTER_SETTLE, unlock_locked, &u);
	if (ret)
		return ret;
done:
	WS_FAULT();
	if (prev_count)
		*prev_count = u.prev;
	return 0;
}

/* Frees the mutex as its owner would on death: the next acquirer is told. */
int ws_mutex_kill(ws_arena *arena, ws_handle mutex, uint32_t owner)
{
	struct unlock u = { owner, 0, true };

	if (!arena || owner == 0)
		return -EINVAL;
	return ws_locked_call(arena, mutex, WS_TYPE_MUTEX, WS_AFTER_SETTLE, unlock_locked, &u);
}

struct mutex_state {
	uint32_t owner;
	uint32_t count;
	bool abandoned;
};

static void state_of(uint64_t head, uint32_t extra, struct mutex_state *s)
{
	s->owner = ws_head_value(head);
	s->count = s->owner ? extra + 1 : 0;
	s->abandoned = ws_head_tag(head) & WS_HEAD_ABANDONED;
}

static int read_locked(struct ws_object *obj, void *ctx)
{
	state_of(atomic_load_explicit(&obj->head, memory_order_relaxed), ws_get(&obj->aux), ctx);
	return 0;
}

int ws_mutex_read(ws_arena *arena, ws_handle mutex, uint32_t *count, uint32_t *owner)
{
	struct mutex_state s;
	uint32_t slot;
	uint64_t head, again;
	int ret;

	if (!arena || !count || !owner)
		return -EINVAL;
	ret = ws_handle_lookup(arena, mutex, WS_TYPE_MUTEX, &slot, &head);
	if (ret)
		return ret;
	/* aux changes only while LOCKED, which changes the head: read it between two looks. */
	state_of(head, ws_get(&arena->objects[slot].aux), &s);
	again = atomic_load_explicit(&arena->objects[slot].head, memory_order_acquire);
	if ((ws_head_tag(head) & WS_HEAD_LOCKED) || again != head) {
		ret = ws_locked_call(arena, mutex, WS_TYPE_MUTEX, WS_AFTER_NOTHING, read_locked, &s);
		if (ret)
			return ret;
	}
	*count = s.count;
	*owner = s.owner;
	return s.abandoned ? -EOWNERDEAD : 0;
}
