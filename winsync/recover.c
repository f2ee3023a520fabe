/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "recover.h"

#include "futex.h"
#include "lock.h"
#include "record.h"
#include "queue.h"
#include "reap.h"
#include "stats.h"

/*
 * A hand-off the dead holder made but may not have woken: ws_guard covers
 * the next waiter before it wakes the last one, so the kernel woke only
 * the next.  A second wake is harmless.
 */
static void wake_handed(struct ws_crit *c, struct ws_log *log)
{
	uint32_t r = log->wake_record;

	if (r && r <= c->arena->records_count)
		ws_futex_wake(&c->arena->records[r - 1].wake, 1, true);
	log->wake_record = 0;
}

/* The object lock word a dead holder still names (its log says which): free again. */
static void release_object_lock(struct ws_crit *c, uint32_t holder)
{
	ws_arena *arena = c->arena;
	struct ws_log *log = &arena->records[holder].log;
	uint32_t slot = ws_get(&log->object_lock), ref = ws_record_ref(arena, holder);

	if (slot && slot <= arena->slots) {
		_Atomic uint32_t *word = &arena->objects[slot - 1].lock;
		uint32_t seen = atomic_load_explicit(word, memory_order_acquire);

		if (seen && (seen & ~WS_LOCK_CONTENDED) == ref && ws_lock_seize(word, seen, c->ref))
			ws_lock_release_seized(arena, word, c->ref);
	}
	ws_put(&log->object_lock, 0);
	/*
	 * A dead thread's flag goes with it (whoever adopts the record says so
	 * itself when it takes the arena lock); our own, recovering the record
	 * we adopted, stays: we hold the arena lock now.
	 */
	if (holder != c->self)
		ws_put(&log->arena_lock, 0);
}

void ws_recover(struct ws_crit *c, uint32_t holder)
{
	struct ws_log *log = &c->arena->records[holder].log;
	uint32_t op = log->op, slot = log->op_slot, done, owner_died;
	bool dead = false;

	if (holder != c->self && ws_record_liveness(&c->arena->records[holder]) == WS_LIVE)
		return;

	/* An idle log's op is the last one, finished: there is nothing to go on with. */
	if (atomic_load_explicit(&log->state, memory_order_relaxed) == WS_LOG_IDLE)
		op = WS_OP_NONE;
	wake_handed(c, log);
	ws_log_replay(c, log);
	/* After the replay: an uncommitted hand-off's count was undone with it. */
	done = log->op_done;
	owner_died = log->owner_died;
	log->owner_died = 0;
	ws_stat_add(WS_STAT_RECOVERIES);
	/* The operation it was in, finished as one of ours. */
	switch (op) {
	case WS_OP_SIGNAL:
		ws_op_begin(c, WS_OP_SIGNAL, slot);
		if (slot < c->arena->slots && ws_obj_lock(c, slot) >= 0)
			ws_settle(c, slot, WS_SETTLE_SIGNAL, &dead);
		ws_op_end(c);
		break;
	case WS_OP_PULSE_ONE:
	case WS_OP_PULSE_ALL:
		ws_op_begin(c, op, slot);
		c->log->op_done = done; /* a second death must not release a second waiter */
		if (slot < c->arena->slots && ws_obj_lock(c, slot) >= 0) {
			if (op == WS_OP_PULSE_ALL || done == 0)
				ws_settle(c, slot,
					  op == WS_OP_PULSE_ALL ? WS_SETTLE_PULSE_ALL
								: WS_SETTLE_PULSE_ONE,
					  &dead);
			ws_end_pulse(c, slot);
		}
		ws_op_end(c);
		break;
	default:
		break;
	}
	/* A ws_owner_died() it was in the middle of: it runs to the end. */
	if (owner_died) {
		c->log->owner_died = owner_died;
		ws_owner_died_locked(c, owner_died);
		c->log->owner_died = 0;
	}
	/* Only now: until its object is whole again, its lock word keeps others off. */
	release_object_lock(c, holder);
	/* The dead holder itself, and whoever else died. */
	ws_reap_dead(c);
}

void ws_recover_orphans(struct ws_crit *c)
{
	ws_arena *arena = c->arena;
	uint32_t n = atomic_load_explicit(&arena->header->fresh_records, memory_order_relaxed);

	if (n > arena->records_count)
		n = arena->records_count;
	for (uint32_t r = 0; r < n; r++) {
		struct ws_record *rec = &arena->records[r];

		if (r != c->self && ws_record_liveness(rec) != WS_LIVE &&
		    (atomic_load_explicit(&rec->log.state, memory_order_acquire) != WS_LOG_IDLE ||
		     ws_get(&rec->log.object_lock)))
			ws_recover(c, r);
	}
}

void ws_recover_and_reap(struct ws_crit *c)
{
	ws_recover_orphans(c);
	ws_reap_dead(c);
}
