/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The alert event: checked after the objects, *index == count, consumed like
 * an auto-reset event acquisition, ends a wait_all alone. */
#include "harness.h"

static int wt(ws_arena *a, bool all, const ws_handle *objs, uint32_t count, uint32_t owner,
	      ws_handle alert, const struct timespec *dl, uint32_t *idx)
{
	struct ws_wait w = { .objects = objs, .count = count, .owner = owner,
			     .alert = alert, .deadline = dl };
	return all ? ws_wait_all(a, &w, idx) : ws_wait_any(a, &w, idx);
}

START_TEST(alert_index_is_count_and_consumed)
{
	ws_arena *a = test_arena();
	for (int all = 0; all < 2; all++) {
		ws_handle e = mk_event(a, false, false);
		ws_handle s = mk_sem(a, 1, 1);
		ws_handle alert = mk_event(a, false, true);
		ws_handle objs[2] = { e, s };
		struct timespec past = deadline_past();
		uint32_t idx = 99;
		uint32_t n = all ? 2 : 1; /* wait_any on {e} only; wait_all on {e, s} */
		CK_OK(wt(a, all, objs, n, 1, alert, &past, &idx));
		ck_assert_uint_eq(idx, n);
		ck_assert(!ev_signaled(a, alert));
		ck_assert_uint_eq(sem_count(a, s), 1);
		ck_assert(!ev_signaled(a, e));
		CK_RC(wt(a, all, objs, n, 1, alert, &past, &idx), -ETIMEDOUT);
	}
	ws_arena_close(a);
}
END_TEST

/* Objects are checked before the alert. */
START_TEST(objects_before_alert)
{
	ws_arena *a = test_arena();
	for (int all = 0; all < 2; all++) {
		ws_handle e = mk_event(a, false, true);
		ws_handle s = mk_sem(a, 1, 1);
		ws_handle alert = mk_event(a, false, true);
		ws_handle objs[2] = { e, s };
		uint32_t idx = 99;
		CK_OK(wt(a, all, objs, 2, 1, alert, NULL, &idx));
		ck_assert_uint_eq(idx, 0);
		ck_assert(ev_signaled(a, alert));
		ck_assert(!ev_signaled(a, e));
		ck_assert_uint_eq(sem_count(a, s), all ? 0 : 1);
	}
	ws_arena_close(a);
}
END_TEST

/* A manual-reset alert ends the wait too. */
START_TEST(manual_alert)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	ws_handle alert = mk_event(a, true, true);
	uint32_t idx = 99;
	struct timespec past = deadline_past();
	CK_OK(wt(a, false, &e, 1, 1, alert, &past, &idx));
	ck_assert_uint_eq(idx, 1);
	idx = 99;
	CK_OK(wt(a, true, &e, 1, 1, alert, &past, &idx));
	ck_assert_uint_eq(idx, 1);
	ws_arena_close(a);
}
END_TEST

/* The alert must be an event. */
START_TEST(alert_type_and_handle)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, true);
	ws_handle s = mk_sem(a, 1, 1);
	ws_handle m = mk_mutex(a, 0, 0);
	ws_handle dead = mk_event(a, false, true);
	CK_OK(ws_close(a, dead));
	struct timespec past = deadline_past();
	for (int all = 0; all < 2; all++) {
		uint32_t idx = 99;
		CK_RC(wt(a, all, &e, 1, 1, s, &past, &idx), -EINVAL);
		CK_RC(wt(a, all, &e, 1, 1, m, &past, &idx), -EINVAL);
		CK_RC(wt(a, all, &e, 1, 1, dead, &past, &idx), -EBADF);
		CK_RC(wt(a, all, &e, 1, 1, 0x7ffffff0u, &past, &idx), -EBADF);
		ck_assert(ev_signaled(a, e));
		ck_assert_uint_eq(sem_count(a, s), 1);
	}
	ws_arena_close(a);
}
END_TEST

/* Blocked waits ended by the alert: wait_any, and wait_all alone while its
 * objects are only partly available (they stay untouched). */
START_TEST(alert_wakes_blocked)
{
	ws_arena *a = test_arena();
	for (int all = 0; all < 2; all++) {
		ws_handle e = mk_event(a, true, true);    /* available */
		ws_handle m = mk_mutex(a, 50, 1);         /* not available */
		ws_handle alert = mk_event(a, false, false);
		ws_handle objs[2] = { e, m };
		struct waiter w;
		if (all)
			waiter_init(&w, a, 7, true, objs, 2);
		else
			waiter_init(&w, a, 7, false, objs + 1, 1);
		w.alert = alert;
		waiter_start(&w);
		waiter_wait_blocked(&w);
		CK_OK(ws_event_set(a, alert, NULL));
		/* consumed by the waiter straight away */
		ck_assert(!ev_signaled(a, alert));
		CK_OK(waiter_join(&w));
		ck_assert_uint_eq(w.index, all ? 2 : 1);
		ck_assert(ev_signaled(a, e));
		uint32_t c, o;
		mtx_state(a, m, &c, &o);
		ck_assert_uint_eq(o, 50);
		ck_assert_uint_eq(c, 1);
	}
	ws_arena_close(a);
}
END_TEST

START_TEST(alert_count_zero_blocked)
{
	ws_arena *a = test_arena();
	ws_handle alert = mk_event(a, false, false);
	/* (wait_any only: count 0 is defined for wait_any) */
	for (int all = 0; all < 1; all++) {
		struct waiter w;
		waiter_init(&w, a, 7, all, NULL, 0);
		w.alert = alert;
		waiter_start(&w);
		waiter_wait_blocked(&w);
		CK_OK(ws_event_set(a, alert, NULL));
		CK_OK(waiter_join(&w));
		ck_assert_uint_eq(w.index, 0);
		ck_assert(!ev_signaled(a, alert));
	}
	ws_arena_close(a);
}
END_TEST

/* One auto-reset alert shared by two blocked waiters: one set ends one. */
START_TEST(shared_alert_releases_one)
{
	ws_arena *a = test_arena();
	ws_handle alert = mk_event(a, false, false);
	ws_handle idle = mk_event(a, false, false);
	struct waiter w[2];
	for (int i = 0; i < 2; i++) {
		waiter_init(&w[i], a, 7 + i, i, &idle, 1);
		w[i].alert = alert;
		waiter_start(&w[i]);
	}
	for (int i = 0; i < 2; i++)
		waiter_wait_blocked(&w[i]);
	CK_OK(ws_event_set(a, alert, NULL));
	ck_assert(!ev_signaled(a, alert));
	struct timespec end = deadline_ms(LONG_MS);
	while (!waiter_done(&w[0]) && !waiter_done(&w[1]) &&
	       ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0)
		sleep_ms(2);
	sleep_ms(150);
	ck_assert_int_eq(waiter_done(&w[0]) + waiter_done(&w[1]), 1);
	CK_OK(ws_event_set(a, alert, NULL));
	for (int i = 0; i < 2; i++) {
		CK_OK(waiter_join(&w[i]));
		ck_assert_uint_eq(w[i].index, 1);
	}
	ck_assert(!ev_signaled(a, alert));
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("alert");
	TCase *tc = tcase_create("alert");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, alert_index_is_count_and_consumed);
	tcase_add_test(tc, objects_before_alert);
	tcase_add_test(tc, manual_alert);
	tcase_add_test(tc, alert_type_and_handle);
	tcase_add_test(tc, alert_wakes_blocked);
	tcase_add_test(tc, alert_count_zero_blocked);
	tcase_add_test(tc, shared_alert_releases_one);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
