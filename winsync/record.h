/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Thread records: every thread that enters a critical section of an arena,
 * blocks in it or acquires a mutex has a record there, linked on the
 * thread's robust futex list.  When the thread dies, however it dies, the
 * kernel sets OWNER_DIED in the record's `alive` word: the others learn of
 * the death from shared memory, without a system call, and right for
 * zombies, reused thread ids and other PID namespaces alike.
 *
 * A record's identity is its `alive` word and its generation:
 *   0                 free: claimed by a compare-exchange to the claimer's tid
 *   tid (| WAITERS)   live; sleepers that watch it set FUTEX_WAITERS
 *   OWNER_DIED (| WAITERS), no tid
 *                     dead (the kernel's mark, or the thread left): adopted
 *                     by a compare-exchange, or reaped by the lock holder
 *   WS_RECORD_REAPING the lock holder is reaping it: nobody may adopt it
 * The generation changes only while the record is REAPING, so it never
 * changes under a live thread, and a lock word naming a live holder names
 * it for as long as it lives (the argument of lock.c's holder_gone).
 */
#ifndef WINSYNC_RECORD_H
#define WINSYNC_RECORD_H

#include "arena.h"
#include "fault.h"

/* A value the kernel never writes (it clears the tid when it marks a death). */
#define WS_RECORD_REAPING (WS_FUTEX_OWNER_DIED | 1u)

enum ws_liveness {
	WS_FREE,
	WS_LIVE,
	WS_DEAD, /* died (or left the arena), or being reaped */
};

static inline enum ws_liveness ws_liveness_of(uint32_t alive)
{
	if (alive == 0)
		return WS_FREE;
	if ((alive & WS_FUTEX_OWNER_DIED) || !(alive & WS_FUTEX_TID_MASK))
		return WS_DEAD;
	return WS_LIVE;
}

/* Is `alive` the word of live thread `tid`?  Sleepers may have set FUTEX_WAITERS in it. */
static inline bool ws_alive_is(uint32_t alive, uint32_t tid)
{
	return (alive & ~WS_FUTEX_WAITERS) == tid;
}

static inline enum ws_liveness ws_record_liveness(const struct ws_record *rec)
{
	return ws_liveness_of(atomic_load_explicit(&rec->alive, memory_order_acquire));
}

/*
 * The calling thread's record, registered on first use: 0, -EUSERS (every
 * record is taken by a live thread), -EUCLEAN (our record was overwritten),
 * -ENOTSUP (no usable robust list) or -ENOMEM.  *adopted: the record was a
 * dead thread's that nobody had reclaimed; the caller must do the reaper's
 * duties for it (ws_reap_adopted) before using it.
 */
int ws_self(ws_arena *arena, uint32_t *record, bool *adopted);
/* The same from the thread's cache only (the uncontended paths): -ENOENT on a miss. */
int ws_self_cached(ws_arena *arena, uint32_t *record);
/*
 * Gives back a record ws_self() has just adopted when the caller cannot do
 * its duties now (the lock busy under WS_ARENA_NONBLOCK): dead again, off
 * our list, forgotten, so that whoever adopts or reaps it next does them.
 * Kept undone, its dead thread's mutexes would stay owned while we live,
 * and be lost for good once our first mutex replaced the record's owner id.
 */
void ws_self_give_back(ws_arena *arena, uint32_t record);

/*
 * Records the owner id a thread has just acquired a mutex with (reap.c:
 * a dead record's owner id is abandoned once no live record uses it).
 */
static inline void ws_record_note_owner(ws_arena *arena, uint32_t record, uint32_t owner)
{
	_Atomic uint32_t *field = &arena->records[record].owner;

	if (atomic_load_explicit(field, memory_order_relaxed) != owner)
		atomic_store_explicit(field, owner, memory_order_release);
}

/*
 * Marks live record `word` FUTEX_WAITERS, so that the kernel's mark of its
 * death wakes whoever sleeps on it.  *alive: the word as last read; after,
 * what it is now (FUTEX_WAITERS set when true is returned).  A failed mark
 * was raced by the death itself or by another watcher's mark: it looks
 * again, or the death would go unseen.  False: the record is not live.
 */
static inline bool ws_record_watch(_Atomic uint32_t *word, uint32_t *alive)
{
	while (ws_liveness_of(*alive) == WS_LIVE) {
		WS_FAULT(); /* a death here fails the mark below */
		if ((*alive & WS_FUTEX_WAITERS) ||
		    atomic_compare_exchange_weak_explicit(word, alive, *alive | WS_FUTEX_WAITERS,
							  memory_order_acquire,
							  memory_order_acquire)) {
			*alive |= WS_FUTEX_WAITERS;
			return true;
		}
	}
	return false;
}

/* The lock word's name for a record: generation and index + 1. */
static inline uint32_t ws_record_ref(ws_arena *arena, uint32_t record)
{
	uint32_t gen = ws_get(&arena->records[record].generation) & WS_REF_GEN_MASK;

	return gen << WS_REF_INDEX_BITS | (record + 1);
}

/* The record index a ref names if it is in range, else UINT32_MAX (corruption). */
static inline uint32_t ws_ref_index(ws_arena *arena, uint32_t ref)
{
	uint32_t index = ref & WS_REF_INDEX_MASK;

	return index == 0 || index > arena->records_count ? UINT32_MAX : index - 1;
}

/* Does `ref` still name a live thread's record (same generation, alive)? */
static inline bool ws_ref_live(ws_arena *arena, uint32_t ref)
{
	uint32_t r = ws_ref_index(arena, ref);
	struct ws_record *rec;

	if (r == UINT32_MAX)
		return false;
	rec = &arena->records[r];
	return (ws_get(&rec->generation) & WS_REF_GEN_MASK) == ref >> WS_REF_INDEX_BITS &&
	       ws_record_liveness(rec) == WS_LIVE;
}

/* Records ever handed out: the rest are still zero. */
static inline uint32_t ws_records_used(ws_arena *arena)
{
	uint32_t n = atomic_load_explicit(&arena->header->fresh_records, memory_order_relaxed);

	return n < arena->records_count ? n : arena->records_count;
}

/*
 * Reaping a dead record, for the lock holder only (reap.c): begin marks it
 * REAPING unless it has been adopted meanwhile (false), end moves it to a
 * new generation and frees it, waking whoever watched it.
 */
bool ws_record_reap_begin(ws_arena *arena, uint32_t record);
void ws_record_reap_end(ws_arena *arena, uint32_t record);

/*
 * The calling thread leaves the arena (at ws_arena_close).  Returns true if
 * the mapping may go: no other thread of this process that used the arena
 * is still alive, and the caller's record came off its robust list.
 */
bool ws_records_leave(ws_arena *arena);

/* The robust list head of the calling thread, or NULL. */
struct ws_robust_head *ws_robust_head(void);

#endif
