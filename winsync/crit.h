/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Critical sections: everything a call does between taking a lock and
 * leaving it.  Entering registers the thread (record.c), takes the lock
 * word it is given (lock.c), finishes the work of a dead holder it took
 * the lock over from (recover.c) and the duties of a dead record it adopted
 * (reap.c).  Leaving releases the lock, then makes the wakes the section
 * owes (the last hand-off, waiters to re-arm) and runs a suspension that
 * arrived meanwhile.
 *
 * Suspension.  A host that suspends threads from a signal handler (Wine's
 * SuspendThread does) must not park a thread inside a critical section:
 * the handler asks ws_defer_suspend(), and the thread suspends itself
 * through the host's hook as soon as it leaves.
 */
#ifndef WINSYNC_CRIT_H
#define WINSYNC_CRIT_H

#include "txn.h"

/*
 * Enters a critical section on `lock`.  A live holder is waited for however
 * long it takes (a critical section is microseconds; deadlines bound waits
 * for objects, not this), unless the arena is WS_ARENA_NONBLOCK: then a
 * held lock is -EAGAIN.  Also ws_self's errors.
 */
int ws_crit_enter(ws_arena *arena, _Atomic uint32_t *lock, struct ws_crit *c);
/* The same, never waiting for a live holder (-EAGAIN), whatever the arena's flags. */
int ws_crit_try(ws_arena *arena, _Atomic uint32_t *lock, struct ws_crit *c);
void ws_crit_leave(struct ws_crit *c);

/*
 * Returns once critical section number `section` (of the arena lock) is
 * over.  A signal that releases several waits hands them their results one
 * at a time, each in its own transaction, but in NT it is one step: a wait
 * it released must not return, and look at the objects, before the others
 * are released too (a pulse's, a manual set's, a release of several
 * units).  One load and no wait when the section is over, as it nearly
 * always is by the time the waiter wakes.
 */
void ws_crit_wait_out(ws_arena *arena, uint32_t section);

#endif
