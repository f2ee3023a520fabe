/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * WS_ARENA_SPIN (spin.h): the flag is accepted and unknown ones refused,
 * and WINSYNC_SPIN=1 sets it on the arena pointers opened meanwhile;
 * with it, a ping-pong still hands every signal over exactly once and
 * polls before sleeping where the process may use two CPUs, but never in a
 * process started on one (run again under that affinity); without it,
 * nothing polls; a polling wait still times out at its deadline.  Linked
 * against the static core (winsync-fault) for its internal counters.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../winsync/stats.h"

#define ROUNDS 2000

struct pingpong {
	ws_arena *a;
	ws_handle ev[2];
	_Atomic long bad;
};

static void *partner(void *arg)
{
	struct pingpong *p = arg;
	uint32_t me = (uint32_t)gettid(), idx;

	for (int i = 0; i < ROUNDS; i++) {
		if (wait_any_ms(p->a, &p->ev[0], 1, me, 0, LONG_MS, &idx) || idx != 0)
			atomic_fetch_add(&p->bad, 1);
		if (ws_event_set(p->a, p->ev[1], NULL))
			atomic_fetch_add(&p->bad, 1);
	}
	return NULL;
}

enum spin_mode { SPIN_OFF, SPIN_ON, SPIN_AS_OPENED };

/* ROUNDS round trips on two auto-reset events; the polls it made, caught and missed. */
static void pingpong(enum spin_mode spin, uint64_t *caught, uint64_t *missed)
{
	struct pingpong p = { .a = test_arena() };
	uint64_t c0 = atomic_load(&ws_stat_counters[WS_STAT_SPIN_CAUGHT]);
	uint64_t m0 = atomic_load(&ws_stat_counters[WS_STAT_SPIN_MISSED]);
	uint32_t me = (uint32_t)gettid(), idx;
	pthread_t t;

	if (spin != SPIN_AS_OPENED)
		CK_OK(ws_arena_set_flags(p.a, spin == SPIN_ON ? WS_ARENA_SPIN : 0));
	p.ev[0] = mk_event(p.a, false, false);
	p.ev[1] = mk_event(p.a, false, false);
	ck_assert_int_eq(pthread_create(&t, NULL, partner, &p), 0);
	for (int i = 0; i < ROUNDS; i++) {
		bool was = true;

		CK_OK(ws_event_set(p.a, p.ev[0], &was));
		ck_assert_msg(!was, "round %d: the partner had not taken the last signal", i);
		CK_OK(wait_any_ms(p.a, &p.ev[1], 1, me, 0, LONG_MS, &idx));
		ck_assert_uint_eq(idx, 0);
	}
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(atomic_load(&p.bad), 0);
	/* Each signal was taken once: nothing is left over. */
	ck_assert(!ev_signaled(p.a, p.ev[0]) && !ev_signaled(p.a, p.ev[1]));
	CK_OK(ws_arena_check(p.a, NULL, 0));
	*caught = atomic_load(&ws_stat_counters[WS_STAT_SPIN_CAUGHT]) - c0;
	*missed = atomic_load(&ws_stat_counters[WS_STAT_SPIN_MISSED]) - m0;
	printf("spin %s: %llu polls caught the hand-off, %llu missed (%d round trips)\n",
	       spin == SPIN_ON ? "on" : spin == SPIN_OFF ? "off" : "as opened", (unsigned long long)*caught, (unsigned long long)*missed, ROUNDS);
	ws_arena_close(p.a);
}

static int cpus_allowed(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) ? 1 : CPU_COUNT(&set);
}

START_TEST(flags)
{
	ws_arena *a = test_arena();

	CK_OK(ws_arena_set_flags(a, WS_ARENA_SPIN));
	CK_OK(ws_arena_set_flags(a, WS_ARENA_SPIN | WS_ARENA_NONBLOCK));
	CK_RC(ws_arena_set_flags(a, 0x4), -EINVAL);
	CK_RC(ws_arena_set_flags(NULL, WS_ARENA_SPIN), -EINVAL);
	CK_OK(ws_arena_set_flags(a, 0));
	ws_arena_close(a);
}
END_TEST

START_TEST(off_never_polls)
{
	uint64_t caught, missed;

	pingpong(SPIN_OFF, &caught, &missed);
	ck_assert_uint_eq(caught + missed, 0);
}
END_TEST

START_TEST(on_polls_on_two_cpus)
{
	uint64_t caught, missed;

	if (cpus_allowed() < 2)
		return; /* the next test covers one CPU */
	pingpong(SPIN_ON, &caught, &missed);
	/* The first wait of every thread polls (a first budget), whatever follows. */
	ck_assert_uint_gt(caught + missed, 0);
}
END_TEST

/* WINSYNC_SPIN=1 turns it on for the arena pointers opened meanwhile, and only then. */
START_TEST(environment_turns_it_on)
{
	uint64_t caught, missed;

	if (cpus_allowed() < 2)
		return;
	ck_assert_int_eq(setenv("WINSYNC_SPIN", "1", 1), 0);
	pingpong(SPIN_AS_OPENED, &caught, &missed);
	ck_assert_uint_gt(caught + missed, 0);
	ck_assert_int_eq(unsetenv("WINSYNC_SPIN"), 0);
	pingpong(SPIN_AS_OPENED, &caught, &missed);
	ck_assert_uint_eq(caught + missed, 0);
}
END_TEST

/* The same program started on CPU 0 alone: it must never poll. */
START_TEST(never_on_one_cpu)
{
	cpu_set_t one;
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;
	int status;

	ck_assert_int_gt(len, 0);
	self[len] = 0;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (sched_setaffinity(0, sizeof(one), &one))
			_exit(3);
		setenv("WS_TEST_SPIN_ONE_CPU", "1", 1);
		execl(self, self, (char *)NULL);
		_exit(4);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the run on one CPU failed (status %#x)", status);
}
END_TEST

/* In the process started on one CPU. */
START_TEST(one_cpu_never_polls)
{
	uint64_t caught, missed;

	ck_assert_int_eq(cpus_allowed(), 1);
	pingpong(SPIN_ON, &caught, &missed);
	ck_assert_uint_eq(caught + missed, 0);
}
END_TEST

START_TEST(polling_wait_keeps_its_deadline)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	uint32_t idx;

	CK_OK(ws_arena_set_flags(a, WS_ARENA_SPIN));
	for (int i = 0; i < 50; i++) {
		struct timespec start = ts_now(CLOCK_MONOTONIC), end;
		struct timespec at = ts_add_ms(start, 1);
		struct ws_wait w = { .objects = &e, .count = 1, .owner = 1, .deadline = &at };

		CK_RC(ws_wait_any(a, &w, &idx), -ETIMEDOUT);
		end = ts_now(CLOCK_MONOTONIC);
		ck_assert_msg(ts_cmp(end, at) >= 0, "round %d: timed out before the deadline", i);
	}
	ck_assert(!ev_signaled(a, e));
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("spin");
	TCase *tc = tcase_create("spin");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, flags);
	tcase_add_test(tc, off_never_polls);
	tcase_add_test(tc, on_polls_on_two_cpus);
	tcase_add_test(tc, environment_turns_it_on);
	tcase_add_test(tc, never_on_one_cpu);
	tcase_add_test(tc, polling_wait_keeps_its_deadline);
	suite_add_tcase(s, tc);
	return s;
}

static Suite *one_cpu_suite(void)
{
	Suite *s = suite_create("spin on one CPU");
	TCase *tc = tcase_create("one CPU");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, one_cpu_never_polls);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(getenv("WS_TEST_SPIN_ONE_CPU") ? one_cpu_suite() : make_suite());
}
