/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-bench group (3): ws_wait_any polling 64 auto-reset events of
 * which only the last is signaled, against polling 1 event.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench.h"

#include <inttypes.h>

#define MANY WS_MAX_WAIT_OBJECTS

static ws_handle many[MANY];

/* Waits on the last `count` of many[]; only many[MANY - 1] is ever set. */
static bool run_ws_any(uint32_t count, uint64_t n, uint64_t *ns)
{
	const struct ws_wait w = { .objects = &many[MANY - count], .count = count,
				   .owner = ctx.owner, .deadline = &bench_past };
	const ws_handle last = many[MANY - 1];
	const uint32_t want = count - 1;
	struct check c = { 0 };
	uint64_t t0 = bench_now_ns();

	for (uint64_t i = 0; i < n; i++) {
		bool was = true;
		uint32_t idx = UINT32_MAX;
		int rs = ws_event_set(ctx.arena, last, &was);
		int rw = ws_wait_any(ctx.arena, &w, &idx);

		if (unlikely(rs != 0 || was || rw != 0 || idx != want))
			check_fail(&c, "iteration %" PRIu64 ": ws_event_set = %d (was_signaled %d), "
				   "ws_wait_any = %d index %" PRIu32 " (want 0, 0, 0, %" PRIu32 ")",
				   i, rs, was, rw, idx, want);
	}
	*ns = bench_now_ns() - t0;

	bool ok = check_report(&c, current_row);
	for (uint32_t i = 0; ok && i < MANY; i++) {
		bool sig;

		if (!ws_event_is_signaled(many[i], &sig))
			ok = false;
		else if (sig) {
			failf("%s: object %" PRIu32 " is signaled after the run", current_row, i);
			ok = false;
		}
	}
	return ok;
}

static bool run_ws_any64(uint64_t n, uint64_t *ns) { return run_ws_any(MANY, n, ns); }
static bool run_ws_any1(uint64_t n, uint64_t *ns) { return run_ws_any(1, n, ns); }

static int setup(void)
{
	if (create_events(many, MANY) != 0)
		return -1;
	expect_poll_timeout(many, MANY, "64 unsignaled events");
	return 0;
}

static void teardown(void)
{
	for (int i = 0; i < MANY; i++)
		close_handle(many[i]);
}

static struct row rows[] = {
	{ .who = "winsync", .what = "64 objects, #63 signaled: set + wait_any", .base_iters = 1e5, .run = run_ws_any64 },
	{ .who = "winsync", .what = "1 object: set + wait_any", .base_iters = 2e6, .run = run_ws_any1 },
};

struct group group_waitany = {
	.title = "(3) wait_any poll, 64 objects vs 1", .op = "1 op = 1 set + 1 wait",
	.rows = rows, .nrows = 2, .setup = setup, .teardown = teardown,
};
