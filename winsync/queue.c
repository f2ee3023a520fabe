/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "queue.h"

#include "fault.h"
#include "record.h"
#include "slot.h"
#include "type.h"
#include "waiter.h"

/* Keep this many undo cells for the hand-off itself when pruning on the way. */
#define PRUNE_RESERVE 64

static void set_queued(struct ws_object *obj, bool queued)
{
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);
	uint32_t tag = ws_head_tag(head);

	tag = queued ? tag | WS_HEAD_QUEUED : tag & ~WS_HEAD_QUEUED;
	ws_head_write(obj, tag, ws_head_value(head));
}

static uint32_t slot_gen(ws_arena *arena, uint32_t slot)
{
	const struct ws_object *obj = &arena->objects[slot];

	return ws_queue_gen(obj, atomic_load_explicit(&obj->head, memory_order_acquire));
}

bool ws_entry_queued(ws_arena *arena, const struct ws_entry *entry)
{
	/* A section on its object alone may be unlinking it (a stale entry). */
	uint32_t linked = ws_get(&entry->linked), object = ws_get(&entry->object);

	return linked && object < arena->slots && linked == slot_gen(arena, object);
}

int ws_queue_link(struct ws_crit *c, uint32_t slot, uint32_t record, uint32_t entry)
{
	ws_arena *arena = c->arena;
	struct ws_object *obj = &arena->objects[slot];
	struct ws_entry *e = &arena->records[record].entries[entry];
	uint32_t id = ws_entry_id(record, entry), tail = obj->queue_tail, gen = slot_gen(arena, slot);
	uint32_t r, k;

	if (gen == 0)
		return c->error = -EUCLEAN;
	if (tail) {
		struct ws_entry *last = ws_entry_at(arena, tail, &r, &k);

		if (!last || ws_get(&last->linked) != gen || ws_get(&last->next) ||
		    ws_get(&last->object) != slot)
			return c->error = -EUCLEAN;
		ws_store(c, &last->next, id);
	} else {
		obj->queue_head = id;
	}
	ws_store(c, &e->object, slot);
	ws_store(c, &e->prev, tail);
	ws_store(c, &e->next, 0);
	ws_store(c, &e->linked, gen);
	obj->queue_tail = id;
	obj->queued++;
	set_queued(obj, true);
	return 0;
}

int ws_queue_unlink(struct ws_crit *c, uint32_t record, uint32_t entry)
{
	ws_arena *arena = c->arena;
	struct ws_entry *e = &arena->records[record].entries[entry];
	uint32_t id = ws_entry_id(record, entry), slot, prev, next, linked;
	uint32_t r, k;
	struct ws_object *obj;
	int ret;

	/* Before its object is locked, a section on that object alone may unlink it. */
	linked = ws_get(&e->linked);
	if (!linked)
		return 0;
	slot = ws_get(&e->object); /* written by its own thread only, when it links */
	if (slot >= arena->slots)
		return c->error = -EUCLEAN;
	/* Its object was closed: the queue it was in is gone. */
	if (linked != slot_gen(arena, slot)) {
		ws_store(c, &e->linked, 0);
		return 0;
	}
	ret = ws_obj_lock(c, slot);
	if (ret < 0)
		return ret;
	if (!ws_get(&e->linked))
		return 0;
	prev = ws_get(&e->prev);
	next = ws_get(&e->next);
	obj = &arena->objects[slot];
	if (prev) {
		struct ws_entry *p = ws_entry_at(arena, prev, &r, &k);

		if (!p || ws_get(&p->next) != id)
			return c->error = -EUCLEAN;
		ws_store(c, &p->next, next);
	} else {
		if (obj->queue_head != id)
			return c->error = -EUCLEAN;
		obj->queue_head = next;
	}
	if (next) {
		struct ws_entry *n = ws_entry_at(arena, next, &r, &k);

		if (!n || ws_get(&n->prev) != id)
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
	if (--obj->queued == 0)
		set_queued(obj, false);
	return 0;
}

int ws_queue_unlink_all(struct ws_crit *c, uint32_t record)
{
	ws_arena *arena = c->arena;

	for (uint32_t k = 0; k < WS_ENTRIES_PER_WAIT; k++) {
		struct ws_entry *e = &arena->records[record].entries[k];
		uint32_t slot = ws_get(&e->object);
		int ret;

		if (slot == WS_ENTRY_NOWHERE)
			continue;
		/*
		 * Its link is read with its object locked: a section on that
		 * object may be unlinking it (a stale entry) in a transaction
		 * that it, or a recovery, will still undo.
		 */
		if (slot < arena->slots) {
			ret = ws_obj_lock(c, slot);
			if (ret < 0)
				return ret;
		}
		ret = ws_queue_unlink(c, record, k);
		if (ret < 0)
			return ret;
		ws_store(c, &e->object, WS_ENTRY_NOWHERE);
	}
	return c->error;
}

void ws_queue_drop(struct ws_crit *c, uint32_t slot)
{
	struct ws_object *obj = &c->arena->objects[slot];

	obj->queue_head = obj->queue_tail = obj->queued = 0;
	set_queued(obj, false);
}

/* Is this entry's wait over (or its thread gone)?  Then it only takes up room. */
static bool stale(const struct ws_record *rec, bool *dead)
{
	enum ws_liveness live = ws_record_liveness(rec);

	if (live == WS_DEAD)
		*dead = true;
	return live != WS_LIVE || ws_wait_state(rec) != WS_WAIT_PENDING;
}

/* The walk visits each entry once: more steps than entries exist means a cycle. */
static uint32_t walk_bound(const ws_arena *arena)
{
	return arena->records_count * WS_ENTRIES_PER_WAIT + 1;
}

/* The next entry of locked object `slot`'s queue, checked; NULL at the end or on corruption. */
static struct ws_entry *walk_next(struct ws_crit *c, uint32_t slot, uint32_t *id, uint32_t *steps,
				  uint32_t *r, uint32_t *k)
{
	ws_arena *arena = c->arena;
	struct ws_entry *e;

	if (!*id)
		return NULL;
	e = ws_entry_at(arena, *id, r, k);
	if (!e || (*steps)++ > walk_bound(arena) || ws_get(&e->object) != slot ||
	    ws_get(&e->linked) != slot_gen(arena, slot)) {
		c->error = -EUCLEAN;
		return NULL;
	}
	*id = ws_get(&e->next);
	return e;
}

int ws_queue_prune(struct ws_crit *c, uint32_t slot)
{
	uint32_t id = c->arena->objects[slot].queue_head, steps = 0, r, k;
	bool dead = false;

	while (walk_next(c, slot, &id, &steps, &r, &k)) {
		if (stale(&c->arena->records[r], &dead) && ws_undo_room(c) > 8) {
			int ret = ws_queue_unlink(c, r, k);

			if (ret < 0)
				return ret;
		}
	}
	return c->error;
}

bool ws_queue_alone(struct ws_crit *c, uint32_t slot, bool many_units)
{
	uint32_t id = c->arena->objects[slot].queue_head, steps = 0, r, k, live = 0;
	int error = c->error;
	bool dead = false, alone = true;

	while (alone && walk_next(c, slot, &id, &steps, &r, &k)) {
		struct ws_record *rec = &c->arena->records[r];

		if (stale(rec, &dead))
			continue;
		alone = !rec->wait_all && !(many_units && ++live > 1);
	}
	/* A corrupt queue: the arena lock's holder reports it. */
	if (c->error != error) {
		c->error = error;
		return false;
	}
	return alone;
}

void ws_guard_queue(struct ws_crit *c, uint32_t slot)
{
	uint32_t id = c->arena->objects[slot].queue_head, steps = 0, r, k;
	int error = c->error;
	bool dead = false;

	while (walk_next(c, slot, &id, &steps, &r, &k)) {
		if (!stale(&c->arena->records[r], &dead)) {
			ws_guard(c, r);
			break;
		}
	}
	c->error = error; /* only a guard: a corrupt queue is the settle's to report */
}

uint32_t ws_queue_ahead(struct ws_crit *c, uint32_t slot, uint32_t record, uint32_t *out,
			uint32_t max)
{
	uint32_t id = c->arena->objects[slot].queue_head, steps = 0, r, k, n = 0;
	int error = c->error;
	bool dead = false;

	while (n < max && walk_next(c, slot, &id, &steps, &r, &k) && r != record)
		if (!stale(&c->arena->records[r], &dead))
			out[n++] = r;
	c->error = error; /* only a watch list: corruption is reported elsewhere */
	return n;
}

/* Record `first` (UINT32_MAX: nobody) is woken after the section, once. */
static void rearm(struct ws_crit *c, uint32_t first)
{
	uint32_t i;

	if (first == UINT32_MAX)
		return;
	for (i = 0; i < c->rearm_count && c->rearm[i] != first; i++)
		;
	if (i == c->rearm_count && c->rearm_count < WS_REARM_MAX)
		c->rearm[c->rearm_count++] = first;
}

void ws_queue_rearm(struct ws_crit *c, uint32_t slot, uint32_t owner)
{
	uint32_t first;

	if (ws_queue_ahead(c, slot, owner, &first, 1))
		rearm(c, first);
}

/* Is `slot` ready for the waiter, a pulse counting as signaled for its own event? */
static bool ready_for(struct ws_object *obj, uint32_t owner, bool pulsed)
{
	return pulsed || ws_obj_ready(obj, owner);
}

/* A pulsed event is handed over without ever being signaled. */
static bool take_for(struct ws_object *obj, uint32_t owner, bool pulsed)
{
	return pulsed ? false : ws_obj_take(obj, owner);
}

static bool is_mutex(struct ws_object *obj)
{
	return ws_head_type(atomic_load_explicit(&obj->head, memory_order_relaxed)) ==
	       WS_TYPE_MUTEX;
}

/* The mutexes a hand-off gave a new owner: their other waiters watch that owner now. */
struct taken_mutexes {
	uint32_t count;
	uint32_t slots[WS_MAX_WAIT_OBJECTS];
	uint32_t first[WS_MAX_WAIT_OBJECTS]; /* the waiter each re-arms, or UINT32_MAX */
};

static void note_taken(struct taken_mutexes *t, struct ws_object *obj, uint32_t slot)
{
	if (is_mutex(obj) && t->count < WS_MAX_WAIT_OBJECTS)
		t->slots[t->count++] = slot;
}

/*
 * A wait_all waiter queued on `slot`: acquires all its objects if all are
 * ready now.  *done reports success; the objects this locked for the check
 * are unlocked again, last first, when it fails.
 */
static int complete_all(struct ws_crit *c, uint32_t record, uint32_t slot, bool pulsed,
			bool *done, bool *abandoned, struct taken_mutexes *taken)
{
	ws_arena *arena = c->arena;
	struct ws_record *rec = &arena->records[record];
	uint32_t count = rec->count, owner = ws_get(&rec->wait_owner);
	uint32_t objects[WS_MAX_WAIT_OBJECTS];
	bool fresh[WS_MAX_WAIT_OBJECTS] = { false }, ready = true;
	uint32_t i, locked = 0;

	*done = false;
	if (count > WS_MAX_WAIT_OBJECTS)
		return c->error = -EUCLEAN;
	/* An entry whose object was closed can never be ready. */
	for (i = 0; i < count && ready; i++) {
		ready = ws_entry_queued(arena, &rec->entries[i]);
		objects[i] = ws_get(&rec->entries[i].object);
	}
	for (i = 0; i < count && ready; i++, locked++) {
		int ret = ws_obj_lock(c, objects[i]);

		if (ret < 0)
			return ret;
		fresh[i] = ret == 1;
		ready = ready_for(&arena->objects[objects[i]], owner, pulsed && objects[i] == slot);
	}
	if (!ready) {
		while (locked--)
			if (fresh[locked])
				ws_obj_release(c, objects[locked]);
		return 0;
	}
	for (i = 0; i < count; i++) {
		uint32_t s = objects[i];

		*abandoned |= take_for(&arena->objects[s], owner, pulsed && s == slot);
		note_taken(taken, &arena->objects[s], s);
	}
	*done = true;
	return 0;
}

/* One waiter of the walk: acquire what it waits for now, if it can have it. */
static int try_waiter(struct ws_crit *c, uint32_t slot, uint32_t r, uint32_t *k, bool pulsed,
		      bool *done, bool *abandoned, struct taken_mutexes *taken)
{
	struct ws_record *rec = &c->arena->records[r];
	struct ws_object *obj = &c->arena->objects[slot];
	uint32_t owner;

	if (rec->wait_all && *k < rec->count) {
		*k = 0;
		return complete_all(c, r, slot, pulsed, done, abandoned, taken);
	}
	owner = ws_get(&rec->wait_owner);
	*done = ready_for(obj, owner, pulsed);
	if (*done) {
		*abandoned = take_for(obj, owner, pulsed);
		if (!pulsed)
			note_taken(taken, obj, slot);
	}
	return 0;
}

int ws_settle(struct ws_crit *c, uint32_t slot, enum ws_settle mode, bool *dead)
{
	ws_arena *arena = c->arena;
	struct ws_object *obj = &arena->objects[slot];
	uint32_t id = obj->queue_head, steps = 0, r, k;
	bool pulsed = mode != WS_SETTLE_SIGNAL;
	int ret;

	while (walk_next(c, slot, &id, &steps, &r, &k)) {
		struct ws_record *rec = &arena->records[r];
		struct taken_mutexes taken = { 0 };
		bool abandoned = false, done;

		if (stale(rec, dead)) {
			if (ws_undo_room(c) > PRUNE_RESERVE) {
				ret = ws_queue_unlink(c, r, k);
				if (ret < 0)
					return ret;
			}
			continue;
		}
		/* Could anyone still acquire it?  The walk ends when nobody could. */
		if (!pulsed && !ws_obj_ready(obj, WS_ANY_OWNER))
			break;
		/* From here this waiter may be owed the object: cover it against our death. */
		ws_guard(c, r);
		ret = try_waiter(c, slot, r, &k, pulsed, &done, &abandoned, &taken);
		if (ret < 0)
			return ret;
		if (!done)
			continue;
		WS_FAULT();
		ws_hand(c, r, WS_WAIT_GOT | (abandoned ? WS_WAIT_ABANDONED : 0) | k);
		ws_op_progress(c);
		/* The owner id its new mutexes are held under lives on its record. */
		if (taken.count)
			ws_store(c, &rec->owner, ws_get(&rec->wait_owner));
		/* Whom to re-arm, read while the mutexes are locked (the commit unlocks them). */
		for (uint32_t i = 0; i < taken.count; i++)
			if (!ws_queue_ahead(c, taken.slots[i], r, &taken.first[i], 1))
				taken.first[i] = UINT32_MAX;
		ret = ws_commit(c);
		if (ret == -ESRCH)
			continue; /* it gave up just now: undone, on to the next */
		if (ret < 0)
			return ret;
		for (uint32_t i = 0; i < taken.count; i++)
			rearm(c, taken.first[i]);
		if (mode == WS_SETTLE_PULSE_ONE)
			break;
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
