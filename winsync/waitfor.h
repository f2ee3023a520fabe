/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The wait-for graph of a snapshot: a blocked thread waits on objects; a
 * mutex is held by the thread using its owner id, which may wait in turn.
 * Working on the snapshot's own tables only, it resolves mutex owners to
 * threads, picks each waiter's next link, and flags the deadlocked threads.
 */
#ifndef WINSYNC_WAITFOR_H
#define WINSYNC_WAITFOR_H

#include <stdint.h>

#include "winsync.h"

struct ws_waitfor {
	struct ws_snapshot_object *objects;
	uint32_t object_count;
	struct ws_snapshot_thread *threads;
	uint32_t thread_count;
	/* The object index of a handle, or WS_SNAPSHOT_NONE (closed, not live). */
	uint32_t (*object_of)(void *ctx, ws_handle handle);
	void *ctx;
};

/*
 * Fills owner_thread of every mutex, blocker and blocked_on of every
 * waiter, and WS_SNAPSHOT_DEADLOCKED: the largest set of threads that wait
 * without deadline or alert, each on mutexes held inside the set (every
 * object of a wait-any, one of a wait-all), so that none of them can ever
 * run again.  Returns how many threads it flagged; -ENOMEM.
 */
int ws_waitfor_analyze(const struct ws_waitfor *g);

#endif
