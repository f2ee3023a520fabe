/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ws_owner_died(A) must cancel the waits of owner A only, even while their
 * threads go on waiting (libwinsync-fault).  A thread waits on an event as
 * owner A; ws_owner_died(A) is paused at its k-th fault point (SIGUSR1, the
 * handler), and meanwhile the event is set and the thread, if it got it,
 * waits on the same event as owner B: a wait on one object is armed under
 * that object's lock alone, not the arena's.  Wherever the pause lands, the
 * wait as B must not end with -ECANCELED.  Before ws_owner_died pinned the
 * wait it cancels (reap.c), a pause between its look at the record and its
 * hand-off canceled the wait as B (ThreadSanitizer found the race:
 * ws_wait_arm against ws_owner_died_locked).
 */
#define _GNU_SOURCE
#include "robust.h"

#include <signal.h>
#include <string.h>

#include "fault_api.h"

#define OWNER_A 0x5a5a
#define OWNER_B 0x5b5b
/* A step count ws_owner_died does not come near: the loop must end well before. */
#define MAX_STEPS 400

struct rearm {
	ws_arena *a;
	ws_handle event;
	long deadline_ms;
	_Atomic int set_now;     /* handler -> setter: set the event */
	_Atomic int second_wait; /* waiter: its wait as B begins now */
	_Atomic int done;
	_Atomic int quit;
	_Atomic pid_t waiter_tid;
	int rc_a, rc_b;
};

static struct rearm *paused;
static _Atomic int handler_ran;
static _Atomic pid_t pausing_tid; /* the thread that calls ws_owner_died */

/* Waits as A, then (whatever that gave) as B, on the same event. */
static void *waiter_main(void *arg)
{
	struct rearm *r = arg;
	uint32_t idx;

	atomic_store(&r->waiter_tid, gettid());
	r->rc_a = wait_any_ms(r->a, &r->event, 1, OWNER_A, 0, r->deadline_ms, &idx);
	atomic_store(&r->second_wait, 1);
	r->rc_b = wait_any_ms(r->a, &r->event, 1, OWNER_B, 0, r->deadline_ms / 4, &idx);
	atomic_store(&r->done, 1);
	return NULL;
}

/* Sets the event when told: it may block until ws_owner_died is over. */
static void *setter_main(void *arg)
{
	struct rearm *r = arg;

	while (!atomic_load(&r->set_now) && !atomic_load(&r->quit))
		sleep_ms(1);
	if (atomic_load(&r->set_now))
		CK_OK(ws_event_set(r->a, r->event, NULL));
	return NULL;
}

/* In ws_owner_died, at its fault point: the event is set; the waiter may wait again as B. */
static void pause_owner_died(int sig)
{
	(void)sig;
	/* Another thread at the point (the waiter, woken by the cancel): nothing to pause. */
	if (gettid() != atomic_load(&pausing_tid)) {
		atomic_store(&handler_ran, -1);
		return;
	}
	atomic_store(&handler_ran, 1);
	atomic_store(&paused->set_now, 1);
	for (int i = 0; i < 300 && !atomic_load(&paused->second_wait); i++)
		sleep_ms(1);
	/* Long enough for the wait as B to be armed, if nothing holds it up. */
	sleep_ms(50);
}

/* Asleep may be a futex of a sanitizer's runtime: wait until no thread passes fault points. */
static void wait_no_fault_points(void)
{
	long before;

	do {
		before = ws_fault_passed();
		sleep_ms(20);
	} while (ws_fault_passed() != before);
}

START_TEST(owner_died_spares_a_wait_armed_meanwhile)
{
	struct sigaction sa;
	int steps = 0, canceled_a = 0;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = pause_owner_died;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	for (int k = 1; k <= MAX_STEPS; k++) {
		struct rearm r = { .a = test_arena(), .deadline_ms = 2000 * slow_factor() };
		pthread_t waiter, setter;

		r.event = mk_event(r.a, false, false);
		paused = &r;
		atomic_store(&handler_ran, 0);
		atomic_store(&pausing_tid, gettid());
		waiter = spawn(waiter_main, &r);
		setter = spawn(setter_main, &r);
		/* Blocked: it passes no fault point while ws_owner_died counts them. */
		while (!atomic_load(&r.waiter_tid))
			sleep_ms(1);
		wait_asleep(atomic_load(&r.waiter_tid));
		wait_no_fault_points();
		ws_fault_arm_signal(k, SIGUSR1);
		CK_OK(ws_owner_died(r.a, OWNER_A));
		ws_fault_arm(0);
		/*
		 * Past its last step, or the waiter reached step k first: it can
		 * only once the cancel woke it, at the end of ws_owner_died.  The
		 * wait as A was canceled, nothing was set, the wait as B times out.
		 */
		if (atomic_load(&handler_ran) <= 0) {
			atomic_store(&r.quit, 1);
			join(waiter);
			join(setter);
			CK_RC(r.rc_a, -ECANCELED);
			CK_RC(r.rc_b, -ETIMEDOUT);
			ws_arena_close(r.a);
			break;
		}
		join(waiter);
		join(setter);
		ck_assert_msg(r.rc_b != -ECANCELED,
			      "step %d: the wait as B, armed while ws_owner_died(A) ran, was canceled"
			      " (wait as A gave %d)",
			      k, r.rc_a);
		ck_assert_msg(r.rc_a == 0 || r.rc_a == -ECANCELED, "step %d: wait as A gave %d", k,
			      r.rc_a);
		ck_assert_msg(r.rc_b == 0 || r.rc_b == -ETIMEDOUT, "step %d: wait as B gave %d", k,
			      r.rc_b);
		/* One set: exactly one of the two waits had it. */
		ck_assert_msg(!(r.rc_a == 0 && r.rc_b == 0), "step %d: one set satisfied two waits",
			      k);
		ck_assert_msg(r.rc_a == 0 || r.rc_b == 0,
			      "step %d: the set was lost (A %d, B %d)", k, r.rc_a, r.rc_b);
		canceled_a += r.rc_a == -ECANCELED;
		CK_OK(ws_arena_check(r.a, NULL, 0));
		ws_arena_close(r.a);
		steps = k;
	}
	printf("owner_died_rearm: paused at each of its %d steps; the wait as A canceled in %d,"
	       " the wait as B never\n",
	       steps, canceled_a);
	ck_assert_int_ge(steps, 3);
	ck_assert_int_lt(steps, MAX_STEPS);
	/* Paused before its look at the record, the waiter got the set; after, it was canceled. */
	ck_assert_int_gt(canceled_a, 0);
	ck_assert_int_lt(canceled_a, steps);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("owner_died_rearm");
	TCase *tc = tcase_create("owner_died_rearm");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, owner_died_spares_a_wait_armed_meanwhile);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
