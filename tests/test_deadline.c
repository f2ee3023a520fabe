/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Deadlines: absolute CLOCK_MONOTONIC, CLOCK_REALTIME with the flag, never
 * early, past deadlines poll, a timeout acquires nothing, signals never end a
 * wait early. */
#define _GNU_SOURCE
#include "harness.h"
#include "robust.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * How late a timed-out wait may return: tens of milliseconds.  A wait
 * sleeps to its deadline on the deadline's own clock; anything near a
 * second means it slept in slices (the realtime bug of core v2).
 */
#define LATE_MEDIAN_MS 30L
#define LATE_MAX_MS    (250L * slow_factor()) /* sanitizers are slower */

static _Atomic int signals_seen;

static void noop_handler(int sig)
{
	(void)sig;
	atomic_fetch_add(&signals_seen, 1);
}

static void install_handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = noop_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: the system call sees EINTR */
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	sa.sa_flags = SA_RESTART;
	ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0);
}

START_TEST(monotonic_timeout_not_early)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	for (int all = 0; all < 2; all++) {
		struct timespec t0 = ts_now(CLOCK_MONOTONIC);
		struct timespec dl = ts_add_ms(t0, SHORT_MS);
		struct ws_wait w = { .objects = &e, .count = 1, .owner = 1, .deadline = &dl };
		uint32_t idx;
		int rc = all ? ws_wait_all(a, &w, &idx) : ws_wait_any(a, &w, &idx);
		struct timespec t1 = ts_now(CLOCK_MONOTONIC);
		CK_RC(rc, -ETIMEDOUT);
		ck_assert_msg(ts_cmp(t1, dl) >= 0, "returned %ld ms before the deadline",
			      ts_diff_ms(dl, t1));
		ck_assert_msg(ts_diff_ms(t1, dl) <= LATE_MAX_MS, "returned %ld ms late",
			      ts_diff_ms(t1, dl));
		(void)t0;
	}
	ws_arena_close(a);
}
END_TEST

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/*
 * Lateness on both clocks, wait_any and wait_all, past, near and far
 * deadlines (the far one past the 1 s a sliced wait would take): never
 * early, median and worst lateness in tens of milliseconds.
 */
START_TEST(lateness_both_clocks)
{
	static const long ahead_ms[] = { -50, 0, 20, 120, 1300 };
	enum { REPS = 3 };
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	ws_handle s = mk_sem(a, 0, 1);
	ws_handle both[2] = { e, s };

	for (int rt = 0; rt < 2; rt++) {
		clockid_t clk = rt ? CLOCK_REALTIME : CLOCK_MONOTONIC;

		for (int all = 0; all < 2; all++) {
			long late[sizeof ahead_ms / sizeof ahead_ms[0] * REPS];
			int n = 0;

			for (size_t k = 0; k < sizeof ahead_ms / sizeof ahead_ms[0]; k++) {
				for (int rep = 0; rep < REPS; rep++) {
					struct timespec dl = ts_add_ms(ts_now(clk), ahead_ms[k]);
					struct ws_wait w = { .objects = both, .count = 2, .owner = 1,
							     .flags = rt ? WS_WAIT_REALTIME : 0,
							     .deadline = &dl };
					uint32_t idx;
					int rc = all ? ws_wait_all(a, &w, &idx)
						     : ws_wait_any(a, &w, &idx);
					struct timespec now = ts_now(clk);

					CK_RC(rc, -ETIMEDOUT);
					ck_assert_msg(ts_cmp(now, dl) >= 0,
						      "%s %s, %ld ms ahead: returned early",
						      rt ? "realtime" : "monotonic",
						      all ? "wait_all" : "wait_any", ahead_ms[k]);
					late[n] = ts_diff_ms(now, dl);
					/* A past deadline only polls: its lateness is its age. */
					if (ahead_ms[k] < 0)
						late[n] += ahead_ms[k];
					n++;
				}
			}
			qsort(late, (size_t)n, sizeof late[0], cmp_long);
			printf("deadline: %s %s: lateness median %ld ms, worst %ld ms (%d waits)\n",
			       rt ? "CLOCK_REALTIME " : "CLOCK_MONOTONIC", all ? "wait_all" : "wait_any",
			       late[n / 2], late[n - 1], n);
			ck_assert_msg(late[n / 2] <= LATE_MEDIAN_MS && late[n - 1] <= LATE_MAX_MS,
				      "%s %s: lateness median %ld ms, worst %ld ms",
				      rt ? "realtime" : "monotonic", all ? "wait_all" : "wait_any",
				      late[n / 2], late[n - 1]);
		}
	}
	ws_arena_close(a);
}
END_TEST

/* Many short deadlines, with odd nanoseconds: never before the deadline. */
START_TEST(short_deadlines_precise)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, true, false);
	for (int i = 0; i < 20; i++) {
		clockid_t clk = (i & 1) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
		struct timespec dl = ts_now(clk);
		dl.tv_nsec += 3000000 + 777 * i;
		if (dl.tv_nsec >= 1000000000) {
			dl.tv_nsec -= 1000000000;
			dl.tv_sec++;
		}
		struct ws_wait w = { .objects = &e, .count = 1, .owner = 1,
				     .flags = (i & 1) ? WS_WAIT_REALTIME : 0, .deadline = &dl };
		uint32_t idx;
		int rc = (i & 2) ? ws_wait_all(a, &w, &idx) : ws_wait_any(a, &w, &idx);
		struct timespec now = ts_now(clk);
		CK_RC(rc, -ETIMEDOUT);
		ck_assert_msg(ts_cmp(now, dl) >= 0, "wait %d returned before its deadline", i);
	}
	ws_arena_close(a);
}
END_TEST

START_TEST(realtime_flag)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	/* REALTIME deadline 150 ms ahead */
	struct timespec dl = deadline_rt_ms(SHORT_MS);
	struct timespec m0 = ts_now(CLOCK_MONOTONIC);
	struct ws_wait w = { .objects = &e, .count = 1, .owner = 1,
			     .flags = WS_WAIT_REALTIME, .deadline = &dl };
	uint32_t idx;
	CK_RC(ws_wait_any(a, &w, &idx), -ETIMEDOUT);
	ck_assert(ts_cmp(ts_now(CLOCK_REALTIME), dl) >= 0);
	long took = ts_diff_ms(ts_now(CLOCK_MONOTONIC), m0);
	ck_assert_msg(took >= SHORT_MS - 20 && took <= SHORT_MS + LATE_MAX_MS, "took %ld ms", took);

	/*
	 * The flag is honoured: a MONOTONIC time 30 s ahead is, read as a
	 * REALTIME time, decades in the past, so the wait only polls.
	 */
	struct timespec mono = deadline_ms(30000);
	w.deadline = &mono;
	m0 = ts_now(CLOCK_MONOTONIC);
	CK_RC(ws_wait_any(a, &w, &idx), -ETIMEDOUT);
	CK_RC(ws_wait_all(a, &w, &idx), -ETIMEDOUT);
	took = ts_diff_ms(ts_now(CLOCK_MONOTONIC), m0);
	ck_assert_msg(took < 10000, "REALTIME flag ignored? took %ld ms", took);

	/* and a signaled object with a REALTIME deadline is acquired */
	CK_OK(ws_event_set(a, e, NULL));
	dl = deadline_rt_ms(LONG_MS);
	w.deadline = &dl;
	CK_OK(ws_wait_any(a, &w, &idx));
	ck_assert(!ev_signaled(a, e));
	ws_arena_close(a);
}
END_TEST

/* Without the flag the deadline is MONOTONIC: a REALTIME value is far away. */
START_TEST(monotonic_is_default)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	struct waiter w;
	waiter_init(&w, a, 1, false, &e, 1);
	w.forever = true;
	waiter_start(&w);
	waiter_wait_blocked(&w);
	CK_OK(ws_event_set(a, e, NULL));
	CK_OK(waiter_join(&w));

	/* a MONOTONIC deadline 200 ms ahead really waits ~200 ms */
	struct timespec m0 = ts_now(CLOCK_MONOTONIC);
	struct timespec dl = ts_add_ms(m0, 200);
	struct ws_wait wt = { .objects = &e, .count = 1, .owner = 1, .deadline = &dl };
	uint32_t idx;
	CK_RC(ws_wait_any(a, &wt, &idx), -ETIMEDOUT);
	ck_assert(ts_diff_ms(ts_now(CLOCK_MONOTONIC), m0) >= 190);
	ws_arena_close(a);
}
END_TEST

START_TEST(past_deadline_polls)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, true);
	ws_handle s = mk_sem(a, 1, 1);
	struct timespec zero = { 0, 0 };
	struct timespec t0 = ts_now(CLOCK_MONOTONIC);
	for (int flags = 0; flags < 2; flags++) {
		struct ws_wait w = { .objects = &e, .count = 1, .owner = 1,
				     .flags = flags ? WS_WAIT_REALTIME : 0, .deadline = &zero };
		uint32_t idx = 99;
		CK_OK(ws_wait_any(a, &w, &idx));
		ck_assert_uint_eq(idx, 0);
		CK_RC(ws_wait_any(a, &w, &idx), -ETIMEDOUT);
		CK_RC(ws_wait_all(a, &w, &idx), -ETIMEDOUT);
		CK_OK(ws_event_set(a, e, NULL));
	}
	ws_handle both[2] = { s, e };
	struct ws_wait w = { .objects = both, .count = 2, .owner = 1, .deadline = &zero };
	uint32_t idx = 99;
	CK_OK(ws_wait_all(a, &w, &idx));
	ck_assert_uint_eq(idx, 0);
	ck_assert(ts_diff_ms(ts_now(CLOCK_MONOTONIC), t0) < 5000);
	ws_arena_close(a);
}
END_TEST

/* A blocked wait that reaches its deadline acquired nothing, even though
 * some of its objects were available all along or became available. */
START_TEST(timeout_acquires_nothing)
{
	ws_arena *a = test_arena();
	ws_handle s = mk_sem(a, 1, 3);
	ws_handle e = mk_event(a, false, true);
	ws_handle m = mk_mutex(a, 0, 0);
	ws_handle off = mk_event(a, true, false);
	ws_handle objs[4] = { s, e, m, off };
	struct waiter w;
	waiter_init(&w, a, 7, true, objs, 4);
	w.timeout_ms = 400;
	waiter_start_blocked(&w);
	CK_OK(ws_sem_release(a, s, 1, NULL));
	CK_RC(waiter_join(&w), -ETIMEDOUT);
	ck_assert(ts_cmp(w.returned, w.deadline) >= 0);
	ck_assert_uint_eq(sem_count(a, s), 2);
	ck_assert(ev_signaled(a, e));
	uint32_t c, o;
	mtx_state(a, m, &c, &o);
	ck_assert_uint_eq(c, 0);
	ck_assert_uint_eq(o, 0);
	ws_arena_close(a);
}
END_TEST

static void send_signals(struct waiter *w, int n)
{
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(pthread_kill(w->thread, (i & 1) ? SIGALRM : SIGUSR1), 0);
		sleep_ms(25);
	}
}

/* Signals to a blocked waiter do not end the wait before the deadline. */
START_TEST(signals_do_not_end_wait_early)
{
	install_handlers();
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	ws_handle m = mk_mutex(a, 50, 1);
	for (int variant = 0; variant < 4; variant++) {
		struct waiter w;
		ws_handle objs[2] = { e, m };
		if (variant == 0)
			waiter_init(&w, a, 7, false, objs, 2);
		else if (variant == 1)
			waiter_init(&w, a, 7, true, objs, 2);
		else if (variant == 2)
			waiter_init(&w, a, 7, false, NULL, 0);
		else
			waiter_init(&w, a, 7, true, objs, 1);
		if (variant == 1)
			w.flags = WS_WAIT_REALTIME;
		w.timeout_ms = 600;
		int before = atomic_load(&signals_seen);
		waiter_start_blocked(&w);
		send_signals(&w, 6);
		int rc = waiter_join(&w);
		ck_assert_msg(rc == -ETIMEDOUT, "variant %d: %d (%s)", variant, rc, errname(rc));
		ck_assert_msg(ts_cmp(w.returned_dl_clock, w.deadline) >= 0,
			      "variant %d returned %ld ms early", variant,
			      ts_diff_ms(w.deadline, w.returned_dl_clock));
		ck_assert_int_ge(atomic_load(&signals_seen) - before, 1);
		ck_assert(!ev_signaled(a, e));
		uint32_t c, o;
		mtx_state(a, m, &c, &o);
		ck_assert_uint_eq(o, 50);
	}
	ws_arena_close(a);
}
END_TEST

/* After signals, the wait still works: it is woken by the object. */
START_TEST(signals_then_wake)
{
	install_handlers();
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	for (int all = 0; all < 2; all++) {
		struct waiter w;
		waiter_init(&w, a, 7, all, &e, 1);
		w.forever = all;
		waiter_start(&w);
		waiter_wait_blocked(&w);
		send_signals(&w, 4);
		sleep_ms(50);
		ck_assert(!waiter_done(&w));
		waiter_wait_blocked(&w);
		CK_OK(ws_event_set(a, e, NULL));
		CK_OK(waiter_join(&w));
		ck_assert_uint_eq(w.index, 0);
		ck_assert(!ev_signaled(a, e));
	}
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("deadline");
	TCase *tc = tcase_create("deadline");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, monotonic_timeout_not_early);
	tcase_add_test(tc, short_deadlines_precise);
	tcase_add_test(tc, lateness_both_clocks);
	tcase_add_test(tc, realtime_flag);
	tcase_add_test(tc, monotonic_is_default);
	tcase_add_test(tc, past_deadline_polls);
	tcase_add_test(tc, timeout_acquires_nothing);
	tcase_add_test(tc, signals_do_not_end_wait_early);
	tcase_add_test(tc, signals_then_wake);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
