/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-bench groups (7) and (8), a large arena: two arenas of the
 * core's maximum capacity (WS_MAX_CAPACITY, as a Wine prefix's), one with
 * 1M live events and one with 1k, side by side:
 *   (7) an event created and closed (the slot allocator with a long table);
 *   (8) set + wait_any(past deadline) on one of the live events, a different
 *       one each time, spread over all of them (what the caches and the TLB
 *       see when a program waits on objects all over a large arena).
 * The arenas are sparse: only the slots used cost memory (64 B an event).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench.h"
#include "json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LARGE_LIVE (1u << 20)
#define SMALL_LIVE 1024u
/* Odd, so that i * STRIDE visits every live event of a power-of-two count. */
#define STRIDE     40503u

struct live {
	ws_arena *arena;
	ws_handle *h;
	uint32_t n;
	double fill_ns;          /* the creation of the n events */
};

static struct live large, small;

static int fill(struct live *l, uint32_t n)
{
	uint64_t t0;
	int rc = ws_arena_create(NULL, WS_MAX_CAPACITY, &l->arena);

	if (rc != 0) {
		fprintf(stderr, "winsync-bench: ws_arena_create(%u): %s\n", WS_MAX_CAPACITY, strerror(-rc));
		return -1;
	}
	l->h = malloc(n * sizeof(*l->h));
	if (!l->h) {
		fprintf(stderr, "winsync-bench: out of memory for %u handles\n", n);
		return -1;
	}
	t0 = bench_now_ns();
	for (l->n = 0; l->n < n; l->n++) {
		rc = ws_event_create(l->arena, false, false, &l->h[l->n]);
		if (rc != 0) {
			fprintf(stderr, "winsync-bench: event %u of %u: ws_event_create: %s\n", l->n, n,
				strerror(-rc));
			return -1;
		}
	}
	l->fill_ns = (double)(bench_now_ns() - t0);
	return 0;
}

static void drop(struct live *l)
{
	if (l->arena)
		ws_arena_close(l->arena);
	free(l->h);
	memset(l, 0, sizeof(*l));
}

static bool run_create_close(struct live *l, uint64_t n, uint64_t *ns)
{
	struct check c = { 0 };
	uint64_t t0 = row_now_ns();

	for (uint64_t i = 0; i < n; i++) {
		ws_handle h = 0;
		int rc = ws_event_create(l->arena, false, false, &h);
		int rx = rc == 0 ? ws_close(l->arena, h) : 0;

		if (unlikely(rc != 0 || rx != 0 || h == 0))
			check_fail(&c, "iteration %" PRIu64 ": ws_event_create = %d (handle %" PRIu32
				   "), ws_close = %d", i, rc, h, rx);
	}
	*ns = row_now_ns() - t0;
	return check_report(&c, current_row);
}

static bool run_set_wait(struct live *l, uint64_t n, uint64_t *ns)
{
	struct check c = { 0 };
	uint32_t k = 0;
	uint64_t t0 = row_now_ns();

	for (uint64_t i = 0; i < n; i++) {
		struct ws_wait w = { .objects = &l->h[k], .count = 1, .owner = ctx.owner,
				     .deadline = &bench_past };
		uint32_t idx = UINT32_MAX;
		bool was = true;
		int rs = ws_event_set(l->arena, l->h[k], &was);
		int rw = ws_wait_any(l->arena, &w, &idx);

		if (unlikely(rs != 0 || was || rw != 0 || idx != 0))
			check_fail(&c, "iteration %" PRIu64 ", event %" PRIu32 ": ws_event_set = %d "
				   "(was_signaled %d), ws_wait_any = %d index %" PRIu32, i, k, rs, was,
				   rw, idx);
		k = (k + STRIDE) & (l->n - 1);
	}
	*ns = row_now_ns() - t0;
	return check_report(&c, current_row);
}

static bool run_cc_large(uint64_t n, uint64_t *ns) { return run_create_close(&large, n, ns); }
static bool run_cc_small(uint64_t n, uint64_t *ns) { return run_create_close(&small, n, ns); }
static bool run_sw_large(uint64_t n, uint64_t *ns) { return run_set_wait(&large, n, ns); }
static bool run_sw_small(uint64_t n, uint64_t *ns) { return run_set_wait(&small, n, ns); }

/* Both groups share the arenas: whichever is set up first fills them. */
static int setup(void)
{
	if (large.arena)
		return 0;
	if (fill(&large, LARGE_LIVE) != 0 || fill(&small, SMALL_LIVE) != 0)
		return -1;
	return 0;
}

static void teardown(void)
{
	drop(&large);
	drop(&small);
}

static void footer(void)
{
	const struct live *l[2] = { &large, &small };

	if (!large.n)
		return;
	printf("    filling the arenas: %u events in %.0f ms (%.0f ns each), %u in %.2f ms\n",
	       large.n, large.fill_ns / 1e6, large.fill_ns / large.n, small.n, small.fill_ns / 1e6);
	for (int k = 0; k < 2; k++) {
		json_row_begin(8, "winsync", "filling the arena: events created one after another");
		json_str("unit", "ns/event");
		json_num("events", l[k]->n);
		json_num("value", l[k]->fill_ns / l[k]->n);
		json_row_end();
	}
}

static struct row cc_rows[] = {
	{ .who = "winsync", .what = "event create + close, 1M live", .base_iters = 2e5, .run = run_cc_large },
	{ .who = "winsync", .what = "event create + close, 1k live", .base_iters = 2e5, .run = run_cc_small },
};

static struct row sw_rows[] = {
	{ .who = "winsync", .what = "set + wait_any, spread over 1M live", .base_iters = 1e6, .run = run_sw_large },
	{ .who = "winsync", .what = "set + wait_any, spread over 1k live", .base_iters = 1e6, .run = run_sw_small },
};

struct group group_large_create = {
	.title = "(7) a maximum-capacity arena: create + close, 1M live vs 1k", .op = "1 op = 1 pair",
	.rows = cc_rows, .nrows = 2, .setup = setup, .teardown = teardown,
};

struct group group_large_wait = {
	.title = "(8) a maximum-capacity arena: wait latency, 1M live vs 1k", .op = "1 op = 1 set + 1 wait",
	.rows = sw_rows, .nrows = 2, .setup = setup, .teardown = teardown, .footer = footer,
};
