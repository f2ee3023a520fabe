/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reclaiming what dead threads leave: their blocked waits, their queue
 * entries, their records, and the mutexes held under their owner ids.
 *
 * A mutex belongs to an owner id, not to a thread.  A thread's record
 * remembers the owner id it last acquired a mutex with (0 until it does);
 * when the record is found dead and no live record uses that id, the id is
 * dead too and its mutexes are abandoned: each goes to its next waiter with
 * -EOWNERDEAD.  Hosts whose owner ids are not thread ids, or that learn of
 * deaths first, call ws_owner_died() themselves.
 */
#ifndef WINSYNC_REAP_H
#define WINSYNC_REAP_H

#include "txn.h"

/* Reaps every dead record (holding the lock). */
int ws_reap_dead(struct ws_crit *c);
/* The reaper's duties for a dead record the caller has just adopted as its own. */
int ws_reap_adopted(struct ws_crit *c);
/*
 * Guards a waiter that ws_owner_died_locked(owner) will serve (txn.h), so
 * that a death before its first hand-off still wakes someone to finish it.
 */
void ws_guard_owner(struct ws_crit *c, uint32_t owner);
/* Abandons every mutex `owner` holds and cancels its blocked waits (holding the lock). */
int ws_owner_died_locked(struct ws_crit *c, uint32_t owner);
/* Is there a dead record nobody has reaped?  No lock: a hint for waiters. */
bool ws_dead_records(ws_arena *arena);

#endif
