/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Calls each function's error paths that a test can reach on purpose and
 * prints one line per error seen, "FUNCTION -ENAME"; docs/check-man-errors.sh
 * then checks that the function's man page lists that error (issue 22).
 * Exit status: 0, or 1 when a call did not fail as planned.
 *   man_errors [--help]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <winsync.h>

static int failures;

static const char *name(int e)
{
	switch (-e) {
	case EINVAL: return "-EINVAL";
	case EBADF: return "-EBADF";
	case ENOSPC: return "-ENOSPC";
	case EOVERFLOW: return "-EOVERFLOW";
	case EPERM: return "-EPERM";
	case EOWNERDEAD: return "-EOWNERDEAD";
	case ETIMEDOUT: return "-ETIMEDOUT";
	case EEXIST: return "-EEXIST";
	case ENOENT: return "-ENOENT";
	case EACCES: return "-EACCES";
	case ENODATA: return "-ENODATA";
	default: return NULL;
	}
}

/* The call returned `got`; the plan was `want`. */
static void seen(const char *function, int got, int want)
{
	if (got != want || !name(got)) {
		fprintf(stderr, "%s: %d, expected %d\n", function, got, want);
		failures++;
		return;
	}
	printf("%s %s\n", function, name(got));
}

static struct timespec in_ms(long ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_nsec += ms * 1000000L;
	t.tv_sec += t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	return t;
}

int main(int argc, char **argv)
{
	ws_arena *a, *small, *other;
	ws_handle sem, mutex, event, closed, extra;
	uint32_t index, u;
	bool b;
	char shared[64], path[128];

	if (argc > 1) {
		printf("usage: %s [--help]\nprints \"FUNCTION -ERROR\" for each error path it takes\n",
		       argv[0]);
		return strcmp(argv[1], "--help") ? 2 : 0;
	}
	if (ws_arena_create(NULL, 0, &a) || ws_arena_create(NULL, 1, &small))
		return 77;
	snprintf(shared, sizeof shared, "man-errors-%d", (int)getpid());

	/* Arenas. */
	seen("ws_arena_create", ws_arena_create(NULL, 0, NULL), -EINVAL);
	seen("ws_arena_create", ws_arena_create("no/slash", 0, &other), -EINVAL);
	seen("ws_arena_create", ws_arena_create(NULL, 0xffffffffu, &other), -EINVAL);
	if (ws_arena_create(shared, 0, &other) == 0) {
		ws_arena *again;

		seen("ws_arena_create", ws_arena_create(shared, 0, &again), -EEXIST);
		ws_arena_unlink(shared);
		ws_arena_close(other);
	}
	seen("ws_arena_open", ws_arena_open(shared, &other), -ENOENT);
	seen("ws_arena_open", ws_arena_open(NULL, &other), -EINVAL);
	snprintf(path, sizeof path, "/dev/shm/winsync-%s", shared);
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
	if (fd >= 0) {
		fchmod(fd, 0644);
		close(fd);
		seen("ws_arena_open", ws_arena_open(shared, &other), -EACCES);
		unlink(path);
	}
	seen("ws_arena_unlink", ws_arena_unlink(shared), -ENOENT);
	seen("ws_arena_set_flags", ws_arena_set_flags(a, 0x80000000u), -EINVAL);
	seen("ws_arena_check", ws_arena_check(NULL, NULL, 0), -EINVAL);
	seen("ws_owner_died", ws_owner_died(a, 0), -EINVAL);

	/* Semaphores. */
	seen("ws_sem_create", ws_sem_create(a, 2, 1, &sem), -EINVAL);
	if (ws_sem_create(a, 1, 1, &sem))
		return 1;
	seen("ws_sem_release", ws_sem_release(a, sem, 1, NULL), -EOVERFLOW);
	seen("ws_sem_read", ws_sem_read(a, sem, NULL, &u), -EINVAL);
	if (ws_sem_create(small, 0, 1, &extra))
		return 1;
	seen("ws_sem_create", ws_sem_create(small, 0, 1, &closed), -ENOSPC);
	ws_close(small, extra);

	/* Mutexes: created owned by 1, unlocked by 2. */
	seen("ws_mutex_create", ws_mutex_create(a, 0, 1, &mutex), -EINVAL);
	if (ws_mutex_create(a, 1, 1, &mutex))
		return 1;
	seen("ws_mutex_unlock", ws_mutex_unlock(a, mutex, 2, NULL), -EPERM);
	seen("ws_mutex_kill", ws_mutex_kill(a, mutex, 2), -EPERM);
	seen("ws_mutex_read", ws_mutex_read(a, mutex, NULL, NULL), -EINVAL);

	/* Events and a closed handle. */
	if (ws_event_create(a, false, false, &event) || ws_event_create(a, false, false, &closed))
		return 1;
	if (ws_close(a, closed))
		return 1;
	seen("ws_close", ws_close(a, closed), -EBADF);
	seen("ws_event_create", ws_event_create(a, false, false, NULL), -EINVAL);
	seen("ws_event_set", ws_event_set(a, closed, &b), -EBADF);
	seen("ws_event_reset", ws_event_reset(a, closed, &b), -EBADF);
	seen("ws_event_pulse", ws_event_pulse(a, closed, &b), -EBADF);
	seen("ws_event_read", ws_event_read(a, closed, &b, &b), -EBADF);
	seen("ws_sem_release", ws_sem_release(a, closed, 1, NULL), -EBADF);
	seen("ws_mutex_unlock", ws_mutex_unlock(a, closed, 1, NULL), -EBADF);

	/* Waits. */
	struct timespec soon = in_ms(10);
	ws_handle one[] = { event }, twice[] = { event, event }, gone[] = { closed };
	struct ws_wait w = { .objects = one, .count = 1, .owner = 3, .deadline = &soon };
	seen("ws_wait_any", ws_wait_any(a, &w, &index), -ETIMEDOUT);
	w.alert = sem;
	seen("ws_wait_any", ws_wait_any(a, &w, &index), -EINVAL);
	w.alert = 0;
	w.objects = gone;
	seen("ws_wait_any", ws_wait_any(a, &w, &index), -EBADF);
	w.objects = twice;
	w.count = 2;
	seen("ws_wait_all", ws_wait_all(a, &w, &index), -EINVAL);

	/* The owner (1) abandons the mutex; the next to take it hears so. */
	if (ws_mutex_kill(a, mutex, 1))
		return 1;
	ws_handle m[] = { mutex };
	w.objects = m;
	w.count = 1;
	soon = in_ms(1000);
	seen("ws_wait_any", ws_wait_any(a, &w, &index), -EOWNERDEAD);

	/* Lock statistics: this program runs without WINSYNC_LOCK_STATS (CTest sees to it). */
	struct ws_lock_stats lock_stats;
	seen("ws_lock_stats_read", ws_lock_stats_read(NULL), -EINVAL);
	seen("ws_lock_stats_read", ws_lock_stats_read(&lock_stats), -ENODATA);

	ws_arena_close(small);
	ws_arena_close(a);
	return failures ? 1 : 0;
}
