/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stress: 4 threads each take and release one mutex 100,000 times through
 * ws_wait_any and increment a plain counter under it: the counter must be
 * exact.  Also wait_all over pairs of mutexes (dining philosophers), a
 * semaphore bounding concurrency, and an auto-reset event ping-pong.
 */
#include "harness.h"

#include <stdio.h>
#include <string.h>

enum { THREADS = 4, ITERS = 100000 };

struct mctx {
	ws_arena *a;
	ws_handle m;
	long counter; /* plain: protected by the winsync mutex */
	_Atomic long errors;
};

struct marg {
	struct mctx *c;
	uint32_t owner;
};

static void *mutex_worker(void *arg)
{
	struct marg *ma = arg;
	struct mctx *c = ma->c;
	for (int i = 0; i < ITERS; i++) {
		struct timespec dl = deadline_ms(60000);
		struct ws_wait w = { .objects = &c->m, .count = 1, .owner = ma->owner,
				     .deadline = &dl };
		uint32_t idx = 99;
		int rc = ws_wait_any(c->a, &w, &idx);
		if (rc != 0 || idx != 0) {
			atomic_fetch_add(&c->errors, 1);
			return NULL;
		}
		c->counter++;
		uint32_t prev = 0;
		if (ws_mutex_unlock(c->a, c->m, ma->owner, &prev) != 0 || prev != 1) {
			atomic_fetch_add(&c->errors, 1);
			return NULL;
		}
	}
	return NULL;
}

START_TEST(mutex_counter_exact)
{
	struct mctx c;
	memset(&c, 0, sizeof c);
	c.a = test_arena();
	c.m = mk_mutex(c.a, 0, 0);
	struct marg args[THREADS];
	pthread_t t[THREADS];
	struct timespec t0 = ts_now(CLOCK_MONOTONIC);
	for (int i = 0; i < THREADS; i++) {
		args[i].c = &c;
		args[i].owner = 100 + i;
		t[i] = spawn(mutex_worker, &args[i]);
	}
	for (int i = 0; i < THREADS; i++)
		join(t[i]);
	ck_assert_int_eq(atomic_load(&c.errors), 0);
	ck_assert_int_eq(c.counter, (long)THREADS * ITERS);
	uint32_t cnt, own;
	ck_assert_int_eq(mtx_state(c.a, c.m, &cnt, &own), 0);
	ck_assert_uint_eq(cnt, 0);
	ck_assert_uint_eq(own, 0);
	printf("mutex stress: %d x %d in %ld ms\n", THREADS, ITERS,
	       ts_diff_ms(ts_now(CLOCK_MONOTONIC), t0));
	ws_arena_close(c.a);
}
END_TEST

/* Dining philosophers through wait_all: exclusive forks, no deadlock. */
enum { PHIL = 4, MEALS = 5000 };

struct pctx {
	ws_arena *a;
	ws_handle fork[PHIL];
	int in_use[PHIL];  /* plain: protected by the fork mutexes */
	long meals[PHIL];
	_Atomic long errors;
};

struct parg {
	struct pctx *c;
	int i;
};

static void *philosopher(void *arg)
{
	struct parg *pa = arg;
	struct pctx *c = pa->c;
	int l = pa->i, r = (pa->i + 1) % PHIL;
	ws_handle objs[2] = { c->fork[l], c->fork[r] };
	uint32_t owner = 200 + pa->i;
	for (int k = 0; k < MEALS; k++) {
		uint32_t idx = 99;
		int rc = wait_all_ms(c->a, objs, 2, owner, 0, 60000, &idx);
		if (rc != 0 || idx != 0) {
			atomic_fetch_add(&c->errors, 1);
			return NULL;
		}
		if (c->in_use[l] || c->in_use[r])
			atomic_fetch_add(&c->errors, 1);
		c->in_use[l] = c->in_use[r] = 1;
		c->meals[pa->i]++;
		c->in_use[l] = c->in_use[r] = 0;
		if (ws_mutex_unlock(c->a, c->fork[r], owner, NULL) != 0 ||
		    ws_mutex_unlock(c->a, c->fork[l], owner, NULL) != 0)
			atomic_fetch_add(&c->errors, 1);
	}
	return NULL;
}

START_TEST(philosophers_wait_all)
{
	struct pctx c;
	memset(&c, 0, sizeof c);
	c.a = test_arena();
	for (int i = 0; i < PHIL; i++)
		c.fork[i] = mk_mutex(c.a, 0, 0);
	struct parg args[PHIL];
	pthread_t t[PHIL];
	for (int i = 0; i < PHIL; i++) {
		args[i].c = &c;
		args[i].i = i;
		t[i] = spawn(philosopher, &args[i]);
	}
	for (int i = 0; i < PHIL; i++)
		join(t[i]);
	ck_assert_int_eq(atomic_load(&c.errors), 0);
	for (int i = 0; i < PHIL; i++) {
		ck_assert_int_eq(c.meals[i], MEALS);
		uint32_t cnt, own;
		mtx_state(c.a, c.fork[i], &cnt, &own);
		ck_assert_uint_eq(own, 0);
	}
	ws_arena_close(c.a);
}
END_TEST

/* A semaphore of 2 never lets more than 2 threads in. */
struct sctx {
	ws_arena *a;
	ws_handle s;
	_Atomic int inside;
	_Atomic int max_inside;
	_Atomic long errors;
};

static void *sem_worker(void *arg)
{
	struct sctx *c = arg;
	for (int k = 0; k < 10000; k++) {
		uint32_t idx;
		if (wait_any_ms(c->a, &c->s, 1, 5, 0, 60000, &idx) != 0) {
			atomic_fetch_add(&c->errors, 1);
			return NULL;
		}
		int n = atomic_fetch_add(&c->inside, 1) + 1;
		int m = atomic_load(&c->max_inside);
		while (n > m && !atomic_compare_exchange_weak(&c->max_inside, &m, n))
			;
		atomic_fetch_sub(&c->inside, 1);
		if (ws_sem_release(c->a, c->s, 1, NULL) != 0)
			atomic_fetch_add(&c->errors, 1);
	}
	return NULL;
}

START_TEST(semaphore_bounds_concurrency)
{
	struct sctx c;
	memset(&c, 0, sizeof c);
	c.a = test_arena();
	c.s = mk_sem(c.a, 2, 2);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		t[i] = spawn(sem_worker, &c);
	for (int i = 0; i < 4; i++)
		join(t[i]);
	ck_assert_int_eq(atomic_load(&c.errors), 0);
	ck_assert_int_le(atomic_load(&c.max_inside), 2);
	ck_assert_uint_eq(sem_count(c.a, c.s), 2);
	ws_arena_close(c.a);
}
END_TEST

/* Two threads ping-pong through two auto-reset events. */
enum { PINGS = 10000 };

struct ppctx {
	ws_arena *a;
	ws_handle ping, pong;
	long seq; /* plain: passed back and forth through the events */
	_Atomic long errors;
};

static void *ponger(void *arg)
{
	struct ppctx *c = arg;
	for (int i = 0; i < PINGS; i++) {
		uint32_t idx;
		if (wait_any_ms(c->a, &c->ping, 1, 2, 0, 60000, &idx) != 0) {
			atomic_fetch_add(&c->errors, 1);
			return NULL;
		}
		if (c->seq != 2L * i + 1)
			atomic_fetch_add(&c->errors, 1);
		c->seq++;
		ws_event_set(c->a, c->pong, NULL);
	}
	return NULL;
}

START_TEST(event_ping_pong)
{
	struct ppctx c;
	memset(&c, 0, sizeof c);
	c.a = test_arena();
	c.ping = mk_event(c.a, false, false);
	c.pong = mk_event(c.a, false, false);
	pthread_t t = spawn(ponger, &c);
	for (int i = 0; i < PINGS; i++) {
		c.seq++;
		CK_OK(ws_event_set(c.a, c.ping, NULL));
		uint32_t idx;
		int rc = wait_any_ms(c.a, &c.pong, 1, 1, 0, 60000, &idx);
		if (rc != 0)
			ck_abort_msg("ping %d: %d (%s)", i, rc, errname(rc));
		if (c.seq != 2L * i + 2)
			ck_abort_msg("ping %d: seq %ld", i, c.seq);
	}
	join(t);
	ck_assert_int_eq(atomic_load(&c.errors), 0);
	ws_arena_close(c.a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("stress");
	TCase *tc = tcase_create("stress");
	tcase_set_timeout(tc, 280);
	tcase_add_test(tc, mutex_counter_exact);
	tcase_add_test(tc, philosophers_wait_all);
	tcase_add_test(tc, semaphore_bounds_concurrency);
	tcase_add_test(tc, event_ping_pong);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
