/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Findings of the independent random tester (reliability v3) that need
 * threads that end or record tables filled: each test fails on the v2 core.
 *   2  a record adopted while the reaper works on it: two threads in one
 *      critical section (stats.recoveries with nobody dying in a call)
 *   4  an owner id equal to a live thread's tid still abandons its mutexes
 *   5  a wait that acquires nothing does not change the owner id a thread
 *      is known by
 *   8  -ENOSPC only at `capacity` live objects (and closed ones held for waits)
 * and one found since: a record adopted by a non-blocking call that gets
 * -EAGAIN is given back dead, its duties left to the next adopter or reaper.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "robust.h"

#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../winsync/arena.h" /* white-box: the records' identity words */
#include "whitebox.h"

/* record.h's mark of a record the lock holder is reaping (the kernel never writes it). */
#define REAPING (WS_FUTEX_OWNER_DIED | 1u)

/* How soon a waiter must see a dead owner's mutex abandoned. */
#define ABANDON_MS 500

/* ---- finding 4 -------------------------------------------------------- */

struct holder {
	ws_arena *a;
	ws_handle mutex, sem;
	uint32_t owner;          /* acquires the mutex as this id */
	uint32_t poll_owner;     /* then polls the empty semaphore as this id (0: no poll) */
	_Atomic int acquired;
	_Atomic int go;
};

/* Acquires the mutex, optionally polls under another id, and ends holding it. */
static void *holder_main(void *arg)
{
	struct holder *h = arg;
	uint32_t index;

	CK_OK(poll_one(h->a, h->mutex, h->owner));
	atomic_store(&h->acquired, 1);
	while (!atomic_load(&h->go))
		sleep_ms(1);
	if (h->poll_owner)
		CK_RC(poll_any(h->a, &h->sem, 1, h->poll_owner, &index), -ETIMEDOUT);
	return NULL; /* the thread ends holding the mutex */
}

/* A waiter on the mutex; the holder ends; the waiter must get it abandoned, soon. */
static void abandoned_after_holder_ends(struct holder *h)
{
	struct waiter w;
	struct timespec t0;
	pthread_t t = spawn(holder_main, h);

	while (!atomic_load(&h->acquired))
		sleep_ms(1);
	waiter_init(&w, h->a, 0x7777, false, &h->mutex, 1);
	w.timeout_ms = 5000;
	waiter_start(&w);
	waiter_wait_blocked(&w);
	t0 = ts_now(CLOCK_MONOTONIC);
	atomic_store(&h->go, 1);
	join(t);
	ck_assert_msg(waiter_wait_done(&w, 5000), "the waiter never returned");
	CK_RC(waiter_join(&w), -EOWNERDEAD);
	ck_assert_msg(ts_diff_ms(w.returned, t0) < ABANDON_MS,
		      "abandoned %ld ms after the holder ended", ts_diff_ms(w.returned, t0));
	CK_OK(ws_mutex_unlock(h->a, h->mutex, 0x7777, NULL));
}

START_TEST(owner_id_equal_to_a_live_tid)
{
	ws_arena *a = test_arena();
	struct bystander b;
	struct holder h = { .a = a };

	bystander_start(&b, a);
	h.mutex = mk_mutex(a, 0, 0);
	/* The id the holder acquires with happens to be the bystander's tid. */
	h.owner = (uint32_t)atomic_load(&b.tid);
	abandoned_after_holder_ends(&h);
	bystander_stop(&b);
	CK_OK(ws_arena_check(a, NULL, 0));
	ws_arena_close(a);
}
END_TEST

START_TEST(poll_does_not_change_the_owner_id)
{
	ws_arena *a = test_arena();
	struct holder h = { .a = a, .owner = 0x1000, .poll_owner = 0x2000 };

	h.mutex = mk_mutex(a, 0, 0);
	h.sem = mk_sem(a, 0, 1);
	abandoned_after_holder_ends(&h);
	CK_OK(ws_arena_check(a, NULL, 0));
	ws_arena_close(a);
}
END_TEST

/* ---- finding 8 -------------------------------------------------------- */

START_TEST(enospc_only_at_capacity)
{
	enum { CAP = 32 };  /* as many slots as capacity: no spare slot to hide behind */
	ws_arena *a = test_arena_cap(CAP);
	ws_handle h[CAP], again, other;
	struct waiter w;

	for (int i = 0; i < CAP; i++)
		h[i] = mk_event(a, true, false);
	CK_RC(ws_event_create(a, true, false, &other), -ENOSPC);
	/* A waiter blocked for ever on h[0], which is then closed: held for the wait. */
	waiter_init(&w, a, 0x55, false, h, 1);
	w.forever = true;
	waiter_start(&w);
	waiter_wait_blocked(&w);
	CK_OK(ws_close(a, h[0]));
	CK_RC(ws_event_create(a, true, false, &other), -ENOSPC);
	CK_OK(ws_arena_check(a, NULL, 0));
	/* The closed object's handle is dead at once all the same. */
	CK_RC(ws_event_set(a, h[0], NULL), -EBADF);
	CK_RC(ws_close(a, h[0]), -EBADF);
	sleep_ms(50);
	ck_assert(!waiter_done(&w));
	/* Its wait over, the slot is free for the next create: capacity - 1 live objects. */
	CK_OK(ws_owner_died(a, 0x55));
	CK_RC(waiter_join(&w), -ECANCELED);
	CK_OK(ws_event_create(a, true, false, &again));
	CK_RC(ws_event_create(a, true, false, &other), -ENOSPC);
	CK_RC(ws_event_set(a, h[0], NULL), -EBADF);
	CK_OK(ws_event_set(a, again, NULL));
	CK_OK(ws_arena_check(a, NULL, 0));
	ws_arena_close(a);
}
END_TEST

/* ---- finding 2 -------------------------------------------------------- */

#define RECORDS_TO_FILL ((int)WS_MAX_THREADS - 8)

/* Registers the thread in the arena (a wait that polls enters the locked path), then ends. */
static void *register_and_end(void *arg)
{
	static ws_handle never;
	uint32_t index;

	if (!never)
		never = mk_event(arg, true, false);
	CK_RC(poll_any(arg, &never, 1, 0x31, &index), -ETIMEDOUT);
	return NULL;
}

#define LEFT_MAX 4096

struct churn {
	ws_arena *a;
	_Atomic int stop;
	_Atomic long adopted;
	_Atomic int next_owner;
	_Atomic uint32_t left[LEFT_MAX];  /* mutexes dead adopters left owned */
	_Atomic uint32_t left_count;
};

/* A thread that adopts a dead record (all are taken), creates a mutex owned, ends. */
static void *adopter(void *arg)
{
	struct churn *c = arg;
	ws_handle m;
	int rc = ws_mutex_create(c->a, (uint32_t)atomic_fetch_add(&c->next_owner, 1), 1, &m);

	ck_assert_msg(rc == 0 || rc == -EUSERS, "ws_mutex_create: %d", rc);
	if (rc == 0) {
		uint32_t i = atomic_fetch_add(&c->left_count, 1);

		atomic_fetch_add(&c->adopted, 1);
		if (i < LEFT_MAX)
			atomic_store(&c->left[i], m);
	}
	return NULL;
}

static void *spawner(void *arg)
{
	struct churn *c = arg;

	while (!atomic_load(&c->stop))
		join(spawn(adopter, c));
	return NULL;
}

static ws_arena *cur_arena;
static _Atomic pid_t registered_tid;

static void *register_once(void *arg)
{
	int *rc = arg;

	*rc = ws_arena_check(cur_arena, NULL, 0);
	atomic_store(&registered_tid, (pid_t)syscall(SYS_gettid));
	return NULL;
}

/* The record a live thread is registered in, or -1. */
/*
 * The rule that makes adoption and reaping race-free (record.h): a record
 * the lock holder is reaping (REAPING: its generation may be changing) is
 * never adopted.  Every record is made dead but one or two, by hand; a new
 * thread must adopt the one dead record that is not REAPING, and find none
 * when all are REAPING (v2 adopted a REAPING record: its generation then
 * changed under a live holder).
 */
START_TEST(reaping_record_is_never_adopted)
{
	ws_arena *a = test_arena();
	pid_t self = (pid_t)syscall(SYS_gettid);
	int mine, rc = 0, taken;
	uint32_t spare;

	CK_OK(ws_arena_check(a, NULL, 0));
	mine = wb_live_record(a, self);
	ck_assert_int_ge(mine, 0);
	cur_arena = a;
	spare = mine == 7 ? 8 : 7;
	/* Every record handed out: dead and being reaped, but `spare`, merely dead. */
	atomic_store(&a->header->fresh_records, a->records_count);
	for (uint32_t r = 0; r < a->records_count; r++)
		if ((int)r != mine)
			atomic_store(&a->records[r].alive, r == spare ? WS_FUTEX_OWNER_DIED : REAPING);
	join(spawn(register_once, &rc));
	CK_OK(rc);
	/* The thread has ended by now: its record keeps its tid. */
	taken = wb_named_record(a, atomic_load(&registered_tid));
	ck_assert_msg(taken == (int)spare, "a new thread took record %d, not the one dead record %u",
		      taken, spare);
	for (uint32_t r = 0; r < a->records_count; r++)
		if ((int)r != mine && r != spare)
			ck_assert_msg(atomic_load(&a->records[r].alive) == REAPING,
				      "record %u, being reaped, was adopted", r);
	/* Now nothing is free or merely dead: a new thread finds no record. */
	atomic_store(&a->records[spare].alive, REAPING);
	join(spawn(register_once, &rc));
	CK_RC(rc, -EUSERS);
	/* Give the records back, so that closing the arena sees a sane table. */
	for (uint32_t r = 0; r < a->records_count; r++)
		if ((int)r != mine)
			atomic_store(&a->records[r].alive, 0);
	ws_arena_close(a);
}
END_TEST

/*
 * Every record handed out, a million slots (a reap scans them, slowly), and
 * new threads adopting dead records while waiters on abandoned mutexes make
 * others reap: no live holder may be taken for dead (v2: recoveries != 0
 * in about half of the runs).
 */
START_TEST(adoption_races_reaping)
{
	/* Live objects make a reap's scan for a dead owner's mutexes take milliseconds. */
	const uint32_t filler = under_sanitizer() ? 1u << 17 : 1u << 20;
	ws_arena *a = test_arena_cap(filler + LEFT_MAX + 64);
	struct churn c = { .a = a, .next_owner = 0x10000 };
	struct ws_stats before, after;
	struct timespec end;
	pthread_t sp[2];
	long waits = 0;
	ws_handle h;

	/* Records first: a thread registers with a cheap locked call, before the filler. */
	for (int i = 0; i < RECORDS_TO_FILL; i++)
		join(spawn(register_and_end, a));
	for (uint32_t i = 0; i < filler; i++)
		CK_OK(ws_event_create(a, false, false, &h));
	ws_stats_read(&before);
	for (int i = 0; i < 2; i++)
		sp[i] = spawn(spawner, &c);
	end = deadline_ms(3000);
	for (uint32_t next = 0; ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0 && next < LEFT_MAX;) {
		/* Each dead adopter left a mutex owned: waiting on one makes us reap. */
		ws_handle m = atomic_load(&c.left[next]);
		uint32_t index;
		int rc;

		if (!m) {
			sleep_ms(1);
			continue;
		}
		rc = wait_any_ms(a, &m, 1, 0x98, 0, 2000, &index);
		ck_assert_msg(rc == -EOWNERDEAD || rc == 0, "wait on a dead adopter's mutex: %d", rc);
		CK_OK(ws_close(a, m));
		waits++;
		next++;
	}
	atomic_store(&c.stop, 1);
	for (int i = 0; i < 2; i++)
		join(sp[i]);
	ws_stats_read(&after);
	printf("reliability: %ld adoptions, %llu records reaped, %ld waits: %llu recoveries\n",
	       atomic_load(&c.adopted), (unsigned long long)(after.reaped - before.reaped), waits,
	       (unsigned long long)(after.recoveries - before.recoveries));
	ck_assert_msg(after.recoveries == before.recoveries,
		      "%llu critical sections taken over, yet no thread died inside a call",
		      (unsigned long long)(after.recoveries - before.recoveries));
	ck_assert_int_gt(atomic_load(&c.adopted), 0);
	CK_OK(ws_arena_check(a, NULL, 0));
	ws_arena_close(a);
}
END_TEST

struct latecomer {
	ws_arena *a;
	_Atomic int step;        /* 1: tried under the busy lock, 2: may go on, 3: done */
	int first, second;
};

/* A new thread: one call while the lock is busy, another once it is free. */
static void *latecomer_main(void *arg)
{
	struct latecomer *l = arg;
	ws_handle e;

	l->first = ws_event_create(l->a, false, false, &e);
	atomic_store(&l->step, 1);
	while (atomic_load(&l->step) != 2)
		sleep_ms(1);
	l->second = ws_event_create(l->a, false, false, &e);
	atomic_store(&l->step, 3);
	return NULL;
}

static void *own_mutex_and_end(void *arg)
{
	ws_handle *m = arg;

	CK_OK(ws_mutex_create(cur_arena, 0x5150, 1, m));
	atomic_store(&registered_tid, (pid_t)syscall(SYS_gettid));
	return NULL;
}

/*
 * WS_ARENA_NONBLOCK: a new thread that adopts a dead record and finds the
 * lock busy fails with -EAGAIN having changed nothing: the record is dead
 * again, so the dead thread's mutex is abandoned to the next waiter while
 * the new thread lives (v3 kept the record live under the new thread with
 * its duties undone: the mutex stayed owned, -ETIMEDOUT here).
 */
START_TEST(nonblocking_adoption_is_undone)
{
	ws_arena *a = test_arena();
	pid_t self = (pid_t)syscall(SYS_gettid);
	struct latecomer l = { .a = a };
	int mine, dead = -1;
	uint32_t ref, idx;
	pthread_t t;
	ws_handle m;

	CK_OK(ws_arena_check(a, NULL, 0));
	mine = wb_live_record(a, self);
	ck_assert_int_ge(mine, 0);
	cur_arena = a;
	join(spawn(own_mutex_and_end, &m));
	dead = wb_named_record(a, atomic_load(&registered_tid));
	ck_assert_int_ge(dead, 0);
	/* The dead record is the one a new thread can take: the rest read as ours. */
	atomic_store(&a->header->fresh_records, a->records_count);
	for (uint32_t r = 0; r < a->records_count; r++)
		if ((int)r != mine && (int)r != dead)
			atomic_store(&a->records[r].alive, (uint32_t)self);
	/* The lock held by a live thread (our record's name, its counter odd and
	 * its log saying so, as a holder's: else the word is stale and taken
	 * over), the new thread non-blocking. */
	ref = wb_lock_ref(a, (uint32_t)mine);
	wb_pose_as_holder(a, (uint32_t)mine);
	atomic_store(&a->records[mine].log.arena_lock, 1);
	atomic_store(&a->header->lock, ref);
	CK_OK(ws_arena_set_flags(a, WS_ARENA_NONBLOCK));
	t = spawn(latecomer_main, &l);
	while (atomic_load(&l.step) != 1)
		sleep_ms(1);
	CK_RC(l.first, -EAGAIN);
	ck_assert_msg(atomic_load(&a->records[dead].alive) & WS_FUTEX_OWNER_DIED,
		      "the dead record is %#x after a call that failed with -EAGAIN",
		      atomic_load(&a->records[dead].alive));
	atomic_store(&a->header->lock, 0);
	wb_pose_as_holder_end(a, (uint32_t)mine);
	atomic_store(&a->records[mine].log.arena_lock, 0);
	CK_OK(ws_arena_set_flags(a, 0));
	/* The new thread lives on: the dead owner's mutex is abandoned all the same. */
	CK_RC(wait_any_ms(a, &m, 1, 0x98, 0, 2000, &idx), -EOWNERDEAD);
	atomic_store(&l.step, 2);
	join(t);
	CK_OK(l.second);
	for (uint32_t r = 0; r < a->records_count; r++)
		if ((int)r != mine && atomic_load(&a->records[r].alive) == (uint32_t)self)
			atomic_store(&a->records[r].alive, 0);
	CK_OK(ws_arena_check(a, NULL, 0));
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("reliability");
	TCase *tc = tcase_create("reliability");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, owner_id_equal_to_a_live_tid);
	tcase_add_test(tc, poll_does_not_change_the_owner_id);
	tcase_add_test(tc, enospc_only_at_capacity);
	tcase_add_test(tc, reaping_record_is_never_adopted);
	tcase_add_test(tc, adoption_races_reaping);
	tcase_add_test(tc, nonblocking_adoption_is_undone);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
