/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Critical sections.  Every object has a lock word of its own, and the
 * arena has one more (lock.h, layout.h); a section holds either
 *   - one object's lock alone (an object section): a signal that finds
 *     waiters, a step of a wait_any that queues, a read of an object being
 *     edited; or
 *   - the arena lock, and then any objects it locks (an arena section):
 *     creating and closing (the free list), a wait_all and everything else
 *     that needs several objects at once (a signal of an object that has
 *     wait_all waiters), reaping, recovery, ws_owner_died, ws_arena_check.
 * The rule that makes this deadlock-free: a thread holding an object's lock
 * never waits for another lock, and only a holder of the arena lock holds
 * more than one object's.  So a stopped thread holds up the objects it was
 * working on, and the arena's own business, nothing else.
 *
 * Entering registers the thread (record.c), takes the lock and finishes the
 * work of a dead holder first: taking the arena lock over from one replays
 * its log at once (recover.c); an object's lock found held by a dead thread
 * is recovered under the arena lock (the dead thread may hold other objects
 * too; its log lists them), and then taken.  Leaving releases the locks,
 * then makes the wakes the section owes (the last hand-off, waiters to
 * re-arm) and runs a suspension that arrived meanwhile.
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
 * Enters an arena section.  A live holder is waited for however long it
 * takes (a critical section is microseconds; deadlines bound waits for
 * objects, not this), unless the arena is WS_ARENA_NONBLOCK: then a held
 * lock is -EAGAIN.  Also ws_self's errors.
 */
int ws_crit_enter(ws_arena *arena, struct ws_crit *c);
/* The same, never waiting for a live holder (-EAGAIN), whatever the arena's flags. */
int ws_crit_try(ws_arena *arena, struct ws_crit *c);
/* Enters an object section on `slot` (the same rules). */
int ws_crit_enter_object(ws_arena *arena, uint32_t slot, struct ws_crit *c);
void ws_crit_leave(struct ws_crit *c);
/*
 * An arena section takes the lock words of objects [0, count) too, for a
 * view of everything at once (ws_arena_check): 0, or -EAGAIN with none
 * held (WS_ARENA_NONBLOCK, a live holder).  Dead holders' work is finished
 * first.  The words are not in the log: the section only reads.
 */
int ws_crit_hold_objects(struct ws_crit *c, uint32_t count);
void ws_crit_release_objects(struct ws_crit *c, uint32_t count);
/* The calling thread's record (registered, an adopted one's duties done), no lock held. */
int ws_crit_register(ws_arena *arena, uint32_t *self);

/*
 * An arena section whose operation met a dead holder on an object's lock
 * (ws_obj_lock: -EOWNERDEAD): finishes that holder's work and returns true,
 * for the caller to run its operation again; false otherwise.
 */
bool ws_crit_recovered(struct ws_crit *c);

#endif
