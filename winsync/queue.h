/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Wait queues and hand-off.  A blocked wait has one entry in the queue of
 * each object it waits on.  Whoever makes an object signaled walks its queue
 * in arrival order and acquires the object on behalf of the waits it can
 * satisfy, as ntsync does in the kernel: so a set, release or pulse takes
 * effect for exactly the waiters already blocked, and nobody else can take
 * the object between the signal and the waiter's return.
 */
#ifndef WINSYNC_QUEUE_H
#define WINSYNC_QUEUE_H

#include "object.h"

/* Appends entry `id` to the queue of the locked object. */
void ws_queue_add(ws_arena *arena, struct ws_ref *ref, uint32_t id, bool wait_all);
/* Removes it; frees the slot if the object was closed and this was the last entry. */
void ws_queue_remove(ws_arena *arena, struct ws_object *obj, uint32_t index, uint32_t id,
		     bool wait_all);

/*
 * Gives the locked object to queued waiters for as long as it can be
 * acquired.  The caller locked it with WS_LOCK_SIGNAL.
 */
void ws_hand_off(ws_arena *arena, struct ws_ref *ref);

/*
 * Completes wait_all `waiter` if all its objects can be acquired, locking the
 * ones other than `held` (already locked).  The all_lock must be held.
 */
bool ws_try_complete_all(ws_arena *arena, struct ws_waiter *waiter, uint32_t held);

#endif
