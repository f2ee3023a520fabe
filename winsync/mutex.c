/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mutexes: the head's value is the owner id (0: free), aux the acquisitions
 * beyond the first, and WS_HEAD_ABANDONED says the last owner died holding
 * it and nobody has acquired it since.  aux is 0 whenever the mutex is free.
 */
#include "object.h"
#include "call.h"

int ws_mutex_create(ws_arena *arena, uint32_t owner, uint32_t count, ws_handle *mutex)
{
	if (!arena || !mutex || (owner == 0) != (count == 0))
		return -EINVAL;
	return ws_object_create(arena, WS_TYPE_MUTEX, owner, count ? count - 1 : 0, mutex);
}

struct unlock {
	uint32_t owner;
	uint32_t prev;
};

/* The last release with nobody queued frees it in one step; a recursive one is locked. */
static int unlock_fast(uint64_t head, uint32_t aux, uint64_t *next, void *ctx)
{
	struct unlock *u = ctx;

	if (ws_head_value(head) != u->owner)
		return -EPERM;
	if (aux)
		return WS_FAST_LOCKED;
	u->prev = 1;
	*next = ws_make_head(ws_head_tag(head), 0);
	return 0;
}

static int unlock_locked(struct ws_object *obj, void *ctx)
{
	struct unlock *u = ctx;
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);
	uint32_t extra = ws_get(&obj->aux);

	if (ws_head_value(head) != u->owner)
		return -EPERM;
	u->prev = extra + 1;
	if (extra)
		ws_put(&obj->aux, extra - 1);
	else
		ws_head_write(obj, ws_head_tag(head), 0);
	return 0;
}

/* Frees the mutex as its owner would on death: the next acquirer is told. */
static int kill_locked(struct ws_object *obj, void *ctx)
{
	struct unlock *u = ctx;
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);

	if (ws_head_value(head) != u->owner)
		return -EPERM;
	ws_head_write(obj, ws_head_tag(head) | WS_HEAD_ABANDONED, 0);
	ws_put(&obj->aux, 0);
	return 0;
}

static int never_fast(uint64_t head, uint32_t aux, uint64_t *next, void *ctx)
{
	(void)head, (void)aux, (void)next, (void)ctx;
	return WS_FAST_LOCKED;
}

static const struct ws_object_call unlock_call = {
	WS_TYPE_MUTEX, WS_AFTER_SETTLE, WS_HEAD_QUEUED, unlock_fast, unlock_locked
};
static const struct ws_object_call kill_call = {
	WS_TYPE_MUTEX, WS_AFTER_SETTLE, 0, never_fast, kill_locked
};

int ws_mutex_unlock(ws_arena *arena, ws_handle mutex, uint32_t owner, uint32_t *prev_count)
{
	struct unlock u = { owner, 1 };
	int ret;

	if (!arena || owner == 0)
		return -EINVAL;
	ret = ws_object_call(arena, mutex, &unlock_call, &u);
	if (!ret && prev_count)
		*prev_count = u.prev;
	return ret;
}

int ws_mutex_kill(ws_arena *arena, ws_handle mutex, uint32_t owner)
{
	struct unlock u = { owner, 0 };

	if (!arena || owner == 0)
		return -EINVAL;
	return ws_object_call(arena, mutex, &kill_call, &u);
}

int ws_mutex_read(ws_arena *arena, ws_handle mutex, uint32_t *count, uint32_t *owner)
{
	uint64_t head;
	uint32_t aux;
	int ret;

	if (!arena || !count || !owner)
		return -EINVAL;
	ret = ws_object_read(arena, mutex, WS_TYPE_MUTEX, &head, &aux);
	if (ret)
		return ret;
	*owner = ws_head_value(head);
	*count = *owner ? aux + 1 : 0;
	return ws_head_tag(head) & WS_HEAD_ABANDONED ? -EOWNERDEAD : 0;
}
