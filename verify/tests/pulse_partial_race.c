/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The second failure winsync-verify found in the core (core seed 1577,
 * verify/README.md), without the checker: a pulse takes effect for every
 * wait already blocked in one step, so a wait it released must never see
 * the pulse half done.
 *
 * Thread A blocks in wait_any {E} (manual event, unsignaled), then thread B
 * in wait_all {E, S} (semaphore, count 1); the main thread pulses E.  Both
 * are released by that pulse, B taking S with it, so when A returns S is
 * 0.  A reads S as soon as its wait returns.  The core hands off one waiter
 * at a time, each its own transaction, and wakes a hand-off's waiter when it
 * moves on to the next (txn.h, ws_guard): A runs while B's hand-off is still
 * to come, and reads 1.
 *
 *   pulse_partial_race [ROUNDS]    exit 0: A never saw S at 1 in ROUNDS (200)
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <winsync.h>

static ws_arena *arena;
static ws_handle E, S;

struct waiter {
	pthread_t thread;
	_Atomic pid_t tid;
	bool all;
	int rc;
	uint32_t seen; /* A: S's count once its wait returned */
};

static void die(const char *what, int rc)
{
	fprintf(stderr, "pulse_partial_race: %s: %s\n", what, strerror(-rc));
	exit(2);
}

static void *run(void *arg)
{
	struct waiter *w = arg;
	const ws_handle objects[2] = { E, S };
	struct timespec deadline;
	struct ws_wait wait = { .objects = objects, .count = w->all ? 2 : 1, .owner = w->all ? 2 : 1,
				.deadline = &deadline };
	uint32_t index, max;

	atomic_store(&w->tid, gettid());
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += 10;
	w->rc = w->all ? ws_wait_all(arena, &wait, &index) : ws_wait_any(arena, &wait, &index);
	if (!w->all && w->rc == 0 && ws_sem_read(arena, S, &w->seen, &max))
		die("ws_sem_read", -EIO);
	return NULL;
}

/* Is the thread asleep in futex (202) or futex_waitv (449)? */
static bool in_futex(pid_t tid)
{
	char path[64], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	if (!(f = fopen(path, "r")))
		return false;
	if (!fgets(buf, sizeof buf, f))
		buf[0] = 0;
	fclose(f);
	return !strncmp(buf, "202 ", 4) || !strncmp(buf, "449 ", 4);
}

static void start_blocked(struct waiter *w, bool all)
{
	int stable = 0;

	w->all = all;
	atomic_store(&w->tid, 0);
	if (pthread_create(&w->thread, NULL, run, w))
		die("pthread_create", -EAGAIN);
	while (!atomic_load(&w->tid))
		usleep(100);
	/* asleep several times in a row: queued, not passing through */
	for (int tries = 0; stable < 5 && tries < 100000; tries++) {
		stable = in_futex(atomic_load(&w->tid)) ? stable + 1 : 0;
		usleep(200);
	}
	if (stable < 5)
		die("a waiter never blocked", -ETIMEDOUT);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200, seen = 0;
	struct waiter a, b;
	int rc;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: %s [ROUNDS]\nPulses an event ROUNDS (200) times with a wait_any {E} and then a wait_all\n"
		       "{E, S} blocked on it; exit 1 if the first ever saw S still available.\n", argv[0]);
		return 0;
	}
	if ((rc = ws_arena_create(NULL, 0, &arena)))
		die("ws_arena_create", rc);
	for (long n = 0; n < rounds; n++) {
		if ((rc = ws_event_create(arena, true, false, &E)) || (rc = ws_sem_create(arena, 1, 1, &S)))
			die("create", rc);
		start_blocked(&a, false);
		start_blocked(&b, true);
		if ((rc = ws_event_pulse(arena, E, NULL)))
			die("ws_event_pulse", rc);
		pthread_join(a.thread, NULL);
		pthread_join(b.thread, NULL);
		if (a.rc || b.rc)
			die("a wait the pulse should have released", a.rc ? a.rc : b.rc);
		seen += a.seen == 1;
		if ((rc = ws_close(arena, E)) || (rc = ws_close(arena, S)))
			die("ws_close", rc);
	}
	ws_arena_close(arena);
	printf("%ld pulses released a wait_any {E} and then a wait_all {E, S}: "
	       "the first saw S still available %ld times\n", rounds, seen);
	return seen ? 1 : 0;
}
