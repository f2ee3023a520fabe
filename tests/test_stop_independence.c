/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stopped process holds up only its own objects.  An operation on one
 * object takes that object's own lock (crit.h), so a process stopped
 * (SIGSTOP, a debugger, a suspended Wine process) in the middle of a
 * hand-off stalls the objects it was handing over and nothing else.
 *
 * A child process ping-pongs PAIRS pairs of threads on its own auto-reset
 * events and is stopped STOPS times for STOP_MS each; meanwhile a pair of
 * this process ping-pongs on two other events of the same arena and times
 * every round trip: none may take MAX_MS or more and end as the child is
 * let go (a stall on the stopped child ends within a few milliseconds of
 * its SIGCONT; a trip slowed by a busy machine's scheduling, which CI's
 * shared 2-CPU machines see too, ends at any time: those are counted and
 * printed, and may be at most a tenth of the stops).  (Where everything is
 * slower, under the sanitizers and in the guest, the bound and the stops
 * are slow_factor() times longer and the stops as many times fewer: a
 * stall for a whole stop still breaks the bound twice over.)  With one arena lock,
 * every stop that caught the child inside a hand-off stalled the other
 * pair for the whole stop (1 to 5 round trips of 50 ms or more per 300
 * stops).  The test also counts the stops that caught the child holding a
 * lock (as winsync-stat sees it): the case it is about must have happened.
 */
#define _GNU_SOURCE
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "robust.h"

#define PAIRS   3
#define STOPS   300
#define STOP_MS 50
#define MAX_MS  25

struct pair {
	ws_arena *a;
	ws_handle ev[2];
	uint32_t owner;
	_Atomic int *stop;
	_Atomic long trips;
	/* The timed side's record: longest round trip, and how many reached MAX_MS. */
	long max_us;
	long worst_us;
	long slow;
	struct timespec since;
	long slow_at[64][2]; /* the first slow trips: start and end, us since `since` */
	int ping_error, pong_error;
};

/*
 * A slow trip waited for the child if the child was stopped holding a lock,
 * the trip began by then (give or take this) and ended this soon after the
 * SIGCONT.  A trip slowed by scheduling may end near a SIGCONT by chance
 * (22 slow trips, one of them so, with CI's guest running beside a run):
 * it rarely also spans the stop, and only the few stops that caught the
 * child in a section count.
 */
#define RELEASED_MS 10

static struct shared {
	ws_handle child_ev[PAIRS][2];
	_Atomic long child_trips;
} *sh;

static char name[128];

static long us_since(struct timespec t0)
{
	struct timespec t = ts_now(CLOCK_MONOTONIC);

	return (t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000;
}

/* A wait that would be a failure to reach: a stalled pair shows as a slow trip first. */
static int wait_one(struct pair *p, ws_handle h)
{
	uint32_t idx;

	return wait_any_ms(p->a, &h, 1, p->owner, 0, 10000, &idx);
}

static void *ping(void *arg)
{
	struct pair *p = arg;

	while (!atomic_load(p->stop)) {
		struct timespec t0 = ts_now(CLOCK_MONOTONIC);
		long us;

		if ((p->ping_error = ws_event_set(p->a, p->ev[0], NULL)) ||
		    (p->ping_error = wait_one(p, p->ev[1])))
			break;
		us = us_since(t0);
		if (us > p->worst_us)
			p->worst_us = us;
		if (us >= p->max_us && p->slow < 64) {
			p->slow_at[p->slow][1] = us_since(p->since);
			p->slow_at[p->slow][0] = p->slow_at[p->slow][1] - us;
		}
		p->slow += us >= p->max_us;
		atomic_fetch_add(&p->trips, 1);
	}
	/* Lets the other side out of its wait. */
	ws_event_set(p->a, p->ev[0], NULL);
	return NULL;
}

static void *pong(void *arg)
{
	struct pair *p = arg;

	while (!atomic_load(p->stop)) {
		if ((p->pong_error = wait_one(p, p->ev[0])) ||
		    (p->pong_error = ws_event_set(p->a, p->ev[1], NULL)))
			break;
	}
	ws_event_set(p->a, p->ev[1], NULL);
	return NULL;
}

/* The child: PAIRS pairs, until it is killed. */
static int stopped_process(void *arg)
{
	static struct pair pairs[PAIRS];
	static _Atomic int never;
	ws_arena *a = NULL;

	(void)arg;
	if (ws_arena_open(name, &a))
		return 50;
	for (int i = 0; i < PAIRS; i++) {
		pairs[i] = (struct pair){ .a = a, .owner = 0x100 + i, .stop = &never };
		pairs[i].ev[0] = sh->child_ev[i][0];
		pairs[i].ev[1] = sh->child_ev[i][1];
		spawn(ping, &pairs[i]);
		spawn(pong, &pairs[i]);
	}
	for (;;) {
		long trips = 0;

		sleep_ms(1);
		for (int i = 0; i < PAIRS; i++)
			trips += atomic_load(&pairs[i].trips);
		atomic_store(&sh->child_trips, trips);
	}
	return 0;
}

/* Does a thread of the stopped child hold a lock, as an inspector sees it? */
static bool child_holds_a_lock(ws_arena *a, pid_t pid)
{
	struct ws_snapshot *snap;
	bool held = false;

	CK_OK(ws_arena_snapshot(a, 0, &snap));
	for (uint32_t t = 0; t < snap->thread_count; t++)
		held |= snap->threads[t].pid == (uint32_t)pid &&
			(snap->threads[t].flags & WS_SNAPSHOT_LOCK_HOLDER);
	ws_snapshot_free(snap);
	return held;
}

START_TEST(stopped_process_stalls_only_its_objects)
{
	struct pair mine = { 0 };
	_Atomic int stop = 0;
	long progressed = 0, caught_holding = 0, before, f = slow_factor();
	long stops = STOPS / f > 15 ? STOPS / f : 15, stop_ms = STOP_MS * f, max_ms = MAX_MS * f;
	long stalled = 0, near_cont = 0, done = 0, *stop_us, *cont_us;
	bool *caught;
	pthread_t t[2];
	ws_arena *a;
	pid_t pid;

	sh = shared_alloc(sizeof(*sh));
	a = named_arena(name, sizeof name, "stopind", 64);
	for (int i = 0; i < PAIRS; i++) {
		sh->child_ev[i][0] = mk_event(a, false, false);
		sh->child_ev[i][1] = mk_event(a, false, false);
	}
	mine = (struct pair){ .a = a, .owner = 0x200, .stop = &stop, .max_us = max_ms * 1000 };
	mine.ev[0] = mk_event(a, false, false);
	mine.ev[1] = mk_event(a, false, false);
	pid = fork_child_fn(stopped_process, NULL);
	while (atomic_load(&sh->child_trips) < 1000)
		sleep_ms(1);
	stop_us = calloc(4 * stops, sizeof(*stop_us));
	cont_us = calloc(4 * stops, sizeof(*cont_us));
	caught = calloc(4 * stops, sizeof(*caught));
	ck_assert(stop_us && cont_us && caught);
	mine.since = ts_now(CLOCK_MONOTONIC);
	t[0] = spawn(ping, &mine);
	t[1] = spawn(pong, &mine);
	/* Until a stop has caught the child inside a section, up to 4 times as many stops. */
	for (long i = 0; i < stops || (!caught_holding && i < 4 * stops); i++) {
		before = atomic_load(&sh->child_trips);
		/* Running a little between stops, so that they land at different points. */
		sleep_ms(2 + i % 7);
		stop_us[i] = us_since(mine.since);
		ck_assert_int_eq(kill(pid, SIGSTOP), 0);
		ck_assert_msg(wait_stopped(pid, 10000), "stop %ld: the child never stopped", i);
		progressed += atomic_load(&sh->child_trips) > before;
		caught[i] = child_holds_a_lock(a, pid);
		caught_holding += caught[i];
		sleep_ms(stop_ms);
		cont_us[i] = us_since(mine.since);
		ck_assert_int_eq(kill(pid, SIGCONT), 0);
		done = i + 1;
	}
	atomic_store(&stop, 1);
	join(t[0]);
	join(t[1]);
	kill_reap(pid);
	/* The first SIGCONT after the trip began: did the trip end just after it, and wait for it? */
	for (long k = 0; k < mine.slow && k < 64; k++) {
		long start = mine.slow_at[k][0], end = mine.slow_at[k][1], slack = RELEASED_MS * f * 1000;

		for (long i = 0; i < done; i++) {
			if (cont_us[i] < start)
				continue;
			if (end >= cont_us[i] && end - cont_us[i] <= slack) {
				near_cont++;
				stalled += caught[i] && start <= stop_us[i] + slack;
			}
			break;
		}
	}
	free(stop_us);
	free(cont_us);
	free(caught);
	printf("%ld stops of %ld ms: the child ran between %ld of them and was caught holding a lock "
	       "at %ld; the other pair's %ld round trips: longest %ld us, %ld of "
	       "%ld ms or more, %ld of them ending as the child was let go, %ld of those "
	       "spanning a stop that caught it in a section\n", done, stop_ms,
	       progressed, caught_holding, atomic_load(&mine.trips), mine.worst_us, mine.slow,
	       max_ms, near_cont, stalled);
	fflush(stdout);
	CK_OK(mine.ping_error);
	CK_OK(mine.pong_error);
	ck_assert_msg(stalled == 0,
		      "%ld round trips of the other pair took %ld ms or more, spanning a stop that "
		      "caught the child in a section, and ended as it was let go (longest trip "
		      "%ld us)", stalled, max_ms, mine.worst_us);
	ck_assert_msg(mine.slow <= done / 10,
		      "%ld round trips of the other pair took %ld ms or more (longest %ld us)",
		      mine.slow, max_ms, mine.worst_us);
	ck_assert_msg(progressed >= done / 2, "the child ran between %ld stops only", progressed);
	ck_assert_msg(caught_holding >= 1, "no stop caught the child inside a hand-off");
	ck_assert_msg(atomic_load(&mine.trips) >= stops, "the other pair made %ld round trips",
		      atomic_load(&mine.trips));
	drop_arena(a, name);
	shared_free(sh, sizeof(*sh));
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("stop_independence");
	TCase *tc = tcase_create("stop_independence");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, stopped_process_stalls_only_its_objects);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
