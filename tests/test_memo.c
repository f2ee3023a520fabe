/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A wait on many objects checks every handle, and a thread that waits on the
 * same list again skips that check while no object of the arena was closed
 * (winsync/memo.h).  Whatever makes a remembered list invalid must still
 * fail the next wait with -EBADF, even with its first object signaled: a
 * close here, in another thread or in another process; the slot reused by
 * a new object; the same handle values in another arena; a shorter or
 * changed list.  And a list a wait_any found valid may still hold one
 * object twice, which a wait_all refuses.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "robust.h"

#define N 64

/* N manual events, the first signaled: a wait on them takes #0 at once. */
static void make_list(ws_arena *a, ws_handle *h)
{
	h[0] = mk_event(a, true, true);
	for (int i = 1; i < N; i++)
		h[i] = mk_event(a, true, false);
}

/*
 * A thread gets its memo when it first enters an arena's critical section
 * (a wait that finds nothing ready does): polls that always succeed alone
 * never make it register.
 */
static void register_thread(ws_arena *a)
{
	ws_handle never = mk_event(a, false, false);
	uint32_t idx;

	CK_RC(poll_any(a, &never, 1, 1, &idx), -ETIMEDOUT);
	CK_OK(ws_close(a, never));
}

/* Waits on the list twice (the second from the memo): both take #0. */
static void wait_twice(ws_arena *a, const ws_handle *h, uint32_t count)
{
	uint32_t idx = 99;

	for (int k = 0; k < 2; k++) {
		CK_OK(poll_any(a, h, count, 1, &idx));
		ck_assert_uint_eq(idx, 0);
	}
}

START_TEST(close_in_this_thread)
{
	ws_arena *a = test_arena();
	ws_handle h[N];
	uint32_t idx;

	make_list(a, h);
	wait_twice(a, h, N);
	CK_OK(ws_close(a, h[N - 1]));
	CK_RC(poll_any(a, h, N, 1, &idx), -EBADF);
	CK_RC(poll_any(a, h, N, 1, &idx), -EBADF); /* not remembered as valid */
	/* The rest of the list, without the closed handle, is valid again. */
	wait_twice(a, h, N - 1);
	ws_arena_close(a);
}
END_TEST

static void *close_one(void *arg)
{
	struct { ws_arena *a; ws_handle h; } *job = arg;

	CK_OK(ws_close(job->a, job->h));
	return NULL;
}

START_TEST(close_in_another_thread)
{
	ws_arena *a = test_arena();
	ws_handle h[N];
	uint32_t idx;
	pthread_t t;
	struct { ws_arena *a; ws_handle h; } job;

	make_list(a, h);
	wait_twice(a, h, N);
	job.a = a;
	job.h = h[17];
	ck_assert_int_eq(pthread_create(&t, NULL, close_one, &job), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	CK_RC(poll_any(a, h, N, 1, &idx), -EBADF);
	ws_arena_close(a);
}
END_TEST

static char shared_name[80];
static ws_handle shared_h[N];

static int close_in_child(void *arg)
{
	ws_arena *a = NULL;

	(void)arg;
	CHILD_CHECK(ws_arena_open(shared_name, &a) == 0, 10);
	CHILD_CHECK(ws_close(a, shared_h[40]) == 0, 11);
	ws_arena_close(a);
	return 0;
}

START_TEST(close_in_another_process)
{
	ws_arena *a = named_arena(shared_name, sizeof shared_name, "memo", 128);
	uint32_t idx;
	int status;

	make_list(a, shared_h);
	wait_twice(a, shared_h, N);
	ck_assert(reap_child(fork_child_fn(close_in_child, NULL), LONG_MS, &status));
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CK_RC(poll_any(a, shared_h, N, 1, &idx), -EBADF);
	drop_arena(a, shared_name);
}
END_TEST

/* A slot freed and taken by a new object: the old handle names nothing. */
START_TEST(slot_reused)
{
	ws_arena *a = test_arena_cap(N);
	ws_handle h[N], fresh;
	uint32_t idx;

	make_list(a, h);
	wait_twice(a, h, N);
	CK_OK(ws_close(a, h[5]));
	fresh = mk_event(a, true, false);
	ck_assert_uint_ne(fresh, h[5]);
	CK_RC(poll_any(a, h, N, 1, &idx), -EBADF);
	h[5] = fresh;
	wait_twice(a, h, N);
	ws_arena_close(a);
}
END_TEST

/* The same handle values in a second arena, where one names nothing. */
START_TEST(same_values_other_arena)
{
	ws_arena *a = test_arena(), *b = test_arena();
	ws_handle h[N], hb[N];
	uint32_t idx;

	make_list(a, h);
	make_list(b, hb);
	for (int i = 0; i < N; i++)
		ck_assert_uint_eq(h[i], hb[i]); /* both arenas hand out the same values */
	/* One close in each, so that their counts of closes agree too. */
	CK_OK(ws_close(a, mk_event(a, false, false)));
	CK_OK(ws_close(b, hb[30]));
	wait_twice(a, h, N);
	CK_RC(poll_any(b, h, N, 1, &idx), -EBADF);
	wait_twice(a, h, N);
	ws_arena_close(a);
	ws_arena_close(b);
}
END_TEST

/* A list that differs in one handle from the remembered one is checked. */
START_TEST(changed_list)
{
	ws_arena *a = test_arena();
	ws_handle h[N];
	uint32_t idx;

	make_list(a, h);
	wait_twice(a, h, N);
	h[63] ^= 1u << 20; /* another generation of the same slot: never handed out */
	CK_RC(poll_any(a, h, N, 1, &idx), -EBADF);
	h[63] ^= 1u << 20;
	wait_twice(a, h, N);
	h[N - 1] = 0;
	CK_RC(poll_any(a, h, N, 1, &idx), -EBADF);
	ws_arena_close(a);
}
END_TEST

/*
 * The compare with the memo (winsync/equal.h) looks at every handle: one
 * handle changed at any position of lists of every length around the
 * compare's blocks of 8 and 16 handles is found, and the wait fails.
 */
START_TEST(changed_anywhere)
{
	static const uint32_t counts[] = { 4, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64 };
	ws_arena *a = test_arena();
	ws_handle h[N];
	uint32_t idx;

	make_list(a, h);
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
		for (uint32_t i = 0; i < counts[c]; i++) {
			wait_twice(a, h, counts[c]);
			h[i] ^= 1u << 20; /* another generation: never handed out */
			CK_RC(poll_any(a, h, counts[c], 1, &idx), -EBADF);
			h[i] ^= 1u << 20;
		}
	ws_arena_close(a);
}
END_TEST

/* A list a wait_any remembered says nothing of duplicates, which a wait_all refuses. */
START_TEST(wait_all_checks_duplicates)
{
	ws_arena *a = test_arena();
	ws_handle h[8];
	uint32_t idx;

	for (int i = 0; i < 7; i++)
		h[i] = mk_event(a, true, true);
	h[7] = h[3];
	wait_twice(a, h, 8);
	CK_RC(poll_all(a, h, 8, 1, &idx), -EINVAL);
	CK_RC(poll_all(a, h, 8, 1, &idx), -EINVAL);
	/* Without the twin: remembered by the wait_all, and closed under it. */
	for (int k = 0; k < 2; k++)
		CK_OK(poll_all(a, h, 7, 1, &idx));
	CK_OK(ws_close(a, h[6]));
	CK_RC(poll_all(a, h, 7, 1, &idx), -EBADF);
	ws_arena_close(a);
}
END_TEST

/* Threads that remember lists and end: their memos go with them (ASan's leak check). */
static void *wait_and_end(void *arg)
{
	register_thread(arg);
	wait_twice(arg, shared_h, N);
	return NULL;
}

START_TEST(memos_end_with_threads)
{
	ws_arena *a = test_arena();
	pthread_t t[8];

	make_list(a, shared_h);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, wait_and_end, a), 0);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	ws_arena_close(a);
}
END_TEST

/*
 * Pollers wait on the same list over and over (from their memos) while
 * another thread swaps one handle of the shared list for a new object and
 * closes the old one, round after round.  A poll that begins after a close
 * has returned must fail with -EBADF if its list holds the closed handle;
 * every poll takes #0 or fails so.
 */
#define POLLERS 3
#define ROUNDS 300

struct churn {
	ws_arena *a;
	_Atomic ws_handle list[N];
	_Atomic uint32_t closed_round;    /* rounds whose old handle is closed */
	_Atomic uint32_t seen[POLLERS];   /* the last round each poller saw fail */
	_Atomic int ready;                /* pollers that have their copy of the list */
	_Atomic bool stop;
	_Atomic long late, wrong, polls;  /* late: succeeded after the close returned */
};

struct poller {
	struct churn *c;
	int id;
};

static void *poll_loop(void *arg)
{
	struct poller *p = arg;
	struct churn *c = p->c;
	ws_handle mine[N];
	uint32_t round = 0, idx;

	for (int i = 0; i < N; i++)
		mine[i] = atomic_load(&c->list[i]);
	register_thread(c->a);
	atomic_fetch_add(&c->ready, 1);
	while (!atomic_load(&c->stop)) {
		uint32_t closed = atomic_load(&c->closed_round);
		int rc = poll_any(c->a, mine, N, 1, &idx);

		atomic_fetch_add(&c->polls, 1);
		if ((rc != 0 && rc != -EBADF) || (rc == 0 && idx != 0))
			atomic_fetch_add(&c->wrong, 1);
		if (closed > round && rc == 0)
			atomic_fetch_add(&c->late, 1);
		if (closed > round && rc == -EBADF) {
			for (int i = 0; i < N; i++)
				mine[i] = atomic_load(&c->list[i]);
			round = closed;
			atomic_store(&c->seen[p->id], round);
		}
	}
	return NULL;
}

START_TEST(closes_under_pollers)
{
	struct churn c = { .a = test_arena() };
	struct poller p[POLLERS];
	pthread_t t[POLLERS];
	ws_handle h[N];
	uint32_t seed = 12345;

	make_list(c.a, h);
	for (int i = 0; i < N; i++)
		atomic_store(&c.list[i], h[i]);
	for (int i = 0; i < POLLERS; i++) {
		p[i] = (struct poller){ &c, i };
		ck_assert_int_eq(pthread_create(&t[i], NULL, poll_loop, &p[i]), 0);
	}
	while (atomic_load(&c.ready) < POLLERS)
		sched_yield();
	for (uint32_t r = 1; r <= ROUNDS; r++) {
		uint32_t k = 1 + (seed = seed * 1103515245u + 12345u) % (N - 1);
		ws_handle old = atomic_load(&c.list[k]);
		struct timespec end = deadline_ms(LONG_MS);

		atomic_store(&c.list[k], mk_event(c.a, true, false));
		CK_OK(ws_close(c.a, old));
		atomic_store(&c.closed_round, r);
		for (int i = 0; i < POLLERS; i++)
			while (atomic_load(&c.seen[i]) < r) {
				ck_assert_msg(ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0,
					      "poller %d never saw round %u fail (%ld late, %ld wrong, %ld polls)", i, r, atomic_load(&c.late), atomic_load(&c.wrong), atomic_load(&c.polls));
				sched_yield();
			}
	}
	atomic_store(&c.stop, true);
	for (int i = 0; i < POLLERS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	printf("closes under pollers: %d rounds, %ld polls, %ld late, %ld wrong\n", ROUNDS,
	       atomic_load(&c.polls), atomic_load(&c.late), atomic_load(&c.wrong));
	ck_assert_int_eq(atomic_load(&c.late), 0);
	ck_assert_int_eq(atomic_load(&c.wrong), 0);
	ws_arena_close(c.a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("memo");
	TCase *tc = tcase_create("memo");

	tcase_add_test(tc, close_in_this_thread);
	tcase_add_test(tc, close_in_another_thread);
	tcase_add_test(tc, close_in_another_process);
	tcase_add_test(tc, slot_reused);
	tcase_add_test(tc, same_values_other_arena);
	tcase_add_test(tc, changed_list);
	tcase_add_test(tc, changed_anywhere);
	tcase_add_test(tc, wait_all_checks_duplicates);
	tcase_add_test(tc, closes_under_pollers);
	tcase_add_test(tc, memos_end_with_threads);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
