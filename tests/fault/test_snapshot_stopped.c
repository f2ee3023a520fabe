/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A snapshot never waits for the arena lock: a process is stopped
 * (SIGSTOP) at each fault point of a set that hands the event to a queued
 * waiter, holding the lock with the event marked as being edited, and the
 * snapshot still returns at once, names the stopped thread as the lock
 * holder, and shows the event it was editing as BUSY (given up on) rather
 * than waiting for it.  Against the fault build of the core.
 */
#define _GNU_SOURCE
#include "stopped_set.h"

#include <signal.h>
#include <sys/wait.h>

static char name[96];

static long took_ms(struct timespec t0)
{
	return ts_diff_ms(ts_now(CLOCK_MONOTONIC), t0);
}

START_TEST(snapshot_beside_a_stopped_holder)
{
	ws_arena *a;
	int busy_seen = 0, held_seen = 0;
	long worst = 0;

	a = named_arena(name, sizeof name, "snapstop", 64);
	for (long k = 1; k <= 6; k++) {
		struct ws_snapshot *s, *own;
		struct timespec t0;
		struct waiter w;
		ws_handle ev = mk_event(a, false, false);
		int status;
		pid_t pid;

		waiter_init(&w, a, 0x80, false, &ev, 1);
		waiter_start(&w);
		waiter_asleep(&w);
		pid = fork_stopped_set(name, ev, k);
		ck_assert_msg(wait_stopped(pid, 60000), "point %ld: the holder never stopped", k);

		t0 = ts_now(CLOCK_MONOTONIC);
		CK_OK(ws_snapshot_open(name, 0, &s));
		CK_OK(ws_arena_snapshot(a, 0, &own));
		worst = took_ms(t0) > worst ? took_ms(t0) : worst;
		ck_assert_msg(took_ms(t0) < 100 * slow_factor(), "point %ld: %ld ms beside a stopped holder",
			      k, took_ms(t0));
		for (int i = 0; i < 2; i++) {
			const struct ws_snapshot *x = i ? own : s;
			const struct ws_snapshot_object *o = NULL;

			ck_assert_msg(x->problems == 0, "point %ld: %s", k, x->report);
			/* A set on one waiter's event holds that event's own lock, not the arena's. */
			ck_assert_uint_eq(x->lock_holder, WS_SNAPSHOT_NONE);
			for (uint32_t t = 0; t < x->thread_count; t++)
				if (x->threads[t].tid == (uint32_t)pid &&
				    (x->threads[t].flags & WS_SNAPSHOT_LOCK_HOLDER))
					held_seen += i == 0;
			for (uint32_t j = 0; j < x->object_count; j++)
				if (x->objects[j].handle == ev)
					o = &x->objects[j];
			ck_assert_ptr_nonnull(o);
			if (o->flags & WS_SNAPSHOT_BUSY) {
				ck_assert_uint_ge(x->gave_up, 1);
				busy_seen += i == 0;
			}
		}
		ws_snapshot_free(s);
		ws_snapshot_free(own);

		kill(pid, SIGCONT);
		ck_assert(reap_child(pid, 60000, &status));
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "point %ld: holder %#x", k,
			      status);
		ck_assert_int_eq(waiter_join(&w), 0);
		CK_OK(ws_arena_check(a, NULL, 0));
		CK_OK(ws_close(a, ev));
	}
	printf("snapshot beside a stopped holder: lock held at %d of 6 points, event busy at %d, "
	       "slowest %ld ms\n", held_seen, busy_seen, worst);
	/* The set takes its event's lock at its first points: the stop must have been seen holding it. */
	ck_assert_int_ge(held_seen, 1);
	ck_assert_int_ge(busy_seen, 1);
	drop_arena(a, name);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("snapshot_stopped");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, snapshot_beside_a_stopped_holder);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
