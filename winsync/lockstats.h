/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How the critical sections' locks are used, measured only when
 * WINSYNC_LOCK_STATS=1 is set (ws_lock_stats_read): every acquisition, the
 * ones that found the lock held, and how long each held it, in a histogram
 * of 8 steps per power of two (percentiles within 12.5 %).  Off, a section
 * pays one load of a flag; on, two clock reads and three atomic adds.
 */
#ifndef WINSYNC_LOCKSTATS_H
#define WINSYNC_LOCKSTATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

extern _Atomic int ws_lock_stats_on; /* -1: not looked at yet */

bool ws_lock_stats_enabled_slow(void);

static inline bool ws_lock_stats_enabled(void)
{
	int on = atomic_load_explicit(&ws_lock_stats_on, memory_order_relaxed);

	return on < 0 ? ws_lock_stats_enabled_slow() : on;
}

/* An acquisition about to be tried: `held` if the word named a holder. */
void ws_lock_stats_taking(bool held);
/* The lock taken at `since` (ws_lock_stats_taking) is released now. */
void ws_lock_stats_released(uint64_t since);

#endif
