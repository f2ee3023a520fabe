/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-bench: winsync next to the mechanisms it replaces, in one run.
 *
 *   (1) uncontended: ws_event_set + ws_wait_any with a past deadline on one
 *       auto-reset event (each pair signals and consumes it), against a
 *       pthread mutex lock + unlock pair;
 *   (2) ping-pong between two threads: A sets E1 and waits E2, B waits E1
 *       and sets E2, through two winsync auto-reset events, against a raw
 *       futex ping-pong (two u32 words, FUTEX_WAKE/FUTEX_WAIT private) and
 *       against eventfd + poll + read (the esync mechanism);
 *   (3) ws_wait_any polling 64 auto-reset events of which only the last is
 *       signaled, against polling 1 event;
 *   (4) the herd: 32 threads blocked on one semaphore, then 32 single
 *       releases, through winsync (one wake-up per hand-off) and through a
 *       futex semaphore that wakes every sleeper on each release (the
 *       broadcast design); the wake-ups are counted (sleeps that ended);
 *   (5) parked threads (idle.c): 100 threads per row blocked 10 s on
 *       objects nobody touches, their wake-ups per second, against a raw
 *       FUTEX_WAIT (0).
 *
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
 *                 [--idle-seconds S]
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
#include "bench_util.h"
#include "idle.h"
#include "contended.h"

#include <winsync.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

#define MAX_RUNS       99
#define DEFAULT_RUNS   7
#define QUICK_RUNS     3
#define QUICK_DIVISOR  1000.0
#define QUICK_MIN_ITERS 100.0
#define MANY           WS_MAX_WAIT_OBJECTS
#define WATCHDOG_S     60     /* per run, multiplied by max(1, scale) */

#define unlikely(x) __builtin_expect(!!(x), 0)

/* ---- options and global state ----------------------------------------- */

static struct {
	int runs;
	double scale;
	bool quick;
	bool pin;
	unsigned only;           /* bit i: run group i + 1; 0: all */
	double idle_seconds;     /* (5): how long the threads stay parked */
	int pairs;               /* (6): up to this many pairs */
} opt = { .runs = DEFAULT_RUNS, .scale = 1.0, .idle_seconds = 10.0, .pairs = 8 };

#define IDLE_THREADS       100
#define IDLE_QUICK_THREADS 20
#define IDLE_QUICK_SECONDS 1.0

static struct {
	ws_arena *arena;
	uint32_t owner;               /* the main thread's id */
	ws_handle ev;                 /* (1) */
	ws_handle ping, pong;         /* (2) winsync */
	ws_handle many[MANY];         /* (3) */
	pthread_mutex_t mutex;        /* (1) reference */
	_Atomic uint32_t fword[2];    /* (2) futex reference */
	int efd[2];                   /* (2) eventfd reference */
	int cpu_a, cpu_b;             /* --pin: CPUs for ping-pong threads A and B */
	ws_handle herd_sem;           /* (4) winsync */
	_Atomic uint32_t herd_word;   /* (4) broadcast reference: the count */
} g = { .efd = { -1, -1 }, .cpu_a = -1, .cpu_b = -1 };

static int failures;
static const char *volatile current_row = "";

static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("winsync-bench: FAIL: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	failures++;
}

/*
 * Failed checks inside a timed loop: counted, and the first one described.
 * A struct per thread; merged into `failures` by the main thread.
 */
struct check {
	uint64_t bad;
	char first[200];
};

static __attribute__((noinline, cold, format(printf, 2, 3)))
void check_fail(struct check *c, const char *fmt, ...)
{
	if (c->bad++ == 0) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(c->first, sizeof(c->first), fmt, ap);
		va_end(ap);
	}
}

static bool check_report(const struct check *c, const char *row)
{
	if (!c->bad)
		return true;
	failf("%s: %" PRIu64 " failed operation(s); first: %s", row, c->bad, c->first);
	return false;
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

static void pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* ---- (1) uncontended ---------------------------------------------------- */

static const struct timespec past = { 0, 0 };  /* CLOCK_MONOTONIC 0: always past */

static bool ws_event_is_signaled(ws_handle h, bool *signaled)
{
	bool manual = true;
	int rc = ws_event_read(g.arena, h, signaled, &manual);

	if (rc != 0 || manual) {
		failf("ws_event_read(%" PRIu32 ") = %d (%s), manual_reset %d", h, rc, strerror(-rc), manual);
		return false;
	}
	return true;
}

static bool run_ws_uncontended(uint64_t n, uint64_t *ns)
{
	const struct ws_wait w = { .objects = &g.ev, .count = 1, .owner = g.owner, .deadline = &past };
	struct check c = { 0 };
	bool sig;
	uint64_t t0 = bench_now_ns();

	for (uint64_t i = 0; i < n; i++) {
		bool was = true;
		uint32_t idx = UINT32_MAX;
		int rs = ws_event_set(g.arena, g.ev, &was);
		int rw = ws_wait_any(g.arena, &w, &idx);

		if (unlikely(rs != 0 || was || rw != 0 || idx != 0))
			check_fail(&c, "iteration %" PRIu64 ": ws_event_set = %d (was_signaled %d), "
				   "ws_wait_any = %d index %" PRIu32 " (want 0, 0, 0, 0)", i, rs, was, rw, idx);
	}
	*ns = bench_now_ns() - t0;
	if (!check_report(&c, current_row) || !ws_event_is_signaled(g.ev, &sig))
		return false;
	if (sig) {
		failf("%s: the event is still signaled after the run", current_row);
		return false;
	}
	return true;
}

static bool run_pthread_mutex(uint64_t n, uint64_t *ns)
{
	struct check c = { 0 };
	uint64_t t0 = bench_now_ns();

	for (uint64_t i = 0; i < n; i++) {
		int rl = pthread_mutex_lock(&g.mutex);
		int ru = pthread_mutex_unlock(&g.mutex);

		if (unlikely(rl != 0 || ru != 0))
			check_fail(&c, "iteration %" PRIu64 ": lock = %d, unlock = %d", i, rl, ru);
	}
	*ns = bench_now_ns() - t0;
	return check_report(&c, current_row);
}

/* ---- (2) ping-pong ------------------------------------------------------ */

/*
 * One mechanism = a pair of auto-reset signals.  signal(k) makes signal k
 * available to one waiter; wait(k) blocks until it is available and takes
 * it.  Both return 0, or a negative errno value / positive code described by
 * the check struct.
 */
struct pp_ops {
	int (*signal)(int k);
	int (*wait)(int k, uint32_t owner);
	void (*clear)(void);        /* (between runs) nothing should be left over */
};

/* winsync: two auto-reset events, wait_any on one object, no deadline. */
static int ws_pp_signal(int k)
{
	return ws_event_set(g.arena, k ? g.pong : g.ping, NULL);
}

static int ws_pp_wait(int k, uint32_t owner)
{
	const ws_handle *h = k ? &g.pong : &g.ping;
	const struct ws_wait w = { .objects = h, .count = 1, .owner = owner };
	uint32_t idx = UINT32_MAX;
	int rc = ws_wait_any(g.arena, &w, &idx);

	if (rc == 0 && idx != 0)
		return 1000 + (int)(idx > 1000 ? 1000 : idx);  /* wrong index */
	return rc;
}

static void ws_pp_clear(void)
{
	bool s0 = false, s1 = false;

	if (ws_event_is_signaled(g.ping, &s0) && ws_event_is_signaled(g.pong, &s1) && (s0 || s1))
		failf("%s: an event is still signaled after the run (E1 %d, E2 %d)", current_row, s0, s1);
}

/* Raw futex: a u32 word per direction; 1 = signaled.  The waker always wakes. */
static long sys_futex(_Atomic uint32_t *word, int op, uint32_t val)
{
	return syscall(SYS_futex, (uint32_t *)word, op, val, NULL, NULL, 0);
}

static int futex_pp_signal(int k)
{
	atomic_store_explicit(&g.fword[k], 1, memory_order_release);
	return sys_futex(&g.fword[k], FUTEX_WAKE_PRIVATE, 1) < 0 ? -errno : 0;
}

static int futex_pp_wait(int k, uint32_t owner)
{
	(void)owner;
	for (;;) {
		uint32_t one = 1;

		if (atomic_compare_exchange_strong_explicit(&g.fword[k], &one, 0,
							    memory_order_acquire, memory_order_relaxed))
			return 0;
		if (sys_futex(&g.fword[k], FUTEX_WAIT_PRIVATE, 0) < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
	}
}

static void futex_pp_clear(void)
{
	uint32_t w0 = atomic_load(&g.fword[0]), w1 = atomic_load(&g.fword[1]);

	if (w0 || w1)
		failf("%s: a futex word is still set after the run (%" PRIu32 ", %" PRIu32 ")", current_row, w0, w1);
	atomic_store(&g.fword[0], 0);
	atomic_store(&g.fword[1], 0);
}

/* eventfd (non-blocking, as esync): write 1; the other side polls, then reads. */
static int efd_pp_signal(int k)
{
	uint64_t one = 1;

	return write(g.efd[k], &one, sizeof(one)) == (ssize_t)sizeof(one) ? 0 : -errno;
}

static int efd_pp_wait(int k, uint32_t owner)
{
	(void)owner;
	for (;;) {
		struct pollfd p = { .fd = g.efd[k], .events = POLLIN };
		uint64_t v = 0;
		int r = poll(&p, 1, -1);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (read(g.efd[k], &v, sizeof(v)) == (ssize_t)sizeof(v))
			return v == 1 ? 0 : 2000;  /* strict alternation: exactly one signal */
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
	}
}

static void efd_pp_clear(void)
{
	for (int k = 0; k < 2; k++) {
		uint64_t v;

		if (read(g.efd[k], &v, sizeof(v)) == (ssize_t)sizeof(v))
			failf("%s: eventfd %d still holds %" PRIu64 " after the run", current_row, k, v);
	}
}

static const struct pp_ops ws_pp = { ws_pp_signal, ws_pp_wait, ws_pp_clear };
static const struct pp_ops futex_pp = { futex_pp_signal, futex_pp_wait, futex_pp_clear };
static const struct pp_ops efd_pp = { efd_pp_signal, efd_pp_wait, efd_pp_clear };

struct pp_run {
	const struct pp_ops *ops;
	uint64_t n;
	pthread_barrier_t start;
	atomic_bool abort;       /* a side failed: the other stops at its next wake-up */
	uint64_t rounds;         /* completed by B */
	struct check c;          /* B's failures */
};

static const char *code_str(int rc)
{
	if (rc >= 2000)
		return "eventfd held more than one signal";
	if (rc >= 1000)
		return "wrong wait index";
	return rc < 0 ? strerror(-rc) : "success";
}

/* Thread B: wait E1, set E2. */
static void *pp_thread_b(void *arg)
{
	struct pp_run *p = arg;
	const struct pp_ops *ops = p->ops;
	uint32_t owner = (uint32_t)gettid();

	pin_self(g.cpu_b);
	pthread_barrier_wait(&p->start);
	for (uint64_t i = 0; i < p->n; i++) {
		int rw = ops->wait(0, owner);
		int rs = rw == 0 ? ops->signal(1) : 0;

		if (unlikely(rw != 0 || rs != 0)) {
			check_fail(&p->c, "thread B, round %" PRIu64 ": wait = %d (%s), signal = %d (%s)",
				   i, rw, code_str(rw), rs, code_str(rs));
			atomic_store(&p->abort, true);
			ops->signal(1);  /* let A see the abort rather than block forever */
			break;
		}
		if (unlikely(atomic_load_explicit(&p->abort, memory_order_relaxed)))
			break;
		p->rounds++;
	}
	return NULL;
}

/* Thread A (the caller): set E1, wait E2. */
static bool run_pingpong(const struct pp_ops *ops, uint64_t n, uint64_t *ns)
{
	struct pp_run p = { .ops = ops, .n = n };
	struct check c = { 0 };
	uint64_t rounds = 0, t0;
	pthread_t b;
	int rc;

	pthread_barrier_init(&p.start, NULL, 2);
	rc = pthread_create(&b, NULL, pp_thread_b, &p);
	if (rc != 0) {
		failf("%s: pthread_create: %s", current_row, strerror(rc));
		pthread_barrier_destroy(&p.start);
		return false;
	}
	pthread_barrier_wait(&p.start);
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		int rs = ops->signal(0);
		int rw = rs == 0 ? ops->wait(1, g.owner) : 0;

		if (unlikely(rs != 0 || rw != 0)) {
			check_fail(&c, "thread A, round %" PRIu64 ": signal = %d (%s), wait = %d (%s)",
				   i, rs, code_str(rs), rw, code_str(rw));
			atomic_store(&p.abort, true);
			ops->signal(0);  /* let B see the abort rather than block forever */
			break;
		}
		if (unlikely(atomic_load_explicit(&p.abort, memory_order_relaxed)))
			break;
		rounds++;
	}
	*ns = bench_now_ns() - t0;
	pthread_join(b, NULL);
	pthread_barrier_destroy(&p.start);

	bool ok_a = check_report(&c, current_row);
	bool ok_b = check_report(&p.c, current_row);
	bool ok = ok_a && ok_b;
	if (rounds != n || p.rounds != n) {
		failf("%s: %" PRIu64 " rounds wanted; thread A completed %" PRIu64 ", thread B %" PRIu64,
		      current_row, n, rounds, p.rounds);
		ok = false;
	}
	if (ok) {
		int before = failures;

		ops->clear();
		ok = failures == before;
	}
	return ok;
}

static bool run_ws_pingpong(uint64_t n, uint64_t *ns) { return run_pingpong(&ws_pp, n, ns); }
static bool run_futex_pingpong(uint64_t n, uint64_t *ns) { return run_pingpong(&futex_pp, n, ns); }
static bool run_efd_pingpong(uint64_t n, uint64_t *ns) { return run_pingpong(&efd_pp, n, ns); }

/* ---- (3) wait_any over 64 objects vs 1 ---------------------------------- */

/* Waits on the last `count` of g.many[]; only g.many[MANY - 1] is ever set. */
static bool run_ws_any(uint32_t count, uint64_t n, uint64_t *ns)
{
	const struct ws_wait w = { .objects = &g.many[MANY - count], .count = count,
				   .owner = g.owner, .deadline = &past };
	const ws_handle last = g.many[MANY - 1];
	const uint32_t want = count - 1;
	struct check c = { 0 };
	uint64_t t0 = bench_now_ns();

	for (uint64_t i = 0; i < n; i++) {
		bool was = true;
		uint32_t idx = UINT32_MAX;
		int rs = ws_event_set(g.arena, last, &was);
		int rw = ws_wait_any(g.arena, &w, &idx);

		if (unlikely(rs != 0 || was || rw != 0 || idx != want))
			check_fail(&c, "iteration %" PRIu64 ": ws_event_set = %d (was_signaled %d), "
				   "ws_wait_any = %d index %" PRIu32 " (want 0, 0, 0, %" PRIu32 ")",
				   i, rs, was, rw, idx, want);
	}
	*ns = bench_now_ns() - t0;

	bool ok = check_report(&c, current_row);
	for (uint32_t i = 0; ok && i < MANY; i++) {
		bool sig;

		if (!ws_event_is_signaled(g.many[i], &sig))
			ok = false;
		else if (sig) {
			failf("%s: object %" PRIu32 " is signaled after the run", current_row, i);
			ok = false;
		}
	}
	return ok;
}

static bool run_ws_any64(uint64_t n, uint64_t *ns) { return run_ws_any(MANY, n, ns); }
static bool run_ws_any1(uint64_t n, uint64_t *ns) { return run_ws_any(1, n, ns); }

/* ---- (4) the herd: N waiters, N single releases ------------------------- */

#define HERD 32

struct herd_ops {
	int (*wait)(void);
	int (*release)(void);
	uint64_t (*wakeups)(void); /* sleeps so far that ended */
};

static _Atomic uint64_t herd_ref_sleeps;

static int ws_herd_wait(void)
{
	struct ws_wait w = { .objects = &g.herd_sem, .count = 1, .owner = (uint32_t)gettid() };
	uint32_t idx;

	return ws_wait_any(g.arena, &w, &idx);
}

static int ws_herd_release(void)
{
	return ws_sem_release(g.arena, g.herd_sem, 1, NULL);
}

static uint64_t ws_herd_wakeups(void)
{
	struct ws_stats st;

	ws_stats_read(&st);
	return st.futex_waits;
}

/* The reference: a count word; a release wakes every sleeper, who all race for the unit. */
static int ref_herd_wait(void)
{
	for (;;) {
		uint32_t c = atomic_load(&g.herd_word);

		if (c > 0) {
			if (atomic_compare_exchange_weak(&g.herd_word, &c, c - 1))
				return 0;
			continue;
		}
		syscall(SYS_futex, &g.herd_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
		atomic_fetch_add(&herd_ref_sleeps, 1);
	}
}

static int ref_herd_release(void)
{
	atomic_fetch_add(&g.herd_word, 1);
	syscall(SYS_futex, &g.herd_word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	return 0;
}

static uint64_t ref_herd_wakeups(void)
{
	return atomic_load(&herd_ref_sleeps);
}

static const struct herd_ops ws_herd = { ws_herd_wait, ws_herd_release, ws_herd_wakeups };
static const struct herd_ops ref_herd = { ref_herd_wait, ref_herd_release, ref_herd_wakeups };

struct herd_run {
	const struct herd_ops *ops;
	uint64_t rounds;
	_Atomic uint64_t round;    /* rounds opened by the releaser */
	_Atomic uint32_t arrived;  /* waits started */
	_Atomic uint32_t finished; /* waits returned */
	_Atomic int errors;
};

static void *herd_waiter(void *arg)
{
	struct herd_run *h = arg;

	for (uint64_t r = 0; r < h->rounds; r++) {
		/* One wait per round: nobody takes a unit meant for a waiter of the round before. */
		while (atomic_load(&h->round) <= r)
			sched_yield();
		atomic_fetch_add(&h->arrived, 1);
		if (h->ops->wait() != 0)
			atomic_fetch_add(&h->errors, 1);
		atomic_fetch_add(&h->finished, 1);
	}
	return NULL;
}

/* Until every waiter of this round has started its wait and had time to fall asleep. */
static void herd_settle(struct herd_run *h, uint32_t want)
{
	while (atomic_load(&h->arrived) < want)
		sched_yield();
	usleep(2000);
}

static uint64_t herd_last_wakeups, herd_last_ops;

/* One op = one single release and the wake-up it should cause; time spent releasing. */
static bool run_herd(const struct herd_ops *ops, uint64_t n, uint64_t *ns)
{
	struct herd_run h = { .ops = ops, .rounds = (n + HERD - 1) / HERD };
	pthread_t t[HERD];
	uint64_t spent = 0, before = ops->wakeups();

	for (int i = 0; i < HERD; i++)
		pthread_create(&t[i], NULL, herd_waiter, &h);
	for (uint64_t r = 0; r < h.rounds; r++) {
		atomic_store(&h.round, r + 1);
		herd_settle(&h, (uint32_t)((r + 1) * HERD));
		uint64_t t0 = bench_now_ns();

		for (int i = 0; i < HERD; i++)
			if (ops->release() != 0)
				atomic_fetch_add(&h.errors, 1);
		while (atomic_load(&h.finished) < (r + 1) * HERD)
			sched_yield();
		spent += bench_now_ns() - t0;
	}
	for (int i = 0; i < HERD; i++)
		pthread_join(t[i], NULL);
	*ns = spent * n / (h.rounds * HERD);
	herd_last_wakeups = ops->wakeups() - before;
	herd_last_ops = h.rounds * HERD;
	if (atomic_load(&h.errors)) {
		failf("%s: %d waits or releases failed", current_row, atomic_load(&h.errors));
		return false;
	}
	return true;
}

static double herd_wakeups_per_op[2];

static bool run_ws_herd(uint64_t n, uint64_t *ns)
{
	bool ok = run_herd(&ws_herd, n, ns);

	herd_wakeups_per_op[0] = (double)herd_last_wakeups / (double)herd_last_ops;
	return ok;
}

static bool run_ref_herd(uint64_t n, uint64_t *ns)
{
	bool ok = run_herd(&ref_herd, n, ns);

	herd_wakeups_per_op[1] = (double)herd_last_wakeups / (double)herd_last_ops;
	return ok;
}

/* ---- rows, groups, the table ------------------------------------------- */

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
};

struct group {
	const char *title;
	const char *op;          /* what one operation is */
	struct row *rows;        /* rows[0] is winsync, the others the references */
	size_t nrows;
	const char *noisy_hint;  /* printed when some row's runs spread over NOISY_SPREAD */
};

#define NOISY_SPREAD 3.0

static struct row g1[] = {
	{ .who = "winsync", .what = "event set + wait_any(1, past deadline)", .base_iters = 2e6, .run = run_ws_uncontended },
	{ .who = "pthread", .what = "mutex lock + unlock", .base_iters = 2e7, .run = run_pthread_mutex },
};
static struct row g2[] = {
	{ .who = "winsync", .what = "2 auto-reset events, set + wait_any", .base_iters = 1e4, .run = run_ws_pingpong },
	{ .who = "futex", .what = "2 words, FUTEX_WAKE + FUTEX_WAIT", .base_iters = 1e4, .run = run_futex_pingpong },
	{ .who = "eventfd", .what = "2 eventfds, write + poll + read (esync)", .base_iters = 1e4, .run = run_efd_pingpong },
};
static struct row g3[] = {
	{ .who = "winsync", .what = "64 objects, #63 signaled: set + wait_any", .base_iters = 1e5, .run = run_ws_any64 },
	{ .who = "winsync", .what = "1 object: set + wait_any", .base_iters = 2e6, .run = run_ws_any1 },
};
static struct row g4[] = {
	{ .who = "winsync", .what = "32 waiters, 32 single sem releases", .base_iters = 3200, .run = run_ws_herd },
	{ .who = "futex", .what = "the same, each release wakes all", .base_iters = 3200, .run = run_ref_herd },
};
static struct group groups[] = {
	{ "(1) uncontended signal + consume", "1 op = 1 pair", g1, 2, NULL },
	{ "(2) ping-pong between two threads", "1 op = 1 round trip", g2, 3,
	  "the threads sometimes shared one CPU (a cheap switch), sometimes ran on two\n"
	  "      (a cross-CPU wake-up, slow on virtual CPUs); compare --pin and taskset -c 0" },
	{ "(3) wait_any poll, 64 objects vs 1", "1 op = 1 set + 1 wait", g3, 2, NULL },
	{ "(4) the herd: one wake-up per hand-off", "1 op = 1 release", g4, 2, NULL },
};

#define LABEL_W 50

static uint64_t scaled(double base)
{
	double n = base * opt.scale;

	if (opt.quick)
		n = fmax(n / QUICK_DIVISOR, fmin(n, QUICK_MIN_ITERS));
	return n < 1.0 ? 1 : (uint64_t)llround(n);
}

static bool run_once(struct row *r, uint64_t n, double *ns_per_op)
{
	unsigned wd = (unsigned)(WATCHDOG_S * (opt.scale > 1.0 ? opt.scale : 1.0));
	static char label[128];
	uint64_t ns = 0;
	bool ok;

	snprintf(label, sizeof(label), "%s %s", r->who, r->what);
	current_row = label;
	alarm(wd ? wd : 1);
	ok = r->run(n, &ns);
	alarm(0);
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
		if (!run_once(r, r->iters / 10 ? r->iters / 10 : 1, NULL))
			r->failed = true;
	}
	for (int run = 0; run < opt.runs; run++)
		for (size_t i = 0; i < gr->nrows; i++) {
			struct row *r = &gr->rows[i];

			if (r->failed)
				continue;
			if (run_once(r, r->iters, &r->ns_per_op[r->done]))
				r->done++;
			else
				r->failed = true;
		}
	for (size_t i = 0; i < gr->nrows; i++)
		if (!gr->rows[i].failed)
			bench_stats(gr->rows[i].ns_per_op, (size_t)gr->rows[i].done, &gr->rows[i].st);
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
		if (r->st.max > NOISY_SPREAD * r->st.min)
			noisy = true;
	}
	if (noisy)
		printf("    ! runs spread over %.0fx (min to max):\n      %s\n", NOISY_SPREAD,
		       gr->noisy_hint ? gr->noisy_hint : "the machine is busy or noisy");
}

/* ---- set-up ------------------------------------------------------------- */

static int setup(void)
{
	int rc;
	uint32_t idx = UINT32_MAX;
	struct ws_wait w = { .objects = &g.ev, .count = 1, .owner = g.owner, .deadline = &past };

	rc = ws_event_create(g.arena, false, false, &g.ev);
	if (rc == 0)
		rc = ws_event_create(g.arena, false, false, &g.ping);
	if (rc == 0)
		rc = ws_event_create(g.arena, false, false, &g.pong);
	for (int i = 0; rc == 0 && i < MANY; i++)
		rc = ws_event_create(g.arena, false, false, &g.many[i]);
	if (rc == 0)
		rc = ws_sem_create(g.arena, 0, HERD, &g.herd_sem);
	if (rc != 0) {
		fprintf(stderr, "winsync-bench: ws_event_create: %s\n", strerror(-rc));
		return -1;
	}

	/* A poll of unsignaled events must time out at once and take nothing. */
	rc = ws_wait_any(g.arena, &w, &idx);
	if (rc != -ETIMEDOUT)
		failf("set-up: ws_wait_any on an unsignaled event, past deadline = %d (%s), want -ETIMEDOUT",
		      rc, strerror(-rc));
	w.objects = g.many;
	w.count = MANY;
	rc = ws_wait_any(g.arena, &w, &idx);
	if (rc != -ETIMEDOUT)
		failf("set-up: ws_wait_any on 64 unsignaled events, past deadline = %d (%s), want -ETIMEDOUT",
		      rc, strerror(-rc));

	rc = pthread_mutex_init(&g.mutex, NULL);
	if (rc != 0) {
		fprintf(stderr, "winsync-bench: pthread_mutex_init: %s\n", strerror(rc));
		return -1;
	}
	for (int k = 0; k < 2; k++) {
		g.efd[k] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (g.efd[k] < 0) {
			fprintf(stderr, "winsync-bench: eventfd: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void teardown(void)
{
	ws_handle all[4 + MANY] = { g.ev, g.ping, g.pong, g.herd_sem };

	memcpy(all + 4, g.many, sizeof(g.many));
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		int rc = all[i] ? ws_close(g.arena, all[i]) : 0;

		if (rc != 0)
			failf("ws_close(%" PRIu32 ") = %d (%s)", all[i], rc, strerror(-rc));
	}
	pthread_mutex_destroy(&g.mutex);
	for (int k = 0; k < 2; k++)
		if (g.efd[k] >= 0)
			close(g.efd[k]);
	ws_arena_close(g.arena);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: winsync-bench [--quick] [--runs N] [--scale F] [--pin] [--only LIST]\n"
		"                     [--idle-seconds S] [--pairs N]\n"
		"  --quick     smoke run: iterations / %.0f, %d runs (checks results, as always)\n"
		"  --runs N    runs per row, median reported (default %d, at most %d)\n"
		"  --scale F   multiply iteration counts by F (default: $WINSYNC_BENCH_SCALE or 1)\n"
		"  --pin       pin the ping-pong threads to two different CPUs (default: no pinning)\n"
		"  --only LIST run only these groups, e.g. 1,3 (1 uncontended, 2 ping-pong,\n"
		"              3 wait_any 64 vs 1, 4 the herd, 5 parked threads, 6 pairs)\n"
		"  --idle-seconds S  how long (5) keeps its threads parked (default 10; --quick 1)\n"
		"  --pairs N   (6) measures 1, 2, 4, ... up to N independent pairs (default 8)\n"
		"environment: WINSYNC_BENCH_SCALE=F, WINSYNC_BACKEND=waitv|multiple\n",
		QUICK_DIVISOR, QUICK_RUNS, DEFAULT_RUNS, MAX_RUNS);
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
			for (const char *c = argv[++i]; *c; c++) {
				if (*c >= '1' && *c <= '6')
					opt.only |= 1u << (*c - '1');
				else if (*c != ',') {
					fprintf(stderr, "winsync-bench: --only wants group numbers, e.g. 1,3\n");
					return 2;
				}
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

	signal(SIGALRM, watchdog);
	rc = go_multithreaded();
	if (rc != 0) {
		fprintf(stderr, "winsync-bench: pthread_create: %s\n", strerror(rc));
		return 2;
	}
	g.owner = (uint32_t)gettid();
	rc = ws_arena_create(NULL, 0, &g.arena);
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
		g.cpu_a = bench_nth_allowed_cpu(0);
		g.cpu_b = bench_nth_allowed_cpu(1);
		if (g.cpu_b < 0)
			g.cpu_a = -1;  /* one CPU: nothing useful to pin */
		pin_self(g.cpu_a);
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
	       g.cpu_a >= 0 ? "ping-pong pinned" : "no pinning");
	fflush(stdout);

	printf("  %-*s %10s %9s %9s %9s %11s %8s\n", LABEL_W, "", "iters", "ns/op", "min", "max",
	       "ops/s", "ws/ref");
	print_rule();
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		if (opt.only && !(opt.only & (1u << i)))
			continue;
		measure_group(&groups[i]);
		print_group(&groups[i]);
		if (groups[i].rows == g4)
			printf("    wake-ups per release (sleeps that ended, last run): winsync %.2f, "
			       "broadcast %.2f (N waiters: 1 vs (N+1)/2 = %.1f)\n",
			       herd_wakeups_per_op[0], herd_wakeups_per_op[1], (HERD + 1) / 2.0);
		fflush(stdout);
	}
	print_rule();
	printf("  ns/op: median (min, max) over the runs.  ws/ref: the group's first (winsync) row's\n"
	       "  median ns/op divided by this row's; above 1 means winsync takes longer.\n");
	if (!opt.only || (opt.only & (1u << 5))) {
		printf("\n");
		failures += bench_contended(g.arena, opt.pairs, opt.quick ? 0.2 : 1.0);
		fflush(stdout);
	}
	if (!opt.only || (opt.only & (1u << 4))) {
		bool missed;

		printf("\n");
		failures += bench_idle(g.arena, opt.idle_seconds,
				       opt.quick ? IDLE_QUICK_THREADS : IDLE_THREADS, &missed);
		fflush(stdout);
	}

	teardown();
	if (failures) {
		fprintf(stderr, "winsync-bench: %d check(s) failed\n", failures);
		return 1;
	}
	return 0;
}
