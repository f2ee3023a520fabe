/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the group files of winsync-bench share with its driver (bench.c):
 * the arena, the options, the row and group tables and the checks.  Each
 * group file (uncontended.c, pingpong.c, waitany.c, herd.c) defines one
 * `struct group`; the driver sets them up, runs and prints them in order.
 */
#ifndef WINSYNC_BENCH_H
#define WINSYNC_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <winsync.h>

#include "bench_util.h"

#define MAX_RUNS 99

#define unlikely(x) __builtin_expect(!!(x), 0)

/* Set up once by the driver before any group runs. */
struct bench_env {
	ws_arena *arena;
	uint32_t owner;          /* the main thread's id */
	int cpu_a, cpu_b;        /* --pin: CPUs for ping-pong threads A and B, or -1 */
};
extern struct bench_env ctx;

/*
 * The clock of the rows that run on the calling thread alone (groups 1, 3
 * and 7 to 11): CLOCK_MONOTONIC, or with --cpu-clock the thread's CPU time,
 * which leaves out the time the thread waited for a CPU on a busy machine.
 */
uint64_t row_now_ns(void);

/* CLOCK_MONOTONIC 0: a deadline always in the past (a poll). */
extern const struct timespec bench_past;

struct row {
	const char *who;         /* "winsync", "pthread", ... */
	const char *what;
	double base_iters;       /* at scale 1: a run of ~50-200 ms on a recent x86 */
	bool (*run)(uint64_t n, uint64_t *ns);
	uint64_t iters;
	double ns_per_op[MAX_RUNS];
	int done;
	bool failed;
	struct bench_stats st;
	/* With WINSYNC_LOCK_STATS=1: the measured runs' lock acquisitions, found held, ops. */
	uint64_t lock_takes, lock_held, lock_ops;
	/* Groups with cpu_time: the process's CPU time (user + system, every thread) per op. */
	double cpu_ns_per_op[MAX_RUNS];
	struct bench_stats cpu;
};

struct group {
	const char *title;
	const char *op;          /* what one operation is */
	struct row *rows;        /* rows[0] is winsync, the others the references */
	size_t nrows;
	const char *noisy_hint;  /* printed when some row's runs spread over NOISY_SPREAD */
	int (*setup)(void);      /* creates the group's objects; 0 or -1 (reported) */
	void (*teardown)(void);  /* closes them; failures counted */
	void (*footer)(void);    /* a line after the table, or NULL */
	bool cpu_time;           /* also the CPU time per op of all threads (getrusage) */
};

extern struct group group_uncontended, group_pingpong, group_waitany, group_herd;
extern struct group group_large_create, group_large_wait, group_waitany_first;
extern struct group group_waitall8, group_waitall64;

/* The row ran its runs and none failed: its figures mean something. */
static inline bool row_measured(const struct row *r)
{
	return r->done > 0 && !r->failed;
}

/* ---- checks (check.c) ---- */

/* The row being run, for messages and the watchdog. */
extern const char *volatile current_row;

/* Failed checks so far: any makes the exit status 1. */
extern int failures;

/* Counts a failure and prints it. */
void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Failed checks inside a timed loop: counted, and the first one described.
 * A struct per thread; merged into `failures` by check_report.
 */
struct check {
	uint64_t bad;
	char first[200];
};

void check_fail(struct check *c, const char *fmt, ...)
	__attribute__((noinline, cold, format(printf, 2, 3)));
bool check_report(const struct check *c, const char *row);

/* Reads an auto-reset event of the arena; false (counted) if that fails. */
bool ws_event_is_signaled(ws_handle h, bool *signaled);

/* Pins the calling thread to `cpu`; nothing for -1. */
void pin_self(int cpu);

/* Creates n unsignaled auto-reset events; 0, or -1 with a message. */
int create_events(ws_handle *h, int n);

/* Checks that a poll of `count` unsignaled events times out and takes nothing. */
void expect_poll_timeout(const ws_handle *h, uint32_t count, const char *what);

/* Closes `h` if it was created, counting a failure. */
void close_handle(ws_handle h);

/*
 * n unsignaled auto-reset events that a poll finds not ready, unless h[0]
 * is already set (groups that share them); closed and zeroed again.
 */
int setup_events(ws_handle *h, uint32_t n);
void close_events(ws_handle *h, uint32_t n);

/* After a run: every event was consumed (a failure named after the row otherwise). */
bool none_signaled(const ws_handle *h, uint32_t n);

#endif /* WINSYNC_BENCH_H */
