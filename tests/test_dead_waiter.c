/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Waiters that die blocked.  A process SIGKILLed while blocked in a wait
 * must not receive what is signaled after its death: the next auto-reset
 * set, semaphore unit or mutex goes to a live waiter, or stays with the
 * object.  Its record is reclaimed: thousands of such deaths (more than
 * WS_MAX_THREADS) leave registration working, and a closed object whose
 * only waiter died gets its slot back.
 */
#define _GNU_SOURCE
#include "robust.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

static char name[80];
static ws_handle objs[4];
static uint32_t nobjs;
static bool wait_all_mode;

/* A child that blocks on objs[] until it is killed. */
static int blocked_child(void *arg)
{
	ws_arena *a = NULL;
	uint32_t idx;
	struct ws_wait w = { .objects = objs, .count = nobjs, .owner = (uint32_t)getpid() };
	int rc;

	(void)arg;
	CHILD_CHECK(ws_arena_open(name, &a) == 0, 10);
	rc = wait_all_mode ? ws_wait_all(a, &w, &idx) : ws_wait_any(a, &w, &idx);
	fprintf(stderr, "blocked child: the wait returned %d (%s)\n", rc, errname(rc));
	return 11;
}

/* Forks a child blocked on `n` objects and kills it once it sleeps. */
static void kill_blocked(const ws_handle *h, uint32_t n, bool all)
{
	pid_t pid;

	memcpy(objs, h, n * sizeof(*h));
	nobjs = n;
	wait_all_mode = all;
	pid = fork_child_fn(blocked_child, NULL);
	ck_assert_msg(proc_asleep(pid, 60000), "the child never blocked");
	kill_reap(pid);
}

static void check_ok(ws_arena *a)
{
	char report[256];
	int rc = ws_arena_check(a, report, sizeof report);

	ck_assert_msg(rc == 0, "ws_arena_check: %d (%s) %s", rc, errname(rc), report);
}

/* A live waiter queued behind the dead one; started and asleep. */
static struct waiter *live_waiter(ws_arena *a, uint32_t owner, ws_handle h)
{
	struct waiter *w = calloc(1, sizeof(*w));

	ck_assert_ptr_nonnull(w);
	waiter_init(w, a, owner, false, &h, 1);
	waiter_start(w);
	waiter_asleep(w);
	return w;
}

static void finish_waiter(struct waiter *w, int rc)
{
	ck_assert_msg(waiter_wait_done(w, LONG_MS), "the live waiter never got it");
	ck_assert_int_eq(waiter_join(w), rc);
	ck_assert_uint_eq(w->index, 0);
	free(w);
}

START_TEST(event_set_after_dead_waiter)
{
	long rounds = scaled(10, 2);
	ws_arena *a = named_arena(name, sizeof name, "deadev", 0);
	ws_handle e = mk_event(a, false, false);

	for (long i = 0; i < rounds; i++) {
		struct waiter *w;

		kill_blocked(&e, 1, false);
		/* Nobody alive waits: the event keeps the signal. */
		CK_OK(ws_event_set(a, e, NULL));
		ck_assert_msg(ev_signaled(a, e), "round %ld: the dead waiter took the set", i);
		check_ok(a);
		CK_OK(ws_event_reset(a, e, NULL));
		/* A live waiter behind a dead one gets it. */
		kill_blocked(&e, 1, false);
		w = live_waiter(a, 7, e);
		CK_OK(ws_event_set(a, e, NULL));
		finish_waiter(w, 0);
		ck_assert(!ev_signaled(a, e));
		check_ok(a);
	}
	drop_arena(a, name);
}
END_TEST

START_TEST(sem_release_after_dead_waiter)
{
	long rounds = scaled(10, 2);
	ws_arena *a = named_arena(name, sizeof name, "deadsem", 0);
	ws_handle s = mk_sem(a, 0, 10), e = mk_event(a, true, false), pair[2] = { e, s };
	uint32_t idx;

	for (long i = 0; i < rounds; i++) {
		struct waiter *w;

		kill_blocked(&s, 1, false);
		kill_blocked(pair, 2, true);
		CK_OK(ws_sem_release(a, s, 1, NULL));
		CK_OK(ws_event_set(a, e, NULL));
		ck_assert_msg(sem_count(a, s) == 1, "round %ld: a dead waiter took the unit", i);
		check_ok(a);
		/* A live waiter behind two dead ones gets the next unit. */
		CK_OK(poll_any(a, &s, 1, 3, &idx));
		CK_OK(ws_event_reset(a, e, NULL));
		kill_blocked(&s, 1, false);
		w = live_waiter(a, 7, s);
		CK_OK(ws_sem_release(a, s, 1, NULL));
		finish_waiter(w, 0);
		ck_assert_uint_eq(sem_count(a, s), 0);
		check_ok(a);
	}
	drop_arena(a, name);
}
END_TEST

START_TEST(mutex_unlock_after_dead_waiter)
{
	long rounds = scaled(10, 2);
	ws_arena *a = named_arena(name, sizeof name, "deadmtx", 0);
	ws_handle m = mk_mutex(a, 5, 1);
	uint32_t count, owner;

	for (long i = 0; i < rounds; i++) {
		struct waiter *w;

		kill_blocked(&m, 1, false);
		CK_OK(ws_mutex_unlock(a, m, 5, NULL));
		/* Free, and not abandoned: the dead waiter never owned it. */
		ck_assert_msg(mtx_state(a, m, &count, &owner) == 0 && owner == 0 && count == 0,
			      "round %ld: mutex owner %#x count %u after the unlock", i, owner, count);
		check_ok(a);
		CK_OK(wait_any_ms(a, &m, 1, 5, 0, LONG_MS, &owner));
		kill_blocked(&m, 1, false);
		w = live_waiter(a, 7, m);
		CK_OK(ws_mutex_unlock(a, m, 5, NULL));
		finish_waiter(w, 0);
		ck_assert(mtx_state(a, m, &count, &owner) == 0 && owner == 7 && count == 1);
		CK_OK(ws_mutex_unlock(a, m, 7, NULL));
		CK_OK(wait_any_ms(a, &m, 1, 5, 0, LONG_MS, &owner));
		check_ok(a);
	}
	drop_arena(a, name);
}
END_TEST

/* A closed object whose only waiter died frees its slot: a full arena can create again. */
START_TEST(closed_object_with_dead_waiter_frees_slot)
{
	long rounds = scaled(40, 3);
	ws_arena *a = named_arena(name, sizeof name, "deadclose", 32);
	ws_handle e;

	for (int i = 0; i < 31; i++)
		mk_sem(a, 0, 1);
	e = mk_event(a, false, false);
	for (long i = 0; i < rounds; i++) {
		ws_handle next;
		int rc;

		kill_blocked(&e, 1, false);
		CK_OK(ws_close(a, e));
		rc = ws_event_create(a, false, false, &next);
		ck_assert_msg(rc == 0, "round %ld: create after closing an object whose waiter died: "
				       "%d (%s)",
			      i, rc, errname(rc));
		ck_assert_uint_ne(next, e);
		CK_RC(ws_event_set(a, e, NULL), -EBADF);
		e = next;
		check_ok(a);
	}
	drop_arena(a, name);
}
END_TEST

/* A process whose BATCH threads all block on objs[0] until it is killed. */
enum { BATCH = 32 };

struct batch {
	_Atomic pid_t tids[BATCH];
	ws_arena *a;
};

static struct batch *batch;

static void *blocked_thread(void *arg)
{
	int i = (int)(intptr_t)arg;
	uint32_t idx;
	struct ws_wait w = { .objects = objs, .count = 1, .owner = 1000 + (uint32_t)i };
	int rc;

	atomic_store(&batch->tids[i], (pid_t)gettid());
	rc = ws_wait_any(batch->a, &w, &idx);
	fprintf(stderr, "blocked thread: the wait returned %d (%s)\n", rc, errname(rc));
	_exit(12);
}

static int blocked_threads_child(void *arg)
{
	pthread_t t;

	(void)arg;
	CHILD_CHECK(ws_arena_open(name, &batch->a) == 0, 10);
	for (int i = 0; i < BATCH; i++)
		CHILD_CHECK(pthread_create(&t, NULL, blocked_thread, (void *)(intptr_t)i) == 0, 11);
	for (;;)
		pause();
}

/*
 * More deaths than there are records, in processes of BATCH blocked
 * threads each: every new thread still gets a record (a wait that returns
 * at once instead of blocking, e.g. with -EUSERS, fails the test), and a
 * set after all of them stays with the event.
 */
START_TEST(records_of_dead_waiters_are_reclaimed)
{
	long total = scaled(WS_MAX_THREADS + 200, BATCH);
	ws_arena *a = named_arena(name, sizeof name, "deadmany", 0);
	ws_handle e = mk_event(a, false, false);
	struct timespec t0 = ts_now(CLOCK_MONOTONIC);
	long done = 0;

	batch = shared_alloc(sizeof(*batch));
	objs[0] = e;
	while (done < total) {
		pid_t pid;
		int status;
		char sbuf[64];

		memset(batch, 0, sizeof(*batch));
		pid = fork_child_fn(blocked_threads_child, NULL);
		/* All asleep on two looks in a row. */
		for (int seen = 0, looks = 0; seen < 2; looks++) {
			int asleep = 0;

			for (int i = 0; i < BATCH; i++) {
				pid_t tid = atomic_load(&batch->tids[i]);

				asleep += tid && thread_asleep_now(pid, tid) == 1;
			}
			seen = asleep == BATCH ? seen + 1 : 0;
			if (looks > 60000 || waitpid(pid, &status, WNOHANG) == pid) {
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
				ck_abort_msg("death %ld: %d of %d threads blocked: %s", done, asleep,
					     BATCH, status_str(status, sbuf, sizeof sbuf));
			}
			sleep_ms(1);
		}
		kill_reap(pid);
		done += BATCH;
		if ((done / BATCH) % 16 == 0)
			check_ok(a);
	}
	CK_OK(ws_event_set(a, e, NULL));
	ck_assert(ev_signaled(a, e));
	check_ok(a);
	printf("%ld waiters killed while blocked (%u records) in %ld ms; registration still works\n",
	       done, WS_MAX_THREADS, ts_diff_ms(ts_now(CLOCK_MONOTONIC), t0));
	shared_free(batch, sizeof(*batch));
	drop_arena(a, name);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("dead_waiter");
	TCase *tc = tcase_create("dead_waiter");

	tcase_set_timeout(tc, 280);
	tcase_add_test(tc, event_set_after_dead_waiter);
	tcase_add_test(tc, sem_release_after_dead_waiter);
	tcase_add_test(tc, mutex_unlock_after_dead_waiter);
	tcase_add_test(tc, closed_object_with_dead_waiter_frees_slot);
	tcase_add_test(tc, records_of_dead_waiters_are_reclaimed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
