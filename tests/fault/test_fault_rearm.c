/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fault points themselves (libwinsync-fault): a thread that takes the
 * armed point raises the signal the point was armed with, even while another
 * thread disarms or re-arms at that moment.  Tests disarm with
 * ws_fault_arm(0) as soon as the call they aimed at returns, while a woken
 * thread may be at a point; a disarm that wrote SIGKILL as the signal before
 * it cleared the count killed test_owner_died_rearm under ASan in CI
 * (2026-12-06: "Received signal 9").
 */
#define _GNU_SOURCE
#include "robust.h"

#include <signal.h>

#include "../../winsync/fault.h"
#include "fault_api.h"

static _Atomic int stop;
static _Atomic long usr1_seen;

static void count_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&usr1_seen, 1);
}

static void *pass_points(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		ws_fault_point();
	return NULL;
}

START_TEST(disarm_never_changes_the_signal_of_a_point_taken)
{
	struct sigaction sa = { .sa_handler = count_usr1 };
	pthread_t threads[2];
	struct timespec end = deadline_ms(1500);
	long armings = 0;

	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	for (int i = 0; i < 2; i++)
		threads[i] = spawn(pass_points, NULL);
	/* Arm one point, disarm at once: SIGUSR1 or nothing, never the disarm's SIGKILL. */
	while (ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0) {
		for (int i = 0; i < 1000; i++, armings++) {
			ws_fault_arm_signal(1, SIGUSR1);
			ws_fault_arm(0);
		}
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		join(threads[i]);
	/* Disarmed: a point passed now raises nothing. */
	ws_fault_point();
	printf("fault_rearm: %ld armings, %ld SIGUSR1 raised, the process alive\n", armings,
	       atomic_load(&usr1_seen));
	ck_assert_int_gt(atomic_load(&usr1_seen), 0);
	ck_assert_int_le(atomic_load(&usr1_seen), armings);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("fault_rearm");
	TCase *tc = tcase_create("fault_rearm");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, disarm_never_changes_the_signal_of_a_point_taken);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
