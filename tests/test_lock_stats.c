/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ws_lock_stats_read: -ENODATA unless WINSYNC_LOCK_STATS=1 was set before
 * the process's first critical section; with it, one acquisition and one
 * hold time per section, exactly (a wait(0) on an unsignaled event is one
 * section), percentiles in order, and threads that contend for the lock
 * counted as finding it held no more often than they took it.  Each case
 * runs in a child of its own, whose environment decides.
 */
#define _POSIX_C_SOURCE 200809L
#include "robust.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>

#define POLLS 20000
#define THREADS 4

/* The child's environment (NULL: unset), then an arena and an event nobody sets: 0 or -1. */
static int child_setup(const char *lock_stats, ws_arena **a, ws_handle *e)
{
	if (lock_stats)
		setenv("WINSYNC_LOCK_STATS", lock_stats, 1);
	else
		unsetenv("WINSYNC_LOCK_STATS");
	return ws_arena_create(NULL, 64, a) || ws_event_create(*a, false, false, e) ? -1 : 0;
}

/* Each returns 0 if every check held, else the number of the one that failed. */
static int off_child(void *arg)
{
	struct ws_lock_stats s;
	ws_arena *a;
	ws_handle e;

	(void)arg;
	if (child_setup(NULL, &a, &e))
		return 1;
	if (poll_one(a, e, 7) != -ETIMEDOUT)
		return 2;
	if (ws_lock_stats_read(&s) != -ENODATA)
		return 3;
	if (ws_lock_stats_read(NULL) != -EINVAL)
		return 4;
	ws_arena_close(a);
	return 0;
}

static int exact_child(void *arg)
{
	struct ws_lock_stats before, after;
	ws_arena *a;
	ws_handle e;

	(void)arg;
	if (child_setup("1", &a, &e))
		return 1;
	if (poll_one(a, e, 7) != -ETIMEDOUT || ws_lock_stats_read(&before))
		return 2;
	for (int i = 0; i < POLLS; i++)
		if (poll_one(a, e, 7) != -ETIMEDOUT)
			return 3;
	if (ws_lock_stats_read(&after))
		return 4;
	printf("lock stats: %d polls, %llu acquisitions, %llu found held, held median %llu ns, "
	       "p99 %llu ns, max %llu ns\n", POLLS,
	       (unsigned long long)(after.acquisitions - before.acquisitions),
	       (unsigned long long)(after.found_held - before.found_held),
	       (unsigned long long)after.held_ns_median, (unsigned long long)after.held_ns_p99,
	       (unsigned long long)after.held_ns_max);
	fflush(stdout);
	if (after.acquisitions - before.acquisitions != POLLS)
		return 5;
	if (after.held_samples - before.held_samples != POLLS)
		return 6;
	if (after.found_held != before.found_held) /* one thread: nobody else held it */
		return 7;
	if (!after.held_ns_median || after.held_ns_median > after.held_ns_p99 ||
	    after.held_ns_p99 > after.held_ns_max + after.held_ns_max / 8)
		return 8;
	ws_arena_close(a);
	return 0;
}

struct poller {
	pthread_t thread;
	ws_arena *a;
	ws_handle e;
	uint32_t owner;
	int bad;
};

static void *poll_loop(void *arg)
{
	struct poller *p = arg;

	for (int i = 0; i < POLLS / THREADS; i++)
		if (poll_one(p->a, p->e, p->owner) != -ETIMEDOUT)
			p->bad++;
	return NULL;
}

static int contended_child(void *arg)
{
	struct poller p[THREADS];
	struct ws_lock_stats s;
	ws_arena *a;
	ws_handle e;

	(void)arg;
	if (child_setup("1", &a, &e))
		return 1;
	for (int i = 0; i < THREADS; i++) {
		p[i] = (struct poller){ .a = a, .e = e, .owner = 10 + (uint32_t)i };
		if (pthread_create(&p[i].thread, NULL, poll_loop, &p[i]))
			return 2;
	}
	for (int i = 0; i < THREADS; i++)
		if (pthread_join(p[i].thread, NULL) || p[i].bad)
			return 3;
	if (ws_lock_stats_read(&s))
		return 4;
	printf("lock stats, %d threads: %llu acquisitions, %llu found held (%.1f %%), held median "
	       "%llu ns, p99 %llu ns\n", THREADS, (unsigned long long)s.acquisitions,
	       (unsigned long long)s.found_held, 100.0 * (double)s.found_held / (double)s.acquisitions,
	       (unsigned long long)s.held_ns_median, (unsigned long long)s.held_ns_p99);
	fflush(stdout);
	if (s.acquisitions < POLLS || s.found_held > s.acquisitions ||
	    s.held_samples != s.acquisitions)
		return 5;
	ws_arena_close(a);
	return 0;
}

static void run_child(int (*fn)(void *), const char *what)
{
	int status;
	pid_t pid = fork_child_fn(fn, NULL);

	ck_assert(reap_child(pid, LONG_MS, &status));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: check %d failed (%#x)",
		      what, WIFEXITED(status) ? WEXITSTATUS(status) : -1, status);
}

START_TEST(off_by_default)
{
	run_child(off_child, "off");
}
END_TEST

START_TEST(one_acquisition_and_hold_time_per_section)
{
	run_child(exact_child, "exact");
}
END_TEST

START_TEST(contended_threads)
{
	run_child(contended_child, "contended");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("lock_stats");
	TCase *tc = tcase_create("lock_stats");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, off_by_default);
	tcase_add_test(tc, one_acquisition_and_hold_time_per_section);
	tcase_add_test(tc, contended_threads);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(suite());
}
