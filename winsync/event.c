/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Events: count is the signaled state, aux the manual-reset flag. */
#include <errno.h>

#include "queue.h"

int ws_event_create(ws_arena *arena, bool manual_reset, bool signaled, ws_handle *event)
{
	if (!arena || !event)
		return -EINVAL;
	return ws_object_create(arena, WS_TYPE_EVENT, signaled, manual_reset, event);
}

static int change(ws_arena *arena, ws_handle event, bool *was_signaled, bool set, bool reset)
{
	struct ws_ref ref;
	int ret;

	if (!arena)
		return -EINVAL;
	ret = ws_ref_lock(arena, event, WS_TYPE_EVENT, set ? WS_LOCK_SIGNAL : WS_LOCK_READ, &ref);
	if (ret)
		return ret;
	if (was_signaled)
		*was_signaled = ws_get(&ref.obj->count);
	if (set) {
		ws_put(&ref.obj->count, 1);
		ws_hand_off(arena, &ref);
	}
	if (reset)
		ws_put(&ref.obj->count, 0);
	ws_ref_unlock(arena, &ref);
	return 0;
}

int ws_event_set(ws_arena *arena, ws_handle event, bool *was_signaled)
{
	return change(arena, event, was_signaled, true, false);
}

int ws_event_reset(ws_arena *arena, ws_handle event, bool *was_signaled)
{
	return change(arena, event, was_signaled, false, true);
}

/* Only waiters already queued can take the event before it is reset. */
int ws_event_pulse(ws_arena *arena, ws_handle event, bool *was_signaled)
{
	return change(arena, event, was_signaled, true, true);
}

int ws_event_read(ws_arena *arena, ws_handle event, bool *signaled, bool *manual_reset)
{
	struct ws_ref ref;
	int ret;

	if (!arena || !signaled || !manual_reset)
		return -EINVAL;
	ret = ws_ref_lock(arena, event, WS_TYPE_EVENT, WS_LOCK_READ, &ref);
	if (ret)
		return ret;
	*signaled = ws_get(&ref.obj->count);
	*manual_reset = ws_get(&ref.obj->aux);
	ws_ref_unlock(arena, &ref);
	return 0;
}
