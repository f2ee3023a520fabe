/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * This process's slow-path counters (ws_stats_read).  Only slow paths count:
 * a shared counter on the uncontended paths would cost what they save.
 */
#ifndef WINSYNC_STATS_H
#define WINSYNC_STATS_H

#include <stdatomic.h>
#include <stdint.h>

enum ws_stat {
	WS_STAT_FUTEX_WAITS,
	WS_STAT_FUTEX_WAKES,
	WS_STAT_LOCK_SLEEPS,
	WS_STAT_LOCKED_CALLS,
	WS_STAT_RECOVERIES,
	WS_STAT_REAPED,
	/* Not in the public struct ws_stats (its size is ABI): for tests and tools inside. */
	WS_STAT_SPIN_CAUGHT,  /* WS_ARENA_SPIN polls that saw the hand-off arrive */
	WS_STAT_SPIN_MISSED,  /* and those that gave up and slept */
	WS_STAT_LOCK_SLICES,  /* lock sleeps that ran out their 100-ms slice unwoken */
	WS_STAT_COUNT
};

extern _Atomic uint64_t ws_stat_counters[WS_STAT_COUNT];

static inline void ws_stat_add(enum ws_stat stat)
{
	atomic_fetch_add_explicit(&ws_stat_counters[stat], 1, memory_order_relaxed);
}

#endif
