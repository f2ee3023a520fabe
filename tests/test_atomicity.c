/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wait_all atomicity: no other thread can ever observe a state in which some
 * of the objects of a wait_all are taken and others are not.  An fsync-style
 * "take each, roll back on failure" implementation is caught here.
 */
#include "harness.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>

#define W_OWNER 2u
#define HOLDER 99u

struct ctx {
	ws_arena *a;
	ws_handle E, S, M;
	_Atomic int phase;        /* 1: wait_all blocked; 2: transition */
	_Atomic int stop_poker;
	_Atomic int stop_observer;
	_Atomic long violations;
	_Atomic long strict_reads, snapshots;
	char msg[256];
};

static void violation(struct ctx *c, const char *fmt, int e, unsigned s, unsigned m)
{
	if (atomic_fetch_add(&c->violations, 1) == 0)
		snprintf(c->msg, sizeof c->msg, fmt, e, s, m);
}

static void *observer(void *arg)
{
	struct ctx *c = arg;
	while (!atomic_load(&c->stop_observer)) {
		int p1 = atomic_load(&c->phase);
		bool e1, e2, man;
		uint32_t s1, s2, max, m1, m2, cnt;
		int r = ws_event_read(c->a, c->E, &e1, &man);
		r |= ws_sem_read(c->a, c->S, &s1, &max);
		int rm = ws_mutex_read(c->a, c->M, &cnt, &m1);
		r |= ws_event_read(c->a, c->E, &e2, &man);
		r |= ws_sem_read(c->a, c->S, &s2, &max);
		rm |= ws_mutex_read(c->a, c->M, &cnt, &m2);
		int p2 = atomic_load(&c->phase);
		if (r != 0 || rm != 0) {
			violation(c, "read failed (%d %u %u)", r, (unsigned)rm, 0);
			continue;
		}
		if (p1 == 1 && p2 == 1) {
			/* nothing may change while the wait_all is blocked */
			atomic_fetch_add(&c->strict_reads, 1);
			if (!e1 || s1 != 1 || !e2 || s2 != 1 || m1 != HOLDER || m2 != HOLDER)
				violation(c, "while blocked: event=%d sem=%u owner=%u", e1 && e2,
					  s1 < s2 ? s1 : s2, m1 != HOLDER ? m1 : m2);
		} else if (e1 == e2 && s1 == s2 && m1 == m2) {
			/* a consistent snapshot: all before or all after */
			atomic_fetch_add(&c->snapshots, 1);
			bool before = e1 && s1 == 1 && m1 == HOLDER;
			bool after = !e1 && s1 == 0 && m1 == W_OWNER;
			if (!before && !after)
				violation(c, "partial state: event=%d sem=%u owner=%u", e1, s1, m1);
		}
	}
	return NULL;
}

static void *poker(void *arg)
{
	struct ctx *c = arg;
	while (!atomic_load(&c->stop_poker)) {
		/* changes nothing, but wakes naive implementations */
		ws_event_set(c->a, c->E, NULL);
		uint32_t idx;
		if (poll_any(c->a, &c->M, 1, HOLDER, &idx) == 0)
			ws_mutex_unlock(c->a, c->M, HOLDER, NULL);
		ws_sem_release(c->a, c->S, 1, NULL); /* -EOVERFLOW: max is 1 */
	}
	return NULL;
}

START_TEST(observer_never_sees_partial_set)
{
	struct ctx c;
	memset(&c, 0, sizeof c);
	c.a = test_arena();
	c.E = mk_event(c.a, false, true);
	c.S = mk_sem(c.a, 1, 1);
	c.M = mk_mutex(c.a, HOLDER, 1);
	for (int round = 0; round < 25; round++) {
		ws_handle objs[3] = { c.E, c.S, c.M };
		struct waiter w;
		waiter_init(&w, c.a, W_OWNER, true, objs, 3);
		waiter_start(&w);
		waiter_wait_blocked(&w);
		atomic_store(&c.phase, 1);
		atomic_store(&c.stop_poker, 0);
		atomic_store(&c.stop_observer, 0);
		pthread_t obs = spawn(observer, &c);
		pthread_t pok = spawn(poker, &c);
		sleep_ms(round == 0 ? 150 : 30);
		atomic_store(&c.stop_poker, 1);
		join(pok);
		ck_assert_msg(!waiter_done(&w), "wait_all returned %d while the mutex was held",
			      w.rc);
		atomic_store(&c.phase, 2);
		CK_OK(ws_mutex_unlock(c.a, c.M, HOLDER, NULL));
		/* the whole set was handed over by the unlock */
		ck_assert(!ev_signaled(c.a, c.E));
		ck_assert_uint_eq(sem_count(c.a, c.S), 0);
		uint32_t cnt, own;
		ck_assert_int_eq(mtx_state(c.a, c.M, &cnt, &own), 0);
		ck_assert_uint_eq(own, W_OWNER);
		CK_OK(waiter_join(&w));
		ck_assert_uint_eq(w.index, 0);
		sleep_ms(2);
		atomic_store(&c.stop_observer, 1);
		join(obs);
		ck_assert_msg(atomic_load(&c.violations) == 0, "round %d: %ld violations, first: %s",
			      round, atomic_load(&c.violations), c.msg);
		/* reset for the next round */
		CK_OK(ws_mutex_unlock(c.a, c.M, W_OWNER, NULL));
		uint32_t idx;
		CK_OK(poll_any(c.a, &c.M, 1, HOLDER, &idx));
		CK_OK(ws_event_set(c.a, c.E, NULL));
		CK_OK(ws_sem_release(c.a, c.S, 1, NULL));
	}
	ck_assert_int_gt(atomic_load(&c.strict_reads), 0);
	ws_arena_close(c.a);
}
END_TEST

struct poll_ctx {
	ws_arena *a;
	ws_handle obj;
	bool is_mutex;
	_Atomic int stop;
	_Atomic long ok, failed;
};

static void *poller(void *arg)
{
	struct poll_ctx *p = arg;
	while (!atomic_load(&p->stop)) {
		uint32_t idx;
		int rc = poll_any(p->a, &p->obj, 1, 3, &idx);
		if (rc != 0) {
			atomic_fetch_add(&p->failed, 1);
			continue;
		}
		atomic_fetch_add(&p->ok, 1);
		if (p->is_mutex)
			ws_mutex_unlock(p->a, p->obj, 3, NULL);
		else
			ws_sem_release(p->a, p->obj, 1, NULL);
	}
	return NULL;
}

/*
 * A blocked wait_all that cannot complete holds nothing: a poller taking and
 * giving back one of its objects must always succeed, however often its
 * give-back wakes the wait_all.
 */
START_TEST(incomplete_wait_all_holds_nothing)
{
	ws_arena *a = test_arena();
	for (int is_mutex = 0; is_mutex < 2; is_mutex++) {
		ws_handle obj = is_mutex ? mk_mutex(a, 0, 0) : mk_sem(a, 1, 1);
		ws_handle gate = mk_event(a, true, false);
		ws_handle objs[2] = { obj, gate };
		struct waiter w;
		waiter_init(&w, a, W_OWNER, true, objs, 2);
		waiter_start(&w);
		waiter_wait_blocked(&w);
		struct poll_ctx p = { .a = a, .obj = obj, .is_mutex = is_mutex };
		pthread_t t = spawn(poller, &p);
		sleep_ms(300);
		atomic_store(&p.stop, 1);
		join(t);
		ck_assert_msg(atomic_load(&p.failed) == 0,
			      "%s: poll failed %ld times of %ld: the wait_all held it",
			      is_mutex ? "mutex" : "sem", atomic_load(&p.failed),
			      atomic_load(&p.failed) + atomic_load(&p.ok));
		ck_assert_int_gt(atomic_load(&p.ok), 0);
		ck_assert(!waiter_done(&w));
		CK_OK(ws_event_set(a, gate, NULL));
		CK_OK(waiter_join(&w));
		if (is_mutex) {
			uint32_t c, o;
			mtx_state(a, obj, &c, &o);
			ck_assert_uint_eq(o, W_OWNER);
		} else {
			ck_assert_uint_eq(sem_count(a, obj), 0);
		}
	}
	ws_arena_close(a);
}
END_TEST

/*
 * Units are conserved when a wait_all on {S1, S2} competes with wait_any
 * waiters on S1 and on S2 while a producer releases both.
 */
struct cons_ctx {
	ws_arena *a;
	ws_handle s1, s2;
	_Atomic int stop;
	_Atomic long all_taken, s1_taken, s2_taken, errors;
};

struct cons_arg {
	struct cons_ctx *c;
	int kind; /* 0: wait_all {s1,s2}; 1: wait_any {s1}; 2: wait_any {s2} */
};

static void *consumer(void *arg)
{
	struct cons_arg *ca = arg;
	struct cons_ctx *c = ca->c;
	ws_handle both[2] = { c->s1, c->s2 };
	while (!atomic_load(&c->stop)) {
		uint32_t idx;
		int rc;
		if (ca->kind == 0)
			rc = wait_all_ms(c->a, both, 2, 10, 0, 20, &idx);
		else
			rc = wait_any_ms(c->a, ca->kind == 1 ? &c->s1 : &c->s2, 1, 11, 0, 20, &idx);
		if (rc == -ETIMEDOUT)
			continue;
		if (rc != 0 || idx != 0) {
			atomic_fetch_add(&c->errors, 1);
			continue;
		}
		atomic_fetch_add(ca->kind == 0 ? &c->all_taken
				 : ca->kind == 1 ? &c->s1_taken : &c->s2_taken, 1);
	}
	return NULL;
}

START_TEST(units_conserved_under_competition)
{
	struct cons_ctx c;
	memset(&c, 0, sizeof c);
	c.a = test_arena();
	c.s1 = mk_sem(c.a, 0, UINT32_MAX);
	c.s2 = mk_sem(c.a, 0, UINT32_MAX);
	struct cons_arg args[3] = { { &c, 0 }, { &c, 1 }, { &c, 2 } };
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		t[i] = spawn(consumer, &args[i]);
	enum { N = 3000 };
	for (int i = 0; i < N; i++) {
		CK_OK(ws_sem_release(c.a, c.s1, 1, NULL));
		CK_OK(ws_sem_release(c.a, c.s2, 1, NULL));
		if (i % 64 == 0)
			sleep_ms(1);
	}
	sleep_ms(100);
	atomic_store(&c.stop, 1);
	for (int i = 0; i < 3; i++)
		join(t[i]);
	ck_assert_int_eq(atomic_load(&c.errors), 0);
	long all = atomic_load(&c.all_taken);
	ck_assert_int_eq(all + atomic_load(&c.s1_taken) + sem_count(c.a, c.s1), N);
	ck_assert_int_eq(all + atomic_load(&c.s2_taken) + sem_count(c.a, c.s2), N);
	ws_arena_close(c.a);
}
END_TEST

/*
 * A wait_any on two objects signaled at the same moment by two threads takes
 * exactly one of them; the other stays available.  Rounds alternate between
 * signaling a blocked waiter and racing the waiter while it queues.
 */
struct race_ctx {
	ws_arena *a;
	ws_handle obj[2];
	int kind; /* 0: semaphores, 1: auto events, 2: mutexes held by 60/61 */
	_Atomic int go;
	_Atomic int ready;
};

struct race_arg {
	struct race_ctx *c;
	int which;
};

static void *race_signaler(void *arg)
{
	struct race_arg *ra = arg;
	struct race_ctx *c = ra->c;
	atomic_fetch_add(&c->ready, 1);
	while (!atomic_load(&c->go))
		sched_yield();
	ws_handle h = c->obj[ra->which];
	if (c->kind == 0)
		ws_sem_release(c->a, h, 1, NULL);
	else if (c->kind == 1)
		ws_event_set(c->a, h, NULL);
	else
		ws_mutex_unlock(c->a, h, 60 + ra->which, NULL);
	return NULL;
}

static bool available(struct race_ctx *c, int i)
{
	if (c->kind == 0)
		return sem_count(c->a, c->obj[i]) == 1;
	if (c->kind == 1)
		return ev_signaled(c->a, c->obj[i]);
	uint32_t cnt, own;
	mtx_state(c->a, c->obj[i], &cnt, &own);
	return own == 0;
}

/*
 * One round of the race: two fresh objects, a waiter on both (blocked
 * already, just started, or about to start), and two threads that signal
 * one object each at the same moment.  Returns once all three are done.
 */
static void race_round(struct race_ctx *c, int round, bool all, struct waiter *w)
{
	for (int i = 0; i < 2; i++)
		c->obj[i] = c->kind == 0 ? mk_sem(c->a, 0, 1)
			  : c->kind == 1 ? mk_event(c->a, false, false)
			  : mk_mutex(c->a, 60 + i, 1);
	atomic_store(&c->go, 0);
	atomic_store(&c->ready, 0);
	struct race_arg ra[2] = { { c, 0 }, { c, 1 } };
	pthread_t t[2] = { spawn(race_signaler, &ra[0]), spawn(race_signaler, &ra[1]) };
	while (atomic_load(&c->ready) < 2)
		sched_yield();
	waiter_init(w, c->a, W_OWNER, all, c->obj, 2);
	waiter_start(w);
	if (round % 8 == 0)
		waiter_wait_blocked(w);
	else if (round % 8 == 1)
		sleep_ms(1);
	atomic_store(&c->go, 1);
	join(t[0]);
	join(t[1]);
	CK_OK(waiter_join(w));
}

START_TEST(wait_any_takes_exactly_one_of_concurrent_signals)
{
	struct race_ctx c;
	memset(&c, 0, sizeof c);
	c.a = test_arena();
	c.kind = _i;
	for (int round = 0; round < 64; round++) {
		struct waiter w;
		race_round(&c, round, false, &w);
		ck_assert_uint_le(w.index, 1);
		ck_assert_msg(!available(&c, w.index), "round %d: object %u taken but available",
			      round, w.index);
		ck_assert_msg(available(&c, !w.index), "round %d: object %u lost", round,
			      !w.index);
		if (c.kind == 2) {
			uint32_t cnt, own;
			mtx_state(c.a, c.obj[w.index], &cnt, &own);
			ck_assert_uint_eq(own, W_OWNER);
			ck_assert_uint_eq(cnt, 1);
		}
		CK_OK(ws_close(c.a, c.obj[0]));
		CK_OK(ws_close(c.a, c.obj[1]));
	}
	ws_arena_close(c.a);
}
END_TEST

/* The same race with a wait_all: both are taken, nothing is left over. */
START_TEST(wait_all_under_concurrent_signals)
{
	struct race_ctx c;
	memset(&c, 0, sizeof c);
	c.a = test_arena();
	c.kind = _i;
	for (int round = 0; round < 64; round++) {
		struct waiter w;
		race_round(&c, round, true, &w);
		ck_assert_uint_eq(w.index, 0);
		ck_assert(!available(&c, 0));
		ck_assert(!available(&c, 1));
		CK_OK(ws_close(c.a, c.obj[0]));
		CK_OK(ws_close(c.a, c.obj[1]));
	}
	ws_arena_close(c.a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("atomicity");
	TCase *tc = tcase_create("atomicity");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, observer_never_sees_partial_set);
	tcase_add_test(tc, incomplete_wait_all_holds_nothing);
	tcase_add_test(tc, units_conserved_under_competition);
	tcase_add_loop_test(tc, wait_any_takes_exactly_one_of_concurrent_signals, 0, 3);
	tcase_add_loop_test(tc, wait_all_under_concurrent_signals, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
