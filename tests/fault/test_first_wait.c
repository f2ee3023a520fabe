/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A thread's first wait in an arena takes no lock but its objects' own
 * (libwinsync-fault).  A child process stops itself (SIGSTOP at a fault
 * point, as a debugger or a suspended Wine process would stop it) inside a
 * set that hands the event in slot 0 to a waiter, at each point of the set
 * in turn; whenever it
 * stopped holding that object's lock, a new thread of this process, which
 * never entered the arena, waits 100 ms on another event: it must time out
 * on time.  A record's entries used to start zeroed, naming slot 0, so the
 * first wait locked slot 0 to unlink them and waited for the stopped child.
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

START_TEST(first_wait_takes_no_unrelated_lock)
{
	ws_arena *a = named_arena(name, sizeof name, "firstwait", 8);
	ws_handle mine;
	int caught = 0, status;
	long k;

	held_event = mk_event(a, false, false);
	mine = mk_event(a, false, false);
	ck_assert_uint_eq(ws_handle_slot(a, held_event), 0);
	for (k = 1; k < 400; k++) {
		struct waiter served; /* the set hands the event to it, under the object's lock */
		pid_t pid;
		bool ended;

		waiter_init(&served, a, 0x41, false, &held_event, 1);
		waiter_start_blocked(&served);
		pid = fork_child_fn(stopping_setter, (void *)(intptr_t)k);
		ended = !stopped_or_ended(pid, LONG_MS, &status);
		if (ended) {
			ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
				      "the setter ended with status %#x", status);
			CK_OK(waiter_join(&served));
			break; /* k is past the set's last point */
		}
		if (atomic_load(&a->objects[0].lock) != 0) {
			struct waiter w;
			bool on_time;

			caught++;
			waiter_init(&w, a, 0x31, false, &mine, 1);
			w.timeout_ms = 100;
			waiter_start(&w);
			on_time = waiter_wait_done(&w, 100 + 3000 * slow_factor());
			kill(pid, SIGCONT);
			ck_assert_int_eq(waiter_join(&w), -ETIMEDOUT);
			ck_assert_msg(on_time, "a first wait on slot 1 waited for slot 0's lock "
				      "(its holder stopped at point %ld)", k);
		} else {
			kill(pid, SIGCONT);
		}
		ck_assert(reap_child(pid, LONG_MS, &status));
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "the setter ended with status %#x", status);
		CK_OK(waiter_join(&served));
	}
	printf("first waits: %ld points of a set, %d of them with slot 0's lock held\n", k - 1,
	       caught);
	ck_assert_msg(caught > 0, "the setter never stopped holding slot 0's lock");
	drop_arena(a, name);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("first_wait");
	TCase *tc = tcase_create("first_wait");

	tcase_set_timeout(tc, 280);
	tcase_add_test(tc, first_wait_takes_no_unrelated_lock);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
