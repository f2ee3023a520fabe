/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Issue 21, finding 3: the alert is "0, or an event", and an alert that is
 * not an event is -EINVAL whatever the state of that object, before anything
 * is acquired.  On main ws_wait_any accepted a semaphore of count 0 or a
 * mutex held by another owner as its alert (skipped as not ready before its
 * type was checked) and took a ready object instead.
 */
#include "harness.h"

static int wt(ws_arena *a, bool all, const ws_handle *objs, uint32_t count, uint32_t owner,
	      ws_handle alert, const struct timespec *dl, uint32_t *idx)
{
	struct ws_wait w = { .objects = objs, .count = count, .owner = owner,
			     .alert = alert, .deadline = dl };

	return all ? ws_wait_all(a, &w, idx) : ws_wait_any(a, &w, idx);
}

/* Every wait shape with `alert`: -EINVAL, and the ready objects untouched. */
static void refused(ws_arena *a, ws_handle alert, const char *what)
{
	ws_handle ready = mk_event(a, false, true);
	ws_handle idle = mk_event(a, false, false);
	ws_handle sem = mk_sem(a, 1, 1);
	ws_handle objs[3] = { idle, ready, sem };
	struct timespec past = deadline_past(), soon = deadline_ms(SHORT_MS);

	for (int all = 0; all < 2; all++) {
		for (uint32_t first = 0; first < 2; first++) {
			uint32_t idx = 99;
			int rc = wt(a, all, objs + first, 3 - first, 7, alert, &past, &idx);

			ck_assert_msg(rc == -EINVAL, "%s, %s from index %u, polling: %s (index %u)",
				      what, all ? "wait_all" : "wait_any", first, errname(rc), idx);
			ck_assert(ev_signaled(a, ready));
			ck_assert_uint_eq(sem_count(a, sem), 1);
		}
		/* Refused before blocking too. */
		uint32_t idx = 99;
		struct timespec t0 = ts_now(CLOCK_MONOTONIC);
		int rc = wt(a, all, &idle, 1, 7, alert, &soon, &idx);

		ck_assert_msg(rc == -EINVAL, "%s, %s on an idle event: %s", what,
			      all ? "wait_all" : "wait_any", errname(rc));
		ck_assert_int_lt(ts_diff_ms(ts_now(CLOCK_MONOTONIC), t0), SHORT_MS);
	}
}

START_TEST(semaphore_alert_in_every_state)
{
	ws_arena *a = test_arena();

	for (uint32_t count = 0; count <= 2; count++) {
		ws_handle s = mk_sem(a, count, 2);

		refused(a, s, count ? "a semaphore with units" : "a semaphore of count 0");
		ck_assert_uint_eq(sem_count(a, s), count);
	}
	ws_arena_close(a);
}
END_TEST

START_TEST(mutex_alert_in_every_state)
{
	ws_arena *a = test_arena();
	ws_handle free_m = mk_mutex(a, 0, 0);
	ws_handle other = mk_mutex(a, 50, 1);
	ws_handle mine = mk_mutex(a, 7, 2);
	ws_handle abandoned = mk_mutex(a, 60, 1);
	uint32_t count, owner;

	CK_OK(ws_mutex_kill(a, abandoned, 60));
	refused(a, free_m, "a free mutex");
	refused(a, other, "a mutex another owner holds");
	refused(a, mine, "a mutex the waiter's owner id holds");
	refused(a, abandoned, "an abandoned mutex");
	CK_OK(mtx_state(a, free_m, &count, &owner));
	ck_assert_uint_eq(owner, 0);
	CK_OK(mtx_state(a, other, &count, &owner));
	ck_assert_uint_eq(owner, 50);
	ck_assert_uint_eq(count, 1);
	CK_OK(mtx_state(a, mine, &count, &owner));
	ck_assert_uint_eq(count, 2);
	CK_RC(mtx_state(a, abandoned, &count, &owner), -EOWNERDEAD);
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("reliability_alert_type");
	TCase *tc = tcase_create("alert_type");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, semaphore_alert_in_every_state);
	tcase_add_test(tc, mutex_alert_in_every_state);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
