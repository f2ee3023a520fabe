/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "queue.h"

#include "lock.h"

void ws_queue_add(ws_arena *arena, struct ws_ref *ref, uint32_t id, bool wait_all)
{
	struct ws_object *obj = ref->obj;
	struct ws_entry *entry = ws_entry_at(arena, id);

	entry->object = ref->index;
	entry->next = 0;
	entry->prev = obj->tail;
	if (obj->tail)
		ws_entry_at(arena, obj->tail)->next = id;
	else
		obj->head = id;
	obj->tail = id;
	obj->queued++;
	if (wait_all)
		atomic_fetch_add_explicit(&obj->all_waiters, 1, memory_order_relaxed);
}

void ws_queue_remove(ws_arena *arena, struct ws_object *obj, uint32_t index, uint32_t id,
		     bool wait_all)
{
	struct ws_entry *entry = ws_entry_at(arena, id);
	bool free_slot;

	ws_lock(&obj->lock, arena->shared);
	if (entry->prev)
		ws_entry_at(arena, entry->prev)->next = entry->next;
	else
		obj->head = entry->next;
	if (entry->next)
		ws_entry_at(arena, entry->next)->prev = entry->prev;
	else
		obj->tail = entry->prev;
	if (wait_all)
		atomic_fetch_sub_explicit(&obj->all_waiters, 1, memory_order_relaxed);
	free_slot = --obj->queued == 0 && ws_object_closed(obj);
	ws_unlock(&obj->lock, arena->shared);
	if (free_slot)
		ws_slot_free(arena, index);
}

static uint32_t acquired_state(uint32_t index, bool abandoned)
{
	return (index + 1) | (abandoned ? WS_WAITER_ABANDONED : 0);
}

static bool claim(struct ws_waiter *waiter, uint32_t state)
{
	uint32_t pending = WS_WAITER_PENDING;

	return atomic_compare_exchange_strong_explicit(&waiter->state, &pending, state,
						       memory_order_acq_rel,
						       memory_order_relaxed);
}

bool ws_try_complete_all(ws_arena *arena, struct ws_waiter *waiter, uint32_t held)
{
	bool ready = true, abandoned = false, done = false;
	uint32_t i;

	for (i = 0; i < waiter->count; i++)
		if (waiter->entries[i].object != held)
			ws_lock(&arena->objects[waiter->entries[i].object].lock, arena->shared);
	for (i = 0; i < waiter->count && ready; i++) {
		struct ws_object *obj = &arena->objects[waiter->entries[i].object];

		ready = ws_object_ready(obj, waiter->owner);
		abandoned |= ws_object_abandoned(obj);
	}
	if (ready && claim(waiter, acquired_state(0, abandoned))) {
		for (i = 0; i < waiter->count; i++)
			ws_object_take(&arena->objects[waiter->entries[i].object], waiter->owner);
		done = true;
	}
	for (i = 0; i < waiter->count; i++)
		if (waiter->entries[i].object != held)
			ws_unlock(&arena->objects[waiter->entries[i].object].lock, arena->shared);
	return done;
}

void ws_hand_off(ws_arena *arena, struct ws_ref *ref)
{
	struct ws_object *obj = ref->obj;
	uint32_t id, next;

	for (id = obj->head; id; id = next) {
		struct ws_waiter *waiter = ws_waiter_at(arena, ws_entry_waiter(id));
		uint32_t slot = ws_entry_slot(id);

		next = ws_entry_at(arena, id)->next;
		if (atomic_load_explicit(&waiter->state, memory_order_relaxed) != WS_WAITER_PENDING)
			continue;
		if (waiter->wait_all && slot < waiter->count) {
			if (ref->all_locked && ws_try_complete_all(arena, waiter, ref->index))
				ref->handed_off = true;
			continue;
		}
		if (!ws_object_ready(obj, waiter->owner))
			continue;
		if (claim(waiter, acquired_state(slot, ws_object_abandoned(obj)))) {
			ws_object_take(obj, waiter->owner);
			ref->handed_off = true;
		}
	}
}
