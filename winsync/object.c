/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Creating and closing objects.  Closing moves the slot to its next
 * generation, which makes every copy of the handle stale at once.  An
 * object no wait is queued on is freed at once.  One that waits are
 * queued on lives on for them, as in NT (a wait holds a reference): its
 * state and queue stay, a wait_all may still take it with the rest, a
 * dead owner's abandoned mutex is still handed on.  Such an object is
 * "held": listed in the header's held FIFO and counted live, until a
 * create or close under the arena lock finds no wait queued on it (the
 * waits that ended pruned) and frees it.
 */
#include "object.h"

#include "crit.h"
#include "memo.h"
#include "queue.h"
#include "record.h"
#include "slot.h"

/* Held objects looked at by a create or close, to free those no wait needs now. */
#define RECLAIM_SOME 2
/* By a create that finds the arena full: as many as one section may lock. */
#define RECLAIM_FULL 64

static void held_push(struct ws_crit *c, uint32_t slot)
{
	struct ws_arena_header *h = c->arena->header;

	ws_slot_fifo_push(c, &h->held_head, &h->held_tail, slot);
	ws_store(c, &h->held, h->held + 1);
}

/* The slot off the front of the held FIFO (whether or not the caller locked it). */
static void held_pop(struct ws_crit *c, uint32_t slot)
{
	struct ws_arena_header *h = c->arena->header;

	ws_slot_fifo_pop(c, &h->held_head, &h->held_tail, slot);
	ws_store(c, &h->held, h->held - 1);
}

/* Frees a closed object's slot: no handle names it, no wait is queued on it. */
static void free_closed(struct ws_crit *c, uint32_t slot, uint32_t gen)
{
	struct ws_object *obj = &c->arena->objects[slot];

	ws_head_write(obj, gen, 0);
	ws_put(&obj->aux, 0);
	ws_store(c, &c->arena->header->live, c->arena->header->live - 1);
	ws_slot_free(c, slot);
}

/*
 * Under the arena lock: looks at up to `budget` held objects, oldest
 * first, and frees each that no pending wait is queued on (the entries of
 * waits that ended are pruned); the rest go to the back.  One being edited
 * by a section of its own is skipped: a create or close never waits for an
 * object it did not name.
 */
static void reclaim_held(struct ws_crit *c, uint32_t budget)
{
	ws_arena *arena = c->arena;
	struct ws_arena_header *h = arena->header;
	uint32_t n = budget < h->held ? budget : h->held;

	/* Each looked at once: those left go to the back, behind the rest. */
	for (uint32_t i = 0; i < n && h->held_head && !c->error; i++) {
		uint32_t slot = h->held_head - 1, gen;
		struct ws_object *obj;

		if (slot >= arena->slots) {
			c->error = -EUCLEAN;
			return;
		}
		obj = &arena->objects[slot];
		/* The list's links are the arena lock's: moving it on needs no object lock. */
		if (atomic_load_explicit(&obj->lock, memory_order_relaxed) ||
		    ws_head_tag(atomic_load_explicit(&obj->head, memory_order_relaxed)) & WS_HEAD_LOCKED) {
			held_pop(c, slot);
			held_push(c, slot);
			continue;
		}
		if (ws_obj_lock(c, slot) < 0) {
			/* WS_ARENA_NONBLOCK: held meanwhile; it waits for the next call. */
			if (c->error == -EAGAIN)
				c->error = 0;
			return;
		}
		held_pop(c, slot);
		if (ws_get(&obj->held_gen) == 0) {
			c->error = -EUCLEAN; /* listed, not held */
			return;
		}
		if (obj->queued && ws_queue_prune(c, slot) < 0)
			return;
		if (obj->queued) {
			held_push(c, slot);
			continue;
		}
		gen = ws_head_gen(atomic_load_explicit(&obj->head, memory_order_relaxed));
		ws_store(c, &obj->held_gen, 0);
		free_closed(c, slot, gen);
	}
}

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
	if (arena->header->held)
		reclaim_held(&c, arena->header->live >= arena->capacity ? RECLAIM_FULL : RECLAIM_SOME);
	ret = c.error ? c.error
		      : arena->header->live >= arena->capacity ? -ENOSPC : ws_slot_alloc(&c, &slot);
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
	bool held;
	int ret;

	if (!arena)
		return -EINVAL;
	ret = ws_crit_enter(arena, ws_arena_lock(arena), &c);
	if (ret)
		return ret;
	ws_op_begin(&c, WS_OP_PLAIN, 0);
	ret = ws_obj_lock_handle(&c, handle, WS_TYPE_NONE, &slot);
	if (!ret) {
		uint64_t head;

		obj = &arena->objects[slot];
		head = atomic_load_explicit(&obj->head, memory_order_relaxed);
		/*
		 * The next generation makes every copy of the handle stale at once;
		 * past the last one the slot retires with generation 0, which no
		 * handle of a live object has and which is never allocated again.
		 */
		gen = ws_head_gen(head) + 1;
		if (gen > ws_gen_mask(arena))
			gen = 0;
		/* Waits that ended leave entries behind: only pending ones hold it. */
		if (obj->queued)
			ws_queue_prune(&c, slot);
		/*
		 * Held (head, value and queue as they are, the next generation) but
		 * for a slot that retires: generation 0 is every small integer's,
		 * so its queue goes and its waits wait on for their other objects.
		 */
		held = obj->queued && gen != 0;
		if (!held)
			ws_queue_drop(&c, slot);
		/* Locked, before the head: memo.h says why. */
		ws_closes_move(arena);
		WS_FAULT();
		if (held) {
			ws_store(&c, &obj->held_gen, ws_head_gen(head));
			ws_head_write(obj, (ws_head_tag(head) & ~WS_HEAD_GEN_MASK) | gen,
				      ws_head_value(head));
			held_push(&c, slot);
		} else {
			free_closed(&c, slot, gen);
		}
		if (arena->header->held > held)
			reclaim_held(&c, RECLAIM_SOME);
		ret = ws_commit(&c);
	} else {
		c.error = ret;
	}
	ws_op_end(&c);
	ws_crit_leave(&c);
	return ret;
}
