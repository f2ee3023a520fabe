/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ws_wait_all: argument checks, duplicates, everything acquired at once,
 * *index 0, recursion, count 0, a timeout acquires nothing. */
#include "harness.h"

static int all(ws_arena *a, const ws_handle *objs, uint32_t count, uint32_t owner,
	       ws_handle alert, const struct timespec *dl, uint32_t *idx)
{
	struct ws_wait w = { .objects = objs, .count = count, .owner = owner,
			     .alert = alert, .deadline = dl };
	return ws_wait_all(a, &w, idx);
}

START_TEST(argument_checks)
{
	ws_arena *a = test_arena();
	ws_handle s[WS_MAX_WAIT_OBJECTS + 1];
	for (int i = 0; i < WS_MAX_WAIT_OBJECTS + 1; i++)
		s[i] = mk_sem(a, 1, 1);
	struct timespec past = deadline_past();
	uint32_t idx = 99;
	CK_RC(all(a, s, WS_MAX_WAIT_OBJECTS + 1, 1, 0, &past, &idx), -EINVAL);
	CK_RC(all(a, s, UINT32_MAX, 1, 0, &past, &idx), -EINVAL);
	CK_RC(all(a, s, 2, 0, 0, &past, &idx), -EINVAL);
	CK_RC(all(a, NULL, 2, 1, 0, &past, &idx), -EINVAL);
	for (int i = 0; i < WS_MAX_WAIT_OBJECTS + 1; i++)
		ck_assert_uint_eq(sem_count(a, s[i]), 1);
	/* 64 distinct objects: all taken */
	idx = 99;
	CK_OK(all(a, s, WS_MAX_WAIT_OBJECTS, 1, 0, &past, &idx));
	ck_assert_uint_eq(idx, 0);
	for (int i = 0; i < WS_MAX_WAIT_OBJECTS; i++)
		ck_assert_uint_eq(sem_count(a, s[i]), 0);
	ck_assert_uint_eq(sem_count(a, s[WS_MAX_WAIT_OBJECTS]), 1);
	ws_arena_close(a);
}
END_TEST

START_TEST(duplicate_einval)
{
	ws_arena *a = test_arena();
	ws_handle s = mk_sem(a, 2, 2);
	ws_handle e = mk_event(a, false, true);
	ws_handle m = mk_mutex(a, 0, 0);
	struct timespec past = deadline_past();
	uint32_t idx = 99;
	ws_handle d1[3] = { s, e, s };
	CK_RC(all(a, d1, 3, 1, 0, &past, &idx), -EINVAL);
	CK_RC(all(a, d1, 3, 1, 0, NULL, &idx), -EINVAL);
	ws_handle d2[2] = { e, e };
	CK_RC(all(a, d2, 2, 1, 0, &past, &idx), -EINVAL);
	ws_handle d3[4] = { m, s, e, m };
	CK_RC(all(a, d3, 4, 1, 0, &past, &idx), -EINVAL);
	/* nothing changed */
	ck_assert_uint_eq(sem_count(a, s), 2);
	ck_assert(ev_signaled(a, e));
	uint32_t c, o;
	mtx_state(a, m, &c, &o);
	ck_assert_uint_eq(c, 0);
	ck_assert_uint_eq(o, 0);
	ws_arena_close(a);
}
END_TEST

/* NT looks up every handle before it looks for twins: a closed one wins. */
START_TEST(invalid_handle_before_duplicate)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, true, true), gone = mk_event(a, true, true);
	ws_handle objs[3] = { e, e, gone };
	uint32_t idx;

	CK_OK(ws_close(a, gone));
	CK_RC(poll_all(a, objs, 3, 1, &idx), -EBADF);
	ws_arena_close(a);
}
END_TEST

START_TEST(acquires_everything)
{
	ws_arena *a = test_arena();
	ws_handle s = mk_sem(a, 2, 5);
	ws_handle ea = mk_event(a, false, true);
	ws_handle em = mk_event(a, true, true);
	ws_handle m = mk_mutex(a, 0, 0);
	ws_handle mr = mk_mutex(a, 7, 2);
	ws_handle objs[5] = { s, ea, em, m, mr };
	uint32_t idx = 12345;
	CK_OK(wait_all_ms(a, objs, 5, 7, 0, LONG_MS, &idx));
	ck_assert_uint_eq(idx, 0);
	ck_assert_uint_eq(sem_count(a, s), 1);
	ck_assert(!ev_signaled(a, ea));
	ck_assert(ev_signaled(a, em));
	uint32_t c, o;
	mtx_state(a, m, &c, &o);
	ck_assert_uint_eq(c, 1);
	ck_assert_uint_eq(o, 7);
	mtx_state(a, mr, &c, &o);
	ck_assert_uint_eq(c, 3);
	ck_assert_uint_eq(o, 7);
	ws_arena_close(a);
}
END_TEST

START_TEST(one_missing_takes_nothing)
{
	ws_arena *a = test_arena();
	ws_handle s = mk_sem(a, 1, 5);
	ws_handle ea = mk_event(a, false, true);
	ws_handle m = mk_mutex(a, 0, 0);
	ws_handle m_other = mk_mutex(a, 50, 1);
	ws_handle e_off = mk_event(a, false, false);
	ws_handle s0 = mk_sem(a, 0, 1);
	ws_handle blockers[3] = { m_other, e_off, s0 };
	for (int b = 0; b < 3; b++) {
		ws_handle objs[4] = { s, ea, m, blockers[b] };
		uint32_t idx;
		CK_RC(poll_all(a, objs, 4, 7, &idx), -ETIMEDOUT);
		CK_RC(wait_all_ms(a, objs, 4, 7, 0, SHORT_MS, &idx), -ETIMEDOUT);
		ck_assert_uint_eq(sem_count(a, s), 1);
		ck_assert(ev_signaled(a, ea));
		uint32_t c, o;
		mtx_state(a, m, &c, &o);
		ck_assert_uint_eq(c, 0);
		ck_assert_uint_eq(o, 0);
	}
	ws_arena_close(a);
}
END_TEST

/* A wait_all by the owner of a mutex at UINT32_MAX cannot complete. */
START_TEST(recursion_limit_blocks_wait_all)
{
	ws_arena *a = test_arena();
	ws_handle m = mk_mutex(a, 7, UINT32_MAX);
	ws_handle s = mk_sem(a, 1, 1);
	ws_handle objs[2] = { s, m };
	uint32_t idx;
	CK_RC(poll_all(a, objs, 2, 7, &idx), -ETIMEDOUT);
	ck_assert_uint_eq(sem_count(a, s), 1);
	CK_OK(ws_mutex_unlock(a, m, 7, NULL));
	CK_OK(poll_all(a, objs, 2, 7, &idx));
	ck_assert_uint_eq(sem_count(a, s), 0);
	ws_arena_close(a);
}
END_TEST

START_TEST(count_zero)
{
	/*
	 * The spec defines count 0 for wait_any only; for wait_all it is
	 * allowed (not -EINVAL), and either vacuously satisfied (the ntsync
	 * behaviour) or ended by the deadline.
	 */
	ws_arena *a = test_arena();
	uint32_t idx = 99;
	struct timespec dl = deadline_ms(SHORT_MS);
	int rc = all(a, NULL, 0, 1, 0, &dl, &idx);
	ck_assert_msg(rc == 0 || rc == -ETIMEDOUT, "wait_all count 0: %d (%s)", rc, errname(rc));
	if (rc == 0)
		ck_assert_uint_eq(idx, 0);
	ws_arena_close(a);
}
END_TEST

/* Blocked wait_all completes only when the last object becomes available. */
START_TEST(blocked_until_last)
{
	ws_arena *a = test_arena();
	ws_handle s = mk_sem(a, 0, 5);
	ws_handle e = mk_event(a, false, false);
	ws_handle m = mk_mutex(a, 50, 1);
	ws_handle objs[3] = { s, e, m };
	struct waiter w;
	waiter_init(&w, a, 7, true, objs, 3);
	waiter_start(&w);
	waiter_wait_blocked(&w);
	CK_OK(ws_sem_release(a, s, 1, NULL));
	sleep_ms(50);
	ck_assert(!waiter_done(&w));
	ck_assert_uint_eq(sem_count(a, s), 1);
	CK_OK(ws_event_set(a, e, NULL));
	sleep_ms(50);
	ck_assert(!waiter_done(&w));
	ck_assert(ev_signaled(a, e));
	ck_assert_uint_eq(sem_count(a, s), 1);
	CK_OK(ws_mutex_unlock(a, m, 50, NULL));
	/* everything handed over at once */
	ck_assert_uint_eq(sem_count(a, s), 0);
	ck_assert(!ev_signaled(a, e));
	uint32_t c, o;
	mtx_state(a, m, &c, &o);
	ck_assert_uint_eq(o, 7);
	ck_assert_uint_eq(c, 1);
	CK_OK(waiter_join(&w));
	ck_assert_uint_eq(w.index, 0);
	ws_arena_close(a);
}
END_TEST

/* A wait_any competing for one object of a blocked wait_all wins it if the
 * wait_all cannot complete; the wait_all keeps nothing meanwhile. */
START_TEST(wait_all_does_not_hold_partial)
{
	ws_arena *a = test_arena();
	ws_handle s = mk_sem(a, 0, 5);
	ws_handle e = mk_event(a, true, false);
	ws_handle objs[2] = { s, e };
	struct waiter w;
	waiter_init(&w, a, 7, true, objs, 2);
	waiter_start(&w);
	waiter_wait_blocked(&w);
	for (int i = 0; i < 20; i++) {
		CK_OK(ws_sem_release(a, s, 1, NULL));
		uint32_t idx;
		CK_OK(poll_any(a, &s, 1, 8, &idx));
	}
	ck_assert(!waiter_done(&w));
	CK_OK(ws_sem_release(a, s, 2, NULL));
	CK_OK(ws_event_set(a, e, NULL));
	CK_OK(waiter_join(&w));
	ck_assert_uint_eq(sem_count(a, s), 1);
	ck_assert(ev_signaled(a, e));
	ws_arena_close(a);
}
END_TEST

/* A blocked wait_all on 64 semaphores holds none of them until the last
 * one is released, then takes all 64. */
START_TEST(blocked_on_64)
{
	ws_arena *a = test_arena();
	ws_handle s[WS_MAX_WAIT_OBJECTS];
	for (int i = 0; i < WS_MAX_WAIT_OBJECTS; i++)
		s[i] = mk_sem(a, 0, 1);
	struct waiter w;
	waiter_init(&w, a, 7, true, s, WS_MAX_WAIT_OBJECTS);
	waiter_start(&w);
	waiter_wait_blocked(&w);
	for (int i = WS_MAX_WAIT_OBJECTS - 1; i > 0; i--)
		CK_OK(ws_sem_release(a, s[i], 1, NULL));
	sleep_ms(50);
	ck_assert(!waiter_done(&w));
	for (int i = 1; i < WS_MAX_WAIT_OBJECTS; i++)
		ck_assert_uint_eq(sem_count(a, s[i]), 1);
	CK_OK(ws_sem_release(a, s[0], 1, NULL));
	CK_OK(waiter_join(&w));
	ck_assert_uint_eq(w.index, 0);
	for (int i = 0; i < WS_MAX_WAIT_OBJECTS; i++)
		ck_assert_uint_eq(sem_count(a, s[i]), 0);
	ws_arena_close(a);
}
END_TEST

/* A blocked wait_all by the owner of one of its mutexes takes it again
 * recursively when the rest becomes available. */
START_TEST(blocked_owner_recursion)
{
	ws_arena *a = test_arena();
	ws_handle m = mk_mutex(a, 7, 1);
	ws_handle e = mk_event(a, false, false);
	ws_handle objs[2] = { m, e };
	struct waiter w;
	waiter_init(&w, a, 7, true, objs, 2);
	waiter_start(&w);
	waiter_wait_blocked(&w);
	CK_OK(ws_event_set(a, e, NULL));
	CK_OK(waiter_join(&w));
	uint32_t c, o;
	ck_assert_int_eq(mtx_state(a, m, &c, &o), 0);
	ck_assert_uint_eq(c, 2);
	ck_assert_uint_eq(o, 7);
	ck_assert(!ev_signaled(a, e));
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("wait_all");
	TCase *tc = tcase_create("wait_all");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, argument_checks);
	tcase_add_test(tc, duplicate_einval);
	tcase_add_test(tc, invalid_handle_before_duplicate);
	tcase_add_test(tc, acquires_everything);
	tcase_add_test(tc, one_missing_takes_nothing);
	tcase_add_test(tc, recursion_limit_blocks_wait_all);
	tcase_add_test(tc, count_zero);
	tcase_add_test(tc, blocked_until_last);
	tcase_add_test(tc, blocked_on_64);
	tcase_add_test(tc, blocked_owner_recursion);
	tcase_add_test(tc, wait_all_does_not_hold_partial);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
