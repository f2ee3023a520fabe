/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Thread records: every thread that enters a critical section of an arena,
 * blocks in it or acquires a mutex has a record there, linked on the
 * thread's robust futex list.  When the thread dies, however it dies, the
 * kernel sets OWNER_DIED in the record's `alive` word: the others learn of
 * the death from shared memory, without a system call, and right for
 * zombies, reused thread ids and other PID namespaces alike.
 */
#ifndef WINSYNC_THREAD_H
#define WINSYNC_THREAD_H

#include "arena.h"

/* The kernel's robust list head (linux/futex.h), without the header for the DLL build. */
struct robust_head {
	void *next;
	long long futex_offset;
	void *list_op_pending;
};

/* The kernel finds a robust futex word this far before the list entry. */
#define WS_ROBUST_FUTEX_OFFSET 32

enum ws_liveness {
	WS_FREE,
	WS_LIVE,
	WS_DEAD, /* died (or left the arena); reclaimed by the next reaper */
};

static inline enum ws_liveness ws_liveness_of(uint32_t alive)
{
	if (alive == 0)
		return WS_FREE;
	if ((alive & WS_FUTEX_OWNER_DIED) || !(alive & WS_FUTEX_TID_MASK))
		return WS_DEAD;
	return WS_LIVE;
}

/* Is `alive` the word of live thread `tid`?  Lock sleepers may have set FUTEX_WAITERS in it. */
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

/* Records the owner id the thread acquires mutexes with (see reap.c). */
static inline void ws_self_owner(ws_arena *arena, uint32_t record, uint32_t owner)
{
	_Atomic uint32_t *field = &arena->records[record].owner;

	if (atomic_load_explicit(field, memory_order_relaxed) != owner)
		atomic_store_explicit(field, owner, memory_order_release);
}

/* The lock word's name for a record: generation and index + 1. */
static inline uint32_t ws_record_ref(ws_arena *arena, uint32_t record)
{
	uint32_t gen = ws_get(&arena->records[record].generation) & WS_REF_GEN_MASK;

	return gen << WS_REF_INDEX_BITS | (record + 1);
}

/* The record a ref names if it is in range, else NULL (corruption). */
static inline struct ws_record *ws_ref_record(ws_arena *arena, uint32_t ref)
{
	uint32_t index = ref & WS_REF_INDEX_MASK;

	if (index == 0 || index > arena->records_count)
		return NULL;
	return &arena->records[index - 1];
}

/*
 * The calling thread leaves the arena (at ws_arena_close).  Returns true if
 * the mapping may go: no other thread of this process that used the arena
 * is still alive, and the caller's record came off its robust list.
 */
bool ws_threads_leave(ws_arena *arena);

/* The robust list head of the calling thread, or NULL. */
struct robust_head *ws_robust_head(void);

#endif
