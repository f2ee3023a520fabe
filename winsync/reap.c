/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "reap.h"

#include <errno.h>

#include "fault.h"
#include "queue.h"
#include "record.h"
#include "stats.h"
#include "waiter.h"

static uint32_t slots_used(ws_arena *arena)
{
	uint32_t n = arena->header->fresh_slots;

	return n < arena->slots ? n : arena->slots;
}

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

static int abandon_owner(struct ws_crit *c, uint32_t owner)
{
	uint32_t n = slots_used(c->arena);

	for (uint32_t s = 0; s < n; s++) {
		uint64_t head = atomic_load_explicit(&c->arena->objects[s].head,
						     memory_order_relaxed);
		int ret;

		if (ws_head_type(head) != WS_TYPE_MUTEX || ws_head_value(head) != owner)
			continue;
		ret = abandon_mutex(c, s, owner);
		if (ret < 0)
			return ret;
	}
	return 0;
}

void ws_guard_owner(struct ws_crit *c, uint32_t owner)
{
	ws_arena *arena = c->arena;
	uint32_t n = ws_records_used(arena), slots = slots_used(arena);

	for (uint32_t r = 0; r < n; r++) {
		struct ws_record *rec = &arena->records[r];

		if (ws_wait_state(rec) == WS_WAIT_PENDING && rec->wait_owner == owner &&
		    ws_record_liveness(rec) == WS_LIVE) {
			ws_guard(c, r);
			return;
		}
	}
	for (uint32_t s = 0; s < slots; s++) {
		uint64_t head = atomic_load_explicit(&arena->objects[s].head, memory_order_relaxed);

		if (ws_head_type(head) == WS_TYPE_MUTEX && ws_head_value(head) == owner &&
		    (ws_head_tag(head) & WS_HEAD_QUEUED)) {
			ws_guard_queue(c, s);
			return;
		}
	}
}

int ws_owner_died_locked(struct ws_crit *c, uint32_t owner)
{
	ws_arena *arena = c->arena;
	uint32_t n = ws_records_used(arena);
	int ret;

	/* Its blocked waits end with -ECANCELED, one hand-off (and wake) each. */
	for (uint32_t r = 0; r < n; r++) {
		struct ws_record *rec = &arena->records[r];

		if (ws_wait_state(rec) != WS_WAIT_PENDING || rec->wait_owner != owner)
			continue;
		ws_op_begin(c, WS_OP_PLAIN, 0);
		ws_hand(c, r, WS_WAIT_CANCELED);
		ret = ws_commit(c);
		ws_op_end(c);
		if (ret < 0 && ret != -ESRCH)
			return ret;
	}
	return abandon_owner(c, owner);
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
		ret = abandon_owner(c, owner);
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
