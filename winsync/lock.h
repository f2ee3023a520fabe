/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The arena lock and the critical section around it.
 *
 * One lock per arena guards everything but the uncontended paths: queues,
 * records' wait state, free lists, the log, and objects marked LOCKED.  The
 * word holds the holder's record ref (record index + 1 and generation); a
 * holder that died is recognized from its record's `alive` word, which the
 * kernel marks, and the next thread to want the lock takes it over and
 * finishes or undoes the dead holder's work from the log (txn.h) before
 * doing its own.
 *
 * A sleeper on the lock also sleeps on the holder's `alive` word with
 * FUTEX_WAITERS set in it, so the kernel's robust-list walk wakes it the
 * moment the holder dies; it looks again every 100 ms in any case.  A
 * record's `holding` counter is odd while it acquires or holds the lock: a
 * lock word naming a live record whose counter stays even and unchanged for
 * 100 ms names nobody (a stale or corrupted word) and is taken over too.
 */
#ifndef WINSYNC_LOCK_H
#define WINSYNC_LOCK_H

#include <time.h>

#include "arena.h"

struct ws_crit {
	ws_arena *arena;
	struct ws_log *log;
	struct ws_record *rec;
	uint32_t self;          /* record index */
	uint32_t ref;
	void *robust_head;      /* for the dead-man wake of a hand-off (txn.c) */
	void *pending_saved;    /* the thread's list_op_pending, put back when we leave */
	bool guarding;          /* list_op_pending points at a waiter of ours (txn.c) */
	_Atomic uint32_t *deferred_wake; /* the last hand-off's word: woken after the unlock */
	int error;              /* first inconsistency found: the transaction is undone */
};

/*
 * Registers the calling thread if needed, takes the arena lock and finishes
 * a dead holder's work.  A live holder is waited for however long it takes
 * (a critical section is microseconds; deadlines bound waits for objects,
 * not this), unless the arena is WS_ARENA_NONBLOCK: then a held lock is
 * -EAGAIN.  Also ws_self's errors.
 */
int ws_crit_enter(ws_arena *arena, struct ws_crit *c);
/* The same, waiting regardless of WS_ARENA_NONBLOCK (the end of a timed-out wait). */
int ws_crit_enter_blocking(ws_arena *arena, struct ws_crit *c);
void ws_crit_leave(struct ws_crit *c);
/* Leaves the critical section after a failed enter (the lock was not taken). */
void ws_crit_leave_unlocked(struct ws_crit *c);

/* Is the lock held by a thread that has died?  No lock taken: a hint. */
bool ws_lock_holder_dead(ws_arena *arena);

#endif
