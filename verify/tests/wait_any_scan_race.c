/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The failure winsync-verify found in the core (verify/README.md, "A real
 * failure"), without the checker: ws_wait_any over {auto-reset event E,
 * mutex M} must never take M while E is signaled, as NT's wait is one
 * atomic step.
 *
 * Thread B, cycle i: set E; lock M; note i under M; unlock M; wait until A
 * has taken E for cycle i.  Thread A polls wait_any {E, M} in a loop.  When
 * A takes M and finds B's note i while it has taken E only i - 1 times, B's
 * set of E came before B's section of M, which came before A's: E was
 * signaled when A took M.  The core's uncontended scan (winsync/wait.c,
 * try_any) reads E's head, then takes M by a compare-exchange; B's set and
 * its lock and unlock of M (which leaves M's head as it was) fit between.
 *
 *   wait_any_scan_race [SECONDS]    exit 0: no violation in SECONDS (5)
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <winsync.h>

#define A_OWNER 1u
#define B_OWNER 2u

static ws_arena *arena;
static ws_handle E, M;
static _Atomic long consumed; /* cycles whose E thread A has taken */
static long note;             /* B's last cycle, written under M */
static _Atomic int stop;

static void die(const char *what, int rc)
{
	fprintf(stderr, "wait_any_scan_race: %s: %s\n", what, strerror(-rc));
	exit(2);
}

static void *thread_b(void *arg)
{
	struct ws_wait w = { .objects = &M, .count = 1, .owner = B_OWNER };
	uint32_t index;
	int rc;

	(void)arg;
	for (long i = 1; !atomic_load(&stop); i++) {
		if ((rc = ws_event_set(arena, E, NULL)))
			die("ws_event_set", rc);
		if ((rc = ws_wait_any(arena, &w, &index)))
			die("ws_wait_any (B)", rc);
		note = i;
		if ((rc = ws_mutex_unlock(arena, M, B_OWNER, NULL)))
			die("ws_mutex_unlock (B)", rc);
		while (atomic_load(&consumed) < i && !atomic_load(&stop))
			;
	}
	return NULL;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds, end;
	const struct timespec past = { 0, 0 };
	long polls = 0, took_m = 0, violations = 0, first_note = 0, first_consumed = 0;
	pthread_t b;
	int rc;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: %s [SECONDS]\nPolls wait_any {E, M} for SECONDS (5) while another thread sets E and\n"
		       "takes M; exit 1 if it ever took M while E was signaled.\n", argv[0]);
		return 0;
	}
	seconds = argc > 1 ? atof(argv[1]) : 5;
	end = now() + seconds;
	if ((rc = ws_arena_create(NULL, 0, &arena)))
		die("ws_arena_create", rc);
	if ((rc = ws_event_create(arena, false, false, &E)) || (rc = ws_mutex_create(arena, 0, 0, &M)))
		die("create", rc);
	if (pthread_create(&b, NULL, thread_b, NULL))
		die("pthread_create", -EAGAIN);
	const ws_handle objects[2] = { E, M };
	const struct ws_wait w = { .objects = objects, .count = 2, .owner = A_OWNER, .deadline = &past };
	while (!violations && now() < end) {
		for (int n = 0; n < 1000; n++, polls++) {
			uint32_t index;

			rc = ws_wait_any(arena, &w, &index);
			if (rc == -ETIMEDOUT)
				continue;
			if (rc)
				die("ws_wait_any (A)", rc);
			if (index == 0) {
				atomic_fetch_add(&consumed, 1);
				continue;
			}
			took_m++;
			if (note > atomic_load(&consumed) && violations++ == 0) {
				first_note = note;
				first_consumed = atomic_load(&consumed);
			}
			if ((rc = ws_mutex_unlock(arena, M, A_OWNER, NULL)))
				die("ws_mutex_unlock (A)", rc);
		}
	}
	atomic_store(&stop, 1);
	pthread_join(b, NULL);
	ws_arena_close(arena);
	printf("%ld polls of wait_any {E, M}, %ld took M, %ld of them while E was signaled\n", polls, took_m,
	       violations);
	if (violations)
		printf("the first: B had set E for cycle %ld and then held M; A had taken E %ld times\n", first_note,
		       first_consumed);
	return violations ? 1 : 0;
}
