/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Deadlines: the one place that reads a clock for a wait.  A deadline is an
 * absolute time on CLOCK_MONOTONIC or CLOCK_REALTIME, or forever.  A sleep
 * goes until the deadline itself, on the deadline's own clock (so that a
 * realtime deadline expires when the wall clock reaches it, jumps included),
 * or until an earlier point on that clock when the caller bounds the sleep.
 */
#ifndef WINSYNC_CLOCK_H
#define WINSYNC_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "abi.h"

#define WS_NSEC_PER_SEC 1000000000L

struct ws_deadline {
	int clock;             /* WS_CLOCK_MONOTONIC or WS_CLOCK_REALTIME */
	bool forever;
	struct timespec at;    /* absolute, on `clock`, unless forever */
};

/* A deadline from a caller's timespec (NULL: forever): 0, or -EINVAL for a bad tv_nsec. */
int ws_deadline_make(const struct timespec *at, bool realtime, struct ws_deadline *d);
/* `ns` nanoseconds from now on `clock`. */
struct ws_deadline ws_deadline_after(int clock, int64_t ns);
bool ws_deadline_passed(const struct ws_deadline *d);
/* The earlier of `d` and `ns` from now, on d's clock: the end of one bounded sleep. */
struct ws_deadline ws_deadline_bound(const struct ws_deadline *d, int64_t ns);
/*
 * The time left until `d`, for a call that takes a relative timeout: 0, or
 * -ETIMEDOUT once it has passed.  Such a call cannot follow a change of the
 * wall clock while it sleeps; callers bound its sleeps (futex.c).
 */
int ws_deadline_left(const struct ws_deadline *d, struct timespec *left);

/* Now on `clock`, in ns; and a deadline's instant in ns (0 if forever): for inspectors. */
uint64_t ws_clock_ns(int clock);
uint64_t ws_deadline_ns(const struct ws_deadline *d);

#endif
