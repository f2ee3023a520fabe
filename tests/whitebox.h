/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * White-box lookups of an arena's thread records (winsync/arena.h), for the
 * tests that inspect or forge them.  Read after a locked call of the test's
 * own (ws_arena_check, say), which orders these reads after the threads'
 * writes.
 */
#ifndef WINSYNC_TEST_WHITEBOX_H
#define WINSYNC_TEST_WHITEBOX_H

#include <sys/types.h>

#include <winsync.h>

/* The record live thread `tid` holds (its alive word names it), or -1. */
int wb_live_record(ws_arena *a, pid_t tid);
/* The record that last named thread `tid`, live or dead (a dead thread's keeps its tid until reused), or -1. */
int wb_named_record(ws_arena *a, pid_t tid);
/* The name a lock word holds for record `record` (generation and index), as its holder writes it. */
uint32_t wb_lock_ref(ws_arena *a, uint32_t record);
/*
 * Makes record `record` look like it takes or holds a lock, as lock.c's
 * take leaves it (its counter odd, its stamp the counter's), and back.
 * Which lock is the log's to say (arena_lock, object_lock).
 */
void wb_pose_as_holder(ws_arena *a, uint32_t record);
void wb_pose_as_holder_end(ws_arena *a, uint32_t record);

#endif
