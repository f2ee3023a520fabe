/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A mutex's owner dies at each step of its waiter's wait (libwinsync-fault):
 * the k-th fault point the waiter passes raises SIGUSR1 in it, and the
 * handler lets the owner thread end and returns only once the kernel has
 * marked the death in the owner's record.  Wherever the death lands, the
 * wait must end with the mutex (-EOWNERDEAD) at once, not at its deadline.
 * v3 before this test lost the death that landed between the waiter's look
 * at the owner's `alive` word and its FUTEX_WAITERS mark on it (CI: "wait
 * on a dead adopter's mutex: -110", test_reliability under a sanitizer).
 */
#define _GNU_SOURCE
#include "robust.h"

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "../../winsync/arena.h" /* white-box: the owner record's `alive` word */
#include "fault_api.h"

/* A step count no wait of one object comes near: the loop must end well before. */
#define MAX_STEPS 400

struct owner {
	ws_arena *a;
	uint32_t id;
	ws_handle mutex;
	_Atomic pid_t tid;
	_Atomic int go;          /* the handler's word: end now */
};

static struct owner *dying;
static _Atomic uint32_t *dying_alive;
static volatile sig_atomic_t handler_ran, death_marked;
static struct timespec handler_time;

/* Creates a mutex owned as its id, and ends holding it when told. */
static void *owner_main(void *arg)
{
	struct owner *o = arg;

	CK_OK(ws_mutex_create(o->a, o->id, 1, &o->mutex));
	atomic_store(&o->tid, (pid_t)syscall(SYS_gettid));
	while (!atomic_load(&o->go))
		sched_yield();
	return NULL;
}

/* In the waiter, at its fault point: the owner ends, and the kernel marks it dead. */
static void end_the_owner(int sig)
{
	struct timespec start, now;

	(void)sig;
	clock_gettime(CLOCK_MONOTONIC, &start);
	handler_time = start;
	handler_ran = 1;
	atomic_store(&dying->go, 1);
	do {
		if (atomic_load(dying_alive) & WS_FUTEX_OWNER_DIED) {
			death_marked = 1;
			return;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < 10);
}

/* The record whose `alive` word names live thread `tid`. */
static _Atomic uint32_t *alive_word_of(ws_arena *a, pid_t tid)
{
	for (uint32_t r = 0; r < a->records_count; r++) {
		uint32_t alive = atomic_load(&a->records[r].alive);

		if ((alive & WS_FUTEX_TID_MASK) == (uint32_t)tid && !(alive & WS_FUTEX_OWNER_DIED))
			return &a->records[r].alive;
	}
	return NULL;
}

START_TEST(owner_dies_at_each_step_of_the_wait)
{
	const long deadline_ms = 1000 * slow_factor();
	struct sigaction sa;
	int steps = 0;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = end_the_owner;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	for (int k = 1; k <= MAX_STEPS; k++) {
		ws_arena *a = test_arena();
		struct owner o = { .a = a, .id = 0x4000 + (uint32_t)k };
		pthread_t t = spawn(owner_main, &o);
		struct timespec t0;
		uint32_t idx;
		long ms;
		int rc;

		while (!atomic_load(&o.tid))
			sleep_ms(1);
		dying = &o;
		dying_alive = alive_word_of(a, atomic_load(&o.tid));
		ck_assert_ptr_nonnull(dying_alive);
		handler_ran = death_marked = 0;
		t0 = ts_now(CLOCK_MONOTONIC);
		ws_fault_arm_signal(k, SIGUSR1);
		rc = wait_any_ms(a, &o.mutex, 1, 0x99, 0, deadline_ms, &idx);
		ws_fault_arm(0);
		ms = ts_diff_ms(ts_now(CLOCK_MONOTONIC), t0);
		/*
		 * Step k comes after the waiter's sleep, which ended at its deadline
		 * with nobody dead: the steps before the sleep are all tried.
		 */
		if (!handler_ran || ts_diff_ms(handler_time, t0) >= deadline_ms) {
			ck_assert_msg(rc == -ETIMEDOUT, "step %d: no death, yet the wait gave %d", k,
				      rc);
			atomic_store(&o.go, 1);
			join(t);
			ws_arena_close(a);
			break;
		}
		ck_assert_msg(death_marked, "step %d: the owner's death was never marked", k);
		ck_assert_msg(rc == -EOWNERDEAD,
			      "step %d: a death at this step gave %d after %ld ms (deadline %ld ms)",
			      k, rc, ms, deadline_ms);
		join(t);
		CK_OK(ws_arena_check(a, NULL, 0));
		ws_arena_close(a);
		steps = k;
	}
	printf("death_watch: the owner died at each of the %d steps of the wait before its sleep:"
	       " seen each time\n", steps);
	/* The path to the sleep has steps, the watch among them. */
	ck_assert_int_ge(steps, 3);
	ck_assert_int_lt(steps, MAX_STEPS);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("death_watch");
	TCase *tc = tcase_create("death_watch");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, owner_dies_at_each_step_of_the_wait);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
