/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "txn.h"

#include <errno.h>
#include <stdint.h>

#include "fault.h"
#include "futex.h"
#include "lock.h"
#include "record.h"
#include "waiter.h"

#define NO_SLOT UINT32_MAX

/*
 * Whose transaction a log holds: ours, running now, or a dead holder's,
 * replayed.  Not `log == c->log`: a record we adopted brings its dead
 * thread's log, which is then our log and still the dead holder's
 * transaction, with marks its cut-short release may have left.
 */
enum ws_log_whose {
	WS_LOG_OURS,
	WS_LOG_DEAD_HOLDERS,
};

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
	c->committed = false;
	set_log_state(log, WS_LOG_ACTIVE);
	WS_FAULT();
}

void ws_op_become(struct ws_crit *c, enum ws_op op)
{
	atomic_signal_fence(memory_order_seq_cst);
	c->log->op = op;
	atomic_signal_fence(memory_order_seq_cst);
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
}

/*
 * Undoes the section on one object of record `holder` (UINT32_MAX: none),
 * whose lock word we seized, if that record is not live; its operation is
 * finished when we leave (crit.c).
 */
static void roll_back_gone(struct ws_crit *c, uint32_t holder)
{
	struct ws_record *rec;

	if (holder == UINT32_MAX)
		return;
	rec = &c->arena->records[holder];
	if (ws_record_liveness(rec) != WS_LIVE) {
		ws_log_rollback(c, &rec->log);
		c->rolled_back = true;
	}
}

/*
 * Object `slot` is LOCKED by the holder of its own lock word, a section on
 * that object alone: we hold the arena lock, and such a section never
 * waits for anything, so we wait for it.  One whose holder is gone is
 * rolled back here; its operation is finished when we leave (crit.c).
 */
static int section_over(struct ws_crit *c, uint32_t slot, struct ws_holder_watch *watch)
{
	ws_arena *arena = c->arena;
	struct ws_object *obj = &arena->objects[slot];

	for (;;) {
		uint64_t head = atomic_load_explicit(&obj->head, memory_order_acquire);
		uint32_t seen = atomic_load_explicit(&obj->lock, memory_order_acquire), holder;

		if (!(ws_head_tag(head) & WS_HEAD_LOCKED))
			return 0;
		/*
		 * Its holder clears LOCKED (a write that moves the stamp on)
		 * before it lets the word go: a head unchanged around a look at
		 * a free word is a LOCKED mark nobody holds.
		 */
		if (!seen || (seen & ~WS_LOCK_CONTENDED) == c->ref) {
			if (atomic_load_explicit(&obj->head, memory_order_acquire) == head)
				return -EUCLEAN;
			continue;
		}
		if ((arena->flags & WS_ARENA_NONBLOCK) && !c->committed)
			return -EAGAIN;
		if (!ws_lock_wait_holder(arena, &obj->lock, seen, watch))
			continue;
		if (!ws_lock_seize(&obj->lock, seen, c->ref))
			continue;
		holder = ws_ref_index(arena, seen & ~WS_LOCK_CONTENDED);
		if (holder != c->self)
			roll_back_gone(c, holder);
		ws_lock_release_seized(arena, &obj->lock, c->ref);
	}
}

/* Object `slot` is LOCKED by another section: waits until it is not. */
static int wait_object_section(struct ws_crit *c, uint32_t slot)
{
	struct ws_holder_watch watch = WS_HOLDER_WATCH(slot + 1);
	int ret = section_over(c, slot, &watch);

	/* The section's holder woke us alone; we do not take its word. */
	ws_lock_pass_wake(c->arena, &c->arena->objects[slot].lock, &watch);
	return ret;
}

int ws_obj_take_word(struct ws_crit *c, uint32_t slot, uint32_t *gone)
{
	ws_arena *arena = c->arena;
	_Atomic uint32_t *word = &arena->objects[slot].lock;
	struct ws_holder_watch watch = WS_HOLDER_WATCH(slot + 1);

	*gone = UINT32_MAX;
	for (;;) {
		uint32_t seen = atomic_load_explicit(word, memory_order_acquire), holder;

		if ((seen & ~WS_LOCK_CONTENDED) == c->ref)
			return 0;
		if (!seen) {
			if (atomic_compare_exchange_weak_explicit(word, &seen,
								  ws_lock_name(c->ref, &watch),
								  memory_order_acquire,
								  memory_order_relaxed))
				return 0;
			continue;
		}
		/* A stopped process's section is as long as its stop. */
		if ((arena->flags & WS_ARENA_NONBLOCK) &&
		    ws_ref_live(arena, seen & ~WS_LOCK_CONTENDED))
			return -EAGAIN;
		if (!ws_lock_wait_holder(arena, word, seen, &watch) ||
		    !ws_lock_seize(word, seen, c->ref))
			continue;
		holder = ws_ref_index(arena, seen & ~WS_LOCK_CONTENDED);
		if (holder != c->self)
			*gone = holder;
		return 0;
	}
}

int ws_obj_hold_word(struct ws_crit *c, uint32_t slot)
{
	uint32_t gone;
	int ret = ws_obj_take_word(c, slot, &gone);

	if (!ret)
		roll_back_gone(c, gone);
	return ret;
}

void ws_obj_drop_word(struct ws_crit *c, uint32_t slot)
{
	_Atomic uint32_t *word = &c->arena->objects[slot].lock;
	uint32_t seen = atomic_load_explicit(word, memory_order_relaxed);

	if (seen && (seen & ~WS_LOCK_CONTENDED) == c->ref &&
	    (atomic_exchange_explicit(word, 0, memory_order_release) & WS_LOCK_CONTENDED))
		ws_futex_wake(word, 1, c->arena->shared);
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
	/* A section on one object edits nothing else. */
	if (c->object_slot != WS_CRIT_ARENA && slot != c->object_slot)
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

		/* Somebody else's section has it: the arena lock's, or the object's own. */
		if (ws_head_tag(head) & WS_HEAD_LOCKED) {
			int ret;

			/* Listed only while it may be ours: a recovery restores what it lists. */
			log->locked_count = n;
			atomic_signal_fence(memory_order_seq_cst);
			ret = c->object_slot != WS_CRIT_ARENA ? WS_NEED_ARENA
							      : wait_object_section(c, slot);
			if (ret)
				return c->error = ret;
			continue;
		}
		e->slot = slot;
		e->released = 0;
		e->snapped = 0;
		/* Listed before it is locked: recovery restores only what is LOCKED. */
		atomic_signal_fence(memory_order_seq_cst);
		log->locked_count = n + 1;
		WS_FAULT();
		if (atomic_compare_exchange_strong_explicit(&obj->head, &head,
							    head | (uint64_t)WS_HEAD_LOCKED << 32,
							    memory_order_acq_rel,
							    memory_order_acquire)) {
			/* Read only now: until it is LOCKED another section may be writing it. */
			snapshot(e, obj, head);
			atomic_signal_fence(memory_order_seq_cst);
			e->snapped = 1;
			WS_FAULT();
			return 1;
		}
		/* Changed meanwhile (an uncontended path, another section): look again. */
		log->locked_count = n;
		atomic_signal_fence(memory_order_seq_cst);
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
	/* Which section hands it: the waiter returns only once it is over (crit.h).  In
	 * the state itself, which only the winner of the hand-off writes. */
	if (c->object_slot == WS_CRIT_ARENA)
		state |= WS_WAIT_IN_SECTION |
			 (ws_get(&c->arena->header->sections) & ~WS_SECTIONS_WAITED)
				 << WS_WAIT_SECTION_SHIFT;
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
 * Replaying a dead holder's log: is the LOCKED mark on `slot`, which the log
 * lists, the dead holder's?  It lists an object just before its
 * compare-exchange sets the mark, so the mark may be a section's on that
 * object alone instead, which holds the object's word from before it sets
 * the mark until after it clears it.  Such a section never waits (crit.h):
 * wait for a live one to let the word go.  A mark that stayed put (its
 * head unchanged, stamp and all) across a look at a free word is nobody
 * else's.
 */
static bool mark_is_logs(struct ws_crit *c, struct ws_object *obj, struct ws_holder_watch *watch)
{
	for (;;) {
		uint64_t head = atomic_load_explicit(&obj->head, memory_order_acquire);
		uint32_t seen = atomic_load_explicit(&obj->lock, memory_order_acquire);
		uint32_t holder = seen & ~WS_LOCK_CONTENDED;

		if (!(ws_head_tag(head) & WS_HEAD_LOCKED))
			return false;
		if (seen && holder != c->ref && ws_ref_live(c->arena, holder)) {
			if (ws_lock_wait_holder(c->arena, &obj->lock, seen, watch))
				return true; /* a stale word: nobody's section */
			continue;
		}
		if (atomic_load_explicit(&obj->head, memory_order_acquire) == head)
			return true;
	}
}

static bool marked_by_log(struct ws_crit *c, uint32_t slot)
{
	struct ws_object *obj = &c->arena->objects[slot];
	struct ws_holder_watch watch = WS_HOLDER_WATCH(slot + 1);
	bool logs = mark_is_logs(c, obj, &watch);

	/* We waited for the word, never to take it: the next sleeper's wake is not ours. */
	ws_lock_pass_wake(c->arena, &obj->lock, &watch);
	return logs;
}

/*
 * An object `log` flagged released.  Our own release cleared its LOCKED
 * already, and the mark may be a section's on that object alone by now.  A
 * dead holder's release may have been cut short between the flag and the
 * clear: its mark is cleared unless such a section holds the object's
 * word (then the mark is that section's: one that came before the clear
 * could not have set it).
 */
static void clear_released(struct ws_crit *c, enum ws_log_whose whose, uint32_t slot)
{
	if (whose == WS_LOG_DEAD_HOLDERS && marked_by_log(c, slot))
		clear_locked(&c->arena->objects[slot]);
}

/*
 * Undoes the transaction of `log`: cells in reverse, then every object it
 * locked back to its snapshot, unlocked, but for `keep` (the operation goes
 * on with it).
 */
static void undo(struct ws_crit *c, struct ws_log *log, enum ws_log_whose whose, uint32_t keep)
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
		if (whose == WS_LOG_DEAD_HOLDERS && !marked_by_log(c, e->slot))
			continue;
		/* Ours was cleared when released: a mark now is somebody else's. */
		if (e->released) {
			if (whose == WS_LOG_DEAD_HOLDERS)
				clear_locked(obj);
			continue;
		}
		/* Locked, not yet read, so not yet changed either. */
		if (!e->snapped) {
			clear_locked(obj);
			continue;
		}
		ws_put(&obj->aux, e->aux);
		obj->queue_head = e->queue_head;
		obj->queue_tail = e->queue_tail;
		obj->queued = e->queued;
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
static void keep_only(struct ws_crit *c, struct ws_log *log, enum ws_log_whose whose,
		      uint32_t keep)
{
	uint32_t kept = 0, n = log->locked_count;

	if (n > WS_LOG_LOCKED)
		n = WS_LOG_LOCKED;
	for (uint32_t i = 0; i < n; i++) {
		struct ws_log_locked *e = &log->locked[i];

		if (e->slot >= c->arena->slots)
			continue;
		if (e->released) {
			if (e->slot != keep)
				clear_released(c, whose, e->slot);
			continue;
		}
		if (e->slot != keep) {
			if (whose == WS_LOG_DEAD_HOLDERS && !marked_by_log(c, e->slot))
				e->released = 1; /* the mark is not its own: left alone */
			else
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

		undo(c, log, WS_LOG_OURS, NO_SLOT);
		return error;
	}
	if (!apply_hand(c, log)) {
		/* The waiter timed out first: as if we had never chosen it. */
		undo(c, log, WS_LOG_OURS, primary_of(log));
		return -ESRCH;
	}
	set_log_state(log, WS_LOG_COMMITTED);
	c->committed = true;
	WS_FAULT();
	keep_only(c, log, WS_LOG_OURS, primary_of(log));
	set_log_state(log, WS_LOG_ACTIVE);
	WS_FAULT();
	return 0;
}

void ws_op_end(struct ws_crit *c)
{
	ws_commit(c);
	keep_only(c, c->log, WS_LOG_OURS, NO_SLOT);
	WS_FAULT();
	set_log_state(c->log, WS_LOG_IDLE);
	WS_FAULT();
}

/* The transaction `log` left open: finished if it reached its commit point, else undone. */
static void replay(struct ws_crit *c, struct ws_log *log)
{
	uint32_t state = log_state(log);

	if (state == WS_LOG_COMMITTED || (state == WS_LOG_ACTIVE && delivered(c->arena, log))) {
		apply_hand(c, log);
		keep_only(c, log, WS_LOG_DEAD_HOLDERS, NO_SLOT);
	} else if (state == WS_LOG_ACTIVE) {
		undo(c, log, WS_LOG_DEAD_HOLDERS, NO_SLOT);
	}
	log->locked_count = 0;
	log->undo_count = 0;
	log->claim_record = 0;
}

void ws_log_replay(struct ws_crit *c, struct ws_log *log)
{
	replay(c, log);
	/* Idle, or a state nobody writes: nothing more can be trusted to redo. */
	set_log_state(log, WS_LOG_IDLE);
}

void ws_log_rollback(struct ws_crit *c, struct ws_log *log)
{
	uint32_t r = log->wake_record;

	/* A hand-off it made may not have been woken (recover.c does the same). */
	if (r && r <= c->arena->records_count)
		ws_futex_wake(&c->arena->records[r - 1].wake, 1, true);
	log->wake_record = 0;
	if (log_state(log) == WS_LOG_IDLE)
		return;
	replay(c, log);
	/* Busy with nothing left to undo: its recovery finishes the operation. */
	set_log_state(log, WS_LOG_ACTIVE);
}
