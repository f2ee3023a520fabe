/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Creating and closing objects.  Closing moves the slot to its next
 * generation, which makes every copy of the handle stale at once, drops
 * its queue (the waiters queued on it go on waiting for their other
 * objects, layout.h) and frees the slot for reuse at once.
 */
#include "object.h"

#include "crit.h"
#include "memo.h"
#include "queue.h"
#include "record.h"
#include "slot.h"

int ws_object_create(ws_arena *arena, enum ws_type type, uint32_t value, uint32_t aux,
		     ws_handle *handle)
{
	struct ws_crit c;
	struct ws_object *obj;
	uint32_t slot, gen;
	uint64_t head;
	int ret;

	ret = ws_crit_enter(arena, ws_arena_lock(arena), &c);
	if (ret)
		return ret;
	ws_op_begin(&c, WS_OP_PLAIN, 0);
	ret = arena->header->live >= arena->capacity ? -ENOSPC : ws_slot_alloc(&c, &slot);
	if (!ret)
		ret = ws_obj_lock(&c, slot);
	if (ret >= 0) {
		ret = 0;
		obj = &arena->objects[slot];
		head = atomic_load_explicit(&obj->head, memory_order_relaxed);
		gen = ws_head_gen(head);
		/* A slot off the free list must be free: anything else is corruption. */
		if (ws_head_type(head) != WS_TYPE_NONE || obj->queued || gen > ws_gen_mask(arena))
			ret = c.error = -EUCLEAN;
	}
	if (!ret) {
		/* Created owned is acquired: the owner id goes on our record, for our death. */
		if (type == WS_TYPE_MUTEX && value)
			ws_record_note_owner(arena, c.self, value);
		if (gen == 0)
			gen = 1; /* never used: handle 0 stays invalid */
		ws_put(&obj->aux, aux);
		obj->queue_head = obj->queue_tail = obj->queued = 0;
		ws_store(&c, &obj->next_free, 0);
		ws_head_write(obj, (uint32_t)type << WS_HEAD_TYPE_SHIFT | gen, value);
		ws_store(&c, &arena->header->live, arena->header->live + 1);
		ret = ws_commit(&c);
	} else {
		c.error = ret; /* undoes the allocation */
	}
	ws_op_end(&c);
	ws_crit_leave(&c);
	if (!ret)
		*handle = ws_make_handle(arena, slot, gen);
	return ret;
}

int ws_close(ws_arena *arena, ws_handle handle)
{
	struct ws_crit c;
	struct ws_object *obj;
	uint32_t slot, gen;
	int ret;

	if (!arena)
		return -EINVAL;
	ret = ws_crit_enter(arena, ws_arena_lock(arena), &c);
	if (ret)
		return ret;
	ws_op_begin(&c, WS_OP_PLAIN, 0);
	ret = ws_obj_lock_handle(&c, handle, WS_TYPE_NONE, &slot);
	if (!ret) {
		obj = &arena->objects[slot];
		/*
		 * The next generation makes every copy of the handle stale at once;
		 * past the last one the slot retires with generation 0, which no
		 * handle of a live object has and which is never allocated again.
		 */
		gen = ws_head_gen(atomic_load_explicit(&obj->head, memory_order_relaxed)) + 1;
		if (gen > ws_gen_mask(arena))
			gen = 0;
		ws_queue_drop(&c, slot);
		/* Locked, before the head: memo.h says why. */
		ws_closes_move(arena);
		WS_FAULT();
		ws_head_write(obj, gen, 0);
		ws_put(&obj->aux, 0);
		ws_store(&c, &arena->header->live, arena->header->live - 1);
		ws_slot_free(&c, slot);
		ret = ws_commit(&c);
	} else {
		c.error = ret;
	}
	ws_op_end(&c);
	ws_crit_leave(&c);
	return ret;
}
