/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An object's lock word hands off to every sleeper.  A release wakes one
 * of them; the one woken may be a thread that waits for the word without
 * taking it (a wait-all in an arena section waiting for the object's own
 * section to end) or one that takes it in a loop of its own (the arena
 * check holding every object's word).  Either must leave the next sleeper
 * a wake: before the fix, a set on the same object that slept behind it
 * slept on a free word until its 100-ms look, the stalls that
 * test_snapshot_robust's stress run measured in CI (80 ms, native32).
 *
 * The order is made, not hoped for: a process is stopped (SIGSTOP, at each
 * fault point of an event's hand-off to its waiter) holding the event's
 * word; the waiting-for-the-word thread sleeps on it first, the set second
 * (a futex wakes its sleepers in order); then the holder goes on.  No lock
 * sleep may then run out its slice unwoken, and the set must be done
 * without one.  Against the fault build of the core.
 */
#define _GNU_SOURCE
#include "stopped_set.h"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../winsync/arena.h"
#include "../winsync/stats.h"
#include "whitebox.h"

static char name[96];

/* The second sleeper: a set of the same event, which takes its word. */
struct setter {
	ws_arena *a;
	ws_handle ev;
	_Atomic pid_t tid;
	_Atomic int done;
	int rc;
};

static void *set_event(void *arg)
{
	struct setter *s = arg;

	atomic_store(&s->tid, (pid_t)syscall(SYS_gettid));
	s->rc = ws_event_set(s->a, s->ev, NULL);
	atomic_store(&s->done, 1);
	return NULL;
}

/* The first sleeper, which waits for the word without taking it or takes it in its own loop. */
enum first { FIRST_WAIT_ALL, FIRST_CHECK };

struct checker {
	ws_arena *a;
	_Atomic pid_t tid;
	int rc;
};

static void *check_arena(void *arg)
{
	struct checker *k = arg;

	atomic_store(&k->tid, (pid_t)syscall(SYS_gettid));
	k->rc = ws_arena_check(k->a, NULL, 0);
	return NULL;
}

static pid_t wait_tid(_Atomic pid_t *tid)
{
	while (!atomic_load(tid))
		sleep_ms(1);
	return atomic_load(tid);
}

/* Lets the stopped holder go on; its wait status once it ended. */
static int resume_holder(pid_t pid)
{
	int status;

	kill(pid, SIGCONT);
	ck_assert(reap_child(pid, 60000, &status));
	return status;
}

static uint64_t slices(void)
{
	return atomic_load(&ws_stat_counters[WS_STAT_LOCK_SLICES]);
}

/*
 * One run at point k.  *set_ms is left alone if the holder did not stop
 * there holding the event's word (nothing to test at that point), or
 * ended (*ended: no points left).
 */
static void run_at(ws_arena *a, long k, enum first first, bool *ended, long *set_ms)
{
	struct waiter q, w;
	struct setter t = { .a = a };
	struct checker chk = { .a = a };
	pthread_t setter_thread, check_thread = 0;
	ws_handle ev = mk_event(a, false, false), both[2];
	uint32_t slot, seen;
	int status, rec;
	bool holds = false;
	pid_t pid;
	uint64_t slices0;
	struct timespec t0;

	both[0] = ev;
	both[1] = mk_event(a, true, true);
	t.ev = ev;
	slot = ws_handle_slot(a, ev);
	waiter_init(&q, a, 0x80, false, &ev, 1);
	waiter_start(&q);
	waiter_asleep(&q);
	/* Orders the record reads below after the waiter's claim of its own (whitebox.h). */
	CK_OK(ws_arena_check(a, NULL, 0));
	pid = fork_stopped_set(name, ev, k);
	*ended = !stopped_or_ended(pid, 60000, &status);
	if (!*ended) {
		rec = wb_live_record(a, pid);
		seen = atomic_load(&a->objects[slot].lock) & ~WS_LOCK_CONTENDED;
		holds = rec >= 0 && seen == wb_lock_ref(a, (uint32_t)rec);
		if (!holds)
			status = resume_holder(pid);
	}
	/* Ended, or stopped where it does not hold the word: nothing to test here. */
	if (!holds) {
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "point %ld: holder %#x", k,
			      status);
		ck_assert_int_eq(waiter_join(&q), 0);
		goto out;
	}

	/* First sleeper on the word, then the set behind it. */
	if (first == FIRST_WAIT_ALL) {
		waiter_init(&w, a, 0x81, true, both, 2);
		waiter_start(&w);
		waiter_asleep(&w);
	} else {
		check_thread = spawn(check_arena, &chk);
		wait_asleep(wait_tid(&chk.tid));
	}
	setter_thread = spawn(set_event, &t);
	wait_asleep(wait_tid(&t.tid));
	ck_assert_msg(atomic_load(&a->objects[slot].lock) & WS_LOCK_CONTENDED,
		      "point %ld: two sleepers and no contended bit", k);

	slices0 = slices();
	t0 = ts_now(CLOCK_MONOTONIC);
	status = resume_holder(pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "point %ld: holder %#x", k, status);
	while (!atomic_load(&t.done))
		sleep_ms(1);
	*set_ms = ts_diff_ms(ts_now(CLOCK_MONOTONIC), t0);
	join(setter_thread);
	CK_OK(t.rc);
	/*
	 * Nobody else holds the word for long here: a sleep that ran out its
	 * slice is one whose wake was kept by the thread woken before it.
	 */
	ck_assert_msg(slices() == slices0,
		      "point %ld (%s first): a sleeper on the event's word was never woken (set took "
		      "%ld ms)", k, first == FIRST_WAIT_ALL ? "wait-all" : "check", *set_ms);
	ck_assert_int_eq(waiter_join(&q), 0);
	if (first == FIRST_WAIT_ALL) {
		/* The set after the hand-off gave the wait-all its event. */
		ck_assert_int_eq(waiter_join(&w), 0);
	} else {
		join(check_thread);
		CK_OK(chk.rc);
	}
	CK_OK(ws_arena_check(a, NULL, 0));
	CK_OK(ws_close(a, both[1]));
out:
	CK_OK(ws_close(a, ev));
}

static void run_points(enum first first)
{
	ws_arena *a = named_arena(name, sizeof name, "handoff", 64);
	int tested = 0;
	long worst = 0;
	bool ended = false;

	for (long k = 1; !ended && k < 200; k++) {
		long set_ms = -1;

		run_at(a, k, first, &ended, &set_ms);
		if (set_ms >= 0) {
			tested++;
			worst = set_ms > worst ? set_ms : worst;
		}
	}
	printf("%s first: the holder stopped holding the event's word at %d points; the set "
	       "behind it done within %ld ms of the holder's going on\n",
	       first == FIRST_WAIT_ALL ? "wait-all" : "check", tested, worst);
	ck_assert_msg(ended, "the holder's set never ended within 200 points");
	/* The set holds its event's word from its first points on. */
	ck_assert_int_ge(tested, 1);
	drop_arena(a, name);
}

START_TEST(wait_all_woken_first)
{
	run_points(FIRST_WAIT_ALL);
}
END_TEST

START_TEST(check_woken_first)
{
	run_points(FIRST_CHECK);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("lock_handoff");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, wait_all_woken_first);
	tcase_add_test(tc, check_woken_first);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
