/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Issue 21, finding 1: a signal walks every wait_all queued on its object
 * and locks all of each one's objects to see whether it can be completed.
 * Several large wait_all sets sharing one event are a legal workload: the
 * set (pulse, release) must succeed, hand the object to the waiter it can
 * complete, and leave the arena consistent, however many objects the walk
 * had to look at.  On main the walk overflows the transaction log's locked
 * entries (WS_LOG_LOCKED, 132) and the signal returns -EUCLEAN with the
 * object left signaled and the hand-off lost.
 */
#include <stdlib.h>

#include "harness.h"

enum how { BY_SET, BY_PULSE, BY_RELEASE };

/*
 * `waiters` threads in ws_wait_all on `count` objects each: X and count - 1
 * events nobody sets.  Then one in ws_wait_all({X, Y}), Y signaled.  Then X
 * is signaled: the last waiter must get it.
 */
static void big_sets_then_signal(int waiters, uint32_t count, enum how how)
{
	ws_arena *a = test_arena();
	ws_handle x = how == BY_RELEASE ? mk_sem(a, 0, 1) : mk_event(a, false, false);
	ws_handle y = mk_event(a, true, true);
	ws_handle end = mk_event(a, true, false);
	ws_handle pair[2] = { x, y };
	struct waiter *big = calloc((size_t)waiters, sizeof *big), last;
	char report[256];
	int rc;

	ck_assert_ptr_nonnull(big);
	for (int i = 0; i < waiters; i++) {
		ws_handle objs[WS_MAX_WAIT_OBJECTS];

		objs[0] = x;
		for (uint32_t k = 1; k < count; k++)
			objs[k] = mk_event(a, false, false);
		waiter_init(&big[i], a, 100 + (uint32_t)i, true, objs, count);
		big[i].alert = end;
		waiter_start(&big[i]);
		waiter_wait_blocked(&big[i]);
	}
	waiter_init(&last, a, 200, true, pair, 2);
	waiter_start(&last);
	waiter_wait_blocked(&last);

	switch (how) {
	case BY_SET:
		CK_OK(ws_event_set(a, x, NULL));
		break;
	case BY_PULSE:
		CK_OK(ws_event_pulse(a, x, NULL));
		break;
	case BY_RELEASE:
		CK_OK(ws_sem_release(a, x, 1, NULL));
		break;
	}
	ck_assert_msg(waiter_wait_done(&last, LONG_MS), "the hand-off of X was lost");
	CK_OK(waiter_join(&last));
	ck_assert_uint_eq(last.index, 0);
	if (how == BY_RELEASE)
		ck_assert_uint_eq(sem_count(a, x), 0);
	else
		ck_assert(!ev_signaled(a, x));
	ck_assert(ev_signaled(a, y));
	for (int i = 0; i < waiters; i++)
		ck_assert_msg(!waiter_done(&big[i]), "waiter %d returned %s", i, errname(big[i].rc));
	report[0] = 0;
	rc = ws_arena_check(a, report, sizeof report);
	ck_assert_msg(rc == 0, "ws_arena_check: %s: %s", errname(rc), report);

	/* The others end by their alert, having acquired nothing. */
	CK_OK(ws_event_set(a, end, NULL));
	for (int i = 0; i < waiters; i++) {
		CK_OK(waiter_join(&big[i]));
		ck_assert_uint_eq(big[i].index, count);
	}
	CK_OK(ws_arena_check(a, NULL, 0));
	free(big);
	ws_arena_close(a);
}

/* The shape the random tester found: 3 x 45 objects. */
START_TEST(set_past_three_sets_of_45)
{
	big_sets_then_signal(3, 45, BY_SET);
}
END_TEST

START_TEST(pulse_past_three_sets_of_45)
{
	big_sets_then_signal(3, 45, BY_PULSE);
}
END_TEST

START_TEST(release_past_three_sets_of_45)
{
	big_sets_then_signal(3, 45, BY_RELEASE);
}
END_TEST

/* Larger than any fixed log: sets of the most objects a wait may have. */
START_TEST(set_past_eight_sets_of_64)
{
	big_sets_then_signal(8, WS_MAX_WAIT_OBJECTS, BY_SET);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("reliability_wait_all_log");
	TCase *tc = tcase_create("wait_all_log");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, set_past_three_sets_of_45);
	tcase_add_test(tc, pulse_past_three_sets_of_45);
	tcase_add_test(tc, release_past_three_sets_of_45);
	tcase_add_test(tc, set_past_eight_sets_of_64);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
