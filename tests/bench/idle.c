/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * (5) Parked threads: how often does a thread blocked on objects that
 * nobody touches, while nobody dies, wake up?  fsync and ntsync: never.
 * Each row parks its threads, waits until all of them are asleep, then
 * counts the voluntary context switches of every thread over the measured
 * seconds from /proc/self/task/TID/status (a sleep that ended and began
 * again is one), and releases them at the end.  The futex row is the floor:
 * FUTEX_WAIT on a word nobody wakes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "idle.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "bench_util.h"
#include "json.h"

#define MAX_THREADS 256
#define OWNER_MAIN  1u        /* the owner id the main thread holds the mutex under */

enum kind { K_EVENT, K_SEM, K_MUTEX, K_ANY, K_ALL, K_FUTEX, K_COUNT };

static const char *const kind_name[K_COUNT] = {
	"winsync  event nobody sets (wait_any)",
	"winsync  semaphore at 0 (wait_any)",
	"winsync  mutex held by a live owner",
	"winsync  wait_any: event, semaphore, mutex",
	"winsync  wait_all: event, semaphore, mutex",
	"futex    FUTEX_WAIT on a word nobody wakes",
};

struct idle_row {
	enum kind kind;
	ws_arena *arena;
	ws_handle event, sem, mutex;
	_Atomic uint32_t word;
	int n;
	pthread_t thread[MAX_THREADS];
	_Atomic int tid[MAX_THREADS];
	int rc[MAX_THREADS];
	long switches[MAX_THREADS];
};

struct idle_arg {
	struct idle_row *row;
	int i;
};

static struct idle_arg args[K_COUNT][MAX_THREADS];

static void *parked(void *p)
{
	struct idle_arg *a = p;
	struct idle_row *r = a->row;
	ws_handle three[3] = { r->event, r->sem, r->mutex };
	struct ws_wait w = { .owner = 1000u + (uint32_t)a->i, .deadline = NULL };
	uint32_t index;

	atomic_store(&r->tid[a->i], (int)syscall(SYS_gettid));
	switch (r->kind) {
	case K_EVENT:
		w.objects = &r->event, w.count = 1;
		break;
	case K_SEM:
		w.objects = &r->sem, w.count = 1;
		break;
	case K_MUTEX:
		w.objects = &r->mutex, w.count = 1;
		break;
	case K_ANY:
	case K_ALL:
		w.objects = three, w.count = 3;
		break;
	case K_FUTEX:
		while (atomic_load(&r->word) == 0)
			syscall(SYS_futex, &r->word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
		r->rc[a->i] = 0;
		return NULL;
	default:
		break;
	}
	r->rc[a->i] = r->kind == K_ALL ? ws_wait_all(r->arena, &w, &index)
				       : ws_wait_any(r->arena, &w, &index);
	/* A mutex acquired goes on to the next waiter. */
	if (r->rc[a->i] == 0 &&
	    (r->kind == K_MUTEX || r->kind == K_ALL || (r->kind == K_ANY && index == 2)))
		ws_mutex_unlock(r->arena, r->mutex, w.owner, NULL);
	return NULL;
}

/* Voluntary context switches of one of our threads so far, or -1. */
static long voluntary_switches(int tid)
{
	char path[64], line[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* Is thread tid asleep (state S) in the kernel? */
static bool asleep(int tid)
{
	char path[64], line[128];
	bool s = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "State:", 6)) {
			s = strchr(line, 'S') != NULL;
			break;
		}
	fclose(f);
	return s;
}

static void sleep_s(double s)
{
	struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

static int release(struct idle_row *r)
{
	int failed = 0;

	switch (r->kind) {
	case K_FUTEX:
		atomic_store(&r->word, 1);
		syscall(SYS_futex, &r->word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
		break;
	case K_EVENT:
	case K_ANY:
		failed |= ws_event_set(r->arena, r->event, NULL) != 0;
		break;
	case K_SEM:
		failed |= ws_sem_release(r->arena, r->sem, (uint32_t)r->n, NULL) != 0;
		break;
	case K_MUTEX:
		failed |= ws_mutex_unlock(r->arena, r->mutex, OWNER_MAIN, NULL) != 0;
		break;
	case K_ALL:
		/* The (manual-reset) event stays set; the mutex goes from waiter to waiter. */
		failed |= ws_sem_release(r->arena, r->sem, (uint32_t)r->n, NULL) != 0;
		failed |= ws_event_set(r->arena, r->event, NULL) != 0;
		failed |= ws_mutex_unlock(r->arena, r->mutex, OWNER_MAIN, NULL) != 0;
		break;
	default:
		break;
	}
	return failed;
}

int bench_idle(ws_arena *arena, double seconds, int threads, bool *missed)
{
	static struct idle_row rows[K_COUNT];
	int failures = 0;

	*missed = false;
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	for (int k = 0; k < K_COUNT; k++) {
		struct idle_row *r = &rows[k];

		memset(r, 0, sizeof(*r));
		r->kind = (enum kind)k;
		r->arena = arena;
		r->n = threads;
		if (ws_event_create(arena, true, false, &r->event) ||
		    ws_sem_create(arena, 0, (uint32_t)threads, &r->sem) ||
		    ws_mutex_create(arena, OWNER_MAIN, 1, &r->mutex)) {
			fprintf(stderr, "winsync-bench: idle: object creation failed\n");
			return failures + 1;
		}
	}
	/* Every row parks at once: the measured seconds are shared. */
	for (int k = 0; k < K_COUNT; k++)
		for (int i = 0; i < threads; i++) {
			args[k][i] = (struct idle_arg){ &rows[k], i };
			if (pthread_create(&rows[k].thread[i], NULL, parked, &args[k][i])) {
				fprintf(stderr, "winsync-bench: idle: pthread_create failed\n");
				rows[k].n = i;
				failures++;
				break;
			}
		}
	/* All asleep before the count starts (a wait queues, then sleeps). */
	for (int tries = 0; tries < 2000; tries++) {
		bool all = true;

		for (int k = 0; k < K_COUNT && all; k++)
			for (int i = 0; i < rows[k].n && all; i++)
				all = atomic_load(&rows[k].tid[i]) && asleep(atomic_load(&rows[k].tid[i]));
		if (all)
			break;
		sleep_s(0.01);
	}
	sleep_s(0.2);
	for (int k = 0; k < K_COUNT; k++)
		for (int i = 0; i < rows[k].n; i++)
			rows[k].switches[i] = voluntary_switches(atomic_load(&rows[k].tid[i]));
	sleep_s(seconds);
	for (int k = 0; k < K_COUNT; k++)
		for (int i = 0; i < rows[k].n; i++)
			rows[k].switches[i] =
				voluntary_switches(atomic_load(&rows[k].tid[i])) - rows[k].switches[i];

	printf("  (5) parked threads: %d per row, blocked %.0f s on objects nobody touches\n",
	       threads, seconds);
	for (int k = 0; k < K_COUNT; k++) {
		struct idle_row *r = &rows[k];
		long total = 0, most = 0;
		double per;

		for (int i = 0; i < r->n; i++) {
			total += r->switches[i];
			if (r->switches[i] > most)
				most = r->switches[i];
		}
		per = r->n ? (double)total / r->n / seconds : 0.0;
		printf("    %-*s  %8.3f wake-ups per thread per second (%ld in all, at most %ld "
		       "for one)%s\n", 46, kind_name[k], per, total, most,
		       k != K_FUTEX && per > IDLE_TARGET ? "  ! above the target" : "");
		if (k != K_FUTEX && per > IDLE_TARGET)
			*missed = true;
		/* who, then the label past its 9-character who column */
		json_row_begin(5, k == K_FUTEX ? "futex" : "winsync", kind_name[k] + 9);
		json_str("unit", "wake-ups/thread/s");
		json_num("value", per);
		json_num("threads", r->n);
		json_num("seconds", seconds);
		json_num("total", (double)total);
		json_num("most_for_one", (double)most);
		json_num("target", IDLE_TARGET);
		json_row_end();
	}
	printf("    target: at most %.2f per thread per second (a wake-up a minute is 0.017)\n",
	       IDLE_TARGET);
	for (int k = 0; k < K_COUNT; k++) {
		struct idle_row *r = &rows[k];

		failures += release(r);
		for (int i = 0; i < r->n; i++) {
			pthread_join(r->thread[i], NULL);
			if (r->rc[i] != 0 && r->rc[i] != -EOWNERDEAD) {
				fprintf(stderr, "winsync-bench: idle: %s: thread %d: %s\n", kind_name[k], i,
					strerror(-r->rc[i]));
				failures++;
			}
		}
		ws_close(arena, r->event);
		ws_close(arena, r->sem);
		ws_close(arena, r->mutex);
	}
	return failures;
}
