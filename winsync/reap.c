/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "reap.h"

#include "fault.h"
#include "futex.h"
#include "queue.h"
#include "stats.h"
#include "thread.h"

/* Records ever handed out: the rest are still zero. */
static uint32_t records_used(ws_arena *arena)
{
	uint32_t n = atomic_load_explicit(&arena->header->fresh_records, memory_order_relaxed);

	return n < arena->records_count ? n : arena->records_count;
}

static uint32_t slots_used(ws_arena *arena)
{
	uint32_t n = arena->header->fresh_slots;

	return n < arena->slots ? n : arena->slots;
}

bool ws_dead_records(ws_arena *arena)
{
	uint32_t n = records_used(arena);

	for (uint32_t r = 0; r < n; r++)
		if (ws_record_liveness(&arena->records[r]) == WS_DEAD)
			return true;
	return false;
}

/* Does a live thread other than record `except` acquire mutexes as `owner`? */
static bool owner_in_use(ws_arena *arena, uint32_t owner, uint32_t except)
{
	uint32_t n = records_used(arena);

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

int ws_owner_died_locked(struct ws_crit *c, uint32_t owner)
{
	ws_arena *arena = c->arena;
	uint32_t n = records_used(arena);
	int ret;

	/* Its blocked waits end with -ECANCELED, one hand-off (and wake) each. */
	for (uint32_t r = 0; r < n; r++) {
		struct ws_record *rec = &arena->records[r];

		if (atomic_load_explicit(&rec->state, memory_order_relaxed) != WS_WAIT_PENDING ||
		    rec->wait_owner != owner)
			continue;
		ws_op_begin(c, WS_OP_PLAIN, 0);
		ws_hand(c, r, WS_WAIT_CANCELED);
		ret = ws_commit(c);
		ws_op_end(c);
		if (ret < 0)
			return ret;
	}
	return abandon_owner(c, owner);
}

/*
 * The reaper's duties for a record whose thread is gone: end its wait,
 * unlink its entries, abandon its owner id's mutexes unless a live thread
 * still uses that id, and (unless the caller adopted it) free it.
 */
static int reap_record(struct ws_crit *c, uint32_t r, bool adopted)
{
	ws_arena *arena = c->arena;
	struct ws_record *rec = &arena->records[r];
	uint32_t owner = atomic_load_explicit(&rec->owner, memory_order_acquire);
	uint32_t alive = atomic_load_explicit(&rec->alive, memory_order_acquire);
	int ret;

	ws_op_begin(c, WS_OP_REAP, r);
	if (atomic_load_explicit(&rec->state, memory_order_relaxed) != WS_WAIT_IDLE)
		ws_store(c, &rec->state, WS_WAIT_IDLE);
	ret = ws_queue_unlink_all(c, r);
	if (ret >= 0)
		ret = ws_commit(c);
	ws_op_end(c);
	if (ret < 0)
		return ret;
	WS_FAULT();
	if (!owner_in_use(arena, owner, r)) {
		ret = abandon_owner(c, owner);
		if (ret < 0)
			return ret;
	}
	if (adopted)
		return 0;
	/* A new generation first: lock words naming the dead thread stay dead. */
	ws_op_begin(c, WS_OP_REAP, r);
	ws_store(c, &rec->generation, ws_get(&rec->generation) + 1);
	ret = ws_commit(c);
	ws_op_end(c);
	if (ret < 0)
		return ret;
	/* Free once all is done; adopters and claimers race for it with a CAS. */
	WS_FAULT();
	atomic_compare_exchange_strong_explicit(&rec->alive, &alive, 0, memory_order_acq_rel,
						memory_order_relaxed);
	ws_stat_add(WS_STAT_REAPED);
	return 0;
}

int ws_reap_dead(struct ws_crit *c)
{
	uint32_t n = records_used(c->arena);

	for (uint32_t r = 0; r < n; r++) {
		int ret;

		if (r == c->self || ws_record_liveness(&c->arena->records[r]) != WS_DEAD)
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

	atomic_store_explicit(&c->rec->owner, c->rec->tid, memory_order_release);
	return ret;
}

int ws_owner_died(ws_arena *arena, uint32_t owner)
{
	struct ws_crit c;
	int ret;

	if (!arena || owner == 0)
		return -EINVAL;
	ret = ws_crit_enter(arena, &c);
	if (ret)
		return ret;
	/* Several operations: whoever takes over from us if we die finishes them all. */
	c.log->owner_died = owner;
	ret = ws_owner_died_locked(&c, owner);
	c.log->owner_died = 0;
	ws_crit_leave(&c);
	return ret;
}
