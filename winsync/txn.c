/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "txn.h"

#include <errno.h>
#include <stdint.h>

#include "fault.h"
#include "futex.h"
#include "waiter.h"

#define NO_SLOT UINT32_MAX

static uint32_t log_state(struct ws_log *log)
{
	return atomic_load_explicit(&log->state, memory_order_acquire);
}

static void set_log_state(struct ws_log *log, uint32_t state)
{
	atomic_store_explicit(&log->state, state, memory_order_release);
}

/* The operation's own object, kept locked across its transactions, or NO_SLOT. */
static uint32_t primary_of(const struct ws_log *log)
{
	bool has = log->op == WS_OP_SIGNAL || log->op == WS_OP_PULSE_ONE ||
		   log->op == WS_OP_PULSE_ALL;

	return has ? log->op_slot : NO_SLOT;
}

void ws_op_begin(struct ws_crit *c, enum ws_op op, uint32_t slot)
{
	struct ws_log *log = c->log;

	log->op = op;
	log->op_slot = slot;
	log->op_done = 0;
	log->locked_count = 0;
	log->undo_count = 0;
	log->claim_record = 0;
	c->error = 0;
	set_log_state(log, WS_LOG_ACTIVE);
	WS_FAULT();
}

void ws_op_progress(struct ws_crit *c)
{
	/* Undone with the transaction if it does not commit: a pulse counts exactly. */
	ws_store(c, &c->log->op_done, c->log->op_done + 1);
}

static uint32_t head_tag(struct ws_object *obj)
{
	return ws_head_tag(atomic_load_explicit(&obj->head, memory_order_acquire));
}

/* Unlocking moves the stamp on: whatever the section only looked at, it saw (wait.c). */
static void clear_locked(struct ws_object *obj)
{
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);

	if (ws_head_tag(head) & WS_HEAD_LOCKED)
		atomic_store_explicit(&obj->head,
				      ws_head_next(head, head & ~((uint64_t)WS_HEAD_LOCKED << 32)),
				      memory_order_release);
}

static void snapshot(struct ws_log_locked *e, struct ws_object *obj, uint64_t head)
{
	e->head = head;
	e->aux = ws_get(&obj->aux);
	e->queue_head = obj->queue_head;
	e->queue_tail = obj->queue_tail;
	e->queued = obj->queued;
	e->next_free = obj->next_free;
}

int ws_obj_lock(struct ws_crit *c, uint32_t slot)
{
	struct ws_log *log = c->log;
	ws_arena *arena = c->arena;
	struct ws_object *obj;
	struct ws_log_locked *e;
	uint32_t n = log->locked_count;

	if (slot >= arena->slots || n > WS_LOG_LOCKED)
		return c->error = -EUCLEAN;
	for (uint32_t i = 0; i < n; i++)
		if (log->locked[i].slot == slot && !log->locked[i].released)
			return 0;
	if (n == WS_LOG_LOCKED)
		return c->error = -EUCLEAN;
	obj = &arena->objects[slot];
	e = &log->locked[n];
	for (;;) {
		uint64_t head = atomic_load_explicit(&obj->head, memory_order_acquire);

		/* Only the lock holder sets LOCKED, and it is not on our list. */
		if (ws_head_tag(head) & WS_HEAD_LOCKED)
			return c->error = -EUCLEAN;
		e->slot = slot;
		e->released = 0;
		snapshot(e, obj, head);
		/* Listed before it is locked: recovery restores only what is LOCKED. */
		atomic_signal_fence(memory_order_seq_cst);
		log->locked_count = n + 1;
		WS_FAULT();
		if (atomic_compare_exchange_strong_explicit(&obj->head, &head,
							    head | (uint64_t)WS_HEAD_LOCKED << 32,
							    memory_order_acq_rel,
							    memory_order_acquire)) {
			WS_FAULT();
			return 1;
		}
		/* An uncontended path changed it meanwhile: snapshot again. */
	}
}

static void release_entry(ws_arena *arena, struct ws_log_locked *e)
{
	e->released = 1;
	atomic_signal_fence(memory_order_seq_cst);
	WS_FAULT();
	clear_locked(&arena->objects[e->slot]);
}

void ws_obj_release(struct ws_crit *c, uint32_t slot)
{
	struct ws_log *log = c->log;
	uint32_t n = log->locked_count < WS_LOG_LOCKED ? log->locked_count : WS_LOG_LOCKED;

	if (slot == primary_of(log))
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct ws_log_locked *e = &log->locked[i];

		if (e->slot != slot || e->released)
			continue;
		release_entry(c->arena, e);
		/* The last entry leaves the log; one in the middle stays, flagged. */
		if (i + 1 == n) {
			atomic_signal_fence(memory_order_seq_cst);
			log->locked_count = i;
		}
		return;
	}
}

void ws_head_write(struct ws_object *obj, uint32_t tag, uint32_t value)
{
	uint32_t old = ws_head_tag(atomic_load_explicit(&obj->head, memory_order_relaxed));

	atomic_store_explicit(&obj->head,
			      ws_make_head(ws_tag_restamped(tag, old) | WS_HEAD_LOCKED, value),
			      memory_order_release);
}

static bool cell_ok(ws_arena *arena, uint32_t offset)
{
	return offset % 4 == 0 && (uint64_t)offset + 4 <= arena->size;
}

void ws_store(struct ws_crit *c, void *cell, uint32_t value)
{
	struct ws_log *log = c->log;
	uint32_t n = log->undo_count;
	uint32_t offset = (uint32_t)((char *)cell - c->arena->base);
	_Atomic uint32_t *word = cell;

	if (n >= WS_LOG_UNDO || !cell_ok(c->arena, offset)) {
		c->error = -EUCLEAN;
		return;
	}
	log->undo[n].offset = offset;
	log->undo[n].old = atomic_load_explicit(word, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	log->undo_count = n + 1;
	atomic_signal_fence(memory_order_seq_cst);
	WS_FAULT();
	atomic_store_explicit(word, value, memory_order_relaxed);
	WS_FAULT();
}

uint32_t ws_undo_room(const struct ws_crit *c)
{
	uint32_t n = c->log->undo_count;

	return n < WS_LOG_UNDO ? WS_LOG_UNDO - n : 0;
}

void ws_hand(struct ws_crit *c, uint32_t record, uint32_t state)
{
	if (c->log->claim_record || record >= c->arena->records_count) {
		c->error = -EUCLEAN;
		return;
	}
	/* Which section handed it: the waiter returns only once it is over (crit.h). */
	ws_store(c, &c->arena->records[record].handed_in,
		 ws_get(&c->arena->header->sections) & ~WS_SECTIONS_WAITED);
	c->log->claim_state = state;
	atomic_signal_fence(memory_order_seq_cst);
	c->log->claim_record = record + 1;
	atomic_signal_fence(memory_order_seq_cst);
}

static void wake_deferred(struct ws_crit *c)
{
	if (!c->deferred_wake)
		return;
	ws_futex_wake(c->deferred_wake, 1, true);
	WS_FAULT();
	c->deferred_wake = NULL;
}

void ws_guard(struct ws_crit *c, uint32_t record)
{
	struct ws_robust_head *head = c->robust_head;
	void *word;

	if (!head || record >= c->arena->records_count) {
		wake_deferred(c);
		c->log->wake_record = 0;
		return;
	}
	word = (char *)&c->arena->records[record].wake + WS_ROBUST_FUTEX_OFFSET;
	if (!c->guarding) {
		c->pending_saved = head->list_op_pending;
		c->guarding = true;
	}
	if (head->list_op_pending != word) {
		head->list_op_pending = word;
		atomic_signal_fence(memory_order_seq_cst);
		WS_FAULT();
	}
	/* Only now: the next waiter is covered before the last one is woken. */
	wake_deferred(c);
	/* Under the lock still (not so after the unlock, ws_guard_release): a
	 * stale name left there costs a recovery one spurious wake. */
	c->log->wake_record = 0;
}

void ws_guard_release(struct ws_crit *c)
{
	struct ws_robust_head *head = c->robust_head;

	wake_deferred(c);
	if (c->guarding && head) {
		atomic_signal_fence(memory_order_seq_cst);
		head->list_op_pending = c->pending_saved;
	}
	c->guarding = false;
}

/* Did the hand-off `log` names reach its waiter (its commit point)? */
static bool delivered(ws_arena *arena, const struct ws_log *log)
{
	uint32_t r = log->claim_record;

	return r && r <= arena->records_count &&
	       ws_wait_state(&arena->records[r - 1]) == log->claim_state;
}

/*
 * Hands the waiter `log` names its state (idempotent, for a replay too).
 * It is guarded from here until it has been woken: if we die anywhere in
 * between, the kernel wakes it, and it finds its result, or the lock holder
 * dead and the hand-off in the log.  The wake itself waits for the next
 * guard or the unlock.  False if the waiter gave up first.
 */
static bool apply_hand(struct ws_crit *c, struct ws_log *log)
{
	uint32_t r = log->claim_record;
	struct ws_record *rec;

	if (!r || r > c->arena->records_count)
		return true;
	rec = &c->arena->records[r - 1];
	ws_guard(c, r - 1);
	WS_FAULT();
	if (!ws_wait_deliver(rec, log->claim_state))
		return false;
	WS_FAULT();
	/* Read by a recovery: the guard moves on before this wake is made. */
	c->log->wake_record = r;
	c->deferred_wake = &rec->wake;
	return true;
}

/*
 * Undoes the transaction of `log`: cells in reverse, then every object it
 * locked back to its snapshot, unlocked, but for `keep` (the operation goes
 * on with it).
 */
static void undo(struct ws_crit *c, struct ws_log *log, uint32_t keep)
{
	ws_arena *arena = c->arena;
	uint32_t cells = log->undo_count, locked = log->locked_count, kept = 0;

	if (cells > WS_LOG_UNDO)
		cells = WS_LOG_UNDO;
	if (locked > WS_LOG_LOCKED)
		locked = WS_LOG_LOCKED;
	while (cells--) {
		struct ws_log_undo *u = &log->undo[cells];

		if (cell_ok(arena, u->offset))
			atomic_store_explicit((_Atomic uint32_t *)(arena->base + u->offset), u->old,
					      memory_order_relaxed);
	}
	for (uint32_t i = locked; i--;) {
		struct ws_log_locked *e = &log->locked[i];
		struct ws_object *obj;

		if (e->slot >= arena->slots)
			continue;
		obj = &arena->objects[e->slot];
		if (!(head_tag(obj) & WS_HEAD_LOCKED))
			continue;
		if (e->released) {
			clear_locked(obj);
			continue;
		}
		ws_put(&obj->aux, e->aux);
		obj->queue_head = e->queue_head;
		obj->queue_tail = e->queue_tail;
		obj->queued = e->queued;
		obj->next_free = e->next_free;
		atomic_store_explicit(&obj->head,
				      e->slot == keep ? e->head | (uint64_t)WS_HEAD_LOCKED << 32
						      : e->head,
				      memory_order_release);
	}
	/* The kept object's entry, as it was, stays the log's only one. */
	for (uint32_t i = 0; i < locked; i++) {
		if (log->locked[i].slot == keep && !log->locked[i].released) {
			log->locked[0] = log->locked[i];
			kept = 1;
			break;
		}
	}
	log->locked_count = kept;
	log->undo_count = 0;
	log->claim_record = 0;
}

/*
 * After a commit (or a replay): only the kept object stays on the list,
 * its snapshot now the state as committed.
 */
static void keep_only(struct ws_crit *c, struct ws_log *log, uint32_t keep)
{
	uint32_t kept = 0, n = log->locked_count;

	if (n > WS_LOG_LOCKED)
		n = WS_LOG_LOCKED;
	for (uint32_t i = 0; i < n; i++) {
		struct ws_log_locked *e = &log->locked[i];

		if (e->slot >= c->arena->slots)
			continue;
		if (e->released) {
			/* A release cut short by a death: flagged, maybe not yet unlocked. */
			if (e->slot != keep)
				clear_locked(&c->arena->objects[e->slot]);
			continue;
		}
		if (e->slot != keep) {
			release_entry(c->arena, e);
			WS_FAULT();
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		struct ws_log_locked *e = &log->locked[i];
		struct ws_object *obj;

		if (e->released || e->slot != keep)
			continue;
		obj = &c->arena->objects[e->slot];
		snapshot(e, obj, atomic_load_explicit(&obj->head, memory_order_relaxed) &
				      ~((uint64_t)WS_HEAD_LOCKED << 32));
		log->locked[kept++] = *e;
		break;
	}
	log->locked_count = kept;
	log->undo_count = 0;
	log->claim_record = 0;
}

int ws_commit(struct ws_crit *c)
{
	struct ws_log *log = c->log;

	if (c->error) {
		int error = c->error;

		undo(c, log, NO_SLOT);
		return error;
	}
	if (!apply_hand(c, log)) {
		/* The waiter timed out first: as if we had never chosen it. */
		undo(c, log, primary_of(log));
		return -ESRCH;
	}
	set_log_state(log, WS_LOG_COMMITTED);
	WS_FAULT();
	keep_only(c, log, primary_of(log));
	set_log_state(log, WS_LOG_ACTIVE);
	WS_FAULT();
	return 0;
}

void ws_op_end(struct ws_crit *c)
{
	ws_commit(c);
	keep_only(c, c->log, NO_SLOT);
	WS_FAULT();
	set_log_state(c->log, WS_LOG_IDLE);
	WS_FAULT();
}

void ws_log_replay(struct ws_crit *c, struct ws_log *log)
{
	uint32_t state = log_state(log);

	if (state == WS_LOG_COMMITTED || (state == WS_LOG_ACTIVE && delivered(c->arena, log))) {
		apply_hand(c, log);
		keep_only(c, log, NO_SLOT);
	} else if (state == WS_LOG_ACTIVE) {
		undo(c, log, NO_SLOT);
	}
	/* Idle, or a state nobody writes: nothing more can be trusted to redo. */
	log->locked_count = 0;
	log->undo_count = 0;
	log->claim_record = 0;
	set_log_state(log, WS_LOG_IDLE);
}
