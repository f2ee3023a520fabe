/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Transactions of a lock holder, logged in the holder's own record so that
 * whoever takes the lock over from a dead holder can put things right
 * (recover.c).
 *
 * An operation (a wait that queues, a signal that hands an object to its
 * waiters, a close, a reap) is a sequence of transactions under one hold of
 * the lock.  Each transaction:
 *   1. locks the objects it touches (WS_HEAD_LOCKED, which keeps the
 *      uncontended paths off them), logging a snapshot of each first;
 *   2. writes: object fields in place (the snapshots undo them), any other
 *      32-bit cell through ws_store(), which logs the old value first;
 *   3. names at most one waiter to hand something to (ws_hand);
 *   4. commits (ws_commit): the hand-off's compare-exchange of the waiter's
 *      state from PENDING (waiter.h) is the commit point, then the log says
 *      COMMITTED, the waiter is woken, and the objects other than the
 *      operation's own are unlocked.  A waiter that gave up first makes the
 *      transaction undo itself instead (-ESRCH).
 * Invariants, for a holder killed at any instruction:
 *   - log ACTIVE and its waiter not handed the state it names: nothing of
 *     the transaction is visible outside the lock (its objects are LOCKED):
 *     undo the cells in reverse, restore the snapshots.
 *   - log COMMITTED, or ACTIVE with the waiter's state already the one it
 *     names: everything in place is final; the hand-off's compare-exchange
 *     and the wake are idempotent: redo them, then unlock the objects.
 *   - then the operation is finished by its kind (recover.c): a signal
 *     settles its object again, a pulse releases the waiters it had not
 *     reached, a reap reaps again.
 *   - a waiter owed something by a holder that dies is woken by the kernel
 *     (ws_guard below) and finishes the operation itself; the last
 *     hand-off of a critical section is woken after the lock is released,
 *     under the same cover, so that the waiter does not run into the held
 *     lock.  The guard moves to the next waiter before the last one is
 *     woken; the log names the last one (wake_record), and the recovery
 *     that the next waiter runs wakes it again.
 */
#ifndef WINSYNC_TXN_H
#define WINSYNC_TXN_H

#include <errno.h>

#include "arena.h"

/* Re-arm wakes one critical section may owe (queue.c: mutex owner changes). */
#define WS_REARM_MAX WS_ENTRIES_PER_WAIT

/* crit.object_slot of a section under the arena lock. */
#define WS_CRIT_ARENA UINT32_MAX

/*
 * An operation on one object found it needs more than that object (another
 * object, a wait_all waiter, more than one hand-off): it is undone, and run
 * again under the arena lock.  Never returned to a caller of the library.
 */
#define WS_NEED_ARENA (-EXDEV)

/* A lock holder's state: its lock, its log, what it owes after the unlock. */
struct ws_crit {
	ws_arena *arena;
	_Atomic uint32_t *lock;   /* the lock word held */
	uint32_t object_slot;     /* the object whose own lock is held, or WS_CRIT_ARENA */
	bool committed;           /* a transaction of the operation has committed */
	bool rolled_back;         /* a dead object holder's log was rolled back: finish it before leaving */
	struct ws_log *log;       /* the holder's own (its record's) */
	struct ws_record *rec;
	uint32_t self;            /* record index */
	uint32_t ref;
	struct ws_robust_head *robust_head; /* for the dead-man wake of a hand-off */
	void *pending_saved;      /* the thread's list_op_pending, put back when we leave */
	bool guarding;            /* list_op_pending points at a waiter of ours */
	_Atomic uint32_t *deferred_wake; /* the last hand-off's word: woken after the unlock */
	uint32_t rearm_count;     /* waiters to wake so that they watch a mutex's new owner */
	uint32_t rearm[WS_REARM_MAX];
	int error;                /* first inconsistency found: the transaction is undone */
	uint64_t held_since;      /* ns the lock was taken, with WINSYNC_LOCK_STATS (lockstats.h) */
};

enum ws_op {
	WS_OP_NONE = 0,
	WS_OP_PLAIN,       /* one transaction, nothing to finish: create, close, wait */
	WS_OP_SIGNAL,      /* op_slot became signaled: settle it again */
	WS_OP_PULSE_ONE,   /* pulse op_slot: release one waiter unless op_done */
	WS_OP_PULSE_ALL,   /* pulse op_slot: release every waiter still queued */
	WS_OP_REAP,        /* reclaim dead records: reap again */
};

/* Starts an operation; `slot` is its own object, kept locked across transactions. */
void ws_op_begin(struct ws_crit *c, enum ws_op op, uint32_t slot);
/*
 * Names the kind of an operation begun as WS_OP_PLAIN on its object, once
 * its waiters are guarded (a section on one object learns only with the
 * object locked whether it can go on alone).
 */
void ws_op_become(struct ws_crit *c, enum ws_op op);
/* Ends it: unlocks every object, log idle.  Commits first if needed. */
void ws_op_end(struct ws_crit *c);
/* Counts a hand-off toward the operation (a pulse's progress), within the transaction. */
void ws_op_progress(struct ws_crit *c);

/*
 * Locks object `slot` for this transaction: 1, or 0 if it was locked
 * already.  The arena lock's holder waits for a section on that object
 * alone to end, and rolls back one whose holder died (c->rolled_back: its
 * operation is finished before the lock is left); under WS_ARENA_NONBLOCK
 * it does not wait before its first commit (-EAGAIN).  A section on one
 * object locks only that object: WS_NEED_ARENA if the arena lock's holder
 * has it LOCKED.  -EUCLEAN if a LOCKED mark has nobody behind it (only
 * corruption leaves one) or the log is full.
 */
int ws_obj_lock(struct ws_crit *c, uint32_t slot);
/*
 * Unlocks an object this transaction locked but did not change.  Objects
 * released in the reverse order of their locking leave the log as they
 * came: a walk that tries many waiters does not fill it.
 */
void ws_obj_release(struct ws_crit *c, uint32_t slot);
/*
 * For the arena lock's holder between operations: holds object `slot`'s
 * own lock word too, so that no section on that object alone runs until
 * ws_obj_drop_word.  Takes it free, or waits for a live holder (-EAGAIN
 * under WS_ARENA_NONBLOCK), or seizes it from one that is gone: *gone is
 * then that holder's record index, whose section on the object the caller
 * must put right (else UINT32_MAX).  0 or -EAGAIN.
 */
int ws_obj_take_word(struct ws_crit *c, uint32_t slot, uint32_t *gone);
/*
 * ws_obj_take_word for an operation over many objects that must be one
 * step to them (an owner's mutexes abandoned together): a dead holder's
 * section is rolled back (its operation finished when we leave).
 */
int ws_obj_hold_word(struct ws_crit *c, uint32_t slot);
void ws_obj_drop_word(struct ws_crit *c, uint32_t slot);
/* Object head of a locked object: the flags stay as they are. */
void ws_head_write(struct ws_object *obj, uint32_t tag, uint32_t value);

/* An undo-logged store of a 32-bit cell inside the arena. */
void ws_store(struct ws_crit *c, void *cell, uint32_t value);
/* Undo cells left in this transaction. */
uint32_t ws_undo_room(const struct ws_crit *c);

/* The waiter (record) this transaction hands something to, with its new wait state. */
void ws_hand(struct ws_crit *c, uint32_t record, uint32_t state);

/*
 * Commits the transaction: 0; or undoes it and returns c->error if one is
 * set (every object unlocked), or -ESRCH if the waiter it hands something
 * to gave up first (the operation's own object stays locked).
 */
int ws_commit(struct ws_crit *c);

/*
 * Puts right the log of a dead holder (possibly our own record's, adopted):
 * an unfinished transaction undone, a committed one completed, every object
 * unlocked, the log idle.
 */
void ws_log_replay(struct ws_crit *c, struct ws_log *log);
/*
 * The same, but the log stays busy with its operation, to be finished by
 * a ws_recover() at a point where no transaction of ours is open.
 */
void ws_log_rollback(struct ws_crit *c, struct ws_log *log);

/*
 * The dead-man wake.  While a critical section owes anything to a queued
 * waiter (an object it is about to hand over, a hand-off not yet woken),
 * the thread's robust list_op_pending points at that waiter's `wake` word,
 * so that if the thread dies the kernel wakes the waiter, which finds the
 * lock holder dead and finishes the operation from the log.  ws_guard
 * moves the pointer to `record`, then wakes the previous hand-off's waiter.
 */
void ws_guard(struct ws_crit *c, uint32_t record);
/*
 * After the unlock: wakes the last hand-off's waiter (it waited so as not
 * to wake into a held lock) and puts list_op_pending back.
 */
void ws_guard_release(struct ws_crit *c);

#endif
