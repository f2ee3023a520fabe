/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-bench: winsync next to the mechanisms it replaces, in one run.
 *
 *   (1) uncontended.c: event set + wait_any(past deadline) against a pthread
 *       mutex lock + unlock pair;
 *   (2) pingpong.c: two threads ping-ponging on two auto-reset events,
 *       against raw futex words and against eventfd + poll + read (esync);
 *   (3) waitany.c: wait_any polling 64 events, the last signaled, against 1;
 *   (4) herd.c: 32 threads blocked on one semaphore, 32 single releases,
 *       against a futex semaphore that wakes every sleeper on each release;
 *   (5) idle.c: parked threads' wake-ups per second against FUTEX_WAIT;
 *   (6) contended.c: independent pairs in one arena, one arena each, futex;
 *   (7), (8) large.c: create + close, and set + wait, in an arena of the
 *       maximum capacity holding 1M live events, against one holding 1k;
 *   (9) waitany.c: wait_any on 64 events, the first signaled, against 1;
 *   (10), (11) waitall.c: wait_all on 8 and 64 signaled events against as
 *       many single waits.
 *
 * This file is the driver: options, set-up, the runs and the table.
 * Every row is run `runs` times (7 by default, interleaved with the other
 * rows of its group so that machine noise hits them alike) after one
 * warm-up run; the table shows the median, minimum and maximum ns per
 * operation, the median operations per second, and the ratio winsync time /
 * reference time.
 *
 * Every operation is checked as it runs (return value 0, expected index,
 * previous state, number of ping-pong rounds); any failure makes the exit
 * status non-zero.  Nothing about the timings is ever asserted.
 *
 *   winsync-bench [--quick] [--runs N] [--scale F] [--pin] [--only 1,2,3]
 *                 [--idle-seconds S] [--pairs N] [--cpu-clock] [--json]
 *
 * WINSYNC_BENCH_SCALE=F in the environment multiplies every iteration count
 * by F as well (e.g. 0.05 under QEMU TCG); --scale overrides it.
 * WINSYNC_BACKEND=waitv|multiple forces the library's futex backend.
 *
 * Exit status: 0 all operations succeeded; 1 some check failed; 2 usage or
 * set-up error; 3 the watchdog fired (a run stalled); 77 the forced futex
 * backend is missing from the running kernel.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench.h"
#include "idle.h"
#include "contended.h"
#include "json.h"

#include <winsync.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_RUNS   7
#define QUICK_RUNS     3
#define QUICK_DIVISOR  1000.0
#define QUICK_MIN_ITERS 100.0
#define WATCHDOG_S     60     /* per run, multiplied by max(1, scale) */

/* ---- options and global state ----------------------------------------- */

static struct {
	int runs;
	double scale;
	bool quick;
	bool pin;
	bool json;               /* rows as JSON on stdout, the table on stderr */
	bool cpu_clock;          /* single-threaded rows timed in thread CPU time */
	unsigned only;           /* bit i: run group i + 1; 0: all */
	double idle_seconds;     /* (5): how long the threads stay parked */
	int pairs;               /* (6): up to this many pairs */
} opt = { .runs = DEFAULT_RUNS, .scale = 1.0, .idle_seconds = 10.0, .pairs = 8 };

#define IDLE_THREADS       100
#define IDLE_QUICK_THREADS 20
#define IDLE_QUICK_SECONDS 1.0

struct bench_env ctx = { .cpu_a = -1, .cpu_b = -1 };
const struct timespec bench_past = { 0, 0 };

uint64_t row_now_ns(void)
{
	struct timespec ts;

	clock_gettime(opt.cpu_clock ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void watchdog(int sig)
{
	static const char msg[] = "winsync-bench: FAIL: watchdog: a run stalled in: ";
	const char *row = current_row;

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0 ||
	    write(STDERR_FILENO, row, strlen(row)) < 0 ||
	    write(STDERR_FILENO, "\n", 1) < 0)
		_exit(3);
	_exit(3);
}

/* ---- rows, groups, the table ------------------------------------------- */

#define NOISY_SPREAD 3.0

/* The groups of the table, in its order; (5) and (6) print tables of their own. */
static const struct {
	int number;              /* as --only names it */
	struct group *group;
} groups[] = {
	{ 1, &group_uncontended }, { 2, &group_pingpong }, { 3, &group_waitany }, { 4, &group_herd },
	{ 7, &group_large_create }, { 8, &group_large_wait }, { 9, &group_waitany_first },
	{ 10, &group_waitall8 }, { 11, &group_waitall64 },
};
#define LAST_GROUP 11
#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

static bool selected(int number)
{
	return !opt.only || (opt.only & (1u << (number - 1)));
}

#define LABEL_W 50

static uint64_t scaled(double base)
{
	double n = base * opt.scale;

	if (opt.quick)
		n = fmax(n / QUICK_DIVISOR, fmin(n, QUICK_MIN_ITERS));
	return n < 1.0 ? 1 : (uint64_t)llround(n);
}

/* The process's CPU time, user + system, every thread. */
static uint64_t process_cpu_ns(void)
{
	struct rusage u;

	if (getrusage(RUSAGE_SELF, &u))
		return 0;
	return (uint64_t)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000000u +
	       (uint64_t)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1000u;
}

/* One run of n ops; *ns_per_op (and *cpu_per_op unless NULL) measured unless ns_per_op is NULL. */
static bool run_once(struct row *r, uint64_t n, double *ns_per_op, double *cpu_per_op)
{
	unsigned wd = (unsigned)(WATCHDOG_S * (opt.scale > 1.0 ? opt.scale : 1.0));
	static char label[128];
	uint64_t ns = 0;
	bool ok;

	struct ws_lock_stats before, after;
	bool counted;

	snprintf(label, sizeof(label), "%s %s", r->who, r->what);
	current_row = label;
	counted = ns_per_op && ws_lock_stats_read(&before) == 0;
	uint64_t cpu0 = cpu_per_op ? process_cpu_ns() : 0;
	alarm(wd ? wd : 1);
	ok = r->run(n, &ns);
	alarm(0);
	if (cpu_per_op)
		*cpu_per_op = (double)(process_cpu_ns() - cpu0) / (double)n;
	if (counted && ws_lock_stats_read(&after) == 0) {
		r->lock_takes += after.acquisitions - before.acquisitions;
		r->lock_held += after.found_held - before.found_held;
		r->lock_ops += n;
	}
	if (ns_per_op)
		*ns_per_op = (double)ns / (double)n;
	return ok;
}

static void measure_group(struct group *gr)
{
	for (size_t i = 0; i < gr->nrows; i++) {
		struct row *r = &gr->rows[i];

		r->iters = scaled(r->base_iters);
		/* warm-up: caches, page faults, thread start-up; not counted */
		if (!run_once(r, r->iters / 10 ? r->iters / 10 : 1, NULL, NULL))
			r->failed = true;
	}
	for (int run = 0; run < opt.runs; run++)
		for (size_t i = 0; i < gr->nrows; i++) {
			struct row *r = &gr->rows[i];

			if (r->failed)
				continue;
			if (run_once(r, r->iters, &r->ns_per_op[r->done],
				     gr->cpu_time ? &r->cpu_ns_per_op[r->done] : NULL))
				r->done++;
			else
				r->failed = true;
		}
	for (size_t i = 0; i < gr->nrows; i++)
		if (!gr->rows[i].failed) {
			bench_stats(gr->rows[i].ns_per_op, (size_t)gr->rows[i].done, &gr->rows[i].st);
			if (gr->cpu_time)
				bench_stats(gr->rows[i].cpu_ns_per_op, (size_t)gr->rows[i].done,
					    &gr->rows[i].cpu);
		}
}

static void print_rule(void)
{
	printf("  %.*s\n", LABEL_W + 58,
	       "----------------------------------------------------------------------------------"
	       "----------------------------------------------------------------------------------");
}

static void print_group(const struct group *gr)
{
	const struct row *subject = &gr->rows[0];

	bool noisy = false;

	printf("  %s (%s)\n", gr->title, gr->op);
	for (size_t i = 0; i < gr->nrows; i++) {
		const struct row *r = &gr->rows[i];
		char label[128], rate[32], ratio[32] = "";

		snprintf(label, sizeof(label), "%-8s %s", r->who, r->what);
		if (r->failed) {
			printf("    %-*s %10" PRIu64 "   FAILED (see above)\n", LABEL_W - 2, label, r->iters);
			continue;
		}
		bench_format_si(rate, sizeof(rate), 1e9 / r->st.median);
		if (i > 0 && !subject->failed)
			snprintf(ratio, sizeof(ratio), "%.2fx", subject->st.median / r->st.median);
		printf("    %-*s %10" PRIu64 " %9.1f %9.1f %9.1f %9s/s %8s\n", LABEL_W - 2, label,
		       r->iters, r->st.median, r->st.min, r->st.max, rate, ratio);
		if (gr->cpu_time) {
			char cpu_ratio[48] = "";

			if (i > 0 && !subject->failed)
				snprintf(cpu_ratio, sizeof(cpu_ratio), ", winsync's over this: %.2fx",
					 subject->cpu.median / r->cpu.median);
			printf("      CPU time per op (every thread): median %.1f (min %.1f, max %.1f)%s\n",
			       r->cpu.median, r->cpu.min, r->cpu.max, cpu_ratio);
		}
		if (r->lock_takes)
			printf("      lock: %.2f acquisitions per op, %.1f %% of them found it held\n",
			       (double)r->lock_takes / (double)r->lock_ops,
			       100.0 * (double)r->lock_held / (double)r->lock_takes);
		if (r->st.max > NOISY_SPREAD * r->st.min)
			noisy = true;
	}
	if (noisy)
		printf("    ! runs spread over %.0fx (min to max):\n      %s\n", NOISY_SPREAD,
		       gr->noisy_hint ? gr->noisy_hint : "the machine is busy or noisy");
}

/* The group's rows as JSON rows: the figures of the table, ratio as ws/ref. */
static void json_group(int number, const struct group *gr)
{
	const struct row *subject = &gr->rows[0];

	for (size_t i = 0; i < gr->nrows; i++) {
		const struct row *r = &gr->rows[i];

		json_row_begin(number, r->who, r->what);
		json_str("title", gr->title);
		json_str("unit", "ns/op");
		json_num("iters", (double)r->iters);
		json_bool("failed", r->failed);
		if (!r->failed) {
			json_num("runs", r->done);
			json_num("median", r->st.median);
			json_num("min", r->st.min);
			json_num("max", r->st.max);
			json_num("ops_per_s", 1e9 / r->st.median);
			if (i > 0 && !subject->failed)
				json_num("ws_over_ref", subject->st.median / r->st.median);
			if (gr->cpu_time) {
				json_num("cpu_median", r->cpu.median);
				if (i > 0 && !subject->failed)
					json_num("cpu_ws_over_ref", subject->cpu.median / r->cpu.median);
			}
		}
		json_row_end();
	}
}

/* ---- set-up ------------------------------------------------------------- */

/* The objects of the groups that run, in the order of the groups. */
/* WINSYNC_LOCK_STATS=1: the whole run's lock hold times, and the ceiling they set. */
static void print_lock_stats(void)
{
	struct ws_lock_stats s;

	if (ws_lock_stats_read(&s) || !s.held_samples)
		return;
	printf("\n  lock (WINSYNC_LOCK_STATS=1), the whole run: %" PRIu64 " acquisitions, %.1f %% found "
	       "it held;\n  held median %" PRIu64 " ns, p99 %" PRIu64 " ns, max %" PRIu64 " ns: one "
	       "lock serves at most %.1f M sections/s\n",
	       s.acquisitions, 100.0 * (double)s.found_held / (double)s.acquisitions,
	       s.held_ns_median, s.held_ns_p99, s.held_ns_max, 1e3 / (double)s.held_ns_median);
}

static int setup(void)
{
	for (size_t i = 0; i < NGROUPS; i++)
		if (selected(groups[i].number) && groups[i].group->setup() != 0)
			return -1;
	return 0;
}

static void teardown(void)
{
	for (size_t i = 0; i < NGROUPS; i++)
		groups[i].group->teardown();
	ws_arena_close(ctx.arena);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: winsync-bench [--quick] [--runs N] [--scale F] [--pin] [--only LIST]\n"
		"                     [--idle-seconds S] [--pairs N] [--cpu-clock] [--json]\n"
		"  --quick     smoke run: iterations / %.0f, %d runs (checks results, as always)\n"
		"  --runs N    runs per row, median reported (default %d, at most %d)\n"
		"  --scale F   multiply iteration counts by F (default: $WINSYNC_BENCH_SCALE or 1)\n"
		"  --pin       pin the ping-pong threads to two different CPUs (default: no pinning)\n"
		"  --only LIST run only these groups, e.g. 1,3 (1 uncontended, 2 ping-pong,\n"
		"              3 wait_any 64 vs 1, 4 the herd, 5 parked threads, 6 pairs,\n"
		"              7 create + close and 8 waits in a large arena, 1M live vs 1k,\n"
		"              9 wait_any 64 with #0 signaled vs 1, 10 and 11 wait_all 8 and 64)\n"
		"  --idle-seconds S  how long (5) keeps its threads parked (default 10; --quick 1)\n"
		"  --pairs N   (6) measures 1, 2, 4, ... up to N independent pairs (default 8)\n"
		"  --cpu-clock time the single-threaded groups (1, 3, 7-11) in the thread's CPU\n"
		"              time, not wall time: steadier on a busy machine\n"
		"  --json      the rows as one JSON document on stdout (the table goes to stderr)\n"
		"environment: WINSYNC_BENCH_SCALE=F, WINSYNC_BACKEND=waitv|multiple\n",
		QUICK_DIVISOR, QUICK_RUNS, DEFAULT_RUNS, MAX_RUNS);
}

/* "1,3,10": the groups to run, into opt.only; 0 or -1. */
static int parse_only(const char *s)
{
	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s || v < 1 || v > LAST_GROUP || (*end && *end != ','))
			return -1;
		opt.only |= 1u << (v - 1);
		s = *end ? end + 1 : end;
	}
	return opt.only ? 0 : -1;
}

static bool parse_scale(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0.0 || v > 1e6)
		return false;
	*out = v;
	return true;
}

/*
 * glibc skips the atomic instructions of pthread_mutex_lock while a process
 * has one thread.  Programs that need winsync are multi-threaded, so the
 * reference must be measured in a multi-threaded process too.
 */
static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int go_multithreaded(void)
{
	pthread_t t;
	int rc = pthread_create(&t, NULL, idle_thread, NULL);

	if (rc == 0)
		pthread_detach(t);
	return rc;
}

int main(int argc, char **argv)
{
	const char *env = getenv("WINSYNC_BENCH_SCALE");
	bool runs_given = false, idle_given = false;
	struct bench_machine m;
	int rc;

	if (env && *env && !parse_scale(env, &opt.scale)) {
		fprintf(stderr, "winsync-bench: bad WINSYNC_BENCH_SCALE '%s' (want a number > 0)\n", env);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--quick")) {
			opt.quick = true;
		} else if (!strcmp(a, "--cpu-clock")) {
			opt.cpu_clock = true;
		} else if (!strcmp(a, "--json")) {
			opt.json = true;
		} else if (!strcmp(a, "--pin")) {
			opt.pin = true;
		} else if (!strcmp(a, "--runs") && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);

			if (*end || v < 1 || v > MAX_RUNS) {
				fprintf(stderr, "winsync-bench: --runs wants 1..%d\n", MAX_RUNS);
				return 2;
			}
			opt.runs = (int)v;
			runs_given = true;
		} else if (!strcmp(a, "--only") && i + 1 < argc) {
			if (parse_only(argv[++i]) != 0) {
				fprintf(stderr, "winsync-bench: --only wants group numbers 1 to %d, e.g. 1,3\n",
					LAST_GROUP);
				return 2;
			}
		} else if (!strcmp(a, "--idle-seconds") && i + 1 < argc) {
			if (!parse_scale(argv[++i], &opt.idle_seconds)) {
				fprintf(stderr, "winsync-bench: --idle-seconds wants a number > 0\n");
				return 2;
			}
			idle_given = true;
		} else if (!strcmp(a, "--pairs") && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);

			if (*end || v < 1 || v > CONTENDED_MAX_PAIRS) {
				fprintf(stderr, "winsync-bench: --pairs wants 1 to %d\n",
					CONTENDED_MAX_PAIRS);
				return 2;
			}
			opt.pairs = (int)v;
		} else if (!strcmp(a, "--scale") && i + 1 < argc) {
			if (!parse_scale(argv[++i], &opt.scale)) {
				fprintf(stderr, "winsync-bench: --scale wants a number > 0\n");
				return 2;
			}
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (opt.quick && !runs_given)
		opt.runs = QUICK_RUNS;
	if (opt.quick && !idle_given)
		opt.idle_seconds = IDLE_QUICK_SECONDS;

	if (opt.json) {
		/* JSON on the original stdout; the table goes on to stderr for a human. */
		int fd = dup(STDOUT_FILENO);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

		if (!f || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			fprintf(stderr, "winsync-bench: --json: %s\n", strerror(errno));
			return 2;
		}
		json_start(f);
	}
	signal(SIGALRM, watchdog);
	rc = go_multithreaded();
	if (rc != 0) {
		fprintf(stderr, "winsync-bench: pthread_create: %s\n", strerror(rc));
		return 2;
	}
	ctx.owner = (uint32_t)gettid();
	rc = ws_arena_create(NULL, 0, &ctx.arena);
	if (rc == -ENOSYS) {
		const char *forced = getenv("WINSYNC_BACKEND");

		fprintf(stderr, "winsync-bench: SKIP: %s%s: no usable futex backend on this kernel\n",
			forced ? "WINSYNC_BACKEND=" : "ws_arena_create", forced ? forced : "");
		return 77;
	}
	if (rc != 0) {
		fprintf(stderr, "winsync-bench: ws_arena_create: %s\n", strerror(-rc));
		return 2;
	}
	if (setup() != 0) {
		teardown();
		return 2;
	}
	if (opt.pin) {
		ctx.cpu_a = bench_nth_allowed_cpu(0);
		ctx.cpu_b = bench_nth_allowed_cpu(1);
		if (ctx.cpu_b < 0)
			ctx.cpu_a = -1;  /* one CPU: nothing useful to pin */
		pin_self(ctx.cpu_a);
	}

	bench_machine_info(&m);
	printf("winsync-bench: %s, %ld CPU%s online", m.cpu, m.cpus_online, m.cpus_online == 1 ? "" : "s");
	if (m.cpus_allowed > 0 && m.cpus_allowed != m.cpus_online)
		printf(" (%d allowed)", m.cpus_allowed);
	printf("%s, %s %s %s\n", m.hypervisor ? " (virtual machine)" : "", m.sysname, m.release, m.machine);
	printf("futex backend: %s; %d run%s per row after a warm-up, median; scale %g%s; %s;\n"
	       "a second, idle thread keeps glibc's mutex on its multi-threaded (atomic) path\n\n",
	       ws_futex_backend(), opt.runs, opt.runs == 1 ? "" : "s", opt.scale,
	       opt.quick ? " (--quick)" : "",
	       ctx.cpu_a >= 0 ? "ping-pong pinned" : "no pinning");
	if (opt.cpu_clock)
		printf("--cpu-clock: groups 1, 3 and 7 to 11 are timed in the thread's CPU time\n\n");
	fflush(stdout);
	json_str("cpu", m.cpu);
	json_num("cpus_online", (double)m.cpus_online);
	json_num("cpus_allowed", m.cpus_allowed);
	json_bool("virtual_machine", m.hypervisor);
	json_str("kernel", m.release);
	json_str("arch", m.machine);
	json_str("futex_backend", ws_futex_backend());
	json_num("runs", opt.runs);
	json_num("scale", opt.scale);
	json_bool("quick", opt.quick);
	json_bool("pinned", ctx.cpu_a >= 0);
	json_str("clock", opt.cpu_clock ? "thread-cpu" : "monotonic");

	printf("  %-*s %10s %9s %9s %9s %11s %8s\n", LABEL_W, "", "iters", "ns/op", "min", "max",
	       "ops/s", "ws/ref");
	print_rule();
	for (size_t i = 0; i < NGROUPS; i++) {
		struct group *gr = groups[i].group;

		if (!selected(groups[i].number))
			continue;
		measure_group(gr);
		print_group(gr);
		json_group(groups[i].number, gr);
		if (gr->footer)
			gr->footer();
		fflush(stdout);
	}
	print_rule();
	printf("  ns/op: median (min, max) over the runs.  ws/ref: the group's first (winsync) row's\n"
	       "  median ns/op divided by this row's; above 1 means winsync takes longer.\n");
	if (selected(6)) {
		printf("\n");
		failures += bench_contended(ctx.arena, opt.pairs, opt.quick ? 0.2 : 1.0);
		fflush(stdout);
	}
	if (selected(5)) {
		bool missed;

		printf("\n");
		failures += bench_idle(ctx.arena, opt.idle_seconds,
				       opt.quick ? IDLE_QUICK_THREADS : IDLE_THREADS, &missed);
		fflush(stdout);
	}

	print_lock_stats();
	teardown();
	json_finish(failures);
	if (failures) {
		fprintf(stderr, "winsync-bench: %d check(s) failed\n", failures);
		return 1;
	}
	return 0;
}
