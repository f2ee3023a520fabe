/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "lockstats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "os/os.h"
#include "winsync.h"

#define STEPS_LOG2 3
#define STEPS (1u << STEPS_LOG2)
#define BUCKETS (64 * STEPS)

_Atomic int ws_lock_stats_on = -1;

static _Atomic uint64_t acquisitions, found_held;
static _Atomic uint64_t held_ns[BUCKETS];
static _Atomic uint64_t held_max;

bool ws_lock_stats_enabled_slow(void)
{
	const char *v = ws_os_getenv("WINSYNC_LOCK_STATS");
	int on = v && strcmp(v, "1") == 0;

	atomic_store_explicit(&ws_lock_stats_on, on, memory_order_relaxed);
	return on;
}

/* Bucket of `ns`: the power of two, then the next STEPS_LOG2 bits below the top one. */
static unsigned int bucket_of(uint64_t ns)
{
	unsigned int top;

	if (ns < STEPS)
		return (unsigned int)ns;
	top = 63u - (unsigned int)__builtin_clzll(ns);
	return (top - STEPS_LOG2 + 1) * STEPS + (unsigned int)((ns >> (top - STEPS_LOG2)) & (STEPS - 1));
}

/* The middle of a bucket's range of ns: the inverse of bucket_of. */
static uint64_t bucket_middle(unsigned int b)
{
	unsigned int top;
	uint64_t low;

	if (b < STEPS)
		return b;
	top = b / STEPS + STEPS_LOG2 - 1;
	low = ((uint64_t)STEPS | (b % STEPS)) << (top - STEPS_LOG2);
	return low + (((uint64_t)1 << (top - STEPS_LOG2)) >> 1);
}

void ws_lock_stats_taking(bool held)
{
	atomic_fetch_add_explicit(&acquisitions, 1, memory_order_relaxed);
	if (held)
		atomic_fetch_add_explicit(&found_held, 1, memory_order_relaxed);
}

void ws_lock_stats_released(uint64_t since)
{
	uint64_t now = ws_clock_ns(WS_CLOCK_MONOTONIC), ns = now > since ? now - since : 0;
	uint64_t max = atomic_load_explicit(&held_max, memory_order_relaxed);

	atomic_fetch_add_explicit(&held_ns[bucket_of(ns)], 1, memory_order_relaxed);
	while (ns > max && !atomic_compare_exchange_weak_explicit(&held_max, &max, ns,
								  memory_order_relaxed,
								  memory_order_relaxed))
		;
}

/* The ns under which `permille` of the samples fall (bucket middles). */
static uint64_t percentile(const uint64_t *counts, uint64_t total, unsigned int permille)
{
	uint64_t rank = (total * permille + 999) / 1000, seen = 0;

	for (unsigned int b = 0; b < BUCKETS; b++) {
		seen += counts[b];
		if (seen >= rank && counts[b])
			return bucket_middle(b);
	}
	return 0;
}

int ws_lock_stats_read(struct ws_lock_stats *stats)
{
	uint64_t counts[BUCKETS], total = 0;

	if (!stats)
		return -EINVAL;
	if (!ws_lock_stats_enabled())
		return -ENODATA;
	for (unsigned int b = 0; b < BUCKETS; b++)
		total += counts[b] = atomic_load_explicit(&held_ns[b], memory_order_relaxed);
	memset(stats, 0, sizeof(*stats));
	stats->acquisitions = atomic_load_explicit(&acquisitions, memory_order_relaxed);
	stats->found_held = atomic_load_explicit(&found_held, memory_order_relaxed);
	stats->held_samples = total;
	stats->held_ns_median = percentile(counts, total, 500);
	stats->held_ns_p99 = percentile(counts, total, 990);
	stats->held_ns_max = atomic_load_explicit(&held_max, memory_order_relaxed);
	return 0;
}
