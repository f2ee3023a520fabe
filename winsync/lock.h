/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A lock word: the ref (record index + 1 and generation) of the thread
 * record holding it, plus a contended bit.  A holder that died is
 * recognized from its record (record.h), which the kernel marks, and is
 * taken over: the taker learns whose work it must finish (crit.c does).
 *
 * A sleeper on the lock also sleeps on the holder's `alive` word with
 * FUTEX_WAITERS set in it, so the kernel's robust-list walk wakes it the
 * moment the holder dies; it looks again every 100 ms in any case.  A
 * record's `holding` counter is odd while it takes or holds a lock: a lock
 * word naming a live record whose counter stays even and unchanged for
 * 100 ms names nobody (a stale or corrupted word) and is taken over too.
 *
 * This file knows lock words and records, nothing above them.
 */
#ifndef WINSYNC_LOCK_H
#define WINSYNC_LOCK_H

#include "arena.h"

/*
 * Takes `word` for record `self` (whose ref is `ref`).  A live holder is
 * waited for however long it takes unless !block (-EAGAIN).  *taken_from is
 * the ref of a holder that was gone (died, or a stale word) and whose work
 * the caller now owns, else 0.
 */
int ws_lock_take(ws_arena *arena, _Atomic uint32_t *word, uint32_t self, uint32_t ref, bool block,
		 uint32_t *taken_from);
void ws_lock_release(ws_arena *arena, _Atomic uint32_t *word, uint32_t self);

/* Is `word` held by a thread that has died?  No lock taken: a hint. */
bool ws_lock_holder_dead(ws_arena *arena, _Atomic uint32_t *word);

#endif
