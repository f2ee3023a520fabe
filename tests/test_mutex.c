/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Mutexes: create rules, unlock rules, recursion, the UINT32_MAX limit,
 * kill and abandonment. */
#include "harness.h"

static void check_mtx(ws_arena *a, ws_handle m, int rc, uint32_t count, uint32_t owner)
{
	uint32_t c = 0xdead, o = 0xdead;
	int got = ws_mutex_read(a, m, &c, &o);
	ck_assert_msg(got == rc, "ws_mutex_read returned %d (%s), expected %d (%s)", got,
		      errname(got), rc, errname(rc));
	ck_assert_uint_eq(c, count);
	ck_assert_uint_eq(o, owner);
}

START_TEST(create_rules)
{
	ws_arena *a = test_arena_cap(4);
	ws_handle m = 0;
	CK_RC(ws_mutex_create(a, 0, 1, &m), -EINVAL);
	CK_RC(ws_mutex_create(a, 0, UINT32_MAX, &m), -EINVAL);
	CK_RC(ws_mutex_create(a, 5, 0, &m), -EINVAL);
	CK_RC(ws_mutex_create(a, UINT32_MAX, 0, &m), -EINVAL);
	ws_handle free_m = mk_mutex(a, 0, 0);
	check_mtx(a, free_m, 0, 0, 0);
	ws_handle owned = mk_mutex(a, 5, 1);
	check_mtx(a, owned, 0, 1, 5);
	ws_handle rec = mk_mutex(a, 6, 3);
	check_mtx(a, rec, 0, 3, 6);
	ws_handle maxed = mk_mutex(a, UINT32_MAX, UINT32_MAX);
	check_mtx(a, maxed, 0, UINT32_MAX, UINT32_MAX);
	/* the failed creates took no capacity (4 made, the arena holds 4) */
	CK_RC(ws_mutex_create(a, 0, 0, &m), -ENOSPC);
	ws_arena_close(a);
}
END_TEST

START_TEST(unlock_rules)
{
	ws_arena *a = test_arena();
	ws_handle m = mk_mutex(a, 5, 2);
	uint32_t prev = 0xdead;
	CK_RC(ws_mutex_unlock(a, m, 0, &prev), -EINVAL);
	check_mtx(a, m, 0, 2, 5);
	CK_RC(ws_mutex_unlock(a, m, 6, &prev), -EPERM);
	check_mtx(a, m, 0, 2, 5);
	CK_OK(ws_mutex_unlock(a, m, 5, &prev));
	ck_assert_uint_eq(prev, 2);
	check_mtx(a, m, 0, 1, 5);
	CK_OK(ws_mutex_unlock(a, m, 5, &prev));
	ck_assert_uint_eq(prev, 1);
	check_mtx(a, m, 0, 0, 0);
	/* not owned at all */
	CK_RC(ws_mutex_unlock(a, m, 5, &prev), -EPERM);
	CK_RC(ws_mutex_unlock(a, m, 6, NULL), -EPERM);
	check_mtx(a, m, 0, 0, 0);
	/* NULL prev_count is fine */
	ws_handle m2 = mk_mutex(a, 9, 1);
	CK_OK(ws_mutex_unlock(a, m2, 9, NULL));
	check_mtx(a, m2, 0, 0, 0);
	ws_arena_close(a);
}
END_TEST

START_TEST(wait_acquires_and_recurses)
{
	ws_arena *a = test_arena();
	ws_handle m = mk_mutex(a, 0, 0);
	uint32_t idx = 99;
	CK_OK(poll_any(a, &m, 1, 5, &idx));
	ck_assert_uint_eq(idx, 0);
	check_mtx(a, m, 0, 1, 5);
	CK_OK(wait_any_ms(a, &m, 1, 5, 0, LONG_MS, &idx));
	check_mtx(a, m, 0, 2, 5);
	CK_OK(wait_all_ms(a, &m, 1, 5, 0, LONG_MS, &idx));
	ck_assert_uint_eq(idx, 0);
	check_mtx(a, m, 0, 3, 5);
	/* another owner cannot take it */
	CK_RC(poll_any(a, &m, 1, 6, &idx), -ETIMEDOUT);
	CK_RC(wait_any_ms(a, &m, 1, 6, 0, SHORT_MS, &idx), -ETIMEDOUT);
	CK_RC(wait_all_ms(a, &m, 1, 6, 0, SHORT_MS, &idx), -ETIMEDOUT);
	check_mtx(a, m, 0, 3, 5);
	uint32_t prev;
	CK_OK(ws_mutex_unlock(a, m, 5, &prev));
	ck_assert_uint_eq(prev, 3);
	CK_OK(ws_mutex_unlock(a, m, 5, &prev));
	CK_RC(poll_any(a, &m, 1, 6, &idx), -ETIMEDOUT);
	CK_OK(ws_mutex_unlock(a, m, 5, &prev));
	ck_assert_uint_eq(prev, 1);
	CK_OK(poll_any(a, &m, 1, 6, &idx));
	check_mtx(a, m, 0, 1, 6);
	ws_arena_close(a);
}
END_TEST

START_TEST(recursion_limit_uint32_max)
{
	ws_arena *a = test_arena();
	ws_handle m = mk_mutex(a, 5, UINT32_MAX - 1);
	ws_handle s = mk_sem(a, 1, 1);
	uint32_t idx = 99;
	CK_OK(poll_any(a, &m, 1, 5, &idx));
	check_mtx(a, m, 0, UINT32_MAX, 5);
	/* at UINT32_MAX it cannot be taken again: the wait times out */
	CK_RC(poll_any(a, &m, 1, 5, &idx), -ETIMEDOUT);
	struct timespec dl = deadline_ms(SHORT_MS);
	struct ws_wait w = { .objects = &m, .count = 1, .owner = 5, .deadline = &dl };
	CK_RC(ws_wait_any(a, &w, &idx), -ETIMEDOUT);
	ck_assert(ts_cmp(ts_now(CLOCK_MONOTONIC), dl) >= 0);
	check_mtx(a, m, 0, UINT32_MAX, 5);
	/* a wait_all including it takes nothing */
	ws_handle both[2] = { s, m };
	CK_RC(wait_all_ms(a, both, 2, 5, 0, SHORT_MS, &idx), -ETIMEDOUT);
	ck_assert_uint_eq(sem_count(a, s), 1);
	check_mtx(a, m, 0, UINT32_MAX, 5);
	/* a wait_any falls through to the next object */
	ws_handle ms[2] = { m, s };
	CK_OK(poll_any(a, ms, 2, 5, &idx));
	ck_assert_uint_eq(idx, 1);
	ck_assert_uint_eq(sem_count(a, s), 0);
	uint32_t prev;
	CK_OK(ws_mutex_unlock(a, m, 5, &prev));
	ck_assert_uint_eq(prev, UINT32_MAX);
	check_mtx(a, m, 0, UINT32_MAX - 1, 5);
	CK_OK(poll_any(a, &m, 1, 5, &idx));
	check_mtx(a, m, 0, UINT32_MAX, 5);
	ws_arena_close(a);
}
END_TEST

START_TEST(kill_rules)
{
	ws_arena *a = test_arena();
	ws_handle m = mk_mutex(a, 5, 3);
	CK_RC(ws_mutex_kill(a, m, 0), -EINVAL);
	check_mtx(a, m, 0, 3, 5);
	CK_RC(ws_mutex_kill(a, m, 6), -EPERM);
	check_mtx(a, m, 0, 3, 5);
	CK_OK(ws_mutex_kill(a, m, 5));
	/* free and abandoned: read says -EOWNERDEAD with count 0 and owner 0 */
	check_mtx(a, m, -EOWNERDEAD, 0, 0);
	/* reading does not clear it */
	check_mtx(a, m, -EOWNERDEAD, 0, 0);
	/* it is not owned any more: unlock and kill are -EPERM */
	CK_RC(ws_mutex_unlock(a, m, 5, NULL), -EPERM);
	CK_RC(ws_mutex_kill(a, m, 5), -EPERM);
	check_mtx(a, m, -EOWNERDEAD, 0, 0);
	/* a free, never-owned mutex cannot be killed */
	ws_handle f = mk_mutex(a, 0, 0);
	CK_RC(ws_mutex_kill(a, f, 5), -EPERM);
	check_mtx(a, f, 0, 0, 0);
	ws_arena_close(a);
}
END_TEST

START_TEST(abandoned_next_acquire_any)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	ws_handle m = mk_mutex(a, 5, 1);
	CK_OK(ws_mutex_kill(a, m, 5));
	ws_handle objs[2] = { e, m };
	uint32_t idx = 99;
	CK_RC(poll_any(a, objs, 2, 9, &idx), -EOWNERDEAD);
	ck_assert_uint_eq(idx, 1);
	/* it does own it, and it is no longer abandoned */
	check_mtx(a, m, 0, 1, 9);
	CK_OK(poll_any(a, objs, 2, 9, &idx));
	ck_assert_uint_eq(idx, 1);
	check_mtx(a, m, 0, 2, 9);
	CK_OK(ws_mutex_unlock(a, m, 9, NULL));
	CK_OK(ws_mutex_unlock(a, m, 9, NULL));
	check_mtx(a, m, 0, 0, 0);
	CK_OK(poll_any(a, &m, 1, 10, &idx));
	check_mtx(a, m, 0, 1, 10);
	ws_arena_close(a);
}
END_TEST

START_TEST(abandoned_next_acquire_all)
{
	ws_arena *a = test_arena();
	ws_handle s = mk_sem(a, 1, 1);
	ws_handle m = mk_mutex(a, 5, 7);
	ws_handle e = mk_event(a, false, true);
	CK_OK(ws_mutex_kill(a, m, 5));
	ws_handle objs[3] = { s, m, e };
	uint32_t idx = 99;
	CK_RC(wait_all_ms(a, objs, 3, 9, 0, LONG_MS, &idx), -EOWNERDEAD);
	ck_assert_uint_eq(idx, 0);
	check_mtx(a, m, 0, 1, 9);
	ck_assert_uint_eq(sem_count(a, s), 0);
	ck_assert(!ev_signaled(a, e));
	ws_arena_close(a);
}
END_TEST

START_TEST(abandoned_not_acquired_stays_abandoned)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, true, true);
	ws_handle m = mk_mutex(a, 5, 1);
	ws_handle s = mk_sem(a, 0, 1);
	CK_OK(ws_mutex_kill(a, m, 5));
	/* a lower-index object wins; the mutex stays abandoned */
	ws_handle objs[2] = { e, m };
	uint32_t idx = 99;
	CK_OK(poll_any(a, objs, 2, 9, &idx));
	ck_assert_uint_eq(idx, 0);
	check_mtx(a, m, -EOWNERDEAD, 0, 0);
	/* a wait_all that times out does not take it either */
	ws_handle all[2] = { m, s };
	CK_RC(wait_all_ms(a, all, 2, 9, 0, SHORT_MS, &idx), -ETIMEDOUT);
	check_mtx(a, m, -EOWNERDEAD, 0, 0);
	ws_arena_close(a);
}
END_TEST

START_TEST(kill_by_new_owner_abandons_again)
{
	ws_arena *a = test_arena();
	ws_handle m = mk_mutex(a, 5, 1);
	CK_OK(ws_mutex_kill(a, m, 5));
	uint32_t idx;
	CK_RC(poll_any(a, &m, 1, 9, &idx), -EOWNERDEAD);
	CK_OK(ws_mutex_kill(a, m, 9));
	check_mtx(a, m, -EOWNERDEAD, 0, 0);
	CK_RC(poll_any(a, &m, 1, 5, &idx), -EOWNERDEAD);
	check_mtx(a, m, 0, 1, 5);
	ws_arena_close(a);
}
END_TEST

START_TEST(unlock_wakes_one_waiter_with_ownership)
{
	ws_arena *a = test_arena();
	ws_handle m = mk_mutex(a, 5, 2);
	struct waiter w[2];
	for (int i = 0; i < 2; i++) {
		waiter_init(&w[i], a, 20 + i, i == 1, &m, 1);
		waiter_start(&w[i]);
	}
	for (int i = 0; i < 2; i++)
		waiter_wait_blocked(&w[i]);
	CK_OK(ws_mutex_unlock(a, m, 5, NULL));
	sleep_ms(50);
	ck_assert(!waiter_done(&w[0]) && !waiter_done(&w[1]));
	CK_OK(ws_mutex_unlock(a, m, 5, NULL));
	/* ownership passed straight to one of the blocked waiters */
	uint32_t c, o;
	ck_assert_int_eq(mtx_state(a, m, &c, &o), 0);
	ck_assert_uint_eq(c, 1);
	ck_assert_msg(o == 20 || o == 21, "owner %u right after the unlock", o);
	int first = o == 20 ? 0 : 1;
	ck_assert(waiter_wait_done(&w[first], LONG_MS));
	sleep_ms(100);
	ck_assert(!waiter_done(&w[!first]));
	uint32_t idx;
	CK_RC(poll_any(a, &m, 1, 5, &idx), -ETIMEDOUT);
	CK_OK(ws_mutex_unlock(a, m, o, NULL));
	ck_assert_int_eq(mtx_state(a, m, &c, &o), 0);
	ck_assert_uint_eq(o, (uint32_t)(20 + !first));
	CK_OK(waiter_join(&w[0]));
	CK_OK(waiter_join(&w[1]));
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("mutex");
	TCase *tc = tcase_create("mutex");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, create_rules);
	tcase_add_test(tc, unlock_rules);
	tcase_add_test(tc, wait_acquires_and_recurses);
	tcase_add_test(tc, recursion_limit_uint32_max);
	tcase_add_test(tc, kill_rules);
	tcase_add_test(tc, abandoned_next_acquire_any);
	tcase_add_test(tc, abandoned_next_acquire_all);
	tcase_add_test(tc, abandoned_not_acquired_stays_abandoned);
	tcase_add_test(tc, kill_by_new_owner_abandons_again);
	tcase_add_test(tc, unlock_wakes_one_waiter_with_ownership);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
