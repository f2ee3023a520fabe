/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "reap.h"

#include <errno.h>

#include "fault.h"
#include "queue.h"
#include "record.h"
#include "slot.h"
#include "stats.h"
#include "waiter.h"

bool ws_dead_records(ws_arena *arena)
{
	uint32_t n = ws_records_used(arena);

	for (uint32_t r = 0; r < n; r++)
		if (ws_record_liveness(&arena->records[r]) == WS_DEAD)
			return true;
	return false;
}

/* Does a live thread other than record `except` acquire mutexes as `owner`? */
static bool owner_in_use(ws_arena *arena, uint32_t owner, uint32_t except)
{
	uint32_t n = ws_records_used(arena);

	for (uint32_t r = 0; r < n; r++) {
		struct ws_record *rec = &arena->records[r];

		if (r != except && ws_record_liveness(rec) == WS_LIVE &&
		    atomic_load_explicit(&rec->owner, memory_order_acquire) == owner)
			return true;
	}
	return false;
}

/* One mutex: abandoned if `owner` still holds it, then handed to its next waiter. */
static int abandon_mutex(struct ws_crit *c, uint32_t slot, uint32_t owner)
{
	struct ws_object *obj = &c->arena->objects[slot];
	bool dead = false;
	int ret;

	ws_op_begin(c, WS_OP_SIGNAL, slot);
	ret = ws_obj_lock(c, slot);
	if (ret >= 0) {
		uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);

		ret = 0;
		if (ws_head_type(head) == WS_TYPE_MUTEX && ws_head_value(head) == owner) {
			ws_guard_queue(c, slot);
			ws_head_write(obj, ws_head_tag(head) | WS_HEAD_ABANDONED, 0);
			ws_put(&obj->aux, 0);
			ret = ws_commit(c);
			if (!ret)
				ret = ws_settle(c, slot, WS_SETTLE_SIGNAL, &dead);
		}
	}
	ws_op_end(c);
	return ret;
}

/* Is `slot` a mutex held under `owner`? */
static bool held_by(ws_arena *arena, uint32_t slot, uint32_t owner)
{
	uint64_t head = atomic_load_explicit(&arena->objects[slot].head, memory_order_relaxed);

	return ws_head_type(head) == WS_TYPE_MUTEX && ws_head_value(head) == owner;
}

/* The most mutexes of one owner whose words are held together. */
#define HELD_WORDS_MAX 128

struct held_words {
	uint32_t count;
	uint32_t slots[HELD_WORDS_MAX];
};

/*
 * An owner's mutexes are abandoned in one step, as NT's thread end does: a
 * thread that takes the first abandoned must not find the next still owned.
 * Each is abandoned by an operation of its own, so their own lock words are
 * held across all of them (a poll of a mutex not yet reached waits), for
 * the first HELD_WORDS_MAX of them.  Taken before anything changes: under
 * WS_ARENA_NONBLOCK a live section on one of them is -EAGAIN.
 */
static int hold_owner_words(struct ws_crit *c, uint32_t owner, struct held_words *h)
{
	uint32_t n = ws_slots_used(c->arena);
	int ret = 0;

	h->count = 0;
	for (uint32_t s = 0; s < n && h->count < HELD_WORDS_MAX && !ret; s++) {
		if (!held_by(c->arena, s, owner))
			continue;
		ret = ws_obj_hold_word(c, s);
		if (!ret)
			h->slots[h->count++] = s;
	}
	return ret;
}

static void drop_owner_words(struct ws_crit *c, struct held_words *h)
{
	while (h->count--)
		ws_obj_drop_word(c, h->slots[h->count]);
	h->count = 0;
}

static int abandon_owner(struct ws_crit *c, uint32_t owner)
{
	uint32_t n = ws_slots_used(c->arena);
	int ret = 0;

	for (uint32_t s = 0; s < n && !ret; s++)
		if (held_by(c->arena, s, owner))
			ret = abandon_mutex(c, s, owner);
	return ret;
}

/* Is record `rec` blocked in a wait as `owner`? */
static bool waits_as(const struct ws_record *rec, uint32_t owner)
{
	return ws_wait_state(rec) == WS_WAIT_PENDING && ws_get(&rec->wait_owner) == owner;
}

void ws_guard_owner(struct ws_crit *c, uint32_t owner)
{
	ws_arena *arena = c->arena;
	uint32_t n = ws_records_used(arena), slots = ws_slots_used(arena);

	for (uint32_t r = 0; r < n; r++) {
		struct ws_record *rec = &arena->records[r];

		if (waits_as(rec, owner) && ws_record_liveness(rec) == WS_LIVE) {
			ws_guard(c, r);
			return;
		}
	}
	for (uint32_t s = 0; s < slots; s++) {
		uint64_t head = atomic_load_explicit(&arena->objects[s].head, memory_order_relaxed);

		/* Its queue is read with its word held: a section on it alone may be editing it. */
		if (ws_head_type(head) == WS_TYPE_MUTEX && ws_head_value(head) == owner &&
		    (ws_head_tag(head) & WS_HEAD_QUEUED) && ws_obj_hold_word(c, s) == 0) {
			ws_guard_queue(c, s);
			ws_obj_drop_word(c, s);
			return;
		}
	}
}

/*
 * Locks the object the first entry of record `r`'s wait names, so that the
 * wait we look at stays the one we hand: a wait on one object is armed
 * under that object's lock alone (wait.c), but before its thread arms
 * another, it unlinks this one's entries with their objects locked
 * (queue.c).  False if `r` no longer waits as `owner`, names no object
 * (its thread is between two waits, the one we saw over, or died arming
 * one: the reaper ends it), or the lock failed (c->error says why).
 */
static bool pin_wait(struct ws_crit *c, uint32_t r, uint32_t owner)
{
	struct ws_record *rec = &c->arena->records[r];

	/* The entry changes only when its thread arms another wait: three tries. */
	for (int tries = 0; tries < 3 && waits_as(rec, owner); tries++) {
		uint32_t slot = ws_get(&rec->entries[0].object);

		if (slot >= c->arena->slots || ws_obj_lock(c, slot) < 0)
			return false;
		if (ws_get(&rec->entries[0].object) == slot && waits_as(rec, owner))
			return true;
	}
	return false;
}

int ws_owner_died_locked(struct ws_crit *c, uint32_t owner)
{
	ws_arena *arena = c->arena;
	uint32_t n = ws_records_used(arena);
	struct held_words held;
	int ret;

	ret = hold_owner_words(c, owner, &held);
	/* Its blocked waits end with -ECANCELED, one hand-off (and wake) each. */
	for (uint32_t r = 0; r < n && !ret; r++) {
		if (!waits_as(&arena->records[r], owner))
			continue;
		ws_op_begin(c, WS_OP_PLAIN, 0);
		if (pin_wait(c, r, owner))
			ws_hand(c, r, WS_WAIT_CANCELED);
		/* A failed lock left c->error: the commit undoes and returns it. */
		ret = ws_commit(c);
		ws_op_end(c);
		if (ret == -ESRCH)
			ret = 0;
	}
	if (!ret)
		ret = abandon_owner(c, owner);
	drop_owner_words(c, &held);
	return ret;
}

/*
 * The reaper's duties for a record whose thread is gone: end its wait,
 * unlink its entries, abandon its owner id's mutexes unless a live thread
 * still uses that id, and (unless the caller adopted it) free it.  The
 * record is REAPING throughout (record.h): nobody adopts it meanwhile.
 */
static int reap_record(struct ws_crit *c, uint32_t r, bool adopted)
{
	ws_arena *arena = c->arena;
	struct ws_record *rec = &arena->records[r];
	uint32_t owner;
	int ret;

	if (!adopted && !ws_record_reap_begin(arena, r))
		return 0; /* adopted meanwhile: its duties are its adopter's */
	owner = atomic_load_explicit(&rec->owner, memory_order_acquire);
	ws_op_begin(c, WS_OP_REAP, r);
	ws_wait_clear(rec);
	ret = ws_queue_unlink_all(c, r);
	if (ret >= 0)
		ret = ws_commit(c);
	ws_op_end(c);
	if (ret < 0)
		return ret;
	WS_FAULT();
	if (owner && !owner_in_use(arena, owner, r)) {
		struct held_words held;

		ret = hold_owner_words(c, owner, &held);
		if (!ret)
			ret = abandon_owner(c, owner);
		drop_owner_words(c, &held);
		if (ret < 0)
			return ret;
	}
	if (adopted)
		return 0;
	WS_FAULT();
	ws_record_reap_end(arena, r);
	ws_stat_add(WS_STAT_REAPED);
	return 0;
}

int ws_reap_dead(struct ws_crit *c)
{
	uint32_t n = ws_records_used(c->arena);

	for (uint32_t r = 0; r < n; r++) {
		struct ws_record *rec = &c->arena->records[r];
		int ret;

		if (r == c->self || ws_record_liveness(rec) != WS_DEAD)
			continue;
		/* A section on one object it died in: recovered first (recover.c). */
		if (atomic_load_explicit(&rec->log.state, memory_order_acquire) != WS_LOG_IDLE ||
		    ws_get(&rec->log.object_lock))
			continue;
		ret = reap_record(c, r, false);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int ws_reap_adopted(struct ws_crit *c)
{
	int ret = reap_record(c, c->self, true);

	/* A new thread: it names no owner id until it acquires a mutex. */
	atomic_store_explicit(&c->rec->owner, 0, memory_order_release);
	return ret;
}
