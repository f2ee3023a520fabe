/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-bench groups (3) and (9): ws_wait_any polling 64 auto-reset
 * events of which only the last (3) or only the first (9) is signaled,
 * against polling 1 event, and the floors of both (floor.c): what a scan of
 * 64 heads, and a compare of 64 handles with a kept list, cost here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench.h"
#include "floor.h"

#include <inttypes.h>

#define MANY WS_MAX_WAIT_OBJECTS

static ws_handle many[MANY];

/* Waits on the last `count` of many[] with entry `want` of them set each time. */
static bool run_ws_any(uint32_t count, uint32_t want, uint64_t n, uint64_t *ns)
{
	const struct ws_wait w = { .objects = &many[MANY - count], .count = count,
				   .owner = ctx.owner, .deadline = &bench_past };
	const ws_handle last = many[MANY - count + want];
	struct check c = { 0 };
	uint64_t t0 = row_now_ns();

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
	*ns = row_now_ns() - t0;

	return check_report(&c, current_row) && none_signaled(many, MANY);
}

static bool run_ws_any64(uint64_t n, uint64_t *ns) { return run_ws_any(MANY, MANY - 1, n, ns); }
static bool run_ws_any64_first(uint64_t n, uint64_t *ns) { return run_ws_any(MANY, 0, n, ns); }
static bool run_ws_any1(uint64_t n, uint64_t *ns) { return run_ws_any(1, 0, n, ns); }

/* (3) and (9) share the events: whichever is set up first creates them. */
static int setup(void)
{
	return setup_events(many, MANY);
}

static void teardown(void)
{
	close_events(many, MANY);
}

static struct row rows[] = {
	{ .who = "winsync", .what = "64 objects, #63 signaled: set + wait_any", .base_iters = 1e5, .run = run_ws_any64 },
	{ .who = "winsync", .what = "1 object: set + wait_any", .base_iters = 2e6, .run = run_ws_any1 },
	{ .who = "floor", .what = "64 words, #63 set: two looks + CAS", .base_iters = 2e5, .run = floor_run_scan_exact },
	{ .who = "floor", .what = "64 words, #63 set: one look + CAS", .base_iters = 2e5, .run = floor_run_scan_once },
};

/* Even the floors' scans over winsync's one object, beside the target (2.0x). */
static void footer(void)
{
	if (!row_measured(&rows[1]))
		return;
	if (row_measured(&rows[2]))
		floor_footer(3, "exact scan of 64 / winsync's 1 object", rows[2].st.median,
			     rows[1].st.median, 2.0);
	if (row_measured(&rows[3]))
		floor_footer(3, "one look at 64 (inexact) / winsync's 1 object", rows[3].st.median,
			     rows[1].st.median, 2.0);
}

struct group group_waitany = {
	.title = "(3) wait_any poll, 64 objects vs 1", .op = "1 op = 1 set + 1 wait",
	.rows = rows, .nrows = 4, .setup = setup, .teardown = teardown, .footer = footer,
};

/* The first ready object ends the scan: the other 63 need only be valid handles. */
static struct row first_rows[] = {
	{ .who = "winsync", .what = "64 objects, #0 signaled: set + wait_any", .base_iters = 5e5, .run = run_ws_any64_first },
	{ .who = "winsync", .what = "1 object: set + wait_any", .base_iters = 2e6, .run = run_ws_any1 },
	{ .who = "floor", .what = "64 handles known valid, #0 set + taken", .base_iters = 2e6, .run = floor_run_first_known },
	{ .who = "floor", .what = "1 word: set + take", .base_iters = 2e6, .run = floor_run_one },
};

/*
 * The second line asks what the 63 more handles cost at the least: the
 * floor's own difference (its known list against its one word) added to
 * winsync's one object.  The target is a ratio to winsync's own one-object
 * row, so that difference, not the floor's absolute time, is what bounds it.
 */
static void first_footer(void)
{
	double ws1 = first_rows[1].st.median;

	if (!row_measured(&first_rows[1]) || !row_measured(&first_rows[2]))
		return;
	floor_footer(9, "64 handles known valid / winsync's 1 object", first_rows[2].st.median, ws1,
		     1.15);
	if (row_measured(&first_rows[3]))
		floor_footer(9, "(winsync's 1 object + the floor's 63 more handles) / winsync's 1 object",
			     ws1 + first_rows[2].st.median - first_rows[3].st.median, ws1, 1.15);
}

struct group group_waitany_first = {
	.title = "(9) wait_any poll, 64 objects with #0 signaled vs 1", .op = "1 op = 1 set + 1 wait",
	.rows = first_rows, .nrows = 4, .setup = setup, .teardown = teardown, .footer = first_footer,
};
