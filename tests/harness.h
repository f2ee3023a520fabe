/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared helpers for the native winsync tests (Check framework).
 *
 * Every test program's main() is simply
 *     int main(void) { return harness_run(make_suite()); }
 * harness_run() first probes the futex backend once (before Check forks a
 * child per test) and exits 77, a CTest skip, when WINSYNC_BACKEND forces a
 * backend the running kernel lacks.
 */
#ifndef WINSYNC_TEST_HARNESS_H
#define WINSYNC_TEST_HARNESS_H

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <winsync.h>

/* Probe the backend, run the suite, return the process exit status. */
int harness_run(Suite *suite);

/*
 * Probe once: create and close a private arena.  -ENOSYS with a forced
 * backend exits 77 with a SKIP message; any other failure aborts.
 */
void harness_probe_backend(void);

/* A private arena (capacity 0 = default); fails the test on error. */
ws_arena *test_arena(void);
ws_arena *test_arena_cap(uint32_t capacity);

/* A unique valid arena name: "wstest-<tag>-r<runner pid>-<pid>-<n>"; names
 * left behind by failed tests are unlinked when the run ends. */
void test_arena_name(char *buf, size_t size, const char *tag);

/* Absolute deadlines and clock helpers. */
struct timespec ts_now(clockid_t clock);
struct timespec ts_add_ms(struct timespec t, long ms);
struct timespec deadline_ms(long ms);              /* CLOCK_MONOTONIC + ms */
struct timespec deadline_rt_ms(long ms);           /* CLOCK_REALTIME + ms */
struct timespec deadline_past(void);               /* CLOCK_MONOTONIC - 1 s */
int ts_cmp(struct timespec a, struct timespec b);  /* <0, 0, >0 */
long ts_diff_ms(struct timespec later, struct timespec earlier);
void sleep_ms(long ms);

/*
 * The owner id of a thread that acquires for itself: its thread id moved
 * above every thread id (at most 2^22), so that it never equals an owner id
 * a test invents (0x151, 78): after a pid wrap, or early in a guest, a
 * thread id may be any of those, and would then hold, or abandon by its
 * death, the mutexes of that invented owner.
 */
#define SELF_OWNER_BASE 0x40000000u
uint32_t self_owner(void);
uint32_t owner_of_tid(pid_t tid);

/* Deadlines for waits that must succeed / must time out. */
#define LONG_MS  20000L  /* a wait that should be woken: generous (TCG) */
#define SHORT_MS 150L    /* a wait that should time out */

/* Convenience waits. */
int wait_any_ms(ws_arena *a, const ws_handle *objs, uint32_t count,
		uint32_t owner, ws_handle alert, long ms, uint32_t *index);
int wait_all_ms(ws_arena *a, const ws_handle *objs, uint32_t count,
		uint32_t owner, ws_handle alert, long ms, uint32_t *index);
/* Poll (past deadline). */
int poll_any(ws_arena *a, const ws_handle *objs, uint32_t count,
	     uint32_t owner, uint32_t *index);
int poll_all(ws_arena *a, const ws_handle *objs, uint32_t count,
	     uint32_t owner, uint32_t *index);
int poll_one(ws_arena *a, ws_handle h, uint32_t owner);

/* Object state readers that fail the test if the read fails. */
bool ev_signaled(ws_arena *a, ws_handle ev);
uint32_t sem_count(ws_arena *a, ws_handle sem);
/* Returns the ws_mutex_read result (0 or -EOWNERDEAD), fills count/owner. */
int mtx_state(ws_arena *a, ws_handle m, uint32_t *count, uint32_t *owner);

ws_handle mk_event(ws_arena *a, bool manual, bool signaled);
ws_handle mk_sem(ws_arena *a, uint32_t count, uint32_t max);
ws_handle mk_mutex(ws_arena *a, uint32_t owner, uint32_t count);

/*
 * A thread that runs one ws_wait_any / ws_wait_all and records the result.
 * Fill the fields, call waiter_start(), then waiter_wait_blocked() to wait
 * until it is asleep in the kernel, then waiter_join().
 */
struct waiter {
	ws_arena *arena;
	ws_handle objects[WS_MAX_WAIT_OBJECTS];
	uint32_t count;
	uint32_t owner;
	ws_handle alert;
	uint32_t flags;
	bool all;          /* ws_wait_all instead of ws_wait_any */
	bool forever;      /* deadline NULL */
	long timeout_ms;   /* relative deadline computed when the thread starts */
	/* results */
	int rc;
	uint32_t index;
	struct timespec deadline;   /* the absolute deadline used */
	struct timespec returned;   /* CLOCK_MONOTONIC when the wait returned */
	struct timespec returned_dl_clock; /* the same, on the deadline's clock */
	/* internal */
	pthread_t thread;
	_Atomic pid_t tid;
	_Atomic int started;
	_Atomic int done;
	/*
	 * The thread lives on after its wait until waiter_join(): a thread that
	 * ends holding a mutex abandons it, and the tests inspect what the wait
	 * acquired first.
	 */
	_Atomic int release;
	/* optional hook run in the thread after the wait returns */
	void (*after)(struct waiter *w);
	void *user;
};

/* Initialise with the defaults: timeout LONG_MS, wait_any, no alert. */
void waiter_init(struct waiter *w, ws_arena *a, uint32_t owner, bool all,
		 const ws_handle *objs, uint32_t count);
void waiter_start(struct waiter *w);
/* Wait until the waiter sleeps in futex_waitv / futex (fails the test on
 * a timeout or if the waiter has already returned). */
void waiter_wait_blocked(struct waiter *w);
/*
 * For a waiter expected to time out: start it and wait until it is blocked;
 * if its deadline passes before it was seen blocked (a very slow machine),
 * restart it with a doubled timeout_ms.
 */
void waiter_start_blocked(struct waiter *w);
/* Join and return rc. */
int waiter_join(struct waiter *w);
bool waiter_done(struct waiter *w);
/* Spin (with sleeps) until done or ms elapsed; returns done. */
bool waiter_wait_done(struct waiter *w, long ms);

/*
 * ws_arena_check on a thread of its own, for a test that must see whether
 * it returns in time without hanging when it does not: start, wait up to
 * some time, put right what keeps it waiting, join.
 */
struct bg_check {
	ws_arena *arena;
	pthread_t thread;
	_Atomic int done;
	int rc;
	char report[160];
};
void bg_check_start(struct bg_check *k, ws_arena *a);
/* Spin (with sleeps) until it returned or ms elapsed; returns whether it did. */
bool bg_check_wait(struct bg_check *k, long ms);
/* Join and return its result. */
int bg_check_join(struct bg_check *k);

/* Wait until thread `tid` of this process sleeps in a futex system call. */
void wait_tid_blocked(pid_t tid);

/* Wait until the (single-threaded) child process `pid` sleeps in a futex
 * system call. */
void wait_proc_blocked(pid_t pid);

/* Generic thread spawning. */
pthread_t spawn(void *(*fn)(void *), void *arg);
void join(pthread_t t);

/* A fresh owner id unique in this process (never 0). */
uint32_t new_owner(void);

/* The sanitizer the tests were built with, if any. */
bool under_asan(void);
bool under_tsan(void);
bool under_sanitizer(void);

/* Assert a ws_* call returns the expected value, printing the call. */
#define CK_RC(expr, expected)                                                   \
	do {                                                                    \
		int ck_rc_got_ = (expr);                                        \
		int ck_rc_exp_ = (expected);                                    \
		ck_assert_msg(ck_rc_got_ == ck_rc_exp_,                         \
			      "%s returned %d (%s), expected %d (%s)", #expr,    \
			      ck_rc_got_, errname(ck_rc_got_), ck_rc_exp_,       \
			      errname(ck_rc_exp_));                              \
	} while (0)
#define CK_OK(expr) CK_RC(expr, 0)

const char *errname(int negerr);

#endif
