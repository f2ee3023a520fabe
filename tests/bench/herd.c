/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-bench group (4), the herd: 32 threads blocked on one semaphore,
 * then 32 single releases, through winsync (one wake-up per hand-off) and
 * through a futex semaphore that wakes every sleeper on each release (the
 * broadcast design); the wake-ups are counted (sleeps that ended).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench.h"
#include "json.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

#define HERD 32

struct herd_ops {
	int (*wait)(void);
	int (*release)(void);
	uint64_t (*wakeups)(void); /* sleeps so far that ended */
};

static ws_handle herd_sem;           /* winsync */
static _Atomic uint32_t herd_word;   /* broadcast reference: the count */
static _Atomic uint64_t herd_ref_sleeps;

static int ws_herd_wait(void)
{
	struct ws_wait w = { .objects = &herd_sem, .count = 1, .owner = (uint32_t)gettid() };
	uint32_t idx;

	return ws_wait_any(ctx.arena, &w, &idx);
}

static int ws_herd_release(void)
{
	return ws_sem_release(ctx.arena, herd_sem, 1, NULL);
}

static uint64_t ws_herd_wakeups(void)
{
	struct ws_stats st;

	ws_stats_read(&st);
	return st.futex_waits;
}

/* The reference: a count word; a release wakes every sleeper, who all race for the unit. */
static int ref_herd_wait(void)
{
	for (;;) {
		uint32_t c = atomic_load(&herd_word);

		if (c > 0) {
			if (atomic_compare_exchange_weak(&herd_word, &c, c - 1))
				return 0;
			continue;
		}
		syscall(SYS_futex, &herd_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
		atomic_fetch_add(&herd_ref_sleeps, 1);
	}
}

static int ref_herd_release(void)
{
	atomic_fetch_add(&herd_word, 1);
	syscall(SYS_futex, &herd_word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	return 0;
}

static uint64_t ref_herd_wakeups(void)
{
	return atomic_load(&herd_ref_sleeps);
}

static const struct herd_ops ws_herd = { ws_herd_wait, ws_herd_release, ws_herd_wakeups };
static const struct herd_ops ref_herd = { ref_herd_wait, ref_herd_release, ref_herd_wakeups };

struct herd_run {
	const struct herd_ops *ops;
	uint64_t rounds;
	_Atomic uint64_t round;    /* rounds opened by the releaser */
	_Atomic uint32_t arrived;  /* waits started */
	_Atomic uint32_t finished; /* waits returned */
	_Atomic int errors;
};

static void *herd_waiter(void *arg)
{
	struct herd_run *h = arg;

	for (uint64_t r = 0; r < h->rounds; r++) {
		/* One wait per round: nobody takes a unit meant for a waiter of the round before. */
		while (atomic_load(&h->round) <= r)
			sched_yield();
		atomic_fetch_add(&h->arrived, 1);
		if (h->ops->wait() != 0)
			atomic_fetch_add(&h->errors, 1);
		atomic_fetch_add(&h->finished, 1);
	}
	return NULL;
}

/* Until every waiter of this round has started its wait and had time to fall asleep. */
static void herd_settle(struct herd_run *h, uint32_t want)
{
	while (atomic_load(&h->arrived) < want)
		sched_yield();
	usleep(2000);
}

static uint64_t herd_last_wakeups, herd_last_ops;

/* One op = one single release and the wake-up it should cause; time spent releasing. */
static bool run_herd(const struct herd_ops *ops, uint64_t n, uint64_t *ns)
{
	struct herd_run h = { .ops = ops, .rounds = (n + HERD - 1) / HERD };
	pthread_t t[HERD];
	uint64_t spent = 0, before = ops->wakeups();

	for (int i = 0; i < HERD; i++)
		pthread_create(&t[i], NULL, herd_waiter, &h);
	for (uint64_t r = 0; r < h.rounds; r++) {
		atomic_store(&h.round, r + 1);
		herd_settle(&h, (uint32_t)((r + 1) * HERD));
		uint64_t t0 = bench_now_ns();

		for (int i = 0; i < HERD; i++)
			if (ops->release() != 0)
				atomic_fetch_add(&h.errors, 1);
		while (atomic_load(&h.finished) < (r + 1) * HERD)
			sched_yield();
		spent += bench_now_ns() - t0;
	}
	for (int i = 0; i < HERD; i++)
		pthread_join(t[i], NULL);
	*ns = spent * n / (h.rounds * HERD);
	herd_last_wakeups = ops->wakeups() - before;
	herd_last_ops = h.rounds * HERD;
	if (atomic_load(&h.errors)) {
		failf("%s: %d waits or releases failed", current_row, atomic_load(&h.errors));
		return false;
	}
	return true;
}

static double herd_wakeups_per_op[2];

static bool run_ws_herd(uint64_t n, uint64_t *ns)
{
	bool ok = run_herd(&ws_herd, n, ns);

	herd_wakeups_per_op[0] = (double)herd_last_wakeups / (double)herd_last_ops;
	return ok;
}

static bool run_ref_herd(uint64_t n, uint64_t *ns)
{
	bool ok = run_herd(&ref_herd, n, ns);

	herd_wakeups_per_op[1] = (double)herd_last_wakeups / (double)herd_last_ops;
	return ok;
}

static struct row rows[] = {
	{ .who = "winsync", .what = "32 waiters, 32 single sem releases", .base_iters = 3200, .run = run_ws_herd },
	{ .who = "futex", .what = "the same, each release wakes all", .base_iters = 3200, .run = run_ref_herd },
};

static void footer(void)
{
	printf("    wake-ups per release (sleeps that ended, last run): winsync %.2f, "
	       "broadcast %.2f (N waiters: 1 vs (N+1)/2 = %.1f)\n",
	       herd_wakeups_per_op[0], herd_wakeups_per_op[1], (HERD + 1) / 2.0);
	for (int k = 0; k < 2; k++) {
		json_row_begin(4, rows[k].who, "wake-ups per release (sleeps that ended, last run)");
		json_str("unit", "wake-ups/release");
		json_num("value", herd_wakeups_per_op[k]);
		json_num("waiters", HERD);
		json_row_end();
	}
}

static int setup(void)
{
	int rc = ws_sem_create(ctx.arena, 0, HERD, &herd_sem);

	if (rc != 0) {
		fprintf(stderr, "winsync-bench: ws_sem_create: %s\n", strerror(-rc));
		return -1;
	}
	return 0;
}

static void teardown(void)
{
	close_handle(herd_sem);
}

struct group group_herd = {
	.title = "(4) the herd: one wake-up per hand-off", .op = "1 op = 1 release",
	.rows = rows, .nrows = 2, .setup = setup, .teardown = teardown, .footer = footer,
};
