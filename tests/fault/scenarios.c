/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The scenarios of the fault-injection campaign: for each operation, the
 * objects, the victim's call, the waiters it acts on, and the judge of what
 * its death at any point must leave (trial.h).
 */
#define _GNU_SOURCE
#include "trial.h"

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../winsync/arena.h"
#include "fault_api.h"

/* An auto-reset event set with two waiters, one without a deadline. */
static void set_auto_objects(struct trial *t)
{
	t->h[0] = mk_event(t->a, false, false);
}

static int set_auto_victim(ws_arena *a, const ws_handle *h, long k)
{
	victim_ready_go();
	victim_arm(k);
	return ws_event_set(a, h[0], NULL);
}

static void two_waiters_on_h0(struct trial *t)
{
	add_waiter(t, 0x101, false, &t->h[0], 1, 0);
	add_waiter(t, 0x102, false, &t->h[0], 1, LONG_MS);
}

/* Gives `signal` until every waiter is done (at most `max` times): the number given. */
static int signal_until_done(struct trial *t, int (*signal)(struct trial *t), int max)
{
	int given = 0;

	/* Those served already return by themselves first. */
	await_done(t, t->served, long_ms());
	while (count_done(t) < t->nw && given < max) {
		int before = count_done(t), rc = signal(t);

		if (rc)
			BROKEN(t, "signal after the death: %d (%s)", rc, errname(rc));
		given++;
		await_done(t, before + 1, long_ms());
	}
	if (await_done(t, t->nw, long_ms()) < t->nw)
		LOST(t, "%d of %d waiters still blocked after %d signals given after the death",
		     t->nw - count_done(t), t->nw, given);
	return given;
}

static void expect_rc(struct trial *t, int i, int rc, uint32_t index)
{
	struct waiter *w = t->w[i];

	if (waiter_done(w) && (w->rc != rc || w->index != index))
		BROKEN(t, "waiter %d returned %d (%s) index %u, expected %d (%s) index %u", i, w->rc,
		       errname(w->rc), w->index, rc, errname(rc), index);
}

static int set_h0(struct trial *t)
{
	return ws_event_set(t->a, t->h[0], NULL);
}

static void set_auto_judge(struct trial *t)
{
	bool sig = ev_signaled(t->a, t->h[0]);
	int sets;

	if (t->served > 1 || (t->served == 1 && sig))
		BROKEN(t, "one set served %d waiters, event left %s", t->served,
		       sig ? "signaled" : "unsignaled");
	sets = signal_until_done(t, set_h0, 2);
	for (int i = 0; i < t->nw; i++)
		expect_rc(t, i, 0, 0);
	if (count_done(t) == t->nw && ev_signaled(t->a, t->h[0]) != (t->served + sets > 2))
		BROKEN(t, "event state after %d+%d sets for 2 waiters", t->served, sets);
}

/* A semaphore released by 2 with a wait_any and a wait_all waiter. */
static void release2_objects(struct trial *t)
{
	t->h[0] = mk_sem(t->a, 0, 5);
	t->h[1] = mk_event(t->a, true, true);
}

static int release2_victim(ws_arena *a, const ws_handle *h, long k)
{
	victim_ready_go();
	victim_arm(k);
	return ws_sem_release(a, h[0], 2, NULL);
}

static void release2_waiters(struct trial *t)
{
	add_waiter(t, 0x111, false, &t->h[0], 1, 0);
	add_waiter(t, 0x112, true, t->h, 2, LONG_MS);
}

static int release_h0(struct trial *t)
{
	return ws_sem_release(t->a, t->h[0], 1, NULL);
}

static void release2_judge(struct trial *t)
{
	uint32_t count = sem_count(t->a, t->h[0]);

	if ((t->served != 0 && t->served != 2) || count != 0)
		BROKEN(t, "a release of 2 served %d waiters and left %u units", t->served, count);
	signal_until_done(t, release_h0, 2);
	expect_rc(t, 0, 0, 0);
	expect_rc(t, 1, 0, 0);
	if (sem_count(t->a, t->h[0]) != 0)
		BROKEN(t, "semaphore left at %u", sem_count(t->a, t->h[0]));
}

/* A mutex unlocked by its owner with a waiter: ownership passes, or is abandoned. */
static void mutex_objects(struct trial *t)
{
	t->h[0] = mk_mutex(t->a, 0, 0);
}

static int unlock_victim(ws_arena *a, const ws_handle *h, long k)
{
	uint32_t me = self_owner(), idx;
	struct timespec dl = deadline_ms(LONG_MS);
	struct ws_wait w = { .objects = h, .count = 1, .owner = me, .deadline = &dl };

	CHILD_CHECK(ws_wait_any(a, &w, &idx) == 0, 20);
	victim_ready_go();
	victim_arm(k);
	return ws_mutex_unlock(a, h[0], me, NULL);
}

static void mutex_waiter(struct trial *t)
{
	add_waiter(t, 0x121, false, &t->h[0], 1, 0);
}

static void unlock_judge(struct trial *t)
{
	struct waiter *w = t->w[0];
	uint32_t count, owner;

	/* The death of the owner is the signal: the waiter gets it either way. */
	if (await_done(t, 1, long_ms()) < 1) {
		LOST(t, "the waiter never got the mutex its owner unlocked or died holding");
		return;
	}
	if (w->rc != 0 && w->rc != -EOWNERDEAD)
		BROKEN(t, "mutex waiter returned %d (%s)", w->rc, errname(w->rc));
	if (mtx_state(t->a, t->h[0], &count, &owner) != 0 || owner != 0x121 || count != 1)
		BROKEN(t, "mutex owner %#x count %u after the hand-off", owner, count);
	CK_OK(ws_mutex_unlock(t->a, t->h[0], 0x121, NULL));
}

/* A pulse of a manual-reset event with two waiters: both released or neither. */
static void manual_objects(struct trial *t)
{
	t->h[0] = mk_event(t->a, true, false);
}

static int pulse_victim(ws_arena *a, const ws_handle *h, long k)
{
	victim_ready_go();
	victim_arm(k);
	return ws_event_pulse(a, h[0], NULL);
}

static int pulse_h0(struct trial *t)
{
	return ws_event_pulse(t->a, t->h[0], NULL);
}

static void pulse_manual_judge(struct trial *t)
{
	if (t->served != 0 && t->served != 2)
		BROKEN(t, "a pulse of a manual event released %d of its 2 waiters", t->served);
	if (ev_signaled(t->a, t->h[0]))
		BROKEN(t, "a pulse left the event signaled");
	signal_until_done(t, pulse_h0, 1);
	expect_rc(t, 0, 0, 0);
	expect_rc(t, 1, 0, 0);
}

/* A pulse of an auto-reset event with two waiters: one released. */
static void pulse_auto_judge(struct trial *t)
{
	if (t->served > 1)
		BROKEN(t, "a pulse of an auto event released %d waiters", t->served);
	if (ev_signaled(t->a, t->h[0]))
		BROKEN(t, "a pulse left the event signaled");
	signal_until_done(t, pulse_h0, 2);
	expect_rc(t, 0, 0, 0);
	expect_rc(t, 1, 0, 0);
}

/* A wait_all completed by the release of its last object. */
static void wait_all_objects(struct trial *t)
{
	t->h[0] = mk_sem(t->a, 0, 1);
	t->h[1] = mk_event(t->a, false, true);
}

static int release1_victim(ws_arena *a, const ws_handle *h, long k)
{
	victim_ready_go();
	victim_arm(k);
	return ws_sem_release(a, h[0], 1, NULL);
}

static void wait_all_waiter(struct trial *t)
{
	add_waiter(t, 0x131, true, t->h, 2, 0);
}

static void wait_all_judge(struct trial *t)
{
	uint32_t count = sem_count(t->a, t->h[0]);
	bool sig = ev_signaled(t->a, t->h[1]);

	if (count != 0 || sig == (t->served == 1))
		BROKEN(t, "wait_all served %d (woke %d), semaphore %u, event %d", t->served, t->woke,
		       count, sig);
	signal_until_done(t, release_h0, 1);
	expect_rc(t, 0, 0, 0);
	if (sem_count(t->a, t->h[0]) != 0 || ev_signaled(t->a, t->h[1]))
		BROKEN(t, "wait_all left semaphore %u, event %d", sem_count(t->a, t->h[0]),
		       ev_signaled(t->a, t->h[1]));
}

/* After a victim's close of event h: closes it if the death undid the close. */
static void close_if_left(struct trial *t, ws_handle h)
{
	bool s, m;
	int rc = ws_event_read(t->a, h, &s, &m);

	if (rc == 0)
		CK_OK(ws_close(t->a, h));
	else if (rc != -EBADF)
		BROKEN(t, "event read after the close: %d (%s)", rc, errname(rc));
}

/* A close of an event a waiter is blocked on: the waiter times out, the slot comes back. */
static int close_victim(ws_arena *a, const ws_handle *h, long k)
{
	victim_ready_go();
	victim_arm(k);
	return ws_close(a, h[0]);
}

static void close_waiter(struct trial *t)
{
	add_waiter(t, 0x141, false, &t->h[0], 1, 400 * slow_factor());
}

/* Every slot usable: `CAPACITY - live` creates succeed. */
static void fill_arena(struct trial *t, uint32_t live)
{
	ws_handle h;

	for (uint32_t i = live; i < CAPACITY; i++) {
		int rc = ws_event_create(t->a, false, false, &h);

		if (rc) {
			BROKEN(t, "create %u of %u: %d (%s): a slot leaked", i + 1, CAPACITY, rc,
			       errname(rc));
			return;
		}
	}
}

static void close_judge(struct trial *t)
{
	struct waiter *w = t->w[0];

	if (t->served)
		BROKEN(t, "a close served its waiter");
	close_if_left(t, t->h[0]);
	if (await_done(t, 1, w->timeout_ms + long_ms()) < 1) {
		HANG(t, "the waiter on a closed event overran its deadline");
		return;
	}
	expect_rc(t, 0, -ETIMEDOUT, 0xdeadbeef);
	if (ts_diff_ms(w->returned, w->deadline) > 2000 * slow_factor())
		HANG(t, "the waiter on a closed event returned %ld ms after its deadline",
		     ts_diff_ms(w->returned, w->deadline));
	check_arena(t, "after the waiter left");
	fill_arena(t, 0);
}

/*
 * A close that frees an object held for a wait that has ended: h[0] was
 * closed while a waiter was queued on it, the wait was canceled, and the
 * victim's close of h[1] frees it (object.c's reclaim) as it dies.
 */
static void held_objects(struct trial *t)
{
	struct waiter w;

	t->h[0] = mk_event(t->a, false, false);
	t->h[1] = mk_event(t->a, false, false);
	waiter_init(&w, t->a, 0x161, false, &t->h[0], 1);
	w.forever = true;
	waiter_start(&w);
	waiter_wait_blocked(&w);
	CK_OK(ws_close(t->a, t->h[0]));
	CK_OK(ws_owner_died(t->a, 0x161));
	CK_RC(waiter_join(&w), -ECANCELED);
}

static int close_other_victim(ws_arena *a, const ws_handle *h, long k)
{
	victim_ready_go();
	victim_arm(k);
	return ws_close(a, h[1]);
}

static void held_judge(struct trial *t)
{
	bool s, m;

	if (ws_event_read(t->a, t->h[0], &s, &m) != -EBADF)
		BROKEN(t, "the held object's closed handle came back");
	close_if_left(t, t->h[1]);
	/* The held slot is freed by the next create at the latest: none leaked. */
	fill_arena(t, 0);
}

/* Creating and closing objects. */
static void no_objects(struct trial *t)
{
	(void)t;
}

static int create_victim(ws_arena *a, const ws_handle *h, long k)
{
	uint32_t me = self_owner();
	ws_handle x[3];
	int rc;

	(void)h;
	victim_ready_go();
	victim_arm(k);
	rc = ws_sem_create(a, 1, 2, &x[0]);
	if (!rc)
		rc = ws_mutex_create(a, me, 1, &x[1]);
	if (!rc)
		rc = ws_event_create(a, true, false, &x[2]);
	if (!rc)
		rc = ws_close(a, x[2]);
	return rc;
}

static void no_waiters(struct trial *t)
{
	(void)t;
}

static void create_judge(struct trial *t)
{
	uint32_t live = atomic_load((_Atomic uint32_t *)&t->a->header->live);

	/* 3 created and 1 closed, or fewer: the one it died in happened or not. */
	if (live > 3)
		BROKEN(t, "%u live objects after creating 3 (and closing 1)", live);
	fill_arena(t, live);
}

/* The victim is the waiter: it queues on three objects, sleeps, times out. */
static void enqueue_objects(struct trial *t)
{
	t->h[0] = mk_event(t->a, false, false);
	t->h[1] = mk_sem(t->a, 0, 3);
	t->h[2] = mk_mutex(t->a, 0x151, 1);
}

/* A wait on the three objects; the deadline comes after the arming (0 ms: already passed). */
static int wait_on_three(ws_arena *a, const ws_handle *h, long k, long ms)
{
	uint32_t me = self_owner(), idx;
	struct timespec dl;
	struct ws_wait w = { .objects = h, .count = 3, .owner = me, .deadline = &dl };

	victim_ready_go();
	victim_arm(k);
	dl = ms ? deadline_ms(ms) : deadline_past();
	return ws_wait_any(a, &w, &idx);
}

static int enqueue_victim(ws_arena *a, const ws_handle *h, long k)
{
	/* Long enough to queue and sleep on a slow guest too (else it is the poll below). */
	return wait_on_three(a, h, k, 30 * slow_factor());
}

/* The same wait with a deadline already passed (a poll): it unlinks, fails, commits. */
static int poll_victim(ws_arena *a, const ws_handle *h, long k)
{
	return wait_on_three(a, h, k, 0);
}

static int give_all_three(struct trial *t)
{
	int rc = ws_event_set(t->a, t->h[0], NULL);

	if (!rc)
		rc = ws_sem_release(t->a, t->h[1], 1, NULL);
	if (!rc)
		rc = ws_mutex_unlock(t->a, t->h[2], 0x151, NULL);
	return rc;
}

static void enqueue_judge(struct trial *t)
{
	uint32_t count, owner;

	/* Live waiters now queue behind whatever the dead one left. */
	add_waiter(t, 0x152, false, &t->h[0], 1, LONG_MS);
	add_waiter(t, 0x153, false, &t->h[1], 1, LONG_MS);
	add_waiter(t, 0x154, false, &t->h[2], 1, LONG_MS);
	if (give_all_three(t))
		BROKEN(t, "signals after the death failed");
	if (await_done(t, 3, long_ms()) < 3)
		LOST(t, "%d of 3 signals given after the death of a waiter were not received",
		     3 - count_done(t));
	for (int i = 0; i < 3; i++)
		expect_rc(t, i, 0, 0);
	if (ev_signaled(t->a, t->h[0]) || sem_count(t->a, t->h[1]) != 0)
		BROKEN(t, "event %d, semaphore %u after the hand-offs", ev_signaled(t->a, t->h[0]),
		       sem_count(t->a, t->h[1]));
	if (mtx_state(t->a, t->h[2], &count, &owner) != 0 || owner != 0x154)
		BROKEN(t, "mutex owner %#x after the hand-off", owner);
	else
		CK_OK(ws_mutex_unlock(t->a, t->h[2], 0x154, NULL));
}

/* A set that passes a dead waiter first and then reaps it (and abandons its mutex). */
static int dead_waiter_main(void *arg)
{
	struct trial *t = arg;
	ws_arena *a = NULL;
	uint32_t me = self_owner(), idx;
	struct ws_wait w = { .objects = &t->h[1], .count = 1, .owner = me };

	CHILD_CHECK(ws_arena_open(t->name, &a) == 0, 30);
	CHILD_CHECK(ws_wait_any(a, &w, &idx) == 0, 31);
	w.objects = &t->h[0];
	ws_wait_any(a, &w, &idx);
	return 32;
}

static void reap_objects(struct trial *t)
{
	t->h[0] = mk_event(t->a, false, false);
	t->h[1] = mk_mutex(t->a, 0, 0);
	t->dead = fork_child_fn(dead_waiter_main, t);
	ck_assert_msg(proc_asleep(t->dead, 60000), "the waiter to be killed never slept");
	kill_reap(t->dead);
}

static void one_waiter_on_h0(struct trial *t)
{
	add_waiter(t, 0x161, false, &t->h[0], 1, 0);
}

static void reap_judge(struct trial *t)
{
	struct waiter *w;

	if (t->served > 1 || (t->served == 1 && ev_signaled(t->a, t->h[0])))
		BROKEN(t, "one set served %d waiters", t->served);
	signal_until_done(t, set_h0, 1);
	expect_rc(t, 0, 0, 0);
	/* The dead waiter's mutex reaches the next waiter, abandoned. */
	w = add_waiter_nb(t, 0x162, false, &t->h[1], 1, LONG_MS, false);
	if (await_done(t, 2, long_ms()) < 2)
		LOST(t, "the mutex of a dead waiter never reached the next waiter");
	else if (w->rc != -EOWNERDEAD)
		BROKEN(t, "the dead waiter's mutex came with %d (%s)", w->rc, errname(w->rc));
	else
		CK_OK(ws_mutex_unlock(t->a, t->h[1], 0x162, NULL));
}

/* ws_owner_died: the owner's wait is canceled and its mutex abandoned, together. */
#define DOOMED 0x7000u

static void owner_objects(struct trial *t)
{
	t->h[0] = mk_event(t->a, false, false);
	t->h[1] = mk_mutex(t->a, DOOMED, 2);
}

static int owner_died_victim(ws_arena *a, const ws_handle *h, long k)
{
	(void)h;
	victim_ready_go();
	victim_arm(k);
	return ws_owner_died(a, DOOMED);
}

static void owner_waiters(struct trial *t)
{
	add_waiter(t, DOOMED, false, &t->h[0], 1, 0);
	add_waiter(t, 0x171, false, &t->h[1], 1, 0);
}

static int owner_died_again(struct trial *t)
{
	return ws_owner_died(t->a, DOOMED);
}

static void owner_judge(struct trial *t)
{
	if (t->served == 1)
		BROKEN(t, "ws_owner_died half done: %s",
		       wait_over(t, 0) ? "wait canceled, mutex still held"
				       : "mutex abandoned, wait still blocked");
	signal_until_done(t, owner_died_again, 1);
	expect_rc(t, 0, -ECANCELED, 0xdeadbeef);
	expect_rc(t, 1, -EOWNERDEAD, 0);
	if (waiter_done(t->w[1]) && t->w[1]->rc == -EOWNERDEAD)
		CK_OK(ws_mutex_unlock(t->a, t->h[1], 0x171, NULL));
}

const struct scenario fault_scenarios[] = {
	{ "event set, 2 waiters", set_auto_objects, set_auto_victim, two_waiters_on_h0,
	  set_auto_judge, 80, 0 },
	{ "semaphore release 2, wait_any + wait_all", release2_objects, release2_victim,
	  release2_waiters, release2_judge, 80, 0 },
	{ "mutex unlock to a waiter", mutex_objects, unlock_victim, mutex_waiter, unlock_judge,
	  250, 0 },
	{ "pulse manual event, 2 waiters", manual_objects, pulse_victim, two_waiters_on_h0,
	  pulse_manual_judge, 80, 0 },
	{ "pulse auto event, 2 waiters", set_auto_objects, pulse_victim, two_waiters_on_h0,
	  pulse_auto_judge, 80, 0 },
	{ "release completing a wait_all", wait_all_objects, release1_victim, wait_all_waiter,
	  wait_all_judge, 80, 0 },
	{ "close with a waiter", set_auto_objects, close_victim, close_waiter, close_judge, 0, 0 },
	{ "create and close", no_objects, create_victim, no_waiters, create_judge, 0, 0 },
	{ "close freeing a held object", held_objects, close_other_victim, no_waiters, held_judge,
	  0, 0 },
	{ "wait: queue, sleep, time out", enqueue_objects, enqueue_victim, no_waiters,
	  enqueue_judge, 0, -ETIMEDOUT },
	{ "wait: deadline passed, poll", enqueue_objects, poll_victim, no_waiters, enqueue_judge,
	  0, -ETIMEDOUT },
	{ "set passing a dead waiter, reap", reap_objects, set_auto_victim, one_waiter_on_h0,
	  reap_judge, 80, 0 },
	{ "ws_owner_died", owner_objects, owner_died_victim, owner_waiters, owner_judge, 80, 0 },
};

const int fault_scenario_count = (int)(sizeof fault_scenarios / sizeof fault_scenarios[0]);
