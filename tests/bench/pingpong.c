/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-bench group (2), ping-pong between two threads: A sets E1 and
 * waits E2, B waits E1 and sets E2, through two winsync auto-reset events,
 * against a raw futex ping-pong (two u32 words, FUTEX_WAKE/FUTEX_WAIT
 * private) and against eventfd + poll + read (the esync mechanism).  The
 * floor row is the raw ping-pong as winsync must block: shared futex words
 * (a waiter's word is woken by the kernel when a giver dies: txn.h),
 * waited on with futex_waitv (every wait blocks in futex_waitv).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench.h"
#include "floor.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

static ws_handle ping, pong;              /* winsync */
static _Atomic uint32_t fword[2];         /* futex reference, and the floor's words */
static int efd[2] = { -1, -1 };           /* eventfd reference */

/*
 * One mechanism = a pair of auto-reset signals.  signal(k) makes signal k
 * available to one waiter; wait(k) blocks until it is available and takes
 * it.  Both return 0, or a negative errno value / positive code described by
 * the check struct.
 */
struct pp_ops {
	int (*signal)(int k);
	int (*wait)(int k, uint32_t owner);
	void (*clear)(void);        /* (between runs) nothing should be left over */
};

/* winsync: two auto-reset events, wait_any on one object, no deadline. */
static int ws_pp_signal(int k)
{
	return ws_event_set(ctx.arena, k ? pong : ping, NULL);
}

static int ws_pp_wait(int k, uint32_t owner)
{
	const ws_handle *h = k ? &pong : &ping;
	const struct ws_wait w = { .objects = h, .count = 1, .owner = owner };
	uint32_t idx = UINT32_MAX;
	int rc = ws_wait_any(ctx.arena, &w, &idx);

	if (rc == 0 && idx != 0)
		return 1000 + (int)(idx > 1000 ? 1000 : idx);  /* wrong index */
	return rc;
}

static void ws_pp_clear(void)
{
	bool s0 = false, s1 = false;

	if (ws_event_is_signaled(ping, &s0) && ws_event_is_signaled(pong, &s1) && (s0 || s1))
		failf("%s: an event is still signaled after the run (E1 %d, E2 %d)", current_row, s0, s1);
}

/* Raw futex: a u32 word per direction; 1 = signaled.  The waker always wakes. */
static long sys_futex(_Atomic uint32_t *word, int op, uint32_t val)
{
	return syscall(SYS_futex, (uint32_t *)word, op, val, NULL, NULL, 0);
}

/* Takes word k's signal (1 -> 0): false if it has none. */
static bool take_fword(int k)
{
	uint32_t one = 1;

	return atomic_compare_exchange_strong_explicit(&fword[k], &one, 0, memory_order_acquire,
						       memory_order_relaxed);
}

static int futex_pp_signal(int k)
{
	atomic_store_explicit(&fword[k], 1, memory_order_release);
	return sys_futex(&fword[k], FUTEX_WAKE_PRIVATE, 1) < 0 ? -errno : 0;
}

static int futex_pp_wait(int k, uint32_t owner)
{
	(void)owner;
	for (;;) {
		if (take_fword(k))
			return 0;
		if (sys_futex(&fword[k], FUTEX_WAIT_PRIVATE, 0) < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
	}
}

static void futex_pp_clear(void)
{
	uint32_t w0 = atomic_load(&fword[0]), w1 = atomic_load(&fword[1]);

	if (w0 || w1)
		failf("%s: a futex word is still set after the run (%" PRIu32 ", %" PRIu32 ")", current_row, w0, w1);
	atomic_store(&fword[0], 0);
	atomic_store(&fword[1], 0);
}

/* The floor: the same words, shared (not private), waited on with futex_waitv. */
#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

static int floor_pp_signal(int k)
{
	atomic_store_explicit(&fword[k], 1, memory_order_release);
	return sys_futex(&fword[k], FUTEX_WAKE, 1) < 0 ? -errno : 0;
}

static int floor_pp_wait(int k, uint32_t owner)
{
	struct futex_waitv w = { .val = 0, .uaddr = (uintptr_t)&fword[k], .flags = FUTEX_32 };

	(void)owner;
	for (;;) {
		if (take_fword(k))
			return 0;
		if (syscall(SYS_futex_waitv, &w, 1, 0, NULL, CLOCK_MONOTONIC) < 0 &&
		    errno != EAGAIN && errno != EINTR)
			return -errno;
	}
}

/* eventfd (non-blocking, as esync): write 1; the other side polls, then reads. */
static int efd_pp_signal(int k)
{
	uint64_t one = 1;

	return write(efd[k], &one, sizeof(one)) == (ssize_t)sizeof(one) ? 0 : -errno;
}

static int efd_pp_wait(int k, uint32_t owner)
{
	(void)owner;
	for (;;) {
		struct pollfd p = { .fd = efd[k], .events = POLLIN };
		uint64_t v = 0;
		int r = poll(&p, 1, -1);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (read(efd[k], &v, sizeof(v)) == (ssize_t)sizeof(v))
			return v == 1 ? 0 : 2000;  /* strict alternation: exactly one signal */
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
	}
}

static void efd_pp_clear(void)
{
	for (int k = 0; k < 2; k++) {
		uint64_t v;

		if (read(efd[k], &v, sizeof(v)) == (ssize_t)sizeof(v))
			failf("%s: eventfd %d still holds %" PRIu64 " after the run", current_row, k, v);
	}
}

static const struct pp_ops ws_pp = { ws_pp_signal, ws_pp_wait, ws_pp_clear };
static const struct pp_ops futex_pp = { futex_pp_signal, futex_pp_wait, futex_pp_clear };
static const struct pp_ops efd_pp = { efd_pp_signal, efd_pp_wait, efd_pp_clear };
static const struct pp_ops floor_pp = { floor_pp_signal, floor_pp_wait, futex_pp_clear };

struct pp_run {
	const struct pp_ops *ops;
	uint64_t n;
	pthread_barrier_t start;
	atomic_bool abort;       /* a side failed: the other stops at its next wake-up */
	uint64_t rounds;         /* completed by B */
	struct check c;          /* B's failures */
};

static const char *code_str(int rc)
{
	if (rc >= 2000)
		return "eventfd held more than one signal";
	if (rc >= 1000)
		return "wrong wait index";
	return rc < 0 ? strerror(-rc) : "success";
}

/* Thread B: wait E1, set E2. */
static void *pp_thread_b(void *arg)
{
	struct pp_run *p = arg;
	const struct pp_ops *ops = p->ops;
	uint32_t owner = (uint32_t)gettid();

	pin_self(ctx.cpu_b);
	pthread_barrier_wait(&p->start);
	for (uint64_t i = 0; i < p->n; i++) {
		int rw = ops->wait(0, owner);
		int rs = rw == 0 ? ops->signal(1) : 0;

		if (unlikely(rw != 0 || rs != 0)) {
			check_fail(&p->c, "thread B, round %" PRIu64 ": wait = %d (%s), signal = %d (%s)",
				   i, rw, code_str(rw), rs, code_str(rs));
			atomic_store(&p->abort, true);
			ops->signal(1);  /* let A see the abort rather than block forever */
			break;
		}
		if (unlikely(atomic_load_explicit(&p->abort, memory_order_relaxed)))
			break;
		p->rounds++;
	}
	return NULL;
}

/* Thread A (the caller): set E1, wait E2. */
static bool run_pingpong(const struct pp_ops *ops, uint64_t n, uint64_t *ns)
{
	struct pp_run p = { .ops = ops, .n = n };
	struct check c = { 0 };
	uint64_t rounds = 0, t0;
	pthread_t b;
	int rc;

	pthread_barrier_init(&p.start, NULL, 2);
	rc = pthread_create(&b, NULL, pp_thread_b, &p);
	if (rc != 0) {
		failf("%s: pthread_create: %s", current_row, strerror(rc));
		pthread_barrier_destroy(&p.start);
		return false;
	}
	pthread_barrier_wait(&p.start);
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		int rs = ops->signal(0);
		int rw = rs == 0 ? ops->wait(1, ctx.owner) : 0;

		if (unlikely(rs != 0 || rw != 0)) {
			check_fail(&c, "thread A, round %" PRIu64 ": signal = %d (%s), wait = %d (%s)",
				   i, rs, code_str(rs), rw, code_str(rw));
			atomic_store(&p.abort, true);
			ops->signal(0);  /* let B see the abort rather than block forever */
			break;
		}
		if (unlikely(atomic_load_explicit(&p.abort, memory_order_relaxed)))
			break;
		rounds++;
	}
	*ns = bench_now_ns() - t0;
	pthread_join(b, NULL);
	pthread_barrier_destroy(&p.start);

	bool ok_a = check_report(&c, current_row);
	bool ok_b = check_report(&p.c, current_row);
	bool ok = ok_a && ok_b;
	if (rounds != n || p.rounds != n) {
		failf("%s: %" PRIu64 " rounds wanted; thread A completed %" PRIu64 ", thread B %" PRIu64,
		      current_row, n, rounds, p.rounds);
		ok = false;
	}
	if (ok) {
		int before = failures;

		ops->clear();
		ok = failures == before;
	}
	return ok;
}

static bool run_ws_pingpong(uint64_t n, uint64_t *ns) { return run_pingpong(&ws_pp, n, ns); }
static bool run_futex_pingpong(uint64_t n, uint64_t *ns) { return run_pingpong(&futex_pp, n, ns); }

/* The same with WS_ARENA_SPIN on the arena pointer both threads use. */
static bool run_ws_spin_pingpong(uint64_t n, uint64_t *ns)
{
	bool ok;

	if (ws_arena_set_flags(ctx.arena, WS_ARENA_SPIN)) {
		failf("%s: ws_arena_set_flags(WS_ARENA_SPIN) failed", current_row);
		return false;
	}
	ok = run_pingpong(&ws_pp, n, ns);
	if (ws_arena_set_flags(ctx.arena, 0)) {
		failf("%s: ws_arena_set_flags(0) failed", current_row);
		ok = false;
	}
	return ok;
}
static bool run_efd_pingpong(uint64_t n, uint64_t *ns) { return run_pingpong(&efd_pp, n, ns); }
static bool run_floor_pingpong(uint64_t n, uint64_t *ns) { return run_pingpong(&floor_pp, n, ns); }

static int setup(void)
{
	if (create_events(&ping, 1) != 0 || create_events(&pong, 1) != 0)
		return -1;
	for (int k = 0; k < 2; k++) {
		efd[k] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (efd[k] < 0) {
			fprintf(stderr, "winsync-bench: eventfd: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void teardown(void)
{
	close_handle(ping);
	close_handle(pong);
	for (int k = 0; k < 2; k++)
		if (efd[k] >= 0)
			close(efd[k]);
}

static struct row rows[];

/*
 * Spinning against raw futex: its wall and CPU time over futex's; and the
 * floor's own ratio to futex beside the target (1.10x).
 */
static void footer(void)
{
	const struct row *spin = &rows[1], *futex = &rows[2], *floor = &rows[4];

	if (row_measured(spin) && row_measured(futex))
		printf("    WS_ARENA_SPIN over futex: %.2fx the time, %.2fx the CPU time\n",
		       spin->st.median / futex->st.median, spin->cpu.median / futex->cpu.median);
	if (row_measured(floor) && row_measured(futex))
		floor_footer(2, "shared words + futex_waitv / private futex", floor->st.median,
			     futex->st.median, 1.10);
}

static struct row rows[] = {
	{ .who = "winsync", .what = "2 auto-reset events, set + wait_any", .base_iters = 1e4, .run = run_ws_pingpong },
	{ .who = "winsync", .what = "the same, WS_ARENA_SPIN", .base_iters = 1e4, .run = run_ws_spin_pingpong },
	{ .who = "futex", .what = "2 words, FUTEX_WAKE + FUTEX_WAIT", .base_iters = 1e4, .run = run_futex_pingpong },
	{ .who = "eventfd", .what = "2 eventfds, write + poll + read (esync)", .base_iters = 1e4, .run = run_efd_pingpong },
	{ .who = "floor", .what = "2 shared words, FUTEX_WAKE + futex_waitv", .base_iters = 1e4, .run = run_floor_pingpong },
};

struct group group_pingpong = {
	.title = "(2) ping-pong between two threads", .op = "1 op = 1 round trip",
	.rows = rows, .nrows = 5, .setup = setup, .teardown = teardown, .cpu_time = true,
	.footer = footer,
	.noisy_hint = "the threads sometimes shared one CPU (a cheap switch), sometimes ran on two\n"
		      "      (a cross-CPU wake-up, slow on virtual CPUs); compare --pin and taskset -c 0",
};
