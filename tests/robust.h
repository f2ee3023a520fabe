/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the robustness tests (deaths, corruption, liveness):
 * work scaling for slow machines, forked children with time limits, memory
 * shared with them, and a small random number generator.
 *
 * Scaling: the counts a test asks for are for this host.  In the QEMU TCG
 * guest (/proc/cmdline has winsync.job=), which is 10-50x slower, and under
 * the sanitizers they shrink; WINSYNC_ROBUST_SCALE=PERCENT overrides.
 */
#ifndef WINSYNC_TEST_ROBUST_H
#define WINSYNC_TEST_ROBUST_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "harness.h"

bool in_guest(void);

/* Percent of the host's work to do here (see above). */
int robust_scale(void);
/* `host` scaled, at least `min`. */
long scaled(long host, long min);
/* Multiplier for time limits: 1 on the host, more where everything is slower. */
long slow_factor(void);

/* A fresh named (shared) arena; its name goes to `name`. */
ws_arena *named_arena(char *name, size_t size, const char *tag, uint32_t capacity);
/* Closes and unlinks it. */
void drop_arena(ws_arena *arena, const char *name);

/* Forks; the child runs fn(arg) and _exits with its result. */
pid_t fork_child_fn(int (*fn)(void *), void *arg);
/*
 * A forked waiter's body: opens arena `name` and waits for `h` as `owner`,
 * with no deadline.  0 once it got it; 50 (open), 53 (wait) or 54 (index).
 */
int child_wait_one(const char *name, ws_handle h, uint32_t owner);
/* Waits up to `ms` for the child: true once it is reaped (*status filled). */
bool reap_child(pid_t pid, long ms, int *status);
/* SIGKILL and reap. */
void kill_reap(pid_t pid);
/* Waits up to `ms` for the child to stop (SIGSTOP): true if it did. */
bool wait_stopped(pid_t pid, long ms);
/* Waits up to `ms` for the child to stop (true) or end (false, *status set); fails the test else. */
bool stopped_or_ended(pid_t pid, long ms, int *status);

/* Zeroed memory shared with children forked later. */
void *shared_alloc(size_t size);
void shared_free(void *p, size_t size);

/* xorshift64*: reproducible per seed, good enough to choose things. */
struct rng {
	uint64_t s;
};
void rng_seed(struct rng *r, uint64_t seed);
uint32_t rng_next(struct rng *r);
/* Uniform in [0, n), n > 0. */
uint32_t rng_below(struct rng *r, uint32_t n);

/* A seed from WINSYNC_SEED, else the clock; printed so that a run can be repeated. */
uint64_t test_seed(const char *what);

/* In a forked child: print what failed and exit with `code`. */
#define CHILD_CHECK(cond, code)                                                          \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "child %d: check failed (%d) at %s:%d: %s\n",   \
				(int)getpid(), (code), __FILE__, __LINE__, #cond);       \
			_exit(code);                                                     \
		}                                                                        \
	} while (0)

/*
 * Waits until thread `tid` of this process sleeps in futex or futex_waitv
 * (seen twice, 1 ms apart); fails the test after 60 s.  For a waiter,
 * waiter_asleep() also fails if its wait returned instead.
 */
void wait_asleep(pid_t tid);
void waiter_asleep(struct waiter *w);
/* The same for the main thread of another process; false if it ended. */
bool proc_asleep(pid_t pid, long ms);
bool thread_asleep(pid_t pid, pid_t tid, long ms);
/* One look: 1 asleep in a futex wait, 0 not, -1 gone. */
int thread_asleep_now(pid_t pid, pid_t tid);

/*
 * A bystander: a live thread that entered the arena once (ws_arena_check),
 * holds nothing and idles until stopped.  bystander_start returns once its
 * tid is known.
 */
struct bystander {
	ws_arena *a;
	_Atomic pid_t tid;
	_Atomic int quit;
	pthread_t thread;
};
void bystander_start(struct bystander *b, ws_arena *a);
void bystander_stop(struct bystander *b);

/* A string for a child's wait status. */
const char *status_str(int status, char *buf, size_t size);

#endif
