/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "clock.h"

#include <errno.h>

#include "os/os.h"

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

int ws_deadline_make(const struct timespec *at, bool realtime, struct ws_deadline *d)
{
	d->clock = realtime ? WS_CLOCK_REALTIME : WS_CLOCK_MONOTONIC;
	d->forever = !at;
	if (at) {
		if (at->tv_nsec < 0 || at->tv_nsec >= WS_NSEC_PER_SEC)
			return -EINVAL;
		d->at = *at;
	}
	return 0;
}

struct ws_deadline ws_deadline_after(int clock, int64_t ns)
{
	struct ws_deadline d = { clock, false, { 0, 0 } };

	ws_os_clock_now(clock, &d.at);
	d.at.tv_sec += (time_t)(ns / WS_NSEC_PER_SEC);
	d.at.tv_nsec += (long)(ns % WS_NSEC_PER_SEC);
	if (d.at.tv_nsec >= WS_NSEC_PER_SEC) {
		d.at.tv_nsec -= WS_NSEC_PER_SEC;
		d.at.tv_sec++;
	}
	return d;
}

bool ws_deadline_passed(const struct ws_deadline *d)
{
	struct timespec now;

	if (d->forever)
		return false;
	ws_os_clock_now(d->clock, &now);
	return !before(&now, &d->at);
}

struct ws_deadline ws_deadline_bound(const struct ws_deadline *d, int64_t ns)
{
	struct ws_deadline bound = ws_deadline_after(d->clock, ns);

	return !d->forever && before(&d->at, &bound.at) ? *d : bound;
}

int ws_deadline_left(const struct ws_deadline *d, struct timespec *left)
{
	struct timespec now;

	ws_os_clock_now(d->clock, &now);
	if (!before(&now, &d->at))
		return -ETIMEDOUT;
	left->tv_sec = d->at.tv_sec - now.tv_sec;
	left->tv_nsec = d->at.tv_nsec - now.tv_nsec;
	if (left->tv_nsec < 0) {
		left->tv_nsec += WS_NSEC_PER_SEC;
		left->tv_sec--;
	}
	return 0;
}

static uint64_t ns_of(const struct timespec *t)
{
	return t->tv_sec < 0 ? 0 : (uint64_t)t->tv_sec * WS_NSEC_PER_SEC + (uint64_t)t->tv_nsec;
}

uint64_t ws_clock_ns(int clock)
{
	struct timespec now;

	ws_os_clock_now(clock, &now);
	return ns_of(&now);
}

uint64_t ws_deadline_ns(const struct ws_deadline *d)
{
	return d->forever ? 0 : ns_of(&d->at);
}
