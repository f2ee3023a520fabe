/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Object slots.  A slot's generation goes up by one at every close, so a
 * closed handle is -EBADF at once in every process.  Freed slots are reused
 * oldest first (a FIFO) after every never-used slot has been used once, and
 * a slot whose generation would wrap retires instead: a handle value never
 * names a second object.
 */
#include "object.h"

#include <limits.h>

#include "queue.h"
#include "thread.h"

bool ws_obj_ready(struct ws_object *obj, uint32_t owner)
{
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);

	if (ws_head_type(head) == WS_TYPE_MUTEX && ws_head_value(head) == owner &&
	    ws_get(&obj->aux) >= UINT32_MAX - 1)
		return false; /* the recursion count would overflow */
	return ws_head_ready(head, owner);
}

bool ws_obj_take(struct ws_object *obj, uint32_t owner)
{
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);
	uint32_t tag = ws_head_tag(head), value = ws_head_value(head);

	switch (ws_head_type(head)) {
	case WS_TYPE_SEM:
		ws_head_write(obj, tag, value - 1);
		return false;
	case WS_TYPE_EVENT:
		if (!ws_get(&obj->aux))
			ws_head_write(obj, tag, 0);
		return false;
	case WS_TYPE_MUTEX:
		if (value == owner) {
			ws_put(&obj->aux, ws_get(&obj->aux) + 1);
			return false;
		}
		ws_head_write(obj, tag & ~WS_HEAD_ABANDONED, owner);
		ws_put(&obj->aux, 0);
		return tag & WS_HEAD_ABANDONED;
	default:
		return false;
	}
}

int ws_obj_lock_handle(struct ws_crit *c, ws_handle handle, enum ws_type type, uint32_t *slot)
{
	uint64_t head;
	int ret = ws_handle_lookup(c->arena, handle, type, slot, &head);

	/* LOCKED by a holder that is gone would have been cleared by recovery. */
	if (ret == 0)
		ret = ws_obj_lock(c, *slot);
	if (ret >= 0)
		ret = ws_handle_lookup(c->arena, handle, type, slot, &head);
	return ret;
}

/* The oldest freed slot, else a never-used one. */
static int slot_alloc(struct ws_crit *c, uint32_t *slot)
{
	ws_arena *arena = c->arena;
	struct ws_arena_header *h = arena->header;
	uint32_t fresh = h->fresh_slots, first = h->free_head;

	if (fresh < arena->slots) {
		ws_store(c, &h->fresh_slots, fresh + 1);
		*slot = fresh;
		return 0;
	}
	if (first == 0)
		return -ENOSPC;
	if (first > arena->slots)
		return -EUCLEAN;
	*slot = first - 1;
	ws_store(c, &h->free_head, arena->objects[*slot].next_free);
	if (!arena->objects[*slot].next_free)
		ws_store(c, &h->free_tail, 0);
	return 0;
}

void ws_slot_free(struct ws_crit *c, uint32_t slot)
{
	ws_arena *arena = c->arena;
	struct ws_arena_header *h = arena->header;
	struct ws_object *obj = &arena->objects[slot];
	uint32_t gen = ws_head_tag(atomic_load_explicit(&obj->head, memory_order_relaxed)) &
		       WS_HEAD_GEN_MASK;
	uint32_t tail = h->free_tail;

	/* Closing already moved to the next generation; past the last one, retire. */
	if (gen == 0 || gen > ws_gen_mask(arena))
		return;
	ws_store(c, &obj->next_free, 0);
	if (tail && tail <= arena->slots)
		ws_store(c, &arena->objects[tail - 1].next_free, slot + 1);
	else
		ws_store(c, &h->free_head, slot + 1);
	ws_store(c, &h->free_tail, slot + 1);
}

int ws_object_create(ws_arena *arena, enum ws_type type, uint32_t value, uint32_t aux,
		     ws_handle *handle)
{
	struct ws_crit c;
	struct ws_object *obj;
	uint32_t slot, gen;
	uint64_t head;
	int ret;

	ret = ws_crit_enter(arena, &c);
	if (ret)
		return ret;
	ws_op_begin(&c, WS_OP_PLAIN, 0);
	ret = arena->header->live >= arena->capacity ? -ENOSPC : slot_alloc(&c, &slot);
	if (!ret)
		ret = ws_obj_lock(&c, slot);
	if (ret >= 0) {
		ret = 0;
		obj = &arena->objects[slot];
		head = atomic_load_explicit(&obj->head, memory_order_relaxed);
		gen = ws_head_tag(head) & WS_HEAD_GEN_MASK;
		/* A slot off the free list must be free: anything else is corruption. */
		if (ws_head_type(head) != WS_TYPE_NONE || obj->queued || gen > ws_gen_mask(arena))
			ret = c.error = -EUCLEAN;
	}
	if (!ret) {
		/* Created owned is acquired: the owner id goes on our record, for our death. */
		if (type == WS_TYPE_MUTEX && value)
			ws_self_owner(arena, c.self, value);
		if (gen == 0)
			gen = 1; /* never used: handle 0 stays invalid */
		ws_put(&obj->aux, aux);
		obj->queue_head = obj->queue_tail = obj->queued = 0;
		obj->next_free = 0;
		obj->closed = 0;
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
	uint32_t slot, gen, tag;
	int ret;

	if (!arena)
		return -EINVAL;
	ret = ws_crit_enter(arena, &c);
	if (ret)
		return ret;
	ws_op_begin(&c, WS_OP_PLAIN, 0);
	ret = ws_obj_lock_handle(&c, handle, WS_TYPE_NONE, &slot);
	if (!ret)
		ret = ws_queue_prune(&c, slot);
	if (!ret) {
		obj = &arena->objects[slot];
		tag = ws_head_tag(atomic_load_explicit(&obj->head, memory_order_relaxed));
		/*
		 * The next generation makes every copy of the handle stale at once;
		 * past the last one the slot retires with generation 0, which no
		 * handle of a live object has and which is never allocated again.
		 */
		gen = (tag & WS_HEAD_GEN_MASK) + 1;
		if (gen > ws_gen_mask(arena))
			gen = 0;
		ws_head_write(obj, gen | (tag & WS_HEAD_QUEUED), 0);
		ws_put(&obj->aux, 0);
		ws_store(&c, &arena->header->live, arena->header->live - 1);
		/* Waiters still queued keep the slot until the last one leaves. */
		if (obj->queued)
			obj->closed = 1;
		else
			ws_slot_free(&c, slot);
		ret = ws_commit(&c);
	} else {
		c.error = ret;
	}
	ws_op_end(&c);
	ws_crit_leave(&c);
	return ret;
}
