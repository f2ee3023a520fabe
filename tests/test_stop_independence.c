/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A process stopped in the middle of its hand-offs (SIGSTOP, a debugger, a
 * suspended Wine process) holds up only the objects it was working on: two
 * processes share an arena, one ping-pongs several pairs of threads on its
 * own events and is stopped for 50 ms a few hundred times, and a pair of the
 * other process, on events of its own, never sees a round trip stall.  With
 * one lock for the whole arena a stop inside a hand-off stalled every other
 * process's hand-offs for as long as it lasted (issue 20: 1 to 5 round trips
 * of 54 to 104 ms per 300 stops).
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "robust.h"
#include "winsync.h"

#define PAIRS    3   /* in the process that is stopped */
#define STOPS    300
#define STOP_MS  50
#define LIMIT_MS 25  /* the longest round trip the other process may see */
#define CONTROL_MS 3000

struct pair {
	ws_arena *a;
	ws_handle ping, pong;
	_Atomic int *stop;
	uint32_t owner;
	long rounds;
	long over_limit; /* round trips longer than LIMIT_MS */
	long worst_ns;
	long slow_count;             /* the slow ones, for the verdict */
	struct timespec slow_start[256], slow_end[256];
};

static void pair_reset(struct pair *p)
{
	p->rounds = p->over_limit = p->worst_ns = p->slow_count = 0;
}

static long ns_between(struct timespec a, struct timespec b)
{
	return (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
}

/* When each stop began and ended (SIGCONT). */
static struct timespec stopped_at[STOPS], continued_at[STOPS];

/*
 * A slow round trip held up by the stopped process began while it was
 * stopped and ended right after it went on (its holder released the lock):
 * the signature that tells a lock apart from the machine's own noise, whose
 * stalls end at any time.
 */
static long held_up(const struct pair *p)
{
	long n = 0;

	for (long k = 0; k < p->slow_count; k++)
		for (int i = 0; i < STOPS; i++) {
			long from_cont = ns_between(continued_at[i], p->slow_end[k]);

			if (ns_between(p->slow_start[k], continued_at[i]) > 0 &&
			    ns_between(stopped_at[i], p->slow_end[k]) > 0 && from_cont >= 0 &&
			    from_cont < 5000000L * slow_factor()) {
				n++;
				break;
			}
		}
	return n;
}

static int wait_one(struct pair *p, ws_handle h, long ms)
{
	struct timespec dl = deadline_ms(ms);
	struct ws_wait w = { .objects = &h, .count = 1, .owner = p->owner, .deadline = &dl };
	uint32_t index;

	return ws_wait_any(p->a, &w, &index);
}

/* Sets ping, waits for pong; times each round trip. */
static void *pinger(void *arg)
{
	struct pair *p = arg;

	while (!atomic_load(p->stop)) {
		struct timespec t0 = ts_now(CLOCK_MONOTONIC);
		long ns;

		if (ws_event_set(p->a, p->ping, NULL) || wait_one(p, p->pong, 5000))
			break;
		ns = ns_between(t0, ts_now(CLOCK_MONOTONIC));
		p->worst_ns = ns > p->worst_ns ? ns : p->worst_ns;
		if (ns > LIMIT_MS * 1000000L * slow_factor()) {
			if (p->slow_count < 256) {
				p->slow_start[p->slow_count] = t0;
				p->slow_end[p->slow_count++] = ts_now(CLOCK_MONOTONIC);
			}
			p->over_limit++;
		}
		p->rounds++;
	}
	return NULL;
}

/* Answers each ping with a pong. */
static void *ponger(void *arg)
{
	struct pair *p = arg;

	while (!atomic_load(p->stop)) {
		int rc = wait_one(p, p->ping, 100);

		if (rc == -ETIMEDOUT)
			continue;
		if (rc || ws_event_set(p->a, p->pong, NULL))
			break;
	}
	return NULL;
}

static void pair_init(struct pair *p, ws_arena *a, _Atomic int *stop, uint32_t owner)
{
	*p = (struct pair){ .a = a, .stop = stop, .owner = owner };
	p->ping = mk_event(a, false, false);
	p->pong = mk_event(a, false, false);
}

/* The process that is stopped: PAIRS pairs on events of its own, until killed. */
static void busy_process(const char *name)
{
	static _Atomic int never;
	struct pair pairs[PAIRS];
	pthread_t t[2 * PAIRS];
	ws_arena *a = NULL;

	if (ws_arena_open(name, &a))
		_exit(2);
	for (int i = 0; i < PAIRS; i++) {
		pair_init(&pairs[i], a, &never, 0x100u + (uint32_t)i);
		t[2 * i] = spawn(ponger, &pairs[i]);
		t[2 * i + 1] = spawn(pinger, &pairs[i]);
	}
	for (int i = 0; i < 2 * PAIRS; i++)
		join(t[i]);
	_exit(3); /* a pair failed: the parent sees it exit */
}

START_TEST(stopped_process_holds_up_only_its_objects)
{
	char name[96];
	ws_arena *a;
	struct pair mine;
	_Atomic int stop = 0;
	pthread_t pong_t, ping_t;
	long rounds_before, control_over, control_worst, held;
	int status;
	pid_t pid;

	a = named_arena(name, sizeof name, "stopind", 256);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		busy_process(name);
	pair_init(&mine, a, &stop, 0x200);
	pong_t = spawn(ponger, &mine);
	ping_t = spawn(pinger, &mine);
	sleep_ms(200); /* both processes in their loops */
	/* Control: the same load without stops, for the machine's own noise. */
	pair_reset(&mine);
	sleep_ms(CONTROL_MS);
	control_over = mine.over_limit;
	control_worst = mine.worst_ns;
	pair_reset(&mine);
	srand((unsigned int)getpid());
	for (int i = 0; i < STOPS; i++) {
		sleep_ms(1 + rand() % 15);
		ck_assert_int_eq(kill(pid, SIGSTOP), 0);
		ck_assert_int_eq(waitpid(pid, &status, WUNTRACED), pid);
		ck_assert_msg(WIFSTOPPED(status), "the busy process ended: %#x", status);
		stopped_at[i] = ts_now(CLOCK_MONOTONIC);
		sleep_ms(STOP_MS);
		continued_at[i] = ts_now(CLOCK_MONOTONIC);
		ck_assert_int_eq(kill(pid, SIGCONT), 0);
	}
	rounds_before = mine.rounds;
	atomic_store(&stop, 1);
	join(ping_t);
	join(pong_t);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status), "the busy process failed: %#x", status);
	held = held_up(&mine);
	printf("stop independence: control (%d ms, no stops): %ld round trips over %ld ms, "
	       "slowest %.2f ms; %d stops of %d ms: %ld round trips, %ld over %ld ms (%ld of them "
	       "ended as the stopped process went on), slowest %.2f ms\n",
	       CONTROL_MS, control_over, LIMIT_MS * slow_factor(), control_worst / 1e6, STOPS,
	       STOP_MS, mine.rounds, mine.over_limit, LIMIT_MS * slow_factor(), held,
	       mine.worst_ns / 1e6);
	fflush(stdout);
	ck_assert_int_gt(rounds_before, STOPS);
	/* On a quiet machine (the control shows none) nothing may be slow at all;
	 * on a noisy one, no stall may have the stopped process's signature. */
	if (control_over == 0)
		ck_assert_msg(mine.over_limit == 0,
			      "%ld round trips of the other process took over %ld ms (slowest "
			      "%.2f ms, %ld ended as the stopped process went on)",
			      mine.over_limit, LIMIT_MS * slow_factor(), mine.worst_ns / 1e6, held);
	ck_assert_msg(held == 0,
		      "%ld round trips of the other process waited for the stopped one (slowest "
		      "%.2f ms)",
		      held, mine.worst_ns / 1e6);
	CK_OK(ws_arena_check(a, NULL, 0));
	ws_arena_close(a);
	ws_arena_unlink(name);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("stop_independence");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, stopped_process_holds_up_only_its_objects);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
