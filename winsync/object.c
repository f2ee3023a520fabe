/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "object.h"

#include <errno.h>
#include <limits.h>

#include "futex.h"
#include "lock.h"
#include "queue.h"

static int check_meta(const struct ws_object *obj, ws_handle handle, enum ws_type type)
{
	uint32_t meta = atomic_load_explicit(&obj->meta, memory_order_relaxed);
	enum ws_type actual = (enum ws_type)(meta & WS_META_TYPE_MASK);

	if ((meta & WS_META_CLOSED) || actual == WS_TYPE_NONE ||
	    ws_meta_generation(meta) != ws_handle_generation(handle))
		return -EBADF;
	if (type != WS_TYPE_NONE && actual != type)
		return -EINVAL;
	return 0;
}

int ws_handle_peek(ws_arena *arena, ws_handle handle, enum ws_type type,
		   struct ws_object **obj)
{
	uint32_t index = ws_handle_index(handle);

	if (handle == 0 || index >= arena->capacity)
		return -EBADF;
	*obj = &arena->objects[index];
	return check_meta(*obj, handle, type);
}

int ws_ref_lock(ws_arena *arena, ws_handle handle, enum ws_type type,
		enum ws_lock_intent intent, struct ws_ref *ref)
{
	uint32_t index = ws_handle_index(handle);
	struct ws_object *obj;
	int ret;

	if (handle == 0 || index >= arena->capacity)
		return -EBADF;
	obj = &arena->objects[index];
	ref->obj = obj;
	ref->index = index;
	ref->all_locked = false;
	ref->handed_off = false;
	ws_lock(&obj->lock, arena->shared);
	/* Queued wait_all entries change only under this lock: the check is exact. */
	if (intent == WS_LOCK_SIGNAL &&
	    atomic_load_explicit(&obj->all_waiters, memory_order_relaxed)) {
		ws_unlock(&obj->lock, arena->shared);
		ws_lock(&arena->header->all_lock, arena->shared);
		ws_lock(&obj->lock, arena->shared);
		ref->all_locked = true;
	}
	ret = check_meta(obj, handle, type);
	if (ret)
		ws_ref_unlock(arena, ref);
	return ret;
}

void ws_ref_unlock(ws_arena *arena, struct ws_ref *ref)
{
	bool wake = ref->handed_off;

	if (wake)
		atomic_fetch_add_explicit(&ref->obj->seq, 1, memory_order_release);
	ws_unlock(&ref->obj->lock, arena->shared);
	if (ref->all_locked)
		ws_unlock(&arena->header->all_lock, arena->shared);
	/* Every sleeper rechecks its own record; only the chosen ones return. */
	if (wake)
		ws_futex_wake(&ref->obj->seq, INT_MAX, arena->shared);
}

bool ws_object_ready(const struct ws_object *obj, uint32_t owner)
{
	if (ws_object_closed(obj))
		return false;
	switch (ws_object_type(obj)) {
	case WS_TYPE_SEM:
		return ws_get(&obj->count) > 0;
	case WS_TYPE_MUTEX:
		return ws_get(&obj->aux) == 0 ||
		       (ws_get(&obj->aux) == owner && ws_get(&obj->count) < UINT32_MAX);
	case WS_TYPE_EVENT:
		return ws_get(&obj->count) != 0;
	default:
		return false;
	}
}

bool ws_object_take(struct ws_object *obj, uint32_t owner)
{
	bool abandoned = false;

	switch (ws_object_type(obj)) {
	case WS_TYPE_SEM:
		ws_put(&obj->count, ws_get(&obj->count) - 1);
		break;
	case WS_TYPE_MUTEX:
		ws_put(&obj->aux, owner);
		ws_put(&obj->count, ws_get(&obj->count) + 1);
		abandoned = ws_get(&obj->abandoned);
		ws_put(&obj->abandoned, 0);
		break;
	case WS_TYPE_EVENT:
		if (!ws_get(&obj->aux))
			ws_put(&obj->count, 0);
		break;
	default:
		break;
	}
	return abandoned;
}

int ws_object_create(ws_arena *arena, enum ws_type type, uint32_t count, uint32_t aux,
		     ws_handle *handle)
{
	struct ws_object *obj;
	uint32_t index, generation;
	int ret;

	ret = ws_slot_alloc(arena, &index);
	if (ret)
		return ret;
	obj = &arena->objects[index];
	ws_lock(&obj->lock, arena->shared);
	generation = ws_meta_generation(atomic_load_explicit(&obj->meta, memory_order_relaxed));
	if (!generation)
		generation = 1;
	ws_put(&obj->count, count);
	ws_put(&obj->aux, aux);
	ws_put(&obj->abandoned, 0);
	obj->head = obj->tail = obj->queued = 0;
	atomic_store_explicit(&obj->all_waiters, 0, memory_order_relaxed);
	atomic_store_explicit(&obj->meta, generation << WS_META_GEN_SHIFT | type,
			      memory_order_relaxed);
	ws_unlock(&obj->lock, arena->shared);
	*handle = ws_make_handle(index, generation);
	return 0;
}

int ws_close(ws_arena *arena, ws_handle handle)
{
	struct ws_ref ref;
	uint32_t meta, generation;
	bool free_now;
	int ret;

	if (!arena)
		return -EINVAL;
	ret = ws_ref_lock(arena, handle, WS_TYPE_NONE, WS_LOCK_READ, &ref);
	if (ret)
		return ret;
	/* A new generation makes every copy of the handle stale at once. */
	meta = atomic_load_explicit(&ref.obj->meta, memory_order_relaxed);
	generation = (ws_meta_generation(meta) + 1) & WS_GENERATION_MASK;
	if (!generation)
		generation = 1;
	atomic_store_explicit(&ref.obj->meta,
			      generation << WS_META_GEN_SHIFT | WS_META_CLOSED |
			      (meta & WS_META_TYPE_MASK),
			      memory_order_relaxed);
	/* Waiters still queued keep the slot until the last one leaves. */
	free_now = ref.obj->queued == 0;
	ws_ref_unlock(arena, &ref);
	if (free_now)
		ws_slot_free(arena, ref.index);
	return 0;
}
