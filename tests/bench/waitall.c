/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-bench groups (10) and (11): ws_wait_all over 8 and 64
 * uncontended auto-reset events, all signaled, against the same events
 * taken by 8 and 64 single waits.  Both sides set every event first, so
 * the rows differ only in the waits.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench.h"

#include <inttypes.h>

#define MANY WS_MAX_WAIT_OBJECTS

static ws_handle ev[MANY];

static bool set_all(uint32_t count, struct check *c, uint64_t i)
{
	for (uint32_t k = 0; k < count; k++) {
		bool was = true;
		int rs = ws_event_set(ctx.arena, ev[k], &was);

		if (unlikely(rs != 0 || was)) {
			check_fail(c, "iteration %" PRIu64 ": ws_event_set(#%" PRIu32 ") = %d "
				   "(was_signaled %d)", i, k, rs, was);
			return false;
		}
	}
	return true;
}

static bool run_all(uint32_t count, uint64_t n, uint64_t *ns)
{
	const struct ws_wait w = { .objects = ev, .count = count, .owner = ctx.owner,
				   .deadline = &bench_past };
	struct check c = { 0 };
	uint64_t t0 = row_now_ns();

	for (uint64_t i = 0; i < n; i++) {
		uint32_t idx = UINT32_MAX;
		int rw;

		if (!set_all(count, &c, i))
			break;
		rw = ws_wait_all(ctx.arena, &w, &idx);
		if (unlikely(rw != 0 || idx != 0)) {
			check_fail(&c, "iteration %" PRIu64 ": ws_wait_all = %d index %" PRIu32
				   " (want 0, 0)", i, rw, idx);
			break;
		}
	}
	*ns = row_now_ns() - t0;
	return check_report(&c, current_row) && none_signaled(ev, MANY);
}

static bool run_singles(uint32_t count, uint64_t n, uint64_t *ns)
{
	struct check c = { 0 };
	uint64_t t0 = row_now_ns();

	for (uint64_t i = 0; i < n; i++) {
		if (!set_all(count, &c, i))
			break;
		for (uint32_t k = 0; k < count; k++) {
			const struct ws_wait w = { .objects = &ev[k], .count = 1, .owner = ctx.owner,
						   .deadline = &bench_past };
			uint32_t idx = UINT32_MAX;
			int rw = ws_wait_any(ctx.arena, &w, &idx);

			if (unlikely(rw != 0 || idx != 0))
				check_fail(&c, "iteration %" PRIu64 ": ws_wait_any(#%" PRIu32 ") = %d "
					   "index %" PRIu32 " (want 0, 0)", i, k, rw, idx);
		}
	}
	*ns = row_now_ns() - t0;
	return check_report(&c, current_row) && none_signaled(ev, MANY);
}

static bool run_all8(uint64_t n, uint64_t *ns) { return run_all(8, n, ns); }
static bool run_singles8(uint64_t n, uint64_t *ns) { return run_singles(8, n, ns); }
static bool run_all64(uint64_t n, uint64_t *ns) { return run_all(MANY, n, ns); }
static bool run_singles64(uint64_t n, uint64_t *ns) { return run_singles(MANY, n, ns); }

/* Both groups share the events: whichever is set up first creates them. */
static int setup(void)
{
	return setup_events(ev, MANY);
}

static void teardown(void)
{
	close_events(ev, MANY);
}

static struct row rows8[] = {
	{ .who = "winsync", .what = "set 8 events + wait_all(8)", .base_iters = 2e5, .run = run_all8 },
	{ .who = "winsync", .what = "set 8 events + 8 single waits", .base_iters = 2e5, .run = run_singles8 },
};

static struct row rows64[] = {
	{ .who = "winsync", .what = "set 64 events + wait_all(64)", .base_iters = 3e4, .run = run_all64 },
	{ .who = "winsync", .what = "set 64 events + 64 single waits", .base_iters = 3e4, .run = run_singles64 },
};

struct group group_waitall8 = {
	.title = "(10) wait_all, 8 objects vs 8 single waits", .op = "1 op = 8 sets + the waits",
	.rows = rows8, .nrows = 2, .setup = setup, .teardown = teardown,
};

struct group group_waitall64 = {
	.title = "(11) wait_all, 64 objects vs 64 single waits", .op = "1 op = 64 sets + the waits",
	.rows = rows64, .nrows = 2, .setup = setup, .teardown = teardown,
};
