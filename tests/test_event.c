/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Events: create/read, set/reset previous state, manual set releases all,
 * auto set releases exactly one and stays unsignaled (direct handoff), auto
 * set with nobody waiting stays signaled, waits on manual/auto events. */
#include "harness.h"

#include <stdlib.h>

static void check_ev(ws_arena *a, ws_handle e, bool signaled, bool manual)
{
	bool s = !signaled, m = !manual;
	CK_OK(ws_event_read(a, e, &s, &m));
	ck_assert_msg(s == signaled, "event signaled=%d, expected %d", s, signaled);
	ck_assert_msg(m == manual, "event manual=%d, expected %d", m, manual);
}

START_TEST(create_and_read)
{
	ws_arena *a = test_arena();
	for (int manual = 0; manual < 2; manual++)
		for (int sig = 0; sig < 2; sig++) {
			ws_handle e = mk_event(a, manual, sig);
			check_ev(a, e, sig, manual);
		}
	ws_arena_close(a);
}
END_TEST

START_TEST(set_reset_report_previous)
{
	ws_arena *a = test_arena();
	for (int manual = 0; manual < 2; manual++) {
		ws_handle e = mk_event(a, manual, false);
		bool was = true;
		CK_OK(ws_event_set(a, e, &was));
		ck_assert(!was);
		check_ev(a, e, true, manual);
		was = false;
		CK_OK(ws_event_set(a, e, &was));
		ck_assert(was);
		check_ev(a, e, true, manual);
		was = false;
		CK_OK(ws_event_reset(a, e, &was));
		ck_assert(was);
		check_ev(a, e, false, manual);
		was = true;
		CK_OK(ws_event_reset(a, e, &was));
		ck_assert(!was);
		check_ev(a, e, false, manual);
		/* NULL is fine for the previous state */
		CK_OK(ws_event_set(a, e, NULL));
		check_ev(a, e, true, manual);
		CK_OK(ws_event_reset(a, e, NULL));
		check_ev(a, e, false, manual);
	}
	ws_arena_close(a);
}
END_TEST

START_TEST(wait_on_manual_does_not_change_it)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, true, true);
	for (int i = 0; i < 5; i++) {
		uint32_t idx = 99;
		CK_OK(poll_any(a, &e, 1, 1 + i, &idx));
		ck_assert_uint_eq(idx, 0);
		CK_OK(wait_all_ms(a, &e, 1, 1 + i, 0, LONG_MS, &idx));
		ck_assert_uint_eq(idx, 0);
		check_ev(a, e, true, true);
	}
	ws_arena_close(a);
}
END_TEST

START_TEST(wait_on_auto_resets_it)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, true);
	uint32_t idx = 99;
	CK_OK(poll_any(a, &e, 1, 1, &idx));
	ck_assert_uint_eq(idx, 0);
	check_ev(a, e, false, false);
	CK_RC(poll_any(a, &e, 1, 1, &idx), -ETIMEDOUT);
	CK_OK(ws_event_set(a, e, NULL));
	CK_OK(wait_all_ms(a, &e, 1, 2, 0, LONG_MS, &idx));
	check_ev(a, e, false, false);
	CK_RC(wait_any_ms(a, &e, 1, 1, 0, SHORT_MS, &idx), -ETIMEDOUT);
	ws_arena_close(a);
}
END_TEST

START_TEST(auto_set_without_waiter_stays_signaled)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	CK_OK(ws_event_set(a, e, NULL));
	check_ev(a, e, true, false);
	sleep_ms(50);
	check_ev(a, e, true, false);
	/* exactly one later wait takes it */
	uint32_t idx;
	CK_OK(poll_any(a, &e, 1, 1, &idx));
	CK_RC(poll_any(a, &e, 1, 1, &idx), -ETIMEDOUT);
	ws_arena_close(a);
}
END_TEST

/* Set on a manual-reset event releases every blocked thread, stays signaled. */
START_TEST(manual_set_releases_all)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, true, false);
	ws_handle other = mk_event(a, true, true);
	struct waiter w[4];
	for (int i = 0; i < 4; i++) {
		if (i < 2) {
			waiter_init(&w[i], a, 10 + i, false, &e, 1);
		} else {
			ws_handle both[2] = { other, e };
			waiter_init(&w[i], a, 10 + i, true, both, 2);
		}
		waiter_start(&w[i]);
	}
	for (int i = 0; i < 4; i++)
		waiter_wait_blocked(&w[i]);
	bool was = true;
	CK_OK(ws_event_set(a, e, &was));
	ck_assert(!was);
	for (int i = 0; i < 4; i++) {
		CK_OK(waiter_join(&w[i]));
		ck_assert_uint_eq(w[i].index, 0);
	}
	check_ev(a, e, true, true);
	ws_arena_close(a);
}
END_TEST

/*
 * Set on an auto-reset event with threads blocked releases exactly one and
 * the event reads unsignaled right after the set returns: it was handed to
 * the waiter, not left for the waiters to race for.
 */
START_TEST(auto_set_releases_exactly_one)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	ws_handle other = mk_event(a, true, true);
	enum { N = 3 };
	struct waiter w[N];
	for (int i = 0; i < N; i++) {
		if (i != 1) {
			waiter_init(&w[i], a, 10 + i, false, &e, 1);
		} else {
			ws_handle both[2] = { e, other };
			waiter_init(&w[i], a, 10 + i, true, both, 2);
		}
		waiter_start(&w[i]);
	}
	for (int i = 0; i < N; i++)
		waiter_wait_blocked(&w[i]);
	for (int round = 1; round <= N; round++) {
		bool was = true;
		CK_OK(ws_event_set(a, e, &was));
		ck_assert(!was);
		check_ev(a, e, false, false);
		/* wait for one to finish, then make sure no second one does */
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
		check_ev(a, e, false, false);
	}
	for (int i = 0; i < N; i++) {
		CK_OK(waiter_join(&w[i]));
		ck_assert_uint_eq(w[i].index, 0);
	}
	/* with nobody waiting it stays signaled */
	CK_OK(ws_event_set(a, e, NULL));
	check_ev(a, e, true, false);
	ws_arena_close(a);
}
END_TEST

/* After an auto set with a blocked waiter, the setter cannot take it back. */
START_TEST(auto_set_handoff_no_barging)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	for (int round = 0; round < 5; round++) {
		struct waiter w;
		waiter_init(&w, a, 10, round & 1, &e, 1);
		waiter_start(&w);
		waiter_wait_blocked(&w);
		CK_OK(ws_event_set(a, e, NULL));
		uint32_t idx;
		CK_RC(poll_any(a, &e, 1, 99, &idx), -ETIMEDOUT);
		CK_OK(waiter_join(&w));
		check_ev(a, e, false, false);
	}
	ws_arena_close(a);
}
END_TEST

/* Reset with blocked waiters releases nobody. */
START_TEST(reset_releases_nobody)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, true, false);
	struct waiter w;
	waiter_init(&w, a, 10, false, &e, 1);
	w.timeout_ms = 300;
	waiter_start_blocked(&w);
	bool was = true;
	CK_OK(ws_event_reset(a, e, &was));
	ck_assert(!was);
	CK_RC(waiter_join(&w), -ETIMEDOUT);
	ws_arena_close(a);
}
END_TEST

/*
 * Auto set while the only blocked thread cannot take it (its wait_all also
 * needs a mutex held elsewhere): the event stays signaled, nobody released.
 */
START_TEST(auto_set_unsatisfiable_waiter_stays_signaled)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	ws_handle m = mk_mutex(a, 77, 1);
	ws_handle objs[2] = { e, m };
	struct waiter w;
	waiter_init(&w, a, 10, true, objs, 2);
	waiter_start(&w);
	waiter_wait_blocked(&w);
	bool was = true;
	CK_OK(ws_event_set(a, e, &was));
	ck_assert(!was);
	check_ev(a, e, true, false);
	sleep_ms(100);
	ck_assert(!waiter_done(&w));
	check_ev(a, e, true, false);
	/* when the mutex comes free, the waiter takes both at once */
	CK_OK(ws_mutex_unlock(a, m, 77, NULL));
	check_ev(a, e, false, false);
	CK_OK(waiter_join(&w));
	uint32_t c, o;
	mtx_state(a, m, &c, &o);
	ck_assert_uint_eq(o, 10);
	ws_arena_close(a);
}
END_TEST

/* Many blocked threads (wait_any and wait_all) all released by one set. */
START_TEST(manual_set_releases_many)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, true, false);
	ws_handle other = mk_event(a, true, true);
	enum { N = 64 };
	struct waiter *w = calloc(N, sizeof *w);
	ck_assert_ptr_nonnull(w);
	for (int i = 0; i < N; i++) {
		ws_handle objs[2] = { other, e };
		if (i & 1)
			waiter_init(&w[i], a, 100 + i, true, objs, 2);
		else
			waiter_init(&w[i], a, 100 + i, false, objs + 1, 1);
		waiter_start(&w[i]);
	}
	for (int i = 0; i < N; i++)
		waiter_wait_blocked(&w[i]);
	CK_OK(ws_event_set(a, e, NULL));
	for (int i = 0; i < N; i++) {
		CK_OK(waiter_join(&w[i]));
		ck_assert_uint_eq(w[i].index, 0);
	}
	check_ev(a, e, true, true);
	free(w);
	ws_arena_close(a);
}
END_TEST

/*
 * A set immediately followed by a reset still releases the blocked threads:
 * the set itself hands the event over (all of them for manual reset, one for
 * auto reset); the reset cannot take it back.
 */
START_TEST(set_then_reset_still_releases_blocked)
{
	ws_arena *a = test_arena();
	for (int manual = 0; manual < 2; manual++) {
		for (int round = 0; round < 5; round++) {
			ws_handle e = mk_event(a, manual, false);
			struct waiter w[2];
			int n = manual ? 2 : 1;
			for (int i = 0; i < n; i++) {
				waiter_init(&w[i], a, 10 + i, i == 1, &e, 1);
				waiter_start(&w[i]);
			}
			for (int i = 0; i < n; i++)
				waiter_wait_blocked(&w[i]);
			CK_OK(ws_event_set(a, e, NULL));
			CK_OK(ws_event_reset(a, e, NULL));
			for (int i = 0; i < n; i++) {
				int rc = waiter_join(&w[i]);
				ck_assert_msg(rc == 0, "%s round %d waiter %d: %d (%s)",
					      manual ? "manual" : "auto", round, i, rc, errname(rc));
			}
			check_ev(a, e, false, manual);
			CK_OK(ws_close(a, e));
		}
	}
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("event");
	TCase *tc = tcase_create("event");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, create_and_read);
	tcase_add_test(tc, set_reset_report_previous);
	tcase_add_test(tc, wait_on_manual_does_not_change_it);
	tcase_add_test(tc, wait_on_auto_resets_it);
	tcase_add_test(tc, auto_set_without_waiter_stays_signaled);
	tcase_add_test(tc, manual_set_releases_all);
	tcase_add_test(tc, manual_set_releases_many);
	tcase_add_test(tc, auto_set_releases_exactly_one);
	tcase_add_test(tc, auto_set_handoff_no_barging);
	tcase_add_test(tc, reset_releases_nobody);
	tcase_add_test(tc, set_then_reset_still_releases_blocked);
	tcase_add_test(tc, auto_set_unsatisfiable_waiter_stays_signaled);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
