/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Semaphores: create rules, release (previous count, overflow, 32-bit wrap,
 * count 0), a wait takes one unit, release of N wakes exactly N. */
#include "harness.h"

static void check_sem(ws_arena *a, ws_handle s, uint32_t count, uint32_t max)
{
	uint32_t c = 0xdead, m = 0xdead;
	CK_OK(ws_sem_read(a, s, &c, &m));
	ck_assert_uint_eq(c, count);
	ck_assert_uint_eq(m, max);
}

START_TEST(create_valid)
{
	ws_arena *a = test_arena();
	static const uint32_t cases[][2] = {
		{ 0, 1 }, { 1, 1 }, { 0, 5 }, { 5, 5 }, { 3, 7 },
		{ 0, UINT32_MAX }, { UINT32_MAX, UINT32_MAX }, { UINT32_MAX - 1, UINT32_MAX },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ws_handle s = mk_sem(a, cases[i][0], cases[i][1]);
		check_sem(a, s, cases[i][0], cases[i][1]);
	}
	ws_arena_close(a);
}
END_TEST

START_TEST(create_invalid)
{
	ws_arena *a = test_arena_cap(1);
	ws_handle s = 0x77;
	CK_RC(ws_sem_create(a, 2, 1, &s), -EINVAL);
	CK_RC(ws_sem_create(a, 1, 0, &s), -EINVAL);
	CK_RC(ws_sem_create(a, 0, 0, &s), -EINVAL);
	CK_RC(ws_sem_create(a, UINT32_MAX, UINT32_MAX - 1, &s), -EINVAL);
	CK_RC(ws_sem_create(a, UINT32_MAX, 0, &s), -EINVAL);
	/* nothing was created: the single slot is still free */
	s = mk_sem(a, 1, 1);
	ws_handle x;
	CK_RC(ws_sem_create(a, 1, 1, &x), -ENOSPC);
	ws_arena_close(a);
}
END_TEST

START_TEST(release_reports_previous)
{
	ws_arena *a = test_arena();
	ws_handle s = mk_sem(a, 0, 10);
	uint32_t prev = 0xdead;
	CK_OK(ws_sem_release(a, s, 3, &prev));
	ck_assert_uint_eq(prev, 0);
	check_sem(a, s, 3, 10);
	CK_OK(ws_sem_release(a, s, 4, &prev));
	ck_assert_uint_eq(prev, 3);
	CK_OK(ws_sem_release(a, s, 1, NULL));
	check_sem(a, s, 8, 10);
	CK_OK(ws_sem_release(a, s, 2, &prev));
	ck_assert_uint_eq(prev, 8);
	check_sem(a, s, 10, 10);
	ws_arena_close(a);
}
END_TEST

START_TEST(release_past_max_overflow)
{
	ws_arena *a = test_arena();
	ws_handle s = mk_sem(a, 8, 10);
	uint32_t prev = 0xdead;
	CK_RC(ws_sem_release(a, s, 3, &prev), -EOVERFLOW);
	check_sem(a, s, 8, 10);
	CK_RC(ws_sem_release(a, s, UINT32_MAX, &prev), -EOVERFLOW);
	check_sem(a, s, 8, 10);
	CK_OK(ws_sem_release(a, s, 2, &prev));
	ck_assert_uint_eq(prev, 8);
	CK_RC(ws_sem_release(a, s, 1, NULL), -EOVERFLOW);
	check_sem(a, s, 10, 10);
	ws_arena_close(a);
}
END_TEST

START_TEST(release_32bit_wrap_overflow)
{
	ws_arena *a = test_arena();
	/* 2 + (2^32 - 2) wraps to 0, which a naive "sum > max" check passes */
	ws_handle s = mk_sem(a, 2, 10);
	CK_RC(ws_sem_release(a, s, UINT32_MAX - 1, NULL), -EOVERFLOW);
	check_sem(a, s, 2, 10);
	CK_RC(ws_sem_release(a, s, UINT32_MAX, NULL), -EOVERFLOW);
	check_sem(a, s, 2, 10);

	ws_handle big = mk_sem(a, 5, UINT32_MAX);
	CK_RC(ws_sem_release(a, big, UINT32_MAX, NULL), -EOVERFLOW);
	CK_RC(ws_sem_release(a, big, UINT32_MAX - 4, NULL), -EOVERFLOW);
	check_sem(a, big, 5, UINT32_MAX);
	uint32_t prev;
	CK_OK(ws_sem_release(a, big, UINT32_MAX - 5, &prev));
	ck_assert_uint_eq(prev, 5);
	check_sem(a, big, UINT32_MAX, UINT32_MAX);
	CK_RC(ws_sem_release(a, big, 1, NULL), -EOVERFLOW);
	check_sem(a, big, UINT32_MAX, UINT32_MAX);
	ws_arena_close(a);
}
END_TEST

START_TEST(release_zero_einval)
{
	ws_arena *a = test_arena();
	ws_handle s = mk_sem(a, 1, 5);
	uint32_t prev = 0xdead;
	CK_RC(ws_sem_release(a, s, 0, &prev), -EINVAL);
	check_sem(a, s, 1, 5);
	ws_arena_close(a);
}
END_TEST

START_TEST(wait_takes_one_unit)
{
	ws_arena *a = test_arena();
	ws_handle s = mk_sem(a, 3, 5);
	uint32_t idx = 99;
	CK_OK(poll_any(a, &s, 1, 1, &idx));
	ck_assert_uint_eq(idx, 0);
	check_sem(a, s, 2, 5);
	idx = 99;
	CK_OK(wait_all_ms(a, &s, 1, 1, 0, LONG_MS, &idx));
	ck_assert_uint_eq(idx, 0);
	check_sem(a, s, 1, 5);
	/* the same semaphore twice in a wait_any still takes one unit */
	ws_handle two[2] = { s, s };
	CK_OK(wait_any_ms(a, two, 2, 1, 0, LONG_MS, &idx));
	ck_assert_uint_eq(idx, 0);
	check_sem(a, s, 0, 5);
	CK_RC(poll_any(a, two, 2, 1, &idx), -ETIMEDOUT);
	CK_RC(wait_any_ms(a, &s, 1, 1, 0, SHORT_MS, &idx), -ETIMEDOUT);
	check_sem(a, s, 0, 5);
	/* a semaphore has no owner: any owner can take units */
	CK_OK(ws_sem_release(a, s, 2, NULL));
	CK_OK(poll_any(a, &s, 1, 11, &idx));
	CK_OK(poll_any(a, &s, 1, 22, &idx));
	check_sem(a, s, 0, 5);
	ws_arena_close(a);
}
END_TEST

/* Releasing N units with more than N blocked waiters releases exactly N. */
START_TEST(release_wakes_exactly_n)
{
	ws_arena *a = test_arena();
	ws_handle s = mk_sem(a, 0, 10);
	struct waiter w[4];
	for (int i = 0; i < 4; i++) {
		waiter_init(&w[i], a, 100 + i, i & 1, &s, 1);
		waiter_start(&w[i]);
	}
	for (int i = 0; i < 4; i++)
		waiter_wait_blocked(&w[i]);
	uint32_t prev = 0xdead;
	CK_OK(ws_sem_release(a, s, 2, &prev));
	ck_assert_uint_eq(prev, 0);
	/* the units went straight to blocked waiters */
	check_sem(a, s, 0, 10);
	sleep_ms(200);
	int done = 0;
	for (int i = 0; i < 4; i++)
		done += waiter_done(&w[i]);
	/* nobody else may have been released, and both must eventually be */
	struct timespec end = deadline_ms(LONG_MS);
	while (done < 2 && ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0) {
		sleep_ms(5);
		done = 0;
		for (int i = 0; i < 4; i++)
			done += waiter_done(&w[i]);
	}
	sleep_ms(100);
	done = 0;
	for (int i = 0; i < 4; i++)
		done += waiter_done(&w[i]);
	ck_assert_int_eq(done, 2);
	check_sem(a, s, 0, 10);
	CK_OK(ws_sem_release(a, s, 3, &prev));
	ck_assert_uint_eq(prev, 0);
	for (int i = 0; i < 4; i++) {
		CK_OK(waiter_join(&w[i]));
		ck_assert_uint_eq(w[i].index, 0);
	}
	/* 5 released, 4 taken */
	check_sem(a, s, 1, 10);
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("sem");
	TCase *tc = tcase_create("sem");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, create_valid);
	tcase_add_test(tc, create_invalid);
	tcase_add_test(tc, release_reports_previous);
	tcase_add_test(tc, release_past_max_overflow);
	tcase_add_test(tc, release_32bit_wrap_overflow);
	tcase_add_test(tc, release_zero_einval);
	tcase_add_test(tc, wait_takes_one_unit);
	tcase_add_test(tc, release_wakes_exactly_n);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
