/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "slot.h"

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

int ws_slot_alloc(struct ws_crit *c, uint32_t *slot)
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
	ws_slot_fifo_pop(c, &h->free_head, &h->free_tail, *slot);
	return 0;
}

void ws_slot_free(struct ws_crit *c, uint32_t slot)
{
	ws_arena *arena = c->arena;
	struct ws_arena_header *h = arena->header;
	struct ws_object *obj = &arena->objects[slot];
	uint32_t gen = ws_head_gen(atomic_load_explicit(&obj->head, memory_order_relaxed));

	/* Closing already moved to the next generation; past the last one, retire. */
	if (gen == 0 || gen > ws_gen_mask(arena))
		return;
	ws_slot_fifo_push(c, &h->free_head, &h->free_tail, slot);
}

void ws_slot_fifo_push(struct ws_crit *c, uint32_t *head, uint32_t *tail, uint32_t slot)
{
	ws_arena *arena = c->arena;
	uint32_t last = *tail;

	ws_store(c, &arena->objects[slot].next_free, 0);
	/*
	 * The tail's link is written without locking the tail: a section on
	 * that object alone (a stale handle about to find it closed) neither
	 * reads nor restores it, and the arena lock's holders log it as a cell.
	 */
	if (last && last <= arena->slots)
		ws_store(c, &arena->objects[last - 1].next_free, slot + 1);
	else
		ws_store(c, head, slot + 1);
	ws_store(c, tail, slot + 1);
}

void ws_slot_fifo_pop(struct ws_crit *c, uint32_t *head, uint32_t *tail, uint32_t slot)
{
	/* Read unlocked: no section on one object reads or restores a link (layout.h). */
	uint32_t next = c->arena->objects[slot].next_free;

	ws_store(c, head, next);
	if (!next)
		ws_store(c, tail, 0);
}
