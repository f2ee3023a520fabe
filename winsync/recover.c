/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "recover.h"

#include "futex.h"
#include "lock.h"
#include "queue.h"
#include "reap.h"
#include "record.h"
#include "stats.h"

/* Dead holders met while finishing one: each is finished in turn, this deep at most. */
#define MET_MAX 8

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

/* The operation a dead holder was in, finished as one of ours. */
static void finish(struct ws_crit *c, uint32_t op, uint32_t slot, uint32_t done)
{
	bool dead = false;

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
}

static void recover(struct ws_crit *c, uint32_t holder, int depth)
{
	ws_arena *arena = c->arena;
	struct ws_log *log = &arena->records[holder].log;
	uint32_t ref = ws_record_ref(arena, holder);
	uint32_t op = log->op, slot = log->op_slot, done, owner_died, object = log->object;

	/* An idle log's op is the last one, finished: there is nothing to go on with. */
	if (atomic_load_explicit(&log->state, memory_order_relaxed) == WS_LOG_IDLE)
		op = WS_OP_NONE;
	wake_handed(c, log);
	/* Its objects put right and unlocked, their words freed. */
	ws_log_replay(c, log, ref);
	/* And the object it held its section on. */
	if (object && object <= arena->slots)
		ws_lock_release_from(arena, &arena->objects[object - 1].lock, ref);
	log->object = 0;
	/* After the replay: an uncommitted hand-off's count was undone with it. */
	done = log->op_done;
	owner_died = log->owner_died;
	log->owner_died = 0;
	ws_stat_add(WS_STAT_RECOVERIES);
	for (int met = 0; met < MET_MAX; met++) {
		finish(c, op, slot, done);
		/* Another dead holder on the way: finish it, then this again. */
		if (depth >= MET_MAX || !c->dead_holder)
			break;
		uint32_t gone = c->dead_holder, r = ws_ref_index(arena, gone);
		_Atomic uint32_t *word = c->dead_word;

		c->dead_holder = 0;
		if (r != UINT32_MAX)
			recover(c, r, depth + 1);
		if (word)
			ws_lock_release_from(arena, word, gone);
	}
	/* A ws_owner_died() it was in the middle of: it runs to the end. */
	if (owner_died) {
		c->log->owner_died = owner_died;
		ws_owner_died_locked(c, owner_died);
		c->log->owner_died = 0;
	}
	/* The dead holder itself, and whoever else died. */
	ws_reap_dead(c);
}

void ws_recover(struct ws_crit *c, uint32_t holder)
{
	recover(c, holder, 0);
}

bool ws_recover_met(struct ws_crit *c)
{
	uint32_t gone = c->dead_holder, r;

	if (!gone || !c->arena_held)
		return false;
	c->dead_holder = 0;
	r = ws_ref_index(c->arena, gone);
	if (r != UINT32_MAX)
		ws_recover(c, r);
	if (c->dead_word)
		ws_lock_release_from(c->arena, c->dead_word, gone);
	c->dead_word = NULL;
	return true;
}
