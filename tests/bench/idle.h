/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* winsync-bench group (5): wake-ups of parked threads (idle.c). */
#ifndef WINSYNC_BENCH_IDLE_H
#define WINSYNC_BENCH_IDLE_H

#include <stdbool.h>

#include <winsync.h>

/* Wake-ups per blocked thread per second above which a row misses the target. */
#define IDLE_TARGET 0.01

/*
 * Parks `threads` threads per row for `seconds` on objects nobody touches
 * (an event, a semaphore, a mutex its live owner holds, a wait_any and a
 * wait_all over all three) and on a raw futex word, counts their wake-ups
 * and prints the table.  Returns the number of failed checks (a wait that
 * ended or failed); *missed is set when a winsync row is above IDLE_TARGET.
 */
int bench_idle(ws_arena *arena, double seconds, int threads, bool *missed);

#endif
