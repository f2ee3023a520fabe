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
 * Two kinds of lock.  The arena's serves whatever concerns several objects;
 * each object's own serves an operation on that object alone, so that
 * operations on unrelated objects never wait for each other.  The arena
 * lock's holder waits for a section on one object before it edits that
 * object (txn.c); a section on one object waits for nothing, and gives way
 * (WS_NEED_ARENA, undone) when it finds the arena's holder on its object.
 * A dead holder of either is put right under the arena lock, one replay at
 * a time.
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
 * Enters a critical section on object `slot` alone, under its own lock
 * word: the section may lock that object and nothing else (txn.h), so that
 * operations on unrelated objects never wait for each other.  The arena
 * lock's holder waits for such a section when it needs the object; such a
 * section never waits for anything.  A holder of the word that is gone is
 * put right under the arena lock first (one replay at a time).
 * WS_NEED_ARENA: this thread adopted a dead record, whose duties need the
 * arena lock.  Also ws_crit_enter's errors.
 */
int ws_crit_enter_object(ws_arena *arena, uint32_t slot, struct ws_crit *c);
/*
 * A waiter woken by the kernel for a dead holder (or its backstop): puts
 * right the lock word of object `slot` if a dead thread holds it.
 */
void ws_crit_sweep_object(ws_arena *arena, uint32_t slot, bool try_only);
/*
 * For the arena lock's holder that must see every object at rest at once
 * (ws_arena_check): takes every object's own lock word too, waiting for
 * live holders unless the arena is WS_ARENA_NONBLOCK (-EAGAIN, some words
 * held: ws_crit_release_objects lets go of them as of all of them).
 */
int ws_crit_hold_objects(struct ws_crit *c);
/* Reaps dead records under the arena lock (not waiting for it if try_only): 0 or -EAGAIN, ... */
int ws_crit_reap(ws_arena *arena, bool try_only);
void ws_crit_release_objects(struct ws_crit *c);

/*
 * Returns once the critical section of the arena lock that handed a waiter
 * its wait state `state` is over (WS_WAIT_IN_SECTION), at once for a state
 * handed by a section on one object.  A signal that releases several waits hands them their results one
 * at a time, each in its own transaction, but in NT it is one step: a wait
 * it released must not return, and look at the objects, before the others
 * are released too (a pulse's, a manual set's, a release of several
 * units).  One load and no wait when the section is over, as it nearly
 * always is by the time the waiter wakes.
 */
void ws_crit_wait_out(ws_arena *arena, uint32_t state);

#endif
