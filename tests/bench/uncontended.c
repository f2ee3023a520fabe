/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-bench group (1), uncontended: ws_event_set + ws_wait_any with a
 * past deadline on one auto-reset event (each pair signals and consumes
 * it), against a pthread mutex lock + unlock pair and the floor of an
 * exact set + take (floor.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench.h"
#include "floor.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static ws_handle ev;
static pthread_mutex_t mutex;

static bool run_ws_uncontended(uint64_t n, uint64_t *ns)
{
	const struct ws_wait w = { .objects = &ev, .count = 1, .owner = ctx.owner, .deadline = &bench_past };
	struct check c = { 0 };
	bool sig;
	uint64_t t0 = row_now_ns();

	for (uint64_t i = 0; i < n; i++) {
		bool was = true;
		uint32_t idx = UINT32_MAX;
		int rs = ws_event_set(ctx.arena, ev, &was);
		int rw = ws_wait_any(ctx.arena, &w, &idx);

		if (unlikely(rs != 0 || was || rw != 0 || idx != 0))
			check_fail(&c, "iteration %" PRIu64 ": ws_event_set = %d (was_signaled %d), "
				   "ws_wait_any = %d index %" PRIu32 " (want 0, 0, 0, 0)", i, rs, was, rw, idx);
	}
	*ns = row_now_ns() - t0;
	if (!check_report(&c, current_row) || !ws_event_is_signaled(ev, &sig))
		return false;
	if (sig) {
		failf("%s: the event is still signaled after the run", current_row);
		return false;
	}
	return true;
}

static bool run_pthread_mutex(uint64_t n, uint64_t *ns)
{
	struct check c = { 0 };
	uint64_t t0 = row_now_ns();

	for (uint64_t i = 0; i < n; i++) {
		int rl = pthread_mutex_lock(&mutex);
		int ru = pthread_mutex_unlock(&mutex);

		if (unlikely(rl != 0 || ru != 0))
			check_fail(&c, "iteration %" PRIu64 ": lock = %d, unlock = %d", i, rl, ru);
	}
	*ns = row_now_ns() - t0;
	return check_report(&c, current_row);
}

static int setup(void)
{
	int rc;

	if (create_events(&ev, 1) != 0)
		return -1;
	expect_poll_timeout(&ev, 1, "an unsignaled event");
	rc = pthread_mutex_init(&mutex, NULL);
	if (rc != 0) {
		fprintf(stderr, "winsync-bench: pthread_mutex_init: %s\n", strerror(rc));
		return -1;
	}
	return 0;
}

static void teardown(void)
{
	close_handle(ev);
	pthread_mutex_destroy(&mutex);
}

static struct row rows[] = {
	{ .who = "winsync", .what = "event set + wait_any(1, past deadline)", .base_iters = 2e6, .run = run_ws_uncontended },
	{ .who = "pthread", .what = "mutex lock + unlock", .base_iters = 2e7, .run = run_pthread_mutex },
	{ .who = "floor", .what = "set + take: load, check, CAS, twice", .base_iters = 2e7, .run = floor_run_one },
};

/* The target (1.25x pthread) beside what the floor row costs. */
static void footer(void)
{
	if (row_measured(&rows[1]) && row_measured(&rows[2]))
		floor_footer(1, "set + take / pthread lock + unlock", rows[2].st.median,
			     rows[1].st.median, 1.25);
}

struct group group_uncontended = {
	.title = "(1) uncontended signal + consume", .op = "1 op = 1 pair",
	.rows = rows, .nrows = 3, .setup = setup, .teardown = teardown, .footer = footer,
};
