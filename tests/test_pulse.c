/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PulseEvent: releases every thread already blocked on a manual-reset event
 * (one on an auto-reset event) and leaves the event unsignaled; a thread that
 * starts waiting after the pulse is not released.  esync and fsync implement
 * pulse as set + reset and get this wrong.
 */
#include "harness.h"

static void check_ev(ws_arena *a, ws_handle e, bool signaled)
{
	bool s = !signaled, m;
	CK_OK(ws_event_read(a, e, &s, &m));
	ck_assert_msg(s == signaled, "event signaled=%d, expected %d", s, signaled);
}

START_TEST(pulse_without_waiters)
{
	ws_arena *a = test_arena();
	for (int manual = 0; manual < 2; manual++) {
		ws_handle e = mk_event(a, manual, false);
		bool was = true;
		CK_OK(ws_event_pulse(a, e, &was));
		ck_assert(!was);
		check_ev(a, e, false);
		CK_OK(ws_event_set(a, e, NULL));
		was = false;
		CK_OK(ws_event_pulse(a, e, &was));
		ck_assert(was);
		check_ev(a, e, false);
		CK_OK(ws_event_pulse(a, e, NULL));
		check_ev(a, e, false);
		uint32_t idx;
		CK_RC(poll_any(a, &e, 1, 1, &idx), -ETIMEDOUT);
	}
	ws_arena_close(a);
}
END_TEST

/* Manual: all already-blocked waiters (wait_any and wait_all) released. */
START_TEST(manual_pulse_releases_all_blocked)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, true, false);
	ws_handle other = mk_event(a, true, true);
	ws_handle idle = mk_event(a, false, false);
	enum { N = 4 };
	for (int round = 0; round < 10; round++) {
		struct waiter w[N];
		for (int i = 0; i < N; i++) {
			if (i == 0) {
				waiter_init(&w[i], a, 10 + i, false, &e, 1);
			} else if (i == 1) {
				ws_handle objs[2] = { idle, e };
				waiter_init(&w[i], a, 10 + i, false, objs, 2);
			} else {
				ws_handle objs[2] = { other, e };
				waiter_init(&w[i], a, 10 + i, true, objs, 2);
			}
			waiter_start(&w[i]);
		}
		for (int i = 0; i < N; i++)
			waiter_wait_blocked(&w[i]);
		bool was = true;
		CK_OK(ws_event_pulse(a, e, &was));
		ck_assert(!was);
		check_ev(a, e, false);
		uint32_t idx;
		CK_RC(poll_any(a, &e, 1, 99, &idx), -ETIMEDOUT);
		for (int i = 0; i < N; i++) {
			int rc = waiter_join(&w[i]);
			ck_assert_msg(rc == 0, "round %d waiter %d: %d (%s)", round, i, rc, errname(rc));
			ck_assert_uint_eq(w[i].index, i == 1 ? 1 : 0);
		}
		check_ev(a, e, false);
	}
	ws_arena_close(a);
}
END_TEST

/* Auto: exactly one blocked waiter released per pulse. */
START_TEST(auto_pulse_releases_exactly_one)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	enum { N = 3 };
	struct waiter w[N];
	for (int i = 0; i < N; i++) {
		waiter_init(&w[i], a, 10 + i, i == 2, &e, 1);
		waiter_start(&w[i]);
	}
	for (int i = 0; i < N; i++)
		waiter_wait_blocked(&w[i]);
	for (int round = 1; round <= N; round++) {
		CK_OK(ws_event_pulse(a, e, NULL));
		check_ev(a, e, false);
		struct timespec end = deadline_ms(LONG_MS);
		int done;
		for (;;) {
			done = 0;
			for (int i = 0; i < N; i++)
				done += waiter_done(&w[i]);
			if (done >= round || ts_cmp(ts_now(CLOCK_MONOTONIC), end) >= 0)
				break;
			sleep_ms(2);
		}
		sleep_ms(150);
		done = 0;
		for (int i = 0; i < N; i++)
			done += waiter_done(&w[i]);
		ck_assert_int_eq(done, round);
		check_ev(a, e, false);
	}
	for (int i = 0; i < N; i++)
		CK_OK(waiter_join(&w[i]));
	ws_arena_close(a);
}
END_TEST

/* A thread that starts waiting after the pulse is not released by it. */
START_TEST(waiter_after_pulse_not_released)
{
	ws_arena *a = test_arena();
	for (int manual = 0; manual < 2; manual++) {
		ws_handle e = mk_event(a, manual, false);
		/* one blocked waiter so that the pulse really does something */
		struct waiter early;
		waiter_init(&early, a, 10, false, &e, 1);
		waiter_start(&early);
		waiter_wait_blocked(&early);
		CK_OK(ws_event_pulse(a, e, NULL));

		struct waiter late[2];
		for (int i = 0; i < 2; i++) {
			waiter_init(&late[i], a, 20 + i, i, &e, 1);
			late[i].timeout_ms = 300;
			waiter_start(&late[i]);
		}
		CK_OK(waiter_join(&early));
		for (int i = 0; i < 2; i++) {
			CK_RC(waiter_join(&late[i]), -ETIMEDOUT);
			ck_assert(ts_cmp(late[i].returned, late[i].deadline) >= 0);
		}
		check_ev(a, e, false);
	}
	ws_arena_close(a);
}
END_TEST

/*
 * A wait_all that cannot be satisfied at the moment of the pulse is not
 * released, and because the event is left unsignaled a later release of the
 * other object does not release it either.
 */
START_TEST(pulse_does_not_release_unsatisfiable_wait_all)
{
	ws_arena *a = test_arena();
	for (int manual = 0; manual < 2; manual++) {
		ws_handle e = mk_event(a, manual, false);
		ws_handle m = mk_mutex(a, 77, 1);
		ws_handle objs[2] = { e, m };
		struct waiter w;
		waiter_init(&w, a, 10, true, objs, 2);
		waiter_start(&w);
		waiter_wait_blocked(&w);
		CK_OK(ws_event_pulse(a, e, NULL));
		check_ev(a, e, false);
		CK_OK(ws_mutex_unlock(a, m, 77, NULL));
		sleep_ms(150);
		ck_assert(!waiter_done(&w));
		uint32_t c, o;
		mtx_state(a, m, &c, &o);
		ck_assert_uint_eq(o, 0);
		CK_OK(ws_event_set(a, e, NULL));
		CK_OK(waiter_join(&w));
		mtx_state(a, m, &c, &o);
		ck_assert_uint_eq(o, 10);
		check_ev(a, e, manual);
	}
	ws_arena_close(a);
}
END_TEST

/*
 * Auto pulse with an unsatisfiable wait_all blocked first and a wait_any
 * blocked second: the wait_any is the one released.
 */
START_TEST(auto_pulse_goes_to_satisfiable_waiter)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	ws_handle s = mk_sem(a, 0, 1);
	ws_handle objs[2] = { e, s };
	struct waiter wall, wany;
	waiter_init(&wall, a, 10, true, objs, 2);
	wall.timeout_ms = 1500;
	waiter_start_blocked(&wall);
	waiter_init(&wany, a, 11, false, &e, 1);
	waiter_start(&wany);
	waiter_wait_blocked(&wany);
	CK_OK(ws_event_pulse(a, e, NULL));
	CK_OK(waiter_join(&wany));
	check_ev(a, e, false);
	CK_RC(waiter_join(&wall), -ETIMEDOUT);
	ck_assert_uint_eq(sem_count(a, s), 0);
	ws_arena_close(a);
}
END_TEST

/* Pulse as an alert releases the blocked waiter with index == count. */
START_TEST(pulse_alert)
{
	ws_arena *a = test_arena();
	ws_handle alert = mk_event(a, false, false);
	ws_handle idle = mk_event(a, true, false);
	for (int all = 0; all < 2; all++) {
		struct waiter w;
		waiter_init(&w, a, 10, all, &idle, 1);
		w.alert = alert;
		waiter_start(&w);
		waiter_wait_blocked(&w);
		CK_OK(ws_event_pulse(a, alert, NULL));
		CK_OK(waiter_join(&w));
		ck_assert_uint_eq(w.index, 1);
		check_ev(a, alert, false);
	}
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("pulse");
	TCase *tc = tcase_create("pulse");
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, pulse_without_waiters);
	tcase_add_test(tc, manual_pulse_releases_all_blocked);
	tcase_add_test(tc, auto_pulse_releases_exactly_one);
	tcase_add_test(tc, waiter_after_pulse_not_released);
	tcase_add_test(tc, pulse_does_not_release_unsatisfiable_wait_all);
	tcase_add_test(tc, auto_pulse_goes_to_satisfiable_waiter);
	tcase_add_test(tc, pulse_alert);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
