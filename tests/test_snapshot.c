/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ws_arena_snapshot: known states read back field by field (every type and
 * state, wait-any and wait-all waiters with their deadlines and alerts,
 * queues in arrival order, owners, an abandoned mutex, a dead record, a
 * closed object), and the wait-for graph: two- and three-thread cycles
 * flagged deadlocked, chains that are hangs but not deadlocks left
 * unflagged.
 */
#define _GNU_SOURCE
#include "robust.h"

#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static struct ws_snapshot *snap(ws_arena *a)
{
	struct ws_snapshot *s = NULL;

	CK_OK(ws_arena_snapshot(a, 0, &s));
	ck_assert_ptr_nonnull(s);
	ck_assert_msg(s->problems == 0, "problems in a sound arena: %s", s->report);
	return s;
}

static const struct ws_snapshot_object *object(const struct ws_snapshot *s, ws_handle h)
{
	for (uint32_t i = 0; i < s->object_count; i++)
		if (s->objects[i].handle == h)
			return &s->objects[i];
	ck_abort_msg("handle %#x not in the snapshot", h);
	return NULL;
}

/* The thread waiting with owner id `owner`, or (not waiting) that last used it. */
static uint32_t thread_of(const struct ws_snapshot *s, uint32_t owner)
{
	for (uint32_t t = 0; t < s->thread_count; t++)
		if (s->threads[t].wait != WS_SNAPSHOT_NO_WAIT && s->threads[t].wait_owner == owner)
			return t;
	for (uint32_t t = 0; t < s->thread_count; t++)
		if (s->threads[t].owner == owner)
			return t;
	ck_abort_msg("no thread with owner id %#x", owner);
	return 0;
}

START_TEST(objects_field_by_field)
{
	ws_arena *a = test_arena_cap(64);
	ws_handle dropped = mk_mutex(a, 0x22, 1);
	ws_handle sem, held, freem, manual, autoev, closed;
	const struct ws_snapshot_object *o;
	struct ws_snapshot *s;

	CK_OK(ws_mutex_kill(a, dropped, 0x22));
	/* Our record names the owner id we last created a mutex owned with: 0x11. */
	sem = mk_sem(a, 2, 5);
	held = mk_mutex(a, 0x11, 3);
	freem = mk_mutex(a, 0, 0);
	manual = mk_event(a, true, true);
	autoev = mk_event(a, false, false);
	closed = mk_event(a, true, false);
	CK_OK(ws_close(a, closed));
	s = snap(a);
	ck_assert_uint_eq(s->capacity, 64);
	ck_assert_uint_eq(s->live, 6);
	ck_assert_uint_eq(s->object_count, 6);
	ck_assert_uint_eq(s->lock_holder, WS_SNAPSHOT_NONE);
	ck_assert_uint_eq(s->gave_up, 0);
	ck_assert_uint_eq(s->deadlocked, 0);
	o = object(s, sem);
	ck_assert_uint_eq(o->type, WS_SNAPSHOT_SEM);
	ck_assert_uint_eq(o->count, 2);
	ck_assert_uint_eq(o->max, 5);
	ck_assert_uint_eq(o->flags, 0);
	o = object(s, held);
	ck_assert_uint_eq(o->type, WS_SNAPSHOT_MUTEX);
	ck_assert_uint_eq(o->owner, 0x11);
	ck_assert_uint_eq(o->recursion, 3);
	/* The creating thread's record notes the owner id it created the mutex with. */
	ck_assert_uint_ne(o->owner_thread, WS_SNAPSHOT_NONE);
	ck_assert_uint_eq(s->threads[o->owner_thread].tid, (uint32_t)gettid());
	o = object(s, freem);
	ck_assert_uint_eq(o->owner, 0);
	ck_assert_uint_eq(o->recursion, 0);
	ck_assert_uint_eq(o->owner_thread, WS_SNAPSHOT_NONE);
	ck_assert_uint_eq(o->flags, 0);
	o = object(s, dropped);
	ck_assert_uint_eq(o->owner, 0);
	ck_assert_uint_eq(o->flags, WS_SNAPSHOT_ABANDONED);
	o = object(s, manual);
	ck_assert_uint_eq(o->type, WS_SNAPSHOT_EVENT);
	ck_assert(o->signaled && o->manual_reset);
	o = object(s, autoev);
	ck_assert(!o->signaled && !o->manual_reset);
	ck_assert_uint_eq(o->queued, 0);
	for (uint32_t i = 0; i < s->object_count; i++)
		ck_assert_uint_ne(s->objects[i].handle, closed);
	ws_snapshot_free(s);
	ws_arena_close(a);
}
END_TEST

START_TEST(waiters_field_by_field)
{
	ws_arena *a = test_arena_cap(64);
	ws_handle ev = mk_event(a, false, false), sem = mk_sem(a, 0, 1), m = mk_mutex(a, 0x11, 1);
	ws_handle manual = mk_event(a, true, false), alert = mk_event(a, true, false);
	ws_handle gone = mk_event(a, false, false);
	ws_handle any_objs[] = { ev, sem }, all_objs[] = { m, manual }, gone_objs[] = { gone, ev };
	struct waiter w_any, w_all, w_gone;
	const struct ws_snapshot_thread *th;
	const struct ws_snapshot_object *o;
	struct ws_snapshot *s;
	uint32_t t;

	waiter_init(&w_any, a, 0x31, false, any_objs, 2);
	w_any.alert = alert;
	waiter_start(&w_any);
	waiter_wait_blocked(&w_any);
	waiter_init(&w_all, a, 0x32, true, all_objs, 2);
	w_all.forever = true;
	waiter_start(&w_all);
	waiter_wait_blocked(&w_all);
	waiter_init(&w_gone, a, 0x33, false, gone_objs, 2);
	w_gone.flags = WS_WAIT_REALTIME;
	waiter_start(&w_gone);
	waiter_wait_blocked(&w_gone);
	sleep_ms(20);
	CK_OK(ws_close(a, gone));

	s = snap(a);
	t = thread_of(s, 0x31);
	th = &s->threads[t];
	ck_assert_uint_eq(th->state, WS_SNAPSHOT_LIVE);
	ck_assert_uint_eq(th->tid, (uint32_t)atomic_load(&w_any.tid));
	ck_assert_uint_eq(th->pid, (uint32_t)getpid());
	ck_assert_uint_eq(th->wait, WS_SNAPSHOT_WAIT_ANY);
	ck_assert_uint_eq(th->count, 2);
	ck_assert_uint_eq(th->objects[0], ev);
	ck_assert_uint_eq(th->objects[1], sem);
	ck_assert_uint_eq(th->alert, alert);
	ck_assert(!(th->flags & (WS_SNAPSHOT_FOREVER | WS_SNAPSHOT_REALTIME | WS_SNAPSHOT_TORN)));
	ck_assert_msg(th->waited_ns >= 20000000ull && th->waited_ns < 15000000000ull,
		      "waited %llu ns", (unsigned long long)th->waited_ns);
	ck_assert_msg(th->deadline_ns > 0 && th->deadline_ns <= LONG_MS * 1000000ll,
		      "deadline in %lld ns", (long long)th->deadline_ns);
	ck_assert_uint_eq(th->blocker, WS_SNAPSHOT_NONE);

	t = thread_of(s, 0x32);
	th = &s->threads[t];
	ck_assert_uint_eq(th->wait, WS_SNAPSHOT_WAIT_ALL);
	ck_assert_uint_eq(th->objects[0], m);
	ck_assert_uint_eq(th->objects[1], manual);
	ck_assert_uint_eq(th->alert, 0);
	ck_assert(th->flags & WS_SNAPSHOT_FOREVER);
	/* Its chain: the mutex, held by the thread that created it owned (this one). */
	ck_assert_uint_eq(th->blocked_on, m);
	ck_assert_uint_eq(s->threads[th->blocker].tid, (uint32_t)gettid());
	ck_assert(!(th->flags & WS_SNAPSHOT_DEADLOCKED)); /* the holder runs */

	t = thread_of(s, 0x33);
	th = &s->threads[t];
	ck_assert(th->flags & WS_SNAPSHOT_REALTIME);
	ck_assert_uint_eq(th->objects[1], ev);
	/* Closed since, held for the wait: named by its closed handle, marked. */
	ck_assert_uint_eq(th->objects[0], gone);
	o = object(s, gone);
	ck_assert(o->flags & WS_SNAPSHOT_CLOSED);
	ck_assert_uint_eq(o->queued, 1);
	ck_assert_uint_eq(o->queue[0], t);
	ck_assert(!(object(s, ev)->flags & WS_SNAPSHOT_CLOSED));

	/* Queues in arrival order. */
	o = object(s, ev);
	ck_assert_uint_eq(o->queued, 2);
	ck_assert_uint_eq(o->queue[0], thread_of(s, 0x31));
	ck_assert_uint_eq(o->queue[1], thread_of(s, 0x33));
	ck_assert_uint_eq(object(s, alert)->queued, 1);
	ck_assert_uint_eq(object(s, m)->queued, 1);
	ws_snapshot_free(s);

	CK_OK(ws_event_set(a, alert, NULL));
	CK_OK(ws_event_set(a, ev, NULL));
	CK_OK(ws_mutex_unlock(a, m, 0x11, NULL));
	CK_OK(ws_event_set(a, manual, NULL));
	ck_assert_int_eq(waiter_join(&w_any), 0);
	ck_assert_int_eq(waiter_join(&w_all), 0);
	ck_assert_int_eq(waiter_join(&w_gone), 0);
	/* Nobody waits any more. */
	s = snap(a);
	for (uint32_t i = 0; i < s->thread_count; i++)
		ck_assert_uint_eq(s->threads[i].wait, WS_SNAPSHOT_NO_WAIT);
	ws_snapshot_free(s);
	ws_arena_close(a);
}
END_TEST

/* ---- wait chains ---- */

/* A thread that takes its mutexes, then waits on others forever until canceled. */
struct locker {
	ws_arena *a;
	uint32_t owner;
	ws_handle own[2];
	uint32_t owns;
	ws_handle wants[3];
	uint32_t count;
	bool all;
	long timeout_ms;      /* 0: forever */
	_Atomic int holding;
	_Atomic int go;
	_Atomic pid_t tid;
	int rc;
	pthread_t thread;
};

static void *locker_main(void *arg)
{
	struct locker *l = arg;
	struct timespec deadline = deadline_ms(l->timeout_ms);
	struct ws_wait wait = { .objects = l->wants, .count = l->count, .owner = l->owner,
				.deadline = l->timeout_ms ? &deadline : NULL };
	uint32_t idx;

	atomic_store(&l->tid, gettid());
	for (uint32_t i = 0; i < l->owns; i++)
		CK_OK(poll_any(l->a, &l->own[i], 1, l->owner, &idx));
	atomic_store(&l->holding, 1);
	while (!atomic_load(&l->go))
		sleep_ms(1);
	l->rc = l->all ? ws_wait_all(l->a, &wait, &idx) : ws_wait_any(l->a, &wait, &idx);
	return NULL;
}

/* Each takes its mutexes first, then they all wait, one after the other (queue order). */
static void lockers_start(struct locker **l, int n)
{
	for (int i = 0; i < n; i++) {
		l[i]->thread = spawn(locker_main, l[i]);
		while (!atomic_load(&l[i]->holding))
			sleep_ms(1);
	}
	for (int i = 0; i < n; i++) {
		atomic_store(&l[i]->go, 1);
		wait_tid_blocked(atomic_load(&l[i]->tid));
	}
}

/* ws_owner_died ends its wait (-ECANCELED) and abandons its mutexes. */
static void locker_end(struct locker *l)
{
	CK_OK(ws_owner_died(l->a, l->owner));
	join(l->thread);
	ck_assert_msg(l->rc == -ECANCELED || l->rc == -ETIMEDOUT || l->rc == 0 ||
			      l->rc == -EOWNERDEAD,
		      "locker %#x: %d", l->owner, l->rc);
}

START_TEST(two_thread_cycle)
{
	ws_arena *a = test_arena_cap(64);
	ws_handle m1 = mk_mutex(a, 0, 0), m2 = mk_mutex(a, 0, 0);
	struct locker l1 = { .a = a, .owner = 0x2c, .own = { m1 }, .owns = 1, .wants = { m2 }, .count = 1 };
	struct locker l2 = { .a = a, .owner = 0x30, .own = { m2 }, .owns = 1, .wants = { m1 }, .count = 1 };
	struct ws_snapshot *s;
	uint32_t t1, t2;

	l1.all = true; /* a wait-all of one object: the same cycle */
	lockers_start((struct locker *[]){ &l1, &l2 }, 2);
	s = snap(a);
	t1 = thread_of(s, 0x2c);
	t2 = thread_of(s, 0x30);
	ck_assert_uint_eq(s->deadlocked, 2);
	ck_assert(s->threads[t1].flags & WS_SNAPSHOT_DEADLOCKED);
	ck_assert(s->threads[t2].flags & WS_SNAPSHOT_DEADLOCKED);
	ck_assert_uint_eq(s->threads[t1].blocker, t2);
	ck_assert_uint_eq(s->threads[t1].blocked_on, m2);
	ck_assert_uint_eq(s->threads[t2].blocker, t1);
	ck_assert_uint_eq(s->threads[t2].blocked_on, m1);
	ck_assert_uint_eq(object(s, m1)->owner_thread, t1);
	ck_assert_uint_eq(object(s, m2)->owner_thread, t2);
	ws_snapshot_free(s);
	locker_end(&l1);
	locker_end(&l2);
	ws_arena_close(a);
}
END_TEST

START_TEST(three_thread_cycle_and_bystanders)
{
	ws_arena *a = test_arena_cap(64);
	ws_handle m1 = mk_mutex(a, 0, 0), m2 = mk_mutex(a, 0, 0), m3 = mk_mutex(a, 0, 0);
	ws_handle ev = mk_event(a, true, false), m4 = mk_mutex(a, 0, 0);
	/* A ring 1 -> 2 -> 3 -> 1 (3 in a wait-any on two mutexes of the ring). */
	struct locker l1 = { .a = a, .owner = 0x101, .own = { m1 }, .owns = 1, .wants = { m2 }, .count = 1 };
	struct locker l2 = { .a = a, .owner = 0x102, .own = { m2 }, .owns = 1, .wants = { m3 }, .count = 1 };
	struct locker l3 = { .a = a, .owner = 0x103, .own = { m3 }, .owns = 1, .wants = { m1, m2 }, .count = 2 };
	/* Into the ring, forever: deadlocked too.  With a deadline: a hang, not a deadlock. */
	struct locker into = { .a = a, .owner = 0x104, .own = { m4 }, .owns = 1, .wants = { m1 }, .count = 1 };
	struct locker timed = { .a = a, .owner = 0x105, .own = { 0 }, .owns = 0, .wants = { m1 }, .count = 1 };
	/* Waits on the ring or an event anyone may set: not deadlocked. */
	struct locker maybe = { .a = a, .owner = 0x106, .own = { 0 }, .owns = 0, .wants = { m2, ev }, .count = 2 };
	/* Waits on m4, held by `into`, which waits on the ring: deadlocked. */
	struct locker behind = { .a = a, .owner = 0x107, .own = { 0 }, .owns = 0, .wants = { m4 }, .count = 1 };
	struct ws_snapshot *s;
	uint32_t t1, t2, t3;

	timed.timeout_ms = LONG_MS;
	lockers_start((struct locker *[]){ &l1, &l2, &l3, &into, &timed, &maybe, &behind }, 7);
	s = snap(a);
	t1 = thread_of(s, 0x101);
	t2 = thread_of(s, 0x102);
	t3 = thread_of(s, 0x103);
	ck_assert_uint_eq(s->threads[t1].blocker, t2);
	ck_assert_uint_eq(s->threads[t2].blocker, t3);
	ck_assert_uint_eq(s->threads[t3].blocker, t1);
	for (uint32_t id = 0x101; id <= 0x107; id++) {
		bool expect = id <= 0x104 || id == 0x107;
		uint32_t t = thread_of(s, id);

		ck_assert_msg(!!(s->threads[t].flags & WS_SNAPSHOT_DEADLOCKED) == expect,
			      "owner %#x: deadlocked %d", id,
			      !!(s->threads[t].flags & WS_SNAPSHOT_DEADLOCKED));
	}
	ck_assert_uint_eq(s->deadlocked, 5);
	ck_assert_uint_eq(s->threads[thread_of(s, 0x104)].blocker, t1);
	ck_assert_uint_eq(s->threads[thread_of(s, 0x107)].blocker, thread_of(s, 0x104));
	ck_assert_uint_eq(s->threads[thread_of(s, 0x105)].blocker, t1);
	ws_snapshot_free(s);
	/* Break the ring: 0x101 gives up; m1 is abandoned to 0x103; nobody is deadlocked. */
	locker_end(&l1);
	sleep_ms(50);
	s = snap(a);
	ck_assert_uint_eq(s->deadlocked, 0);
	ws_snapshot_free(s);
	locker_end(&l2);
	locker_end(&l3);
	locker_end(&into);
	locker_end(&timed);
	locker_end(&maybe);
	locker_end(&behind);
	ws_arena_close(a);
}
END_TEST

/* A child process that takes a mutex and dies: its record is dead until reaped. */
static char dead_name[96];
static int die_holding(void *arg)
{
	ws_arena *a = NULL;
	ws_handle m = (ws_handle)(uintptr_t)arg;
	uint32_t idx;

	if (ws_arena_open(dead_name, &a) || poll_any(a, &m, 1, 0x777, &idx))
		return 1;
	kill(getpid(), SIGKILL);
	return 2;
}

START_TEST(dead_record_and_its_mutex)
{
	ws_arena *a = named_arena(dead_name, sizeof dead_name, "snapdead", 64);
	ws_handle m = mk_mutex(a, 0, 0);
	const struct ws_snapshot_object *o;
	struct ws_snapshot *s;
	pid_t pid = fork_child_fn(die_holding, (void *)(uintptr_t)m);
	int status;
	uint32_t t;

	ck_assert(reap_child(pid, 10000, &status));
	ck_assert(WIFSIGNALED(status));
	CK_OK(ws_snapshot_open(dead_name, 0, &s));
	o = object(s, m);
	ck_assert_uint_eq(o->owner, 0x777);
	ck_assert_uint_ne(o->owner_thread, WS_SNAPSHOT_NONE);
	t = o->owner_thread;
	ck_assert_uint_eq(s->threads[t].state, WS_SNAPSHOT_DEAD);
	ck_assert_uint_eq(s->threads[t].tid, (uint32_t)pid);
	ck_assert_uint_eq(s->threads[t].pid, (uint32_t)pid);
	ck_assert_uint_eq(s->threads[t].owner, 0x777);
	ws_snapshot_free(s);
	/* A waiter reaps it and gets the mutex abandoned. */
	uint32_t idx;

	CK_RC(wait_any_ms(a, &m, 1, 0x778, 0, LONG_MS, &idx), -EOWNERDEAD);
	CK_OK(ws_snapshot_open(dead_name, 0, &s));
	for (uint32_t i = 0; i < s->thread_count; i++)
		ck_assert_uint_ne(s->threads[i].state, WS_SNAPSHOT_DEAD);
	ck_assert_uint_eq(object(s, m)->owner, 0x778);
	ws_snapshot_free(s);
	drop_arena(a, dead_name);
}
END_TEST

START_TEST(refusals)
{
	struct ws_snapshot *s = NULL;
	ws_arena *a = test_arena();

	CK_RC(ws_arena_snapshot(NULL, 0, &s), -EINVAL);
	CK_RC(ws_arena_snapshot(a, 1, &s), -EINVAL);
	CK_RC(ws_arena_snapshot(a, 0, NULL), -EINVAL);
	CK_RC(ws_snapshot_open("../etc", 0, &s), -EINVAL);
	CK_RC(ws_snapshot_open("wstest-no-such-arena", 0, &s), -ENOENT);
	ws_snapshot_free(NULL);
	ws_arena_close(a);
	/* A file others may read is refused, as ws_arena_open refuses it. */
	char name[96], path[160];

	a = named_arena(name, sizeof name, "snapperm", 64);
	snprintf(path, sizeof path, "/dev/shm/winsync-%s", name);
	ck_assert_int_eq(chmod(path, 0640), 0);
	CK_RC(ws_snapshot_open(name, 0, &s), -EACCES);
	ck_assert_int_eq(chmod(path, 0600), 0);
	CK_OK(ws_snapshot_open(name, 0, &s));
	ws_snapshot_free(s);
	drop_arena(a, name);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("snapshot");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, objects_field_by_field);
	tcase_add_test(tc, waiters_field_by_field);
	tcase_add_test(tc, two_thread_cycle);
	tcase_add_test(tc, three_thread_cycle_and_bystanders);
	tcase_add_test(tc, dead_record_and_its_mutex);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
