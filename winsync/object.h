/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Objects: handles, the per-type acquire rules, and creation and closing.
 *
 * The uncontended paths read an object's head and change it with one
 * compare-exchange, as long as the head is not LOCKED (the arena lock holder
 * is editing the object) and, for anything that could make it signaled,
 * not QUEUED (a waiter may be owed it: only the holder hands it over).
 */
#ifndef WINSYNC_OBJECT_H
#define WINSYNC_OBJECT_H

#include <errno.h>

#include "arena.h"
#include "txn.h"

/*
 * Finds the object a handle names and its head now: 0, -EBADF (no live
 * object of that generation) or -EINVAL (not of `type`; WS_TYPE_NONE
 * accepts any).  Without the lock, the answer holds for this head value.
 */
static inline int ws_handle_lookup(ws_arena *arena, ws_handle handle, enum ws_type type,
				   uint32_t *slot, uint64_t *head)
{
	uint32_t s = ws_handle_slot(arena, handle);
	uint64_t h;
	enum ws_type actual;

	if (handle == 0 || s >= arena->slots)
		return -EBADF;
	h = atomic_load_explicit(&arena->objects[s].head, memory_order_acquire);
	actual = ws_head_type(h);
	if (actual == WS_TYPE_NONE ||
	    (ws_head_tag(h) & WS_HEAD_GEN_MASK) != ws_handle_gen(arena, handle))
		return -EBADF;
	if (type != WS_TYPE_NONE && actual != type)
		return -EINVAL;
	*slot = s;
	*head = h;
	return 0;
}

/*
 * Could a wait by `owner` acquire the object with this head?  A mutex that
 * `owner` holds already counts (the slow path checks its recursion limit).
 */
static inline bool ws_head_ready(uint64_t head, uint32_t owner)
{
	uint32_t value = ws_head_value(head);

	switch (ws_head_type(head)) {
	case WS_TYPE_MUTEX:
		return value == 0 || value == owner;
	case WS_TYPE_SEM:
	case WS_TYPE_EVENT:
		return value != 0;
	default:
		return false;
	}
}

/*
 * The head after an uncontended acquire by `owner` of a ready object: a
 * semaphore unit, an auto-reset event, a free mutex (not a recursive
 * acquisition: that changes `aux` and takes the slow path).
 */
static inline uint64_t ws_head_taken(uint64_t head, uint32_t owner, bool manual_event)
{
	uint32_t tag = ws_head_tag(head), value = ws_head_value(head);

	switch (ws_head_type(head)) {
	case WS_TYPE_SEM:
		return ws_make_head(tag, value - 1);
	case WS_TYPE_EVENT:
		return manual_event ? head : ws_make_head(tag, 0);
	case WS_TYPE_MUTEX:
		return ws_make_head(tag & ~WS_HEAD_ABANDONED, owner);
	default:
		return head;
	}
}

/* Exact readiness of a locked object for `owner`. */
bool ws_obj_ready(struct ws_object *obj, uint32_t owner);
/* Acquires a locked, ready object for `owner`; true if that took an abandoned mutex. */
bool ws_obj_take(struct ws_object *obj, uint32_t owner);

/*
 * Locks the object `handle` names inside a transaction and checks it again
 * there: 0, -EBADF, -EINVAL, -EUCLEAN.
 */
int ws_obj_lock_handle(struct ws_crit *c, ws_handle handle, enum ws_type type, uint32_t *slot);

/* Allocates and fills an object; the handle is valid once the call returns. */
int ws_object_create(ws_arena *arena, enum ws_type type, uint32_t value, uint32_t aux,
		     ws_handle *handle);

/* Puts a closed slot whose queue has emptied on the free FIFO (or retires it). */
void ws_slot_free(struct ws_crit *c, uint32_t slot);

#endif
