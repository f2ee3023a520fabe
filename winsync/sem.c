/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Semaphores: count is the units available, aux the maximum. */
#include <errno.h>

#include "queue.h"

int ws_sem_create(ws_arena *arena, uint32_t count, uint32_t max, ws_handle *sem)
{
	if (!arena || !sem || max == 0 || count > max)
		return -EINVAL;
	return ws_object_create(arena, WS_TYPE_SEM, count, max, sem);
}

int ws_sem_release(ws_arena *arena, ws_handle sem, uint32_t count, uint32_t *prev_count)
{
	struct ws_ref ref;
	int ret;

	/* Windows rejects a release of nothing, too. */
	if (!arena || count == 0)
		return -EINVAL;
	ret = ws_ref_lock(arena, sem, WS_TYPE_SEM, WS_LOCK_SIGNAL, &ref);
	if (ret)
		return ret;
	uint32_t current = ws_get(&ref.obj->count);

	if (count > ws_get(&ref.obj->aux) - current) {
		ws_ref_unlock(arena, &ref);
		return -EOVERFLOW;
	}
	if (prev_count)
		*prev_count = current;
	ws_put(&ref.obj->count, current + count);
	ws_hand_off(arena, &ref);
	ws_ref_unlock(arena, &ref);
	return 0;
}

int ws_sem_read(ws_arena *arena, ws_handle sem, uint32_t *count, uint32_t *max)
{
	struct ws_ref ref;
	int ret;

	if (!arena || !count || !max)
		return -EINVAL;
	ret = ws_ref_lock(arena, sem, WS_TYPE_SEM, WS_LOCK_READ, &ref);
	if (ret)
		return ret;
	*count = ws_get(&ref.obj->count);
	*max = ws_get(&ref.obj->aux);
	ws_ref_unlock(arena, &ref);
	return 0;
}
