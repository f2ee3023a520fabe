/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A jump of the wall clock ends an absolute (CLOCK_REALTIME) wait and
 * leaves a relative (CLOCK_MONOTONIC) one alone, as Windows' absolute and
 * relative timeouts do.  It sets the system clock, so it runs only where
 * that is harmless: in the QEMU guest (image/CMakeLists.txt), which asks
 * for it with WINSYNC_GUEST_CLOCK=1.  Anywhere else it refuses (exit 77).
 *
 *   test_clock_jump          one run on the backend WINSYNC_BACKEND names
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <winsync.h>

#define JUMP_S        3600   /* the wall clock moves an hour forward */
#define ABSOLUTE_S    600    /* the absolute wait's deadline: 10 min ahead */
#define RELATIVE_MS   3000   /* the relative wait's deadline */
/*
 * An absolute wait ends this soon after the jump: at once with futex_waitv,
 * which sleeps on the realtime clock itself; within the 1 s slice of
 * FUTEX_WAIT_MULTIPLE, whose timeouts are relative (futex.c).
 */
#define REACT_WAITV_MS    300
#define REACT_MULTIPLE_MS 1500

struct waiter {
	ws_arena *arena;
	ws_handle event;
	bool realtime;
	struct timespec deadline;
	_Atomic int done;
	int rc;
	struct timespec ended;   /* CLOCK_MONOTONIC */
};

static long ms_between(struct timespec a, struct timespec b)
{
	return (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
}

static void *wait_main(void *arg)
{
	struct waiter *w = arg;
	struct ws_wait wait = { .objects = &w->event, .count = 1, .owner = 1,
				.flags = w->realtime ? WS_WAIT_REALTIME : 0,
				.deadline = &w->deadline };
	uint32_t index;

	w->rc = ws_wait_any(w->arena, &wait, &index);
	clock_gettime(CLOCK_MONOTONIC, &w->ended);
	atomic_store(&w->done, 1);
	return NULL;
}

static int shift_wall_clock(long seconds)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	now.tv_sec += seconds;
	return clock_settime(CLOCK_REALTIME, &now);
}

int main(int argc, char **argv)
{
	struct waiter absolute = { 0 }, relative = { 0 };
	struct timespec jumped, now;
	pthread_t ta, tr;
	ws_arena *arena;
	int failures = 0, react_ms;
	const char *guest = getenv("WINSYNC_GUEST_CLOCK");

	if (argc > 1 && !strcmp(argv[1], "--help")) {
		printf("usage: WINSYNC_GUEST_CLOCK=1 %s   (sets the wall clock: guest only)\n", argv[0]);
		return 0;
	}
	if (!guest || strcmp(guest, "1")) {
		fprintf(stderr, "test_clock_jump: sets the system clock; runs only in the guest "
				"(WINSYNC_GUEST_CLOCK=1)\n");
		return 77;
	}
	if (ws_arena_create(NULL, 0, &arena)) {
		fprintf(stderr, "test_clock_jump: no arena\n");
		return 1;
	}
	printf("test_clock_jump: backend %s\n", ws_futex_backend());
	react_ms = strcmp(ws_futex_backend(), "futex_waitv") ? REACT_MULTIPLE_MS : REACT_WAITV_MS;
	absolute.arena = relative.arena = arena;
	if (ws_event_create(arena, true, false, &absolute.event) ||
	    ws_event_create(arena, true, false, &relative.event))
		return 1;
	absolute.realtime = true;
	clock_gettime(CLOCK_REALTIME, &absolute.deadline);
	absolute.deadline.tv_sec += ABSOLUTE_S;
	clock_gettime(CLOCK_MONOTONIC, &relative.deadline);
	relative.deadline.tv_nsec += (RELATIVE_MS % 1000) * 1000000L;
	relative.deadline.tv_sec += RELATIVE_MS / 1000 + relative.deadline.tv_nsec / 1000000000L;
	relative.deadline.tv_nsec %= 1000000000L;
	pthread_create(&ta, NULL, wait_main, &absolute);
	pthread_create(&tr, NULL, wait_main, &relative);
	/* Both asleep in the kernel by now (a wait on an unsignaled event blocks at once). */
	nanosleep(&(struct timespec){ 0, 300000000L }, NULL);
	if (atomic_load(&absolute.done) || atomic_load(&relative.done)) {
		printf("FAIL: a wait ended before the jump\n");
		failures++;
	}
	if (shift_wall_clock(JUMP_S)) {
		perror("test_clock_jump: clock_settime");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &jumped);
	while (!atomic_load(&absolute.done)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (ms_between(jumped, now) > 20000)
			break;
		nanosleep(&(struct timespec){ 0, 10000000L }, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!atomic_load(&absolute.done) || absolute.rc != -ETIMEDOUT ||
	    ms_between(jumped, absolute.ended) > react_ms) {
		printf("FAIL: the absolute wait %s %ld ms after the jump (rc %d)\n",
		       atomic_load(&absolute.done) ? "ended" : "had not ended",
		       ms_between(jumped, atomic_load(&absolute.done) ? absolute.ended : now),
		       absolute.rc);
		failures++;
	} else {
		printf("absolute wait: -ETIMEDOUT %ld ms after the wall clock jumped %d s forward\n",
		       ms_between(jumped, absolute.ended), JUMP_S);
	}
	if (atomic_load(&relative.done) && ms_between(jumped, relative.ended) < 1000) {
		printf("FAIL: the relative wait ended with the jump\n");
		failures++;
	}
	pthread_join(tr, NULL);
	pthread_join(ta, NULL);
	{
		long late = ms_between(relative.deadline, relative.ended);

		if (relative.rc != -ETIMEDOUT || late < 0 || late > 500) {
			printf("FAIL: the relative wait ended %ld ms from its deadline (rc %d)\n", late,
			       relative.rc);
			failures++;
		} else {
			printf("relative wait: -ETIMEDOUT %ld ms after its own deadline, unmoved by "
			       "the jump\n", late);
		}
	}
	shift_wall_clock(-JUMP_S);
	ws_arena_close(arena);
	printf("test_clock_jump: %s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
