/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ws_arena_check through a WS_ARENA_NONBLOCK pointer does not sleep on a
 * section on one object (libwinsync-fault).  A child process stops itself
 * at each point of a set that hands an event to a waiter in turn; whenever
 * it stopped holding that event's own lock, the check must return -EAGAIN
 * at once (and 0 again once the child ran on).  It used to take the arena
 * lock and then wait for every object's word, for as long as the stop
 * lasted (the random tester's nonblock mode, seed 3, under TSan: 1.15 s).
 */
#define _GNU_SOURCE
#include "robust.h"

#include <signal.h>
#include <sys/wait.h>

#include "../../winsync/arena.h" /* white-box: is slot 0's lock word held? */
#include "fault_api.h"

static char name[80];
static ws_handle held_event;

static int stopping_setter(void *arg)
{
	ws_arena *a = NULL;

	CHILD_CHECK(ws_arena_open(name, &a) == 0, 10);
	ws_fault_arm_signal((long)(intptr_t)arg, SIGSTOP);
	CHILD_CHECK(ws_event_set(a, held_event, NULL) == 0, 11);
	ws_fault_arm(0);
	return 0;
}

START_TEST(nonblocking_check_does_not_wait_for_a_stopped_section)
{
	ws_arena *a = named_arena(name, sizeof name, "nbcheck", 8), *nb = NULL;
	long k, limit_ms = 1000 * slow_factor();
	int caught = 0, status;

	held_event = mk_event(a, false, false);
	ck_assert_uint_eq(ws_handle_slot(a, held_event), 0);
	CK_OK(ws_arena_open(name, &nb));
	CK_OK(ws_arena_set_flags(nb, WS_ARENA_NONBLOCK));
	for (k = 1; k < 400; k++) {
		struct waiter served;
		pid_t pid;

		waiter_init(&served, a, 0x41, false, &held_event, 1);
		waiter_start_blocked(&served);
		pid = fork_child_fn(stopping_setter, (void *)(intptr_t)k);
		if (!stopped_or_ended(pid, LONG_MS, &status)) {
			ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
				      "the setter ended with status %#x", status);
			CK_OK(waiter_join(&served));
			break; /* k is past the set's last point */
		}
		if (atomic_load(&a->objects[0].lock) != 0) {
			struct bg_check check;
			bool on_time;
			int rc;

			caught++;
			bg_check_start(&check, nb);
			on_time = bg_check_wait(&check, limit_ms);
			kill(pid, SIGCONT);
			rc = bg_check_join(&check);
			ck_assert_msg(on_time, "point %ld: the check slept on the stopped holder "
				      "(%ld ms, then it returned %s)", k, limit_ms, errname(rc));
			ck_assert_msg(rc == -EAGAIN,
				      "point %ld: the check returned %s (%s), not -EAGAIN, with slot "
				      "0's holder stopped", k, errname(rc), check.report);
		} else {
			kill(pid, SIGCONT);
		}
		ck_assert(reap_child(pid, LONG_MS, &status));
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "the setter ended with status %#x", status);
		CK_OK(waiter_join(&served));
		/* The section over, the same pointer checks the arena whole. */
		CK_OK(ws_arena_check(nb, NULL, 0));
	}
	printf("non-blocking checks: %ld points of a set, %d of them with slot 0's lock held\n",
	       k - 1, caught);
	ck_assert_msg(caught > 0, "the setter never stopped holding slot 0's lock");
	ws_arena_close(nb);
	drop_arena(a, name);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("nonblock_check");
	TCase *tc = tcase_create("nonblock_check");

	tcase_set_timeout(tc, 280);
	tcase_add_test(tc, nonblocking_check_does_not_wait_for_a_stopped_section);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
