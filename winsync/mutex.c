/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Mutexes: count is the recursion depth, aux the owner (0: free). */
#include <errno.h>

#include "queue.h"

int ws_mutex_create(ws_arena *arena, uint32_t owner, uint32_t count, ws_handle *mutex)
{
	if (!arena || !mutex || (owner == 0) != (count == 0))
		return -EINVAL;
	return ws_object_create(arena, WS_TYPE_MUTEX, count, owner, mutex);
}

/* Locks a mutex that `owner` holds: -EPERM if it does not. */
static int lock_owned(ws_arena *arena, ws_handle mutex, uint32_t owner, struct ws_ref *ref)
{
	int ret;

	if (!arena || owner == 0)
		return -EINVAL;
	ret = ws_ref_lock(arena, mutex, WS_TYPE_MUTEX, WS_LOCK_SIGNAL, ref);
	if (ret)
		return ret;
	if (ws_get(&ref->obj->aux) != owner) {
		ws_ref_unlock(arena, ref);
		return -EPERM;
	}
	return 0;
}

int ws_mutex_unlock(ws_arena *arena, ws_handle mutex, uint32_t owner, uint32_t *prev_count)
{
	struct ws_ref ref;
	uint32_t count;
	int ret = lock_owned(arena, mutex, owner, &ref);

	if (ret)
		return ret;
	count = ws_get(&ref.obj->count);
	if (prev_count)
		*prev_count = count;
	ws_put(&ref.obj->count, count - 1);
	if (count == 1) {
		ws_put(&ref.obj->aux, 0);
		ws_hand_off(arena, &ref);
	}
	ws_ref_unlock(arena, &ref);
	return 0;
}

/* Frees the mutex as its owner would on death: the next acquirer is told. */
int ws_mutex_kill(ws_arena *arena, ws_handle mutex, uint32_t owner)
{
	struct ws_ref ref;
	int ret = lock_owned(arena, mutex, owner, &ref);

	if (ret)
		return ret;
	ws_put(&ref.obj->aux, 0);
	ws_put(&ref.obj->count, 0);
	ws_put(&ref.obj->abandoned, 1);
	ws_hand_off(arena, &ref);
	ws_ref_unlock(arena, &ref);
	return 0;
}

int ws_mutex_read(ws_arena *arena, ws_handle mutex, uint32_t *count, uint32_t *owner)
{
	struct ws_ref ref;
	int ret;

	if (!arena || !count || !owner)
		return -EINVAL;
	ret = ws_ref_lock(arena, mutex, WS_TYPE_MUTEX, WS_LOCK_READ, &ref);
	if (ret)
		return ret;
	*count = ws_get(&ref.obj->count);
	*owner = ws_get(&ref.obj->aux);
	ret = ws_get(&ref.obj->abandoned) ? -EOWNERDEAD : 0;
	ws_ref_unlock(arena, &ref);
	return ret;
}
