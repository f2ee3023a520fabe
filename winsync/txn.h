/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Transactions of the arena lock holder, logged so that whoever takes the
 * lock over from a dead holder can put things right (recover.c).
 *
 * An operation (a wait that queues, a signal that hands an object to its
 * waiters, a close, a reap) is a sequence of transactions under one hold of
 * the arena lock.  Each transaction:
 *   1. locks the objects it touches (WS_HEAD_LOCKED, which keeps the
 *      uncontended paths off them), logging a snapshot of each first;
 *   2. writes: object fields in place (the snapshots undo them), any other
 *      32-bit cell through ws_store(), which logs the old value first;
 *   3. names at most one waiter to hand an object to (ws_hand), applied
 *      only after the commit;
 *   4. commits (ws_commit): log state COMMITTED, then the hand-off is
 *      applied and the waiter woken, then the objects other than the
 *      operation's own are unlocked.
 * Invariants, for a holder killed at any instruction:
 *   - log ACTIVE: nothing of the transaction is visible outside the lock
 *     (its objects are LOCKED, its waiter not yet handed anything): undo
 *     the cells in reverse, restore the snapshots.
 *   - log COMMITTED: everything in place is final; the hand-off store and
 *     the wake are idempotent: redo them, then unlock the objects.
 *   - then the operation is finished by its kind (recover.c): a signal
 *     settles its object again, a pulse releases the waiters it had not
 *     reached, a reap reaps again.
 *   - a waiter owed something by a holder that dies is woken by the kernel
 *     (ws_guard below) and finishes the operation itself; the last
 *     hand-off of a critical section is woken after the lock is released,
 *     under the same cover, so that the waiter does not run into the held
 *     lock.  The guard moves to the next waiter before the last one is
 *     woken; the log names the last one (wake_record), and the recovery
 *     that the next waiter runs wakes it again.  A blocked waiter also
 *     looks for a dead holder every second (wait.c), for a guard lost to
 *     corruption.
 */
#ifndef WINSYNC_TXN_H
#define WINSYNC_TXN_H

#include "lock.h"

#define WS_LOG_IDLE      0u
#define WS_LOG_ACTIVE    1u
#define WS_LOG_COMMITTED 2u

enum ws_op {
	WS_OP_NONE = 0,
	WS_OP_PLAIN,       /* one transaction, nothing to finish: create, close, wait, give up */
	WS_OP_SIGNAL,      /* op_slot became signaled: settle it again */
	WS_OP_PULSE_ONE,   /* pulse op_slot: release one waiter unless op_done */
	WS_OP_PULSE_ALL,   /* pulse op_slot: release every waiter still queued */
	WS_OP_REAP,        /* reclaim dead records: reap again */
};

/* Starts an operation; `slot` is its own object, kept locked across transactions. */
void ws_op_begin(struct ws_crit *c, enum ws_op op, uint32_t slot);
/* Ends it: unlocks every object, log idle.  Commits first if needed. */
void ws_op_end(struct ws_crit *c);

/*
 * Locks object `slot` for this transaction: 1, or 0 if it was locked
 * already.  -EUCLEAN if another holder's LOCKED mark is on it (only
 * corruption can leave one) or the log is full.
 */
int ws_obj_lock(struct ws_crit *c, uint32_t slot);
/* Unlocks an object this transaction locked but did not change. */
void ws_obj_release(struct ws_crit *c, uint32_t slot);
/* Object head of a locked object: the flags stay as they are. */
void ws_head_write(struct ws_object *obj, uint32_t tag, uint32_t value);

/* An undo-logged store of a 32-bit cell inside the arena. */
void ws_store(struct ws_crit *c, void *cell, uint32_t value);

/* The waiter (record) this transaction hands an object to, with its new state. */
void ws_hand(struct ws_crit *c, uint32_t record, uint32_t state);
/* Is a hand-off named already in this transaction? */
bool ws_hand_pending(const struct ws_crit *c);

/*
 * Commits the transaction (or undoes it if c->error is set, returning the
 * error).  The operation's own object stays locked.
 */
int ws_commit(struct ws_crit *c);
/* Counts a hand-off toward the operation (a pulse's progress), within the transaction. */
void ws_op_progress(struct ws_crit *c);

/* Undoes an uncommitted transaction of a dead holder, or completes a committed one. */
void ws_log_replay(struct ws_crit *c);

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
