/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Wait queues and hand-off.  A blocked wait has one entry in the queue of
 * each object it waits on.  Whoever makes an object signaled walks its queue
 * in arrival order and acquires the object on behalf of the waits it can
 * satisfy, as ntsync does in the kernel: a set, release or pulse takes
 * effect for exactly the waiters already blocked, nobody can take the object
 * between the signal and the waiter's return, and the walk stops as soon as
 * the object is used up.  Each hand-off is a transaction of its own that
 * wakes only its waiter, on the waiter's own futex word.
 *
 * Entries stay linked after their wait ends (a woken waiter returns without
 * the lock, a waiter gives up without it); walks unlink such stale entries
 * as they pass, and a thread unlinks its own before it queues again.
 * Closing an object drops its whole queue at once (layout.h: orphans).
 */
#ifndef WINSYNC_QUEUE_H
#define WINSYNC_QUEUE_H

#include "txn.h"

/* Appends entry `entry` of `record` to the queue of locked object `slot`. */
int ws_queue_link(struct ws_crit *c, uint32_t slot, uint32_t record, uint32_t entry);
/* Unlinks entry `entry` of `record` (locks its object); an orphan just forgets its link. */
int ws_queue_unlink(struct ws_crit *c, uint32_t record, uint32_t entry);
/* Unlinks every entry `record` still has linked. */
int ws_queue_unlink_all(struct ws_crit *c, uint32_t record);
/* Unlinks the stale entries of locked object `slot`. */
int ws_queue_prune(struct ws_crit *c, uint32_t slot);
/* Drops the whole queue of locked object `slot`, which is being closed. */
void ws_queue_drop(struct ws_crit *c, uint32_t slot);
/* Is entry `entry` of `record` in the queue of a live object (not unlinked, not orphaned)? */
bool ws_entry_queued(ws_arena *arena, const struct ws_entry *entry);

/*
 * Can a signal of locked object `slot` be handed out under the object's
 * own lock (crit.h)?  Not if a live waiter queued on it waits for all of
 * its objects (the hand-off would lock the others), nor if it could go to
 * more than one live waiter (`many_units`: a semaphore, a manual-reset
 * event), since such a release is one step that the released must not see
 * half done (ws_crit_wait_out waits for the arena's sections only).
 */
bool ws_queue_alone(struct ws_crit *c, uint32_t slot, bool many_units);

enum ws_settle {
	WS_SETTLE_SIGNAL,     /* the object is signaled: hand it out while it lasts */
	WS_SETTLE_PULSE_ONE,  /* as if signaled for one waiter, then not */
	WS_SETTLE_PULSE_ALL,  /* as if signaled for every waiter already queued */
};

/*
 * Guards the first live waiter queued on locked object `slot` (txn.h): an
 * operation about to make the object signaled does it before it commits.
 */
void ws_guard_queue(struct ws_crit *c, uint32_t slot);

/*
 * Hands the operation's object (locked, op_slot) to its queued waiters,
 * one transaction each.  Sets *dead if it passed waiters of dead threads.
 */
int ws_settle(struct ws_crit *c, uint32_t slot, enum ws_settle mode, bool *dead);

/*
 * Whom a waiter of a mutex watches for deaths (wait.c): the threads using
 * the owner's id, and the waiters queued ahead of it, any of which may own
 * the mutex before it does.  ws_queue_ahead lists the live waiters queued
 * on `slot` before `record` (at most `max`).
 */
uint32_t ws_queue_ahead(struct ws_crit *c, uint32_t slot, uint32_t record, uint32_t *out,
			uint32_t max);
/*
 * Mutex `slot` went to `owner` (a record), who was not queued ahead of the
 * waiters before it: the first of those is woken after the critical
 * section to watch the new owner too.
 */
void ws_queue_rearm(struct ws_crit *c, uint32_t slot, uint32_t owner);

/*
 * A pulse ends with its event unsignaled, whatever its settle released or
 * failed to.  A settle that failed undid its transaction and unlocked the
 * event, so it is locked again first (a head written unlocked would keep a
 * LOCKED mark that no log lists).
 */
void ws_end_pulse(struct ws_crit *c, uint32_t slot);

#endif
