/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fault.h"
#include "queue.h"

#include "thread.h"

/* Keep this many undo cells for the hand-off itself when pruning on the way. */
#define PRUNE_RESERVE 64

static void set_queued(struct ws_object *obj, bool queued)
{
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);
	uint32_t tag = ws_head_tag(head);

	tag = queued ? tag | WS_HEAD_QUEUED : tag & ~WS_HEAD_QUEUED;
	ws_head_write(obj, tag, ws_head_value(head));
}

int ws_queue_link(struct ws_crit *c, uint32_t slot, uint32_t record, uint32_t entry)
{
	ws_arena *arena = c->arena;
	struct ws_object *obj = &arena->objects[slot];
	struct ws_entry *e = &arena->records[record].entries[entry];
	uint32_t id = ws_entry_id(record, entry), tail = obj->queue_tail, r, k;

	if (tail) {
		struct ws_entry *last = ws_entry_at(arena, tail, &r, &k);

		if (!last || !last->linked || last->next || last->object != slot)
			return c->error = -EUCLEAN;
		ws_store(c, &last->next, id);
	} else {
		obj->queue_head = id;
	}
	ws_store(c, &e->object, slot);
	ws_store(c, &e->prev, tail);
	ws_store(c, &e->next, 0);
	ws_store(c, &e->linked, 1);
	obj->queue_tail = id;
	obj->queued++;
	set_queued(obj, true);
	return 0;
}

int ws_queue_unlink(struct ws_crit *c, uint32_t record, uint32_t entry)
{
	ws_arena *arena = c->arena;
	struct ws_entry *e = &arena->records[record].entries[entry];
	uint32_t id = ws_entry_id(record, entry), slot = e->object, prev = e->prev, next = e->next;
	uint32_t r, k;
	struct ws_object *obj;
	int ret;

	if (!e->linked)
		return 0;
	if (slot >= arena->slots)
		return c->error = -EUCLEAN;
	ret = ws_obj_lock(c, slot);
	if (ret < 0)
		return ret;
	obj = &arena->objects[slot];
	if (prev) {
		struct ws_entry *p = ws_entry_at(arena, prev, &r, &k);

		if (!p || p->next != id)
			return c->error = -EUCLEAN;
		ws_store(c, &p->next, next);
	} else {
		if (obj->queue_head != id)
			return c->error = -EUCLEAN;
		obj->queue_head = next;
	}
	if (next) {
		struct ws_entry *n = ws_entry_at(arena, next, &r, &k);

		if (!n || n->prev != id)
			return c->error = -EUCLEAN;
		ws_store(c, &n->prev, prev);
	} else {
		if (obj->queue_tail != id)
			return c->error = -EUCLEAN;
		obj->queue_tail = prev;
	}
	ws_store(c, &e->linked, 0);
	if (obj->queued == 0)
		return c->error = -EUCLEAN;
	if (--obj->queued == 0) {
		set_queued(obj, false);
		if (obj->closed) {
			obj->closed = 0;
			ws_slot_free(c, slot);
		}
	}
	return 0;
}

int ws_queue_unlink_all(struct ws_crit *c, uint32_t record)
{
	for (uint32_t k = 0; k < WS_ENTRIES_PER_WAIT; k++) {
		int ret = ws_queue_unlink(c, record, k);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Is this entry's wait over (or its thread gone)?  Then it only takes up room. */
static bool stale(const struct ws_record *rec, bool *dead)
{
	enum ws_liveness live = ws_record_liveness(rec);

	if (live == WS_DEAD)
		*dead = true;
	return live != WS_LIVE ||
	       atomic_load_explicit(&rec->state, memory_order_relaxed) != WS_WAIT_PENDING;
}

/* The walk visits each entry once: more steps than entries exist means a cycle. */
static uint32_t walk_bound(const ws_arena *arena)
{
	return arena->records_count * WS_ENTRIES_PER_WAIT + 1;
}

int ws_queue_prune(struct ws_crit *c, uint32_t slot)
{
	ws_arena *arena = c->arena;
	uint32_t id = arena->objects[slot].queue_head, bound = walk_bound(arena), r, k;
	bool dead = false;

	for (uint32_t steps = 0; id; steps++) {
		struct ws_entry *e = ws_entry_at(arena, id, &r, &k);
		uint32_t next;

		if (!e || steps > bound || !e->linked || e->object != slot)
			return c->error = -EUCLEAN;
		next = e->next;
		if (stale(&arena->records[r], &dead) && c->log->undo_count + 8 < WS_LOG_UNDO) {
			int ret = ws_queue_unlink(c, r, k);

			if (ret < 0)
				return ret;
		}
		id = next;
	}
	return 0;
}

static bool signaled_for(struct ws_object *obj, uint32_t owner, bool pulsed)
{
	return pulsed || ws_obj_ready(obj, owner);
}

/* Could anyone still acquire it?  The walk ends when nobody could. */
static bool anything_left(struct ws_object *obj, enum ws_settle mode)
{
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);

	if (mode != WS_SETTLE_SIGNAL)
		return true;
	if (ws_head_type(head) == WS_TYPE_MUTEX)
		return ws_head_value(head) == 0;
	return ws_head_ready(head, 0);
}

/* A pulsed event is handed over without ever being signaled. */
static bool take_for(struct ws_object *obj, uint32_t owner, bool pulsed)
{
	return pulsed ? false : ws_obj_take(obj, owner);
}

/*
 * A wait_all waiter queued on `slot`: acquires all its objects if all are
 * ready now.  *done reports success; the objects this locked for the check
 * are unlocked again when it fails.
 */
static int complete_all(struct ws_crit *c, uint32_t record, uint32_t slot, bool pulsed,
			bool *done, bool *abandoned)
{
	ws_arena *arena = c->arena;
	struct ws_record *rec = &arena->records[record];
	uint32_t count = rec->count, owner = rec->wait_owner;
	bool fresh[WS_MAX_WAIT_OBJECTS] = { false }, ready = true;
	uint32_t i;

	*done = false;
	if (count > WS_MAX_WAIT_OBJECTS)
		return c->error = -EUCLEAN;
	for (i = 0; i < count; i++) {
		uint32_t s = rec->entries[i].object;
		int ret;

		if (s >= arena->slots)
			return c->error = -EUCLEAN;
		ret = ws_obj_lock(c, s);
		if (ret < 0)
			return ret;
		fresh[i] = ret == 1;
	}
	for (i = 0; i < count && ready; i++) {
		uint32_t s = rec->entries[i].object;

		ready = signaled_for(&arena->objects[s], owner, pulsed && s == slot);
	}
	if (!ready) {
		for (i = 0; i < count; i++)
			if (fresh[i])
				ws_obj_release(c, rec->entries[i].object);
		return 0;
	}
	for (i = 0; i < count; i++) {
		uint32_t s = rec->entries[i].object;

		*abandoned |= take_for(&arena->objects[s], owner, pulsed && s == slot);
	}
	*done = true;
	return 0;
}

void ws_guard_queue(struct ws_crit *c, uint32_t slot)
{
	ws_arena *arena = c->arena;
	uint32_t id = arena->objects[slot].queue_head, bound = walk_bound(arena), r, k;
	bool dead = false;

	for (uint32_t steps = 0; id && steps <= bound; steps++) {
		struct ws_entry *e = ws_entry_at(arena, id, &r, &k);

		if (!e)
			return;
		if (!stale(&arena->records[r], &dead)) {
			ws_guard(c, r);
			return;
		}
		id = e->next;
	}
}

int ws_settle(struct ws_crit *c, uint32_t slot, enum ws_settle mode, bool *dead)
{
	ws_arena *arena = c->arena;
	struct ws_object *obj = &arena->objects[slot];
	uint32_t id = obj->queue_head, bound = walk_bound(arena), r, k;
	bool pulsed = mode != WS_SETTLE_SIGNAL;
	int ret;

	for (uint32_t steps = 0; id; steps++) {
		struct ws_entry *e = ws_entry_at(arena, id, &r, &k);
		struct ws_record *rec;
		bool abandoned = false, done;
		uint32_t next;

		if (!e || steps > bound || !e->linked || e->object != slot)
			return c->error = -EUCLEAN;
		next = e->next;
		rec = &arena->records[r];
		if (stale(rec, dead)) {
			if (c->log->undo_count + PRUNE_RESERVE < WS_LOG_UNDO) {
				ret = ws_queue_unlink(c, r, k);
				if (ret < 0)
					return ret;
			}
			id = next;
			continue;
		}
		if (!anything_left(obj, mode))
			break;
		/* From here this waiter may be owed the object: cover it against our death. */
		ws_guard(c, r);
		if (rec->wait_all && k < rec->count) {
			ret = complete_all(c, r, slot, pulsed, &done, &abandoned);
			if (ret < 0)
				return ret;
			k = 0;
		} else {
			done = signaled_for(obj, rec->wait_owner, pulsed);
			if (done)
				abandoned = take_for(obj, rec->wait_owner, pulsed);
		}
		if (done) {
			WS_FAULT();
			ws_hand(c, r, WS_WAIT_GOT | (abandoned ? WS_WAIT_ABANDONED : 0) | k);
			ws_op_progress(c);
			ret = ws_commit(c);
			if (ret < 0)
				return ret;
			if (mode == WS_SETTLE_PULSE_ONE)
				break;
		}
		id = next;
	}
	return ws_commit(c);
}

void ws_end_pulse(struct ws_crit *c, uint32_t slot)
{
	struct ws_object *obj = &c->arena->objects[slot];
	uint64_t head;

	if (ws_obj_lock(c, slot) < 0)
		return;
	head = atomic_load_explicit(&obj->head, memory_order_relaxed);
	if (ws_head_type(head) == WS_TYPE_EVENT)
		ws_head_write(obj, ws_head_tag(head), 0);
}
