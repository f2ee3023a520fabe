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
 * record's `holding` counter is odd while it takes or holds a lock (an
 * adopted record's stays as its dead thread left it: those locks are the
 * adopter's now), its `holding_stamp` is the counter's value mixed
 * (ws_lock_stamp) all that while, and its log says which lock (the
 * arena's, or an object's): a lock word naming a live record that does
 * not say all three, unchanged with the counter at two looks, one right
 * after the other, names nobody (a stale or corrupted word) and is taken
 * over too (lock.c).
 *
 * This file knows lock words and records, nothing above them.
 */
#ifndef WINSYNC_LOCK_H
#define WINSYNC_LOCK_H

#include "arena.h"

/*
 * A record's `holding_stamp` while its counter is odd.  Mixed so that a
 * scribbled counter and a scribbled stamp agree by a 2^-32 chance, not
 * one in the few small numbers a stray write tends to leave: a parked
 * thread whose counter and log flag were both scribbled held a word named
 * by a third scribble for ever (the random scribbler, "stuck in ws_close").
 * Odd counters give odd stamps, never 0.
 */
static inline uint32_t ws_lock_stamp(uint32_t holding)
{
	return holding * 0x9e3779b1u;
}

/*
 * Takes `word` for record `self` (whose ref is `ref`).  A live holder is
 * waited for however long it takes unless !block (-EAGAIN).  *taken_from is
 * the ref of a holder that was gone (died, or a stale word) and whose work
 * the caller now owns, else 0.
 */
int ws_lock_take(ws_arena *arena, _Atomic uint32_t *word, uint32_t self, uint32_t ref, bool block,
		 uint32_t *taken_from);
/*
 * The same for an object's lock word, which is never taken over here: a
 * holder that is gone makes it -EOWNERDEAD with *gone the word naming it,
 * for the arena lock's holder to put right (crit.c), so that one thread at
 * a time replays a dead holder's log.
 */
int ws_lock_take_object(ws_arena *arena, uint32_t slot, uint32_t self, uint32_t ref, bool block,
			uint32_t *gone);
/*
 * For the arena lock's holder, which may hold an object's lock word on top
 * (its `holding` counter is odd already): replaces `seen`, a word naming a
 * holder that is gone, by `ref`.  False if the word changed meanwhile.
 */
bool ws_lock_seize(_Atomic uint32_t *word, uint32_t seen, uint32_t ref);
/* Gives back a word taken with ws_lock_seize (if it still names `ref`). */
void ws_lock_release_seized(ws_arena *arena, _Atomic uint32_t *word, uint32_t ref);
/*
 * Waits (up to a 100-ms slice) for the holder named by `seen` to let the
 * word go or to die.  True if that holder is gone by its rules (dead, or
 * named by a stale word).  `watch` keeps the suspicion between calls.
 */
struct ws_holder_watch {
	uint32_t object;   /* slot + 1 of the object whose word it is, 0 for the arena's */
	uint32_t word;     /* the lock word when the suspicion started */
	uint32_t holding;  /* the holder's counter then */
	bool suspect;
	bool fresh;        /* the suspicion began at the last look: look again now */
	bool woken;        /* a release's one wake came to us: see below */
};
#define WS_HOLDER_WATCH(slot_plus_one) \
	((struct ws_holder_watch){ (slot_plus_one), 0, 0, false, false, false })
bool ws_lock_wait_holder(ws_arena *arena, _Atomic uint32_t *word, uint32_t seen,
			 struct ws_holder_watch *watch);
/*
 * A release wakes one sleeper, which owes the others theirs: a taker that
 * was woken takes the word with the contended bit (ws_lock_name), so that
 * its own release wakes the next; one that leaves without taking it passes
 * the wake on (ws_lock_pass_wake).  Else a sleeper behind it sleeps on a
 * free word until its 100-ms look.
 */
static inline uint32_t ws_lock_name(uint32_t ref, const struct ws_holder_watch *watch)
{
	return watch->woken ? ref | WS_LOCK_CONTENDED : ref;
}
void ws_lock_pass_wake(ws_arena *arena, _Atomic uint32_t *word, struct ws_holder_watch *watch);
void ws_lock_release(ws_arena *arena, _Atomic uint32_t *word, uint32_t self);

/* Is `word` held by a thread that has died?  No lock taken: a hint. */
bool ws_lock_holder_dead(ws_arena *arena, _Atomic uint32_t *word);

#endif
