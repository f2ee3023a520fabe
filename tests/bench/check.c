/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-bench's checks: every measured operation is checked as it runs,
 * failures are counted here and make the exit status non-zero.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *volatile current_row = "";
int failures;

void failf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("winsync-bench: FAIL: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	failures++;
}

void check_fail(struct check *c, const char *fmt, ...)
{
	if (c->bad++ == 0) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(c->first, sizeof(c->first), fmt, ap);
		va_end(ap);
	}
}

bool check_report(const struct check *c, const char *row)
{
	if (!c->bad)
		return true;
	failf("%s: %" PRIu64 " failed operation(s); first: %s", row, c->bad, c->first);
	return false;
}

bool ws_event_is_signaled(ws_handle h, bool *signaled)
{
	bool manual = true;
	int rc = ws_event_read(ctx.arena, h, signaled, &manual);

	if (rc != 0 || manual) {
		failf("ws_event_read(%" PRIu32 ") = %d (%s), manual_reset %d", h, rc, strerror(-rc), manual);
		return false;
	}
	return true;
}

void pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int create_events(ws_handle *h, int n)
{
	for (int i = 0; i < n; i++) {
		int rc = ws_event_create(ctx.arena, false, false, &h[i]);

		if (rc != 0) {
			fprintf(stderr, "winsync-bench: ws_event_create: %s\n", strerror(-rc));
			return -1;
		}
	}
	return 0;
}

void expect_poll_timeout(const ws_handle *h, uint32_t count, const char *what)
{
	const struct ws_wait w = { .objects = h, .count = count, .owner = ctx.owner, .deadline = &bench_past };
	uint32_t idx = UINT32_MAX;
	int rc = ws_wait_any(ctx.arena, &w, &idx);

	if (rc != -ETIMEDOUT)
		failf("set-up: ws_wait_any on %s, past deadline = %d (%s), want -ETIMEDOUT",
		      what, rc, strerror(-rc));
}

void close_handle(ws_handle h)
{
	int rc = h ? ws_close(ctx.arena, h) : 0;

	if (rc != 0)
		failf("ws_close(%" PRIu32 ") = %d (%s)", h, rc, strerror(-rc));
}

int setup_events(ws_handle *h, uint32_t n)
{
	char what[48];

	if (h[0])
		return 0;
	if (create_events(h, (int)n) != 0)
		return -1;
	snprintf(what, sizeof(what), "%" PRIu32 " unsignaled events", n);
	expect_poll_timeout(h, n, what);
	return 0;
}

void close_events(ws_handle *h, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		close_handle(h[i]);
		h[i] = 0;
	}
}

bool none_signaled(const ws_handle *h, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		bool sig;

		if (!ws_event_is_signaled(h[i], &sig))
			return false;
		if (sig) {
			failf("%s: object %" PRIu32 " is signaled after the run", current_row, i);
			return false;
		}
	}
	return true;
}
