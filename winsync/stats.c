/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "stats.h"

#include <stddef.h>

#include "winsync.h"

_Atomic uint64_t ws_stat_counters[WS_STAT_COUNT];

void ws_stats_read(struct ws_stats *stats)
{
	if (!stats)
		return;
	stats->futex_waits = atomic_load(&ws_stat_counters[WS_STAT_FUTEX_WAITS]);
	stats->futex_wakes = atomic_load(&ws_stat_counters[WS_STAT_FUTEX_WAKES]);
	stats->lock_sleeps = atomic_load(&ws_stat_counters[WS_STAT_LOCK_SLEEPS]);
	stats->locked_calls = atomic_load(&ws_stat_counters[WS_STAT_LOCKED_CALLS]);
	stats->recoveries = atomic_load(&ws_stat_counters[WS_STAT_RECOVERIES]);
	stats->reaped = atomic_load(&ws_stat_counters[WS_STAT_REAPED]);
}
