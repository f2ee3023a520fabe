/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ws_close: closed handles are -EBADF everywhere; closing an object while
 * others wait on it does not wake them: the object lives on for them, as
 * in NT, until their waits end, and only then is its slot freed. */
#include "harness.h"

START_TEST(closed_handle_ebadf_everywhere)
{
	ws_arena *a = test_arena();
	ws_handle s = mk_sem(a, 1, 2);
	ws_handle m = mk_mutex(a, 5, 1);
	ws_handle e = mk_event(a, true, true);
	ws_handle keep = mk_event(a, true, true);
	CK_OK(ws_close(a, s));
	CK_OK(ws_close(a, m));
	CK_OK(ws_close(a, e));
	uint32_t u1, u2;
	bool b1, b2;
	CK_RC(ws_sem_release(a, s, 1, &u1), -EBADF);
	CK_RC(ws_sem_read(a, s, &u1, &u2), -EBADF);
	CK_RC(ws_mutex_unlock(a, m, 5, &u1), -EBADF);
	CK_RC(ws_mutex_kill(a, m, 5), -EBADF);
	CK_RC(ws_mutex_read(a, m, &u1, &u2), -EBADF);
	CK_RC(ws_event_set(a, e, &b1), -EBADF);
	CK_RC(ws_event_reset(a, e, &b1), -EBADF);
	CK_RC(ws_event_pulse(a, e, &b1), -EBADF);
	CK_RC(ws_event_read(a, e, &b1, &b2), -EBADF);
	CK_RC(ws_close(a, s), -EBADF);
	CK_RC(ws_close(a, m), -EBADF);
	CK_RC(ws_close(a, e), -EBADF);
	ws_handle objs[2] = { keep, e };
	uint32_t idx;
	CK_RC(poll_any(a, objs, 2, 1, &idx), -EBADF);
	CK_RC(poll_all(a, objs, 2, 1, &idx), -EBADF);
	CK_RC(wait_any_ms(a, objs, 2, 1, 0, LONG_MS, &idx), -EBADF);
	/* an alert that was closed */
	CK_RC(wait_any_ms(a, &keep, 1, 1, e, LONG_MS, &idx), -EBADF);
	ck_assert(ev_signaled(a, keep));
	/* the untouched object still works */
	CK_OK(poll_any(a, &keep, 1, 1, &idx));
	ws_arena_close(a);
}
END_TEST

/* close while waiting: the waiter keeps waiting until its deadline */
START_TEST(close_while_waiting_any)
{
	ws_arena *a = test_arena();
	for (int type = 0; type < 3; type++) {
		ws_handle h = type == 0 ? mk_event(a, false, false)
			    : type == 1 ? mk_sem(a, 0, 1) : mk_mutex(a, 50, 1);
		struct waiter w;
		waiter_init(&w, a, 7, false, &h, 1);
		w.timeout_ms = 500;
		waiter_start_blocked(&w);
		CK_OK(ws_close(a, h));
		sleep_ms(50);
		ck_assert(!waiter_done(&w));
		CK_RC(waiter_join(&w), -ETIMEDOUT);
		ck_assert(ts_cmp(w.returned, w.deadline) >= 0);
	}
	ws_arena_close(a);
}
END_TEST

START_TEST(close_while_waiting_all)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, true, true);
	ws_handle m = mk_mutex(a, 50, 1);
	ws_handle objs[2] = { e, m };
	struct waiter w;
	waiter_init(&w, a, 7, true, objs, 2);
	w.timeout_ms = 500;
	waiter_start_blocked(&w);
	CK_OK(ws_close(a, m));
	sleep_ms(50);
	ck_assert(!waiter_done(&w));
	CK_RC(waiter_join(&w), -ETIMEDOUT);
	ck_assert(ts_cmp(w.returned, w.deadline) >= 0);
	ck_assert(ev_signaled(a, e));
	ws_arena_close(a);
}
END_TEST

/* Closing the alert while waiting does not wake the waiter either. */
START_TEST(close_alert_while_waiting)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	ws_handle alert = mk_event(a, false, false);
	struct waiter w;
	waiter_init(&w, a, 7, false, &e, 1);
	w.alert = alert;
	w.timeout_ms = 400;
	waiter_start_blocked(&w);
	CK_OK(ws_close(a, alert));
	CK_RC(waiter_join(&w), -ETIMEDOUT);
	ck_assert(ts_cmp(w.returned, w.deadline) >= 0);
	ws_arena_close(a);
}
END_TEST

/* After one of its objects is closed, a wait_any is still woken by another. */
START_TEST(close_one_other_still_wakes)
{
	ws_arena *a = test_arena();
	ws_handle e0 = mk_event(a, false, false);
	ws_handle e1 = mk_event(a, false, false);
	ws_handle objs[2] = { e0, e1 };
	struct waiter w;
	waiter_init(&w, a, 7, false, objs, 2);
	waiter_start(&w);
	waiter_wait_blocked(&w);
	CK_OK(ws_close(a, e0));
	sleep_ms(50);
	ck_assert(!waiter_done(&w));
	CK_OK(ws_event_set(a, e1, NULL));
	CK_OK(waiter_join(&w));
	ck_assert_uint_eq(w.index, 1);
	ck_assert(!ev_signaled(a, e1));
	ws_arena_close(a);
}
END_TEST

/* Creates events until the arena is full: how many it took. */
static int fill(ws_arena *a)
{
	ws_handle h;
	int n = 0;

	while (ws_event_create(a, false, false, &h) == 0)
		n++;
	return n;
}

/*
 * A wait_all blocked on an object that is then closed may still take it
 * with the rest (NT: the wait holds a reference; MSDN leaves it undefined,
 * Wine's server and the model do this).  A semaphore's unit or an auto
 * event's state is what it takes; the slot comes free once the wait ends.
 */
START_TEST(closed_object_lives_on_for_a_wait_all)
{
	enum { CAP = 32 };

	for (int type = 0; type < 2; type++) {
		ws_arena *a = test_arena_cap(CAP);
		ws_handle kept = type == 0 ? mk_event(a, false, true) : mk_sem(a, 1, 1);
		ws_handle other = mk_event(a, true, false);
		ws_handle objs[2] = { kept, other };
		struct waiter w, late;

		waiter_init(&w, a, 7, true, objs, 2);
		waiter_start(&w);
		waiter_wait_blocked(&w);
		CK_OK(ws_close(a, kept));
		CK_OK(ws_arena_check(a, NULL, 0));
		/* A wait that starts now finds the handle closed. */
		waiter_init(&late, a, 8, true, objs, 2);
		waiter_start(&late);
		CK_RC(waiter_join(&late), -EBADF);
		sleep_ms(20);
		ck_assert(!waiter_done(&w));
		CK_OK(ws_event_set(a, other, NULL));
		CK_OK(waiter_join(&w));
		ck_assert_uint_eq(w.index, 0);
		ck_assert(ev_signaled(a, other));
		CK_OK(ws_arena_check(a, NULL, 0));
		/* Its wait over, the closed object's slot is free: all but `other`. */
		ck_assert_int_eq(fill(a), CAP - 1);
		CK_OK(ws_arena_check(a, NULL, 0));
		ws_arena_close(a);
	}
}
END_TEST

/* A closed mutex whose owner dies is abandoned to the wait queued on it. */
START_TEST(closed_mutex_abandoned_to_its_waiter)
{
	ws_arena *a = test_arena();
	ws_handle m = mk_mutex(a, 50, 1);
	struct waiter w;

	waiter_init(&w, a, 7, false, &m, 1);
	waiter_start(&w);
	waiter_wait_blocked(&w);
	CK_OK(ws_close(a, m));
	CK_RC(ws_mutex_unlock(a, m, 50, NULL), -EBADF);
	CK_OK(ws_owner_died(a, 50));
	CK_RC(waiter_join(&w), -EOWNERDEAD);
	ck_assert_uint_eq(w.index, 0);
	CK_OK(ws_arena_check(a, NULL, 0));
	ws_arena_close(a);
}
END_TEST

/* How many objects a snapshot shows closed, held for waits. */
static int closed_objects(ws_arena *a)
{
	struct ws_snapshot *s;
	int n = 0;

	CK_OK(ws_arena_snapshot(a, 0, &s));
	for (uint32_t i = 0; i < s->object_count; i++)
		n += !!(s->objects[i].flags & WS_SNAPSHOT_CLOSED);
	ws_snapshot_free(s);
	return n;
}

/* Held objects are freed oldest first by later creates, however many. */
START_TEST(held_objects_freed_when_their_waits_end)
{
	enum { CAP = 32, WAITERS = 12 };
	ws_arena *a = test_arena_cap(CAP);
	struct waiter w[WAITERS];
	ws_handle h[WAITERS];

	for (int i = 0; i < WAITERS; i++) {
		h[i] = mk_event(a, false, false);
		waiter_init(&w[i], a, 0x100 + (uint32_t)i, false, &h[i], 1);
		w[i].forever = true;
		waiter_start(&w[i]);
		waiter_wait_blocked(&w[i]);
	}
	for (int i = 0; i < WAITERS; i++)
		CK_OK(ws_close(a, h[i]));
	/* All held: the arena has room for the others only. */
	ck_assert_int_eq(closed_objects(a), WAITERS);
	ck_assert_int_eq(fill(a), CAP - WAITERS);
	for (int i = 0; i < WAITERS; i++) {
		CK_OK(ws_owner_died(a, 0x100 + (uint32_t)i));
		CK_RC(waiter_join(&w[i]), -ECANCELED);
	}
	/* Their waits over, the next create (the arena is full) frees them all. */
	CK_OK(ws_event_create(a, false, false, &h[0]));
	ck_assert_int_eq(closed_objects(a), 0);
	ck_assert_int_eq(fill(a), WAITERS - 1);
	CK_OK(ws_arena_check(a, NULL, 0));
	ws_arena_close(a);
}
END_TEST

/* Closing frees capacity and objects created afterwards work normally. */
START_TEST(close_and_recreate)
{
	ws_arena *a = test_arena_cap(2);
	for (int i = 0; i < 100; i++) {
		ws_handle x = mk_sem(a, 1, 1);
		ws_handle y = mk_event(a, false, true);
		ws_handle objs[2] = { x, y };
		uint32_t idx;
		CK_OK(poll_all(a, objs, 2, 1, &idx));
		ck_assert_uint_eq(sem_count(a, x), 0);
		ck_assert(!ev_signaled(a, y));
		CK_OK(ws_close(a, x));
		CK_OK(ws_close(a, y));
	}
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("close");
	TCase *tc = tcase_create("close");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, closed_handle_ebadf_everywhere);
	tcase_add_test(tc, close_while_waiting_any);
	tcase_add_test(tc, close_while_waiting_all);
	tcase_add_test(tc, close_alert_while_waiting);
	tcase_add_test(tc, close_one_other_still_wakes);
	tcase_add_test(tc, close_and_recreate);
	tcase_add_test(tc, closed_object_lives_on_for_a_wait_all);
	tcase_add_test(tc, closed_mutex_abandoned_to_its_waiter);
	tcase_add_test(tc, held_objects_freed_when_their_waits_end);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
