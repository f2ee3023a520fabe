/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Object slots and the handles that name them.  A slot's generation goes up
 * by one at every close, so a closed handle is -EBADF at once in every
 * process.  Freed slots are reused oldest first (a FIFO) after every
 * never-used slot has been used once, and a slot whose generation would
 * wrap retires instead: a handle value never names a second object.
 */
#ifndef WINSYNC_SLOT_H
#define WINSYNC_SLOT_H

#include <errno.h>

#include "txn.h"

/* Slots ever used: the ones an object may be in, or a lock word be held on. */
static inline uint32_t ws_slots_used(const ws_arena *arena)
{
	uint32_t n = arena->header->fresh_slots;

	return n < arena->slots ? n : arena->slots;
}

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
	if (actual == WS_TYPE_NONE || ws_head_gen(h) != ws_handle_gen(arena, handle))
		return -EBADF;
	if (type != WS_TYPE_NONE && actual != type)
		return -EINVAL;
	*slot = s;
	*head = h;
	return 0;
}

/*
 * Locks the object `handle` names inside a transaction and checks it again
 * there: 0, -EBADF, -EINVAL, -EUCLEAN.
 */
int ws_obj_lock_handle(struct ws_crit *c, ws_handle handle, enum ws_type type, uint32_t *slot);

/* The oldest freed slot, else a never-used one (logged): 0, -ENOSPC, -EUCLEAN. */
int ws_slot_alloc(struct ws_crit *c, uint32_t *slot);
/* Puts a closed slot on the free FIFO (or retires it). */
void ws_slot_free(struct ws_crit *c, uint32_t slot);
/*
 * A FIFO of slots linked through their next_free (slot + 1; 0 ends it),
 * under the arena lock, every link a logged cell: the free slots, and the
 * objects held for their waits after a close (object.c).  Push appends;
 * pop takes `slot`, which must be the first, off the front.
 */
void ws_slot_fifo_push(struct ws_crit *c, uint32_t *head, uint32_t *tail, uint32_t slot);
void ws_slot_fifo_pop(struct ws_crit *c, uint32_t *head, uint32_t *tail, uint32_t slot);

#endif
