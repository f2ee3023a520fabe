/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An observer's view of the shared layout (snapshot.c): reads only, with
 * no lock, of fields any writer may be changing.  Everything an inspector
 * needs to know about how objects are locked and how entries mark their
 * queue is here, so that a change of the layout's locking (a lock word per
 * object, flags in entry words) is a change of this file alone.  For
 * layout 4 (a lock word per object): an object is also busy while its
 * lock word is held; the lock words are the arena's and then each
 * object's (1 + slots); an entry's generation is `linked` without
 * WS_ENTRY_ALL.  (snapshot.c already reads a pending wait whose entries
 * are not all linked yet as one still being queued, and reads it again.)
 */
#ifndef WINSYNC_VIEW_H
#define WINSYNC_VIEW_H

#include "arena.h"
#include "record.h"

static inline uint64_t ws_view_head(const ws_arena *arena, uint32_t slot)
{
	return atomic_load_explicit(&arena->objects[slot].head, memory_order_acquire);
}

/*
 * Is a critical section editing the object?  Its other fields may then be
 * half-written.  (Layout 3: the LOCKED flag of the head is the only mark;
 * the arena lock covers every object.)
 */
static inline bool ws_view_object_busy(const ws_arena *arena, uint32_t slot, uint64_t head)
{
	(void)arena, (void)slot;
	return ws_head_tag(head) & WS_HEAD_LOCKED;
}

/*
 * The lock words a thread may hold while it edits objects: the arena's,
 * then (from layout 5) each used object's own.  Returns the number of words
 * and the ref held in word `i` (0: free).
 */
static inline uint32_t ws_view_lock_words(const ws_arena *arena)
{
	uint32_t used = atomic_load_explicit((_Atomic uint32_t *)&arena->header->fresh_slots,
					     memory_order_relaxed);

	return 1 + (used < arena->slots ? used : arena->slots);
}

static inline uint32_t ws_view_lock_ref(const ws_arena *arena, uint32_t i)
{
	_Atomic uint32_t *word = i ? &arena->objects[i - 1].lock : &arena->header->lock;

	return atomic_load_explicit(word, memory_order_acquire) & ~WS_LOCK_CONTENDED;
}

/* The generation of the object an entry is queued on, from its `linked` word (0: not queued). */
static inline uint32_t ws_view_entry_gen(uint32_t linked)
{
	return linked;
}

/*
 * A plain field read once, while its writer may be changing it: the reader
 * checks what it read and reads again.  Functions that read this way are
 * WS_VIEW_RACY, so that ThreadSanitizer does not report the races they
 * are built to survive.
 */
#define WS_VIEW_READ(field) (*(const volatile __typeof__(field) *)&(field))
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#define WS_VIEW_RACY __attribute__((no_sanitize("thread")))
#endif
#endif
#ifndef WS_VIEW_RACY
#define WS_VIEW_RACY
#endif

#endif
