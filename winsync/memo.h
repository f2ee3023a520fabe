/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A thread's memo of the handle list it last found valid.
 *
 * A wait on many objects must find every handle valid (NT fails it for an
 * invalid one even when the first object is signaled), and checking 63
 * handles costs several times the rest of the wait.  A thread that waits on
 * the same list again, as a frame loop polls, needs no new check: a handle
 * stops being valid only when its object is closed, and ws_close moves the
 * arena's count of closes after it writes the object's head (and before it
 * commits, so that a closer's death cannot leave the count behind).  A
 * check reads the count first: a close that made one of its handles
 * invalid either wrote the head before the check read it (the check
 * fails), or moves the count after the read.  So a list found valid after
 * the count read N is valid while the count reads N.  (Moved before the
 * head, a check between the two would find the handle valid and keep the
 * new count.)
 *
 * One memo per thread (this process's memory, never shared), for one
 * arena at a time.
 */
#ifndef WINSYNC_MEMO_H
#define WINSYNC_MEMO_H

#include <stdbool.h>

#include "arena.h"

/* Shorter lists are checked faster than compared. */
#define WS_MEMO_MIN_HANDLES 4

/* The count of closes now: read before the check whose result is to be kept. */
static inline uint64_t ws_closes_now(const ws_arena *arena)
{
	return atomic_load_explicit(&arena->header->closes, memory_order_seq_cst);
}

/* Moves the count of closes: after the closed object's head is written. */
static inline void ws_closes_move(ws_arena *arena)
{
	atomic_fetch_add_explicit(&arena->header->closes, 1, memory_order_seq_cst);
}

/*
 * Were handles[0, count) found valid when the count of closes was `closes`
 * (and, if `distinct`, no two of them of one object, as a wait_all needs)?
 */
bool ws_memo_holds(const ws_arena *arena, const ws_handle *handles, uint32_t count,
		   uint64_t closes, bool distinct);
/* Keeps handles[0, count), just found valid (and `distinct`) after `closes` was read. */
void ws_memo_keep(const ws_arena *arena, const ws_handle *handles, uint32_t count,
		  uint64_t closes, bool distinct);

#endif
