/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ws_wait_any: argument checks, lowest index wins, duplicates, count 0,
 * *index, polls, a timeout acquires nothing. */
#include "harness.h"

static int any(ws_arena *a, const ws_handle *objs, uint32_t count, uint32_t owner,
	       ws_handle alert, const struct timespec *dl, uint32_t *idx)
{
	struct ws_wait w = { .objects = objs, .count = count, .owner = owner,
			     .alert = alert, .deadline = dl };
	return ws_wait_any(a, &w, idx);
}

START_TEST(count_limits)
{
	ws_arena *a = test_arena();
	ws_handle e[WS_MAX_WAIT_OBJECTS + 2];
	for (int i = 0; i < WS_MAX_WAIT_OBJECTS + 2; i++)
		e[i] = mk_event(a, false, true);
	struct timespec past = deadline_past();
	uint32_t idx = 99;
	CK_RC(any(a, e, WS_MAX_WAIT_OBJECTS + 1, 1, 0, &past, &idx), -EINVAL);
	CK_RC(any(a, e, UINT32_MAX, 1, 0, &past, &idx), -EINVAL);
	CK_RC(any(a, e, WS_MAX_WAIT_OBJECTS + 1, 1, 0, NULL, &idx), -EINVAL);
	for (int i = 0; i < WS_MAX_WAIT_OBJECTS + 2; i++)
		ck_assert(ev_signaled(a, e[i]));
	/* 64 is fine; only the last one signaled */
	for (int i = 0; i < WS_MAX_WAIT_OBJECTS - 1; i++)
		CK_OK(ws_event_reset(a, e[i], NULL));
	CK_OK(any(a, e, WS_MAX_WAIT_OBJECTS, 1, 0, &past, &idx));
	ck_assert_uint_eq(idx, WS_MAX_WAIT_OBJECTS - 1);
	ck_assert(!ev_signaled(a, e[WS_MAX_WAIT_OBJECTS - 1]));
	ws_arena_close(a);
}
END_TEST

START_TEST(owner_zero_einval)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, true);
	ws_handle s = mk_sem(a, 1, 1);
	ws_handle objs[2] = { e, s };
	struct timespec past = deadline_past();
	uint32_t idx = 99;
	CK_RC(any(a, objs, 2, 0, 0, &past, &idx), -EINVAL);
	CK_RC(any(a, objs, 2, 0, 0, NULL, &idx), -EINVAL);
	ck_assert(ev_signaled(a, e));
	ck_assert_uint_eq(sem_count(a, s), 1);
	ws_arena_close(a);
}
END_TEST

START_TEST(null_objects)
{
	ws_arena *a = test_arena();
	ws_handle alert = mk_event(a, false, true);
	struct timespec past = deadline_past();
	uint32_t idx = 99;
	CK_RC(any(a, NULL, 1, 1, 0, &past, &idx), -EINVAL);
	CK_RC(any(a, NULL, 3, 1, alert, &past, &idx), -EINVAL);
	ck_assert(ev_signaled(a, alert));
	/* NULL objects with count 0 is fine */
	CK_OK(any(a, NULL, 0, 1, alert, &past, &idx));
	ck_assert_uint_eq(idx, 0);
	ck_assert(!ev_signaled(a, alert));
	ws_arena_close(a);
}
END_TEST

START_TEST(lowest_index_wins)
{
	ws_arena *a = test_arena();
	ws_handle e[5];
	for (int i = 0; i < 5; i++)
		e[i] = mk_event(a, false, false);
	CK_OK(ws_event_set(a, e[3], NULL));
	CK_OK(ws_event_set(a, e[1], NULL));
	CK_OK(ws_event_set(a, e[4], NULL));
	uint32_t idx = 99;
	CK_OK(wait_any_ms(a, e, 5, 1, 0, LONG_MS, &idx));
	ck_assert_uint_eq(idx, 1);
	ck_assert(!ev_signaled(a, e[1]));
	ck_assert(ev_signaled(a, e[3]));
	ck_assert(ev_signaled(a, e[4]));
	CK_OK(poll_any(a, e, 5, 1, &idx));
	ck_assert_uint_eq(idx, 3);
	CK_OK(poll_any(a, e, 5, 1, &idx));
	ck_assert_uint_eq(idx, 4);
	CK_RC(poll_any(a, e, 5, 1, &idx), -ETIMEDOUT);
	ws_arena_close(a);
}
END_TEST

START_TEST(lowest_index_wins_mixed_types)
{
	ws_arena *a = test_arena();
	ws_handle s0 = mk_sem(a, 0, 3);
	ws_handle m_other = mk_mutex(a, 50, 1);
	ws_handle m_free = mk_mutex(a, 0, 0);
	ws_handle s3 = mk_sem(a, 2, 3);
	ws_handle e4 = mk_event(a, true, true);
	ws_handle objs[5] = { s0, m_other, m_free, s3, e4 };
	uint32_t idx = 99, c, o;
	CK_OK(poll_any(a, objs, 5, 7, &idx));
	ck_assert_uint_eq(idx, 2);
	mtx_state(a, m_free, &c, &o);
	ck_assert_uint_eq(o, 7);
	/* the owner holds m_free now: it wins again, recursively */
	CK_OK(poll_any(a, objs, 5, 7, &idx));
	ck_assert_uint_eq(idx, 2);
	/* another owner falls through to s3 */
	CK_OK(poll_any(a, objs, 5, 8, &idx));
	ck_assert_uint_eq(idx, 3);
	ck_assert_uint_eq(sem_count(a, s3), 1);
	/* and only one object is taken per wait */
	ck_assert_uint_eq(sem_count(a, s0), 0);
	ck_assert(ev_signaled(a, e4));
	mtx_state(a, m_other, &c, &o);
	ck_assert_uint_eq(o, 50);
	ck_assert_uint_eq(c, 1);
	mtx_state(a, m_free, &c, &o);
	ck_assert_uint_eq(c, 2);
	ws_arena_close(a);
}
END_TEST

/* The same object may appear twice; only one unit is taken. */
START_TEST(same_object_twice)
{
	ws_arena *a = test_arena();
	ws_handle s = mk_sem(a, 1, 5);
	ws_handle e = mk_event(a, false, false);
	ws_handle objs[3] = { e, s, s };
	uint32_t idx = 99;
	CK_OK(poll_any(a, objs, 3, 1, &idx));
	ck_assert_uint_eq(idx, 1);
	ck_assert_uint_eq(sem_count(a, s), 0);
	CK_RC(poll_any(a, objs, 3, 1, &idx), -ETIMEDOUT);
	ws_handle ee[2] = { e, e };
	CK_OK(ws_event_set(a, e, NULL));
	CK_OK(poll_any(a, ee, 2, 1, &idx));
	ck_assert_uint_eq(idx, 0);
	ck_assert(!ev_signaled(a, e));
	/* and blocked: a release of 1 wakes it once */
	struct waiter w;
	waiter_init(&w, a, 3, false, objs, 3);
	waiter_start(&w);
	waiter_wait_blocked(&w);
	CK_OK(ws_sem_release(a, s, 2, NULL));
	CK_OK(waiter_join(&w));
	ck_assert_uint_eq(w.index, 1);
	ck_assert_uint_eq(sem_count(a, s), 1);
	ws_arena_close(a);
}
END_TEST

START_TEST(count_zero)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	ws_handle objs[1] = { e };
	uint32_t idx = 99;
	/* only the deadline ends it */
	struct timespec dl = deadline_ms(SHORT_MS);
	CK_RC(any(a, objs, 0, 1, 0, &dl, &idx), -ETIMEDOUT);
	ck_assert(ts_cmp(ts_now(CLOCK_MONOTONIC), dl) >= 0);
	/* a signaled object beyond count is not looked at */
	CK_OK(ws_event_set(a, e, NULL));
	struct timespec past = deadline_past();
	CK_RC(any(a, objs, 0, 1, 0, &past, &idx), -ETIMEDOUT);
	ck_assert(ev_signaled(a, e));
	/* or the alert */
	ws_handle alert = mk_event(a, false, true);
	idx = 99;
	CK_OK(any(a, objs, 0, 1, alert, &past, &idx));
	ck_assert_uint_eq(idx, 0);
	ck_assert(!ev_signaled(a, alert));
	dl = deadline_ms(SHORT_MS);
	CK_RC(any(a, NULL, 0, 1, alert, &dl, &idx), -ETIMEDOUT);
	ws_arena_close(a);
}
END_TEST

START_TEST(past_deadline_polls)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, true);
	struct timespec zero = { 0, 0 };
	uint32_t idx = 99;
	CK_OK(any(a, &e, 1, 1, 0, &zero, &idx));
	ck_assert_uint_eq(idx, 0);
	struct timespec t0 = ts_now(CLOCK_MONOTONIC);
	CK_RC(any(a, &e, 1, 1, 0, &zero, &idx), -ETIMEDOUT);
	struct timespec past = deadline_past();
	CK_RC(any(a, &e, 1, 1, 0, &past, &idx), -ETIMEDOUT);
	struct timespec now = ts_now(CLOCK_MONOTONIC);
	CK_RC(any(a, &e, 1, 1, 0, &now, &idx), -ETIMEDOUT);
	ck_assert_msg(ts_diff_ms(ts_now(CLOCK_MONOTONIC), t0) < 2000, "a poll blocked");
	ws_arena_close(a);
}
END_TEST

START_TEST(timeout_acquires_nothing)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	ws_handle m = mk_mutex(a, 50, 1);
	ws_handle s = mk_sem(a, 0, 2);
	ws_handle objs[3] = { e, m, s };
	uint32_t idx;
	CK_RC(wait_any_ms(a, objs, 3, 7, 0, SHORT_MS, &idx), -ETIMEDOUT);
	ck_assert(!ev_signaled(a, e));
	ck_assert_uint_eq(sem_count(a, s), 0);
	uint32_t c, o;
	mtx_state(a, m, &c, &o);
	ck_assert_uint_eq(c, 1);
	ck_assert_uint_eq(o, 50);
	ws_arena_close(a);
}
END_TEST

START_TEST(index_set_on_success)
{
	ws_arena *a = test_arena();
	ws_handle e[3] = { mk_event(a, true, false), mk_event(a, true, false),
			   mk_event(a, true, true) };
	uint32_t idx = 12345;
	CK_OK(poll_any(a, e, 3, 1, &idx));
	ck_assert_uint_eq(idx, 2);
	CK_OK(ws_event_set(a, e[0], NULL));
	idx = 12345;
	CK_OK(poll_any(a, e, 3, 1, &idx));
	ck_assert_uint_eq(idx, 0);
	ws_arena_close(a);
}
END_TEST

/* One object per slot; the waiter is woken by the object at each index. */
START_TEST(blocked_woken_by_each_index)
{
	ws_arena *a = test_arena();
	enum { N = WS_MAX_WAIT_OBJECTS };
	ws_handle e[N];
	for (int i = 0; i < N; i++)
		e[i] = mk_event(a, false, false);
	for (int k = N - 1; k >= 0; k -= 9) {
		struct waiter w;
		waiter_init(&w, a, 1, false, e, N);
		waiter_start(&w);
		waiter_wait_blocked(&w);
		CK_OK(ws_event_set(a, e[k], NULL));
		CK_OK(waiter_join(&w));
		ck_assert_uint_eq(w.index, (uint32_t)k);
		for (int i = 0; i < N; i++)
			ck_assert(!ev_signaled(a, e[i]));
	}
	ws_arena_close(a);
}
END_TEST

/*
 * The scan is compiled apart for arena shapes (wait.c: try_any_shaped):
 * 2^16 slots, every index a slot; 22 index bits for WS_MAX_CAPACITY
 * slots, one index past the last; and any other (100 slots, 7 bits).
 * On each: nothing ready times out, the last of 64 is found, the lowest
 * of two wins, and an index past the slots or a closed handle after a
 * ready object fails the wait with -EBADF and takes nothing.
 */
static const uint32_t shape_capacity[] = { 0, WS_MAX_CAPACITY, 100 };

START_TEST(scan_every_arena_shape)
{
	ws_arena *a = NULL;
	ws_handle e[WS_MAX_WAIT_OBJECTS], dead;
	uint32_t idx = 99, n = WS_MAX_WAIT_OBJECTS, slots, bits = 0;

	CK_OK(ws_arena_create(NULL, shape_capacity[_i], &a));
	slots = shape_capacity[_i] ? shape_capacity[_i] : WS_DEFAULT_CAPACITY;
	while ((1u << bits) < slots)
		bits++;
	for (uint32_t i = 0; i < n; i++)
		e[i] = mk_event(a, false, false);
	CK_RC(poll_any(a, e, n, 1, &idx), -ETIMEDOUT);
	CK_OK(ws_event_set(a, e[n - 1], NULL));
	CK_OK(poll_any(a, e, n, 1, &idx));
	ck_assert_uint_eq(idx, n - 1);
	CK_OK(ws_event_set(a, e[n - 1], NULL));
	CK_OK(ws_event_set(a, e[0], NULL));
	CK_OK(poll_any(a, e, n, 1, &idx));
	ck_assert_uint_eq(idx, 0);
	ck_assert(ev_signaled(a, e[n - 1]));

	/* Index `slots` names no slot when the index bits allow it; a closed handle no object. */
	dead = mk_event(a, false, false);
	CK_OK(ws_close(a, dead));
	CK_OK(ws_event_set(a, e[0], NULL));
	for (int k = 0; k < 2; k++) {
		ws_handle saved = e[n - 1];

		if (k == 0 && slots == 1u << bits)
			continue; /* every index is a slot */
		e[n - 1] = k == 0 ? (1u << bits) | slots : dead;
		idx = 99;
		CK_RC(poll_any(a, e, n, 1, &idx), -EBADF);
		ck_assert_uint_eq(idx, 99);
		e[n - 1] = saved;
		ck_assert(ev_signaled(a, e[0]));
	}
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("wait_any");
	TCase *tc = tcase_create("wait_any");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, count_limits);
	tcase_add_test(tc, owner_zero_einval);
	tcase_add_test(tc, null_objects);
	tcase_add_test(tc, lowest_index_wins);
	tcase_add_test(tc, lowest_index_wins_mixed_types);
	tcase_add_test(tc, same_object_twice);
	tcase_add_test(tc, count_zero);
	tcase_add_test(tc, past_deadline_polls);
	tcase_add_test(tc, timeout_acquires_nothing);
	tcase_add_test(tc, index_set_on_success);
	tcase_add_test(tc, blocked_woken_by_each_index);
	tcase_add_loop_test(tc, scan_every_arena_shape, 0,
			    (int)(sizeof(shape_capacity) / sizeof(shape_capacity[0])));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
