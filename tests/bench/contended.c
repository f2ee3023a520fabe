/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-bench group (6): independent pairs of threads, each ping-ponging
 * on two auto-reset events of its own, all in one arena, in one arena per
 * pair, and on raw futex words.  With one lock per arena the pairs of one
 * arena queue on it for hand-offs on unrelated objects; with a lock per
 * object they should scale like separate arenas and like raw futexes.
 */
#define _GNU_SOURCE
#include "contended.h"

#include <errno.h>
#include <math.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "json.h"

#define RUNS 3

enum kind { ONE_ARENA, ARENA_EACH, FUTEX, KINDS };

static const char *const kind_name[KINDS] = {
	"winsync, all pairs in one arena",
	"winsync, one arena per pair",
	"futex, FUTEX_WAKE + FUTEX_WAIT",
};

struct pair {
	enum kind kind;
	ws_arena *arena;
	ws_handle ping, pong;
	_Atomic uint32_t word[2]; /* FUTEX: whose turn it is */
	_Atomic int *stop;
	uint32_t owner;           /* the waiting side's owner id */
	_Atomic uint64_t rounds; /* read while the pair runs */
	int failed;
};

static long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

static int ws_wait_one(struct pair *p, ws_handle h)
{
	struct timespec dl;
	struct ws_wait w = { .objects = &h, .count = 1, .owner = p->owner, .deadline = &dl };
	uint32_t index;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += 1; /* the stop flag is looked at least once a second */
	return ws_wait_any(p->arena, &w, &index);
}

static void futex_give(_Atomic uint32_t *word)
{
	atomic_store(word, 1);
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Waits for the word to be 1 and takes it back to 0; false when stopped. */
static bool futex_take(struct pair *p, _Atomic uint32_t *word)
{
	struct timespec slice = { 0, 100000000 };

	for (;;) {
		uint32_t one = 1;

		if (atomic_compare_exchange_strong(word, &one, 0))
			return true;
		if (atomic_load(p->stop))
			return false;
		syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 0, &slice, NULL, 0);
	}
}

/* One side of the pair: `first` serves, the other answers. */
static void run_side(struct pair *p, bool first)
{
	while (!atomic_load(p->stop)) {
		if (p->kind == FUTEX) {
			if (first) {
				futex_give(&p->word[0]);
				if (!futex_take(p, &p->word[1]))
					return;
				atomic_fetch_add_explicit(&p->rounds, 1, memory_order_relaxed);
			} else {
				if (!futex_take(p, &p->word[0]))
					return;
				futex_give(&p->word[1]);
			}
			continue;
		}
		int rc;

		if (first) {
			rc = ws_event_set(p->arena, p->ping, NULL);
			if (!rc)
				rc = ws_wait_one(p, p->pong);
			if (!rc)
				atomic_fetch_add_explicit(&p->rounds, 1, memory_order_relaxed);
		} else {
			rc = ws_wait_one(p, p->ping);
			if (!rc)
				rc = ws_event_set(p->arena, p->pong, NULL);
		}
		if (rc == -ETIMEDOUT)
			continue;
		if (rc) {
			p->failed = rc;
			return;
		}
	}
}

static void *server(void *arg)
{
	run_side(arg, true);
	return NULL;
}

static void *answerer(void *arg)
{
	run_side(arg, false);
	return NULL;
}

/* Round trips per second of `n` pairs of one kind, over `seconds`; <0 on failure. */
static double measure(ws_arena *shared, enum kind kind, int n, double seconds)
{
	struct pair pairs[CONTENDED_MAX_PAIRS];
	pthread_t threads[2 * CONTENDED_MAX_PAIRS];
	_Atomic int stop = 0;
	uint64_t rounds = 0;
	int failed = 0;
	long t0;

	memset(pairs, 0, sizeof(pairs));
	for (int i = 0; i < n; i++) {
		struct pair *p = &pairs[i];

		p->kind = kind;
		p->stop = &stop;
		p->owner = 0x1000u + (uint32_t)i; /* events need no owner; not a syscall per wait */
		if (kind == FUTEX)
			continue;
		p->arena = shared;
		if (kind == ARENA_EACH && ws_arena_create(NULL, 0, &p->arena))
			return -1;
		if (ws_event_create(p->arena, false, false, &p->ping) ||
		    ws_event_create(p->arena, false, false, &p->pong))
			return -1;
	}
	for (int i = 0; i < n; i++) {
		pthread_create(&threads[2 * i], NULL, answerer, &pairs[i]);
		pthread_create(&threads[2 * i + 1], NULL, server, &pairs[i]);
	}
	t0 = now_ns();
	usleep((useconds_t)(seconds * 1e6));
	for (int i = 0; i < n; i++)
		rounds += atomic_load_explicit(&pairs[i].rounds, memory_order_relaxed);
	t0 = now_ns() - t0;
	atomic_store(&stop, 1);
	for (int i = 0; i < 2 * n; i++)
		pthread_join(threads[i], NULL);
	for (int i = 0; i < n; i++) {
		struct pair *p = &pairs[i];

		failed |= p->failed;
		if (kind == FUTEX)
			continue;
		ws_close(p->arena, p->ping);
		ws_close(p->arena, p->pong);
		if (kind == ARENA_EACH)
			ws_arena_close(p->arena);
	}
	return failed ? -1 : (double)rounds * 1e9 / (double)t0;
}

int bench_contended(ws_arena *arena, int max_pairs, double seconds)
{
	static const int counts[] = { 1, 2, 4, 8, 16, 32, CONTENDED_MAX_PAIRS };
	double rate[KINDS][sizeof(counts) / sizeof(counts[0])];
	int failures = 0, rows = 0;

	if (max_pairs > CONTENDED_MAX_PAIRS)
		max_pairs = CONTENDED_MAX_PAIRS;
	printf("  (6) independent pairs ping-ponging on their own events (round trips/s, all pairs;\n"
	       "      median of %d runs of %.1f s; xN: over 1 pair; vs futex: at the same N)\n",
	       RUNS, seconds);
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]) && counts[c] <= max_pairs; c++) {
		rows++;
		for (int k = 0; k < KINDS; k++) {
			double runs[RUNS];
			struct bench_stats st;
			int done = 0;

			for (int r = 0; r < RUNS; r++) {
				double v = measure(arena, (enum kind)k, counts[c], seconds);

				if (v < 0) {
					failures++;
					continue;
				}
				runs[done++] = v;
			}
			if (done) {
				bench_stats(runs, (size_t)done, &st);
				rate[k][c] = st.median;
			} else {
				rate[k][c] = 0;
			}
		}
	}
	printf("    %-34s", "pairs");
	for (int c = 0; c < rows; c++)
		printf(" %16d", counts[c]);
	printf("\n");
	for (int k = 0; k < KINDS; k++) {
		printf("    %-34s", kind_name[k]);
		for (int c = 0; c < rows; c++) {
			char si[32], cell[48];

			bench_format_si(si, sizeof(si), rate[k][c]);
			snprintf(cell, sizeof(cell), "%s x%.2f", si,
				 rate[k][0] > 0 ? rate[k][c] / rate[k][0] : 0.0);
			printf(" %16s", cell);
		}
		printf("\n");
	}
	printf("    %-34s", "one arena vs futex");
	for (int c = 0; c < rows; c++)
		printf(" %15.2fx", rate[FUTEX][c] > 0 ? rate[ONE_ARENA][c] / rate[FUTEX][c] : 0.0);
	printf("\n    %-34s", "one arena vs one arena per pair");
	for (int c = 0; c < rows; c++)
		printf(" %15.2fx",
		       rate[ARENA_EACH][c] > 0 ? rate[ONE_ARENA][c] / rate[ARENA_EACH][c] : 0.0);
	for (int k = 0; k < KINDS; k++)
		for (int c = 0; c < rows; c++) {
			json_row_begin(6, k == FUTEX ? "futex" : "winsync", kind_name[k]);
			json_str("unit", "round trips/s");
			json_num("pairs", counts[c]);
			json_num("runs", RUNS);
			json_num("seconds", seconds);
			json_num("median", rate[k][c] > 0 ? rate[k][c] : NAN);
			json_num("over_1_pair", rate[k][0] > 0 ? rate[k][c] / rate[k][0] : NAN);
			if (k == ONE_ARENA) {
				json_num("vs_futex", rate[FUTEX][c] > 0 ? rate[k][c] / rate[FUTEX][c] : NAN);
				json_num("vs_arena_each", rate[ARENA_EACH][c] > 0 ?
					 rate[k][c] / rate[ARENA_EACH][c] : NAN);
			}
			json_row_end();
		}
	printf("\n    (on 2 CPUs only the 1- and 2-pair columns mean much: run --pairs 8 or more on\n"
	       "     a bigger machine; the goal is one arena within 0.9x of futex at every N)\n");
	if (failures)
		fprintf(stderr, "winsync-bench: %d contended run(s) failed\n", failures);
	return failures;
}
