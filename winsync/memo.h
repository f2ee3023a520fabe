/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A thread's memo of the handle list it last found valid.
 *
 * A wait on many objects must find every handle valid (NT fails it for an
 * invalid one even when the first object is signaled), and checking 63
 * handles costs several times the rest of the wait.  A thread that waits on
 * the same list again, as a frame loop polls, needs no new check: a handle
 * stops being valid only when its object is closed, and ws_close moves the
 * arena's count of closes while it holds the object LOCKED, before it
 * writes the closed head (and before it commits, so that a closer's death
 * cannot leave the count behind).
 *
 * A check reads the count (N) before the heads, and the list is kept only
 * if every head read valid and none LOCKED: a close that moved the count
 * before the read had locked its object before that, so the check saw it
 * LOCKED or closed; one that moves it later leaves it above N.  So a kept
 * list is valid while the count reads N.  (With the count moved after the
 * head, a wait could see the closed handle's set, or another thread's set
 * that followed it, while the count still read N.)
 *
 * A wait that uses the memo reads the count after the heads it acts on (an
 * acquire fence between): N then means no handle of the list was closed
 * before the instant the wait takes effect.  (Read before them, a close and
 * a set landing between the two reads let the wait take the set object.)
 *
 * One memo per thread (this process's memory, never shared), for one
 * arena at a time.
 */
#ifndef WINSYNC_MEMO_H
#define WINSYNC_MEMO_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "equal.h"
#include "os/os.h"

/* Shorter lists are checked faster than compared. */
#define WS_MEMO_MIN_HANDLES 4

/* The count of closes now: before a check's heads, after a wait's (see above). */
static inline uint64_t ws_closes_now(const ws_arena *arena)
{
	return atomic_load_explicit(&arena->header->closes, memory_order_seq_cst);
}

/* Moves the count of closes: with the object locked, before its head is written. */
static inline void ws_closes_move(ws_arena *arena)
{
	atomic_fetch_add_explicit(&arena->header->closes, 1, memory_order_seq_cst);
}

/*
 * The handles first: the OS layer aligns a memo to a cache line
 * (WS_OS_MEMO_ALIGN), so the compare's 32-byte loads never split one.
 */
struct ws_list_memo {
	ws_handle handles[WS_MAX_WAIT_OBJECTS];
	uint64_t serial;   /* the arena's; 0: empty (as a new memo is) */
	uint64_t closes;   /* the count of closes read before the check */
	uint32_t count;
	bool distinct;     /* no two handles of one slot: a wait_all's check too */
};
_Static_assert(sizeof(struct ws_list_memo) <= WS_OS_MEMO_BYTES, "the OS layer keeps a memo's bytes");
_Static_assert(offsetof(struct ws_list_memo, handles) == 0, "the handles start the memo's first line");

/*
 * Were handles[0, count) found valid when the count of closes was `closes`
 * (and, if `distinct`, no two of them of one object, as a wait_all needs)?
 * Inline: it is most of what a poll whose first object is ready does.
 */
static inline bool ws_memo_holds(const ws_arena *arena, const ws_handle *handles, uint32_t count,
				 uint64_t closes, bool distinct)
{
	const struct ws_thread *thread = ws_os_thread_peek();
	const struct ws_list_memo *memo = thread ? thread->memo : NULL;

	return memo && memo->serial == arena->serial && memo->closes == closes &&
	       memo->count == count && (memo->distinct || !distinct) &&
	       ws_words_equal(memo->handles, handles, count);
}
/* Keeps handles[0, count), just found valid, none LOCKED (and `distinct`), after `closes` was read. */
void ws_memo_keep(const ws_arena *arena, const ws_handle *handles, uint32_t count,
		  uint64_t closes, bool distinct);

#endif
