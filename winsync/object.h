/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Objects: finding and locking one from its handle, and the rules each type
 * follows when a wait acquires it.
 *
 * Lock order: the arena's all_lock, then object locks.  A thread holds two
 * object locks only while it holds the all_lock, so those can be taken in
 * any order; everyone else holds one object lock at a time.  An operation
 * that can make an object signaled may have to complete a wait_all, which
 * locks that wait's other objects: it therefore takes the all_lock first
 * whenever wait_all entries are queued on its object.
 */
#ifndef WINSYNC_OBJECT_H
#define WINSYNC_OBJECT_H

#include "arena.h"

struct ws_ref {
	struct ws_object *obj;
	uint32_t index;
	bool all_locked; /* the arena's all_lock is held too */
	bool handed_off; /* a waiter was given the object: wake sleepers on unlock */
};

enum ws_lock_intent {
	WS_LOCK_READ,   /* inspect or consume only */
	WS_LOCK_SIGNAL, /* may make the object signaled and hand it to waiters */
};

/*
 * Locks the live object `handle` names.  -EBADF if there is none, -EINVAL
 * if it is not of `type` (WS_TYPE_NONE accepts any).
 */
int ws_ref_lock(ws_arena *arena, ws_handle handle, enum ws_type type,
		enum ws_lock_intent intent, struct ws_ref *ref);
/*
 * The same checks without the lock: the answer may be stale by the time it
 * is used, so callers lock the object before acting on it.
 */
int ws_handle_peek(ws_arena *arena, ws_handle handle, enum ws_type type,
		   struct ws_object **obj);
/* Unlocks, and wakes the sleepers if the object was handed to a waiter. */
void ws_ref_unlock(ws_arena *arena, struct ws_ref *ref);

static inline enum ws_type ws_object_type(const struct ws_object *obj)
{
	return (enum ws_type)(atomic_load_explicit(&obj->meta, memory_order_relaxed) &
			      WS_META_TYPE_MASK);
}

static inline bool ws_object_closed(const struct ws_object *obj)
{
	return atomic_load_explicit(&obj->meta, memory_order_relaxed) & WS_META_CLOSED;
}

static inline bool ws_object_abandoned(const struct ws_object *obj)
{
	return ws_object_type(obj) == WS_TYPE_MUTEX && ws_get(&obj->abandoned);
}

/*
 * Could a wait by `owner` acquire the object now?  Exact with the object
 * locked; without the lock, a hint.
 */
bool ws_object_ready(const struct ws_object *obj, uint32_t owner);
/* Acquires it for `owner`; true if that took an abandoned mutex.  Object locked. */
bool ws_object_take(struct ws_object *obj, uint32_t owner);

/* Allocates and initialises an object; the handle is published last. */
int ws_object_create(ws_arena *arena, enum ws_type type, uint32_t count, uint32_t aux,
		     ws_handle *handle);

#endif
