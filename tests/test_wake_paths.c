/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every wake path (set, pulse, release, unlock, kill, alert, timeout) with a
 * blocked waiter in ws_wait_any and in ws_wait_all.  Each wake also checks
 * that the object was handed to the waiter by the waking call itself, and
 * that the waking call is a release barrier for plain data (which the
 * ThreadSanitizer build checks).
 */
#include "harness.h"

enum path {
	SET_MANUAL, SET_AUTO, PULSE_MANUAL, PULSE_AUTO, SEM_RELEASE,
	MUTEX_UNLOCK, MUTEX_KILL, ALERT_SET, ALERT_PULSE, TIMEOUT, NPATHS
};
static const char *path_name[NPATHS] = {
	"set manual", "set auto", "pulse manual", "pulse auto", "sem release",
	"mutex unlock", "mutex kill", "alert set", "alert pulse", "timeout",
};

#define WAITER_OWNER 7u
#define HOLDER 50u

/* plain (non-atomic) data published by the waking thread */
static long payload;

static void read_payload(struct waiter *w)
{
	*(long *)w->user = payload;
}

static void run_path(int p, bool all)
{
	ws_arena *a = test_arena();
	ws_handle idle = mk_event(a, false, false);   /* never signaled */
	ws_handle avail = mk_sem(a, 1, 1);            /* wait_all partner */
	ws_handle target, alert = 0;
	switch (p) {
	case SET_MANUAL: case PULSE_MANUAL: target = mk_event(a, true, false); break;
	case SET_AUTO: case PULSE_AUTO: target = mk_event(a, false, false); break;
	case SEM_RELEASE: target = mk_sem(a, 0, 3); break;
	case MUTEX_UNLOCK: case MUTEX_KILL: target = mk_mutex(a, HOLDER, 1); break;
	case ALERT_SET: case ALERT_PULSE:
		target = idle;
		alert = mk_event(a, false, false);
		break;
	default: target = idle; break;
	}
	ws_handle objs[2];
	uint32_t count;
	if (all) {
		objs[0] = avail;
		objs[1] = target;
		count = 2;
	} else {
		objs[0] = idle;
		objs[1] = target;
		count = target == idle ? 1 : 2;
	}
	long seen = -1;
	struct waiter w;
	waiter_init(&w, a, WAITER_OWNER, all, objs, count);
	w.alert = alert;
	w.user = &seen;
	w.after = p == TIMEOUT ? NULL : read_payload; /* a timeout publishes nothing */
	if (p == TIMEOUT)
		w.timeout_ms = 300;
	if (p == TIMEOUT) {
		waiter_start_blocked(&w);
	} else {
		waiter_start(&w);
		waiter_wait_blocked(&w);
	}

	payload = 1000 + p;
	uint32_t c, o;
	bool was = true;
	switch (p) {
	case SET_MANUAL:
		CK_OK(ws_event_set(a, target, &was));
		ck_assert(!was);
		ck_assert(ev_signaled(a, target));
		break;
	case SET_AUTO:
		CK_OK(ws_event_set(a, target, &was));
		ck_assert(!was);
		ck_assert_msg(!ev_signaled(a, target), "auto event still signaled right after set");
		break;
	case PULSE_MANUAL: case PULSE_AUTO:
		CK_OK(ws_event_pulse(a, target, &was));
		ck_assert(!was);
		ck_assert(!ev_signaled(a, target));
		break;
	case SEM_RELEASE: {
		uint32_t prev = 99;
		CK_OK(ws_sem_release(a, target, 1, &prev));
		ck_assert_uint_eq(prev, 0);
		ck_assert_msg(sem_count(a, target) == 0, "unit not handed to the waiter");
		break;
	}
	case MUTEX_UNLOCK:
		CK_OK(ws_mutex_unlock(a, target, HOLDER, NULL));
		ck_assert_int_eq(mtx_state(a, target, &c, &o), 0);
		ck_assert_msg(o == WAITER_OWNER && c == 1, "right after unlock: owner %u count %u", o, c);
		break;
	case MUTEX_KILL:
		CK_OK(ws_mutex_kill(a, target, HOLDER));
		ck_assert_int_eq(mtx_state(a, target, &c, &o), 0);
		ck_assert_msg(o == WAITER_OWNER && c == 1, "right after kill: owner %u count %u", o, c);
		break;
	case ALERT_SET:
		CK_OK(ws_event_set(a, alert, NULL));
		ck_assert(!ev_signaled(a, alert));
		break;
	case ALERT_PULSE:
		CK_OK(ws_event_pulse(a, alert, NULL));
		ck_assert(!ev_signaled(a, alert));
		break;
	default:
		break;
	}
	int rc = waiter_join(&w);
	int want = p == TIMEOUT ? -ETIMEDOUT : p == MUTEX_KILL ? -EOWNERDEAD : 0;
	ck_assert_msg(rc == want, "%s / %s: %d (%s), expected %d (%s)", path_name[p],
		      all ? "wait_all" : "wait_any", rc, errname(rc), want, errname(want));
	if (p == TIMEOUT) {
		ck_assert(ts_cmp(w.returned, w.deadline) >= 0);
		ck_assert_uint_eq(sem_count(a, avail), 1);
		ws_arena_close(a);
		return;
	}
	ck_assert_int_eq(seen, 1000 + p);
	uint32_t want_idx = (p == ALERT_SET || p == ALERT_PULSE) ? count : all ? 0 : 1;
	ck_assert_msg(w.index == want_idx, "%s / %s: index %u, expected %u", path_name[p],
		      all ? "wait_all" : "wait_any", w.index, want_idx);
	bool alerted = p == ALERT_SET || p == ALERT_PULSE;
	ck_assert_uint_eq(sem_count(a, avail), all && !alerted ? 0 : 1);
	ck_assert(!ev_signaled(a, idle));
	switch (p) {
	case SET_MANUAL: ck_assert(ev_signaled(a, target)); break;
	case SET_AUTO: case PULSE_MANUAL: case PULSE_AUTO: ck_assert(!ev_signaled(a, target)); break;
	case SEM_RELEASE: ck_assert_uint_eq(sem_count(a, target), 0); break;
	case MUTEX_UNLOCK: case MUTEX_KILL:
		ck_assert_int_eq(mtx_state(a, target, &c, &o), 0);
		ck_assert_uint_eq(o, WAITER_OWNER);
		ck_assert_uint_eq(c, 1);
		CK_OK(ws_mutex_unlock(a, target, WAITER_OWNER, NULL));
		break;
	default: ck_assert(!ev_signaled(a, alert)); break;
	}
	ws_arena_close(a);
}

START_TEST(wake_any)
{
	run_path(_i, false);
}
END_TEST

START_TEST(wake_all)
{
	run_path(_i, true);
}
END_TEST

/* A blocked wait_any on several objects of different types, each woken in
 * turn by a different path; the waiter sleeps between the wakes. */
START_TEST(same_waiter_set_any_types)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	ws_handle s = mk_sem(a, 0, 1);
	ws_handle m = mk_mutex(a, HOLDER, 1);
	ws_handle objs[3] = { e, s, m };
	for (int k = 0; k < 3; k++) {
		struct waiter w;
		waiter_init(&w, a, WAITER_OWNER, false, objs, 3);
		waiter_start(&w);
		waiter_wait_blocked(&w);
		if (k == 0)
			CK_OK(ws_event_set(a, e, NULL));
		else if (k == 1)
			CK_OK(ws_sem_release(a, s, 1, NULL));
		else
			CK_OK(ws_mutex_unlock(a, m, HOLDER, NULL));
		CK_OK(waiter_join(&w));
		ck_assert_uint_eq(w.index, (uint32_t)k);
	}
	ws_arena_close(a);
}
END_TEST

/* Manual set releases a mix of wait_any and wait_all waiters all at once;
 * a semaphore release of 2 releases exactly two of three. */
START_TEST(multi_waiter_paths)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, true, false);
	ws_handle s = mk_sem(a, 0, 5);
	struct waiter w[3];
	for (int i = 0; i < 3; i++) {
		ws_handle objs[2] = { s, e };
		waiter_init(&w[i], a, 10 + i, i == 1, objs, 2);
		waiter_start(&w[i]);
	}
	for (int i = 0; i < 3; i++)
		waiter_wait_blocked(&w[i]);
	/* the wait_all (needs s and e) stays; the wait_any ones take s units */
	CK_OK(ws_sem_release(a, s, 2, NULL));
	CK_OK(waiter_join(&w[0]));
	CK_OK(waiter_join(&w[2]));
	ck_assert_uint_eq(w[0].index, 0);
	ck_assert_uint_eq(w[2].index, 0);
	sleep_ms(50);
	ck_assert(!waiter_done(&w[1]));
	ck_assert_uint_eq(sem_count(a, s), 0);
	CK_OK(ws_event_set(a, e, NULL));
	sleep_ms(50);
	ck_assert(!waiter_done(&w[1]));
	CK_OK(ws_sem_release(a, s, 1, NULL));
	CK_OK(waiter_join(&w[1]));
	ck_assert_uint_eq(w[1].index, 0);
	ck_assert_uint_eq(sem_count(a, s), 0);
	ck_assert(ev_signaled(a, e));
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("wake_paths");
	TCase *tc = tcase_create("wake_paths");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, wake_any, 0, NPATHS);
	tcase_add_loop_test(tc, wake_all, 0, NPATHS);
	tcase_add_test(tc, same_waiter_set_any_types);
	tcase_add_test(tc, multi_waiter_paths);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
