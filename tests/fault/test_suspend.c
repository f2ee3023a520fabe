/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Deferred suspension (libwinsync-fault): a signal raised at each fault
 * point of several operations in turn plays the host's "suspend this
 * thread" signal.  Its handler asks ws_defer_suspend(): true exactly when
 * the thread is inside a critical section (it holds the arena lock then),
 * and then the hook set with ws_set_suspend_hook() runs once, after the
 * thread has left the section and before the call returns; false outside
 * (uncontended paths, blocked waits), and then no hook.  A hook that really
 * suspends the thread leaves the arena usable by everyone meanwhile.
 */
#define _GNU_SOURCE
#include "robust.h"

#include <semaphore.h>
#include <signal.h>
#include <string.h>

#include "../../winsync/arena.h"
#include "fault_api.h"

static ws_arena *cur_arena;
static _Atomic int handled, deferred, hooks, hook_inside, lock_mismatch, hook_mode;
static sem_t suspended, resumed;

/* Does the arena lock word name this thread's record? */
static bool lock_is_mine(void)
{
	uint32_t ref = atomic_load(&cur_arena->header->lock) & ~WS_LOCK_CONTENDED;
	uint32_t index = ref & WS_REF_INDEX_MASK;

	return index && index <= cur_arena->records_count &&
	       cur_arena->records[index - 1].tid == (uint32_t)gettid();
}

/*
 * Safety: a thread that holds the arena lock is never suspended.  (The
 * critical section reaches a little past the lock on both sides.)
 */
static void on_suspend_signal(int sig)
{
	bool inside = ws_in_critical_section();
	bool defer = ws_defer_suspend();

	(void)sig;
	atomic_fetch_add(&handled, 1);
	if (defer)
		atomic_fetch_add(&deferred, 1);
	if (defer != inside || (lock_is_mine() && !defer))
		atomic_fetch_add(&lock_mismatch, 1);
}

static void hook(void)
{
	atomic_fetch_add(&hooks, 1);
	if (ws_in_critical_section())
		atomic_fetch_add(&hook_inside, 1);
	if (atomic_load(&hook_mode) == 1) {
		/* Suspended for real, until the test resumes us. */
		sem_post(&suspended);
		while (sem_wait(&resumed) != 0)
			;
	}
}

/* One operation on a fresh arena: what it needs, and the call itself. */
struct op {
	const char *name;
	void (*prepare)(ws_arena *a, ws_handle *h, pid_t *waiter);
	int (*run)(ws_arena *a, ws_handle *h);
	int expect;
};

static char name[80];
static ws_handle child_handle;

/* The waiter is another process: its fault points do not count in ours. */
static int waiter_child(void *arg)
{
	ws_arena *a = NULL;
	uint32_t idx;

	(void)arg;
	CHILD_CHECK(ws_arena_open(name, &a) == 0, 10);
	CHILD_CHECK(wait_any_ms(a, &child_handle, 1, 0x31, 0, LONG_MS, &idx) == 0, 11);
	return 0;
}

static void prep_event_waiter(ws_arena *a, ws_handle *h, pid_t *waiter)
{
	h[0] = child_handle = mk_event(a, false, false);
	*waiter = fork_child_fn(waiter_child, NULL);
	ck_assert(proc_asleep(*waiter, 60000));
}

static int run_set(ws_arena *a, ws_handle *h)
{
	return ws_event_set(a, h[0], NULL);
}

static void prep_events(ws_arena *a, ws_handle *h, pid_t *waiter)
{
	(void)waiter;
	h[0] = mk_event(a, false, false);
	h[1] = mk_event(a, true, false);
}

/* Queues, sleeps 20 ms, times out, leaves the queues. */
static int run_wait(ws_arena *a, ws_handle *h)
{
	uint32_t idx;

	return wait_any_ms(a, h, 2, 0x32, 0, 20, &idx);
}

static void prep_sem(ws_arena *a, ws_handle *h, pid_t *waiter)
{
	(void)waiter;
	h[0] = mk_sem(a, 0, 5);
}

/* Uncontended: no critical section at all. */
static int run_release(ws_arena *a, ws_handle *h)
{
	return ws_sem_release(a, h[0], 1, NULL);
}

static int run_create_close(ws_arena *a, ws_handle *h)
{
	int rc = ws_mutex_create(a, 0x33, 2, &h[1]);

	return rc ? rc : ws_close(a, h[1]);
}

static const struct op ops[] = {
	{ "event set to a waiter", prep_event_waiter, run_set, 0 },
	{ "wait that times out", prep_events, run_wait, -ETIMEDOUT },
	{ "uncontended release", prep_sem, run_release, 0 },
	{ "create and close", prep_sem, run_create_close, 0 },
};

/* Runs op with the signal at point k (0: none); returns the points it passed. */
static long run_op(const struct op *op, long k, int *rc)
{
	ws_arena *a = named_arena(name, sizeof name, "suspend", 32);
	ws_handle h[4];
	pid_t waiter = 0;
	long before;
	int status;

	cur_arena = a;
	op->prepare(a, h, &waiter);
	atomic_store(&handled, 0);
	atomic_store(&deferred, 0);
	atomic_store(&hooks, 0);
	atomic_store(&lock_mismatch, 0);
	before = ws_fault_passed();
	if (k)
		ws_fault_arm_signal(k, SIGUSR1);
	*rc = op->run(a, h);
	ws_fault_arm(0);
	before = ws_fault_passed() - before;
	if (waiter) {
		ck_assert(reap_child(waiter, LONG_MS, &status));
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the waiter failed");
	}
	CK_OK(ws_arena_check(a, NULL, 0));
	drop_arena(a, name);
	return before;
}

START_TEST(defer_exactly_inside_critical_sections)
{
	const struct op *op = &ops[_i];
	long points, inside = 0, outside = 0;
	int rc;

	signal(SIGUSR1, on_suspend_signal);
	ws_set_suspend_hook(hook);
	atomic_store(&hook_mode, 0);
	points = run_op(op, 0, &rc);
	CK_RC(rc, op->expect);
	for (long k = 1; k <= points; k++) {
		run_op(op, k, &rc);
		ck_assert_msg(rc == op->expect, "%s, signal at point %ld: returned %d (%s)", op->name,
			      k, rc, errname(rc));
		ck_assert_msg(atomic_load(&handled) == 1, "%s, point %ld: handler ran %d times",
			      op->name, k, atomic_load(&handled));
		ck_assert_msg(atomic_load(&lock_mismatch) == 0,
			      "%s, point %ld: ws_defer_suspend() disagrees with the lock", op->name, k);
		/* Deferred: the hook ran once, outside, before the call returned; else never. */
		ck_assert_msg(atomic_load(&hooks) == atomic_load(&deferred),
			      "%s, point %ld: %d deferred, hook ran %d times", op->name, k,
			      atomic_load(&deferred), atomic_load(&hooks));
		ck_assert_int_eq(atomic_load(&hook_inside), 0);
		ck_assert(!ws_in_critical_section());
		if (atomic_load(&deferred))
			inside++;
		else
			outside++;
	}
	printf("suspend: %s: %ld fault points, %ld in a critical section (deferred), %ld outside\n",
	       op->name, points, inside, outside);
	/* A locked operation has points on both sides; the uncontended one none inside. */
	if (op->run == run_release)
		ck_assert_int_eq(inside, 0);
	else
		ck_assert_msg(inside > 0 && outside >= 0, "%s: no point inside", op->name);
	ws_set_suspend_hook(NULL);
	signal(SIGUSR1, SIG_DFL);
}
END_TEST

/* Outside any call, and in a thread blocked in a wait: nothing to defer. */
static _Atomic int defer_result = -1;

static void probe_defer(int sig)
{
	(void)sig;
	atomic_store(&defer_result, ws_defer_suspend());
}

START_TEST(no_deferral_outside)
{
	ws_arena *a = test_arena();
	ws_handle e = mk_event(a, false, false);
	struct waiter w;

	ck_assert(!ws_defer_suspend());
	ck_assert(!ws_in_critical_section());
	signal(SIGUSR1, probe_defer);
	waiter_init(&w, a, 0x41, false, &e, 1);
	waiter_start(&w);
	waiter_asleep(&w);
	pthread_kill(w.thread, SIGUSR1);
	for (int i = 0; i < 5000 && atomic_load(&defer_result) < 0; i++)
		sleep_ms(1);
	ck_assert_int_eq(atomic_load(&defer_result), 0);
	/* The interrupted wait goes on and gets its signal. */
	sleep_ms(20);
	ck_assert(!waiter_done(&w));
	CK_OK(ws_event_set(a, e, NULL));
	ck_assert(waiter_wait_done(&w, LONG_MS));
	CK_OK(waiter_join(&w));
	signal(SIGUSR1, SIG_DFL);
	ws_arena_close(a);
}
END_TEST

/* A hook that suspends for real: meanwhile the lock is free for others. */
struct setter {
	ws_arena *a;
	ws_handle e;
	long k;
	int rc;
};

static void *set_with_signal(void *arg)
{
	struct setter *s = arg;

	/* Registered first: the set's first point is then the one after it takes the lock. */
	CK_OK(ws_arena_check(s->a, NULL, 0));
	ws_fault_arm_signal(s->k, SIGUSR1);
	s->rc = ws_event_set(s->a, s->e, NULL);
	ws_fault_arm(0);
	return NULL;
}

START_TEST(suspended_in_hook_holds_nothing)
{
	ws_arena *a = test_arena(), *nb = NULL;
	struct setter s = { .a = a };
	struct waiter w;
	pthread_t t;
	ws_handle x;
	int rc;

	ck_assert_int_eq(sem_init(&suspended, 0, 0), 0);
	ck_assert_int_eq(sem_init(&resumed, 0, 0), 0);
	cur_arena = a;
	signal(SIGUSR1, on_suspend_signal);
	ws_set_suspend_hook(hook);
	atomic_store(&hook_mode, 1);
	s.e = mk_event(a, false, false);
	waiter_init(&w, a, 0x51, false, &s.e, 1);
	waiter_start(&w);
	waiter_asleep(&w);
	s.k = 1;
	atomic_store(&deferred, 0);
	atomic_store(&hooks, 0);
	t = spawn(set_with_signal, &s);
	ck_assert_int_eq(sem_wait(&suspended), 0);
	ck_assert_int_eq(atomic_load(&deferred), 1);
	/* Suspended after its critical section: the event reached the waiter, the lock is free. */
	ck_assert(waiter_wait_done(&w, LONG_MS));
	CK_OK(w.rc);
	nb = a; /* same arena: a non-blocking attempt must not find the lock held */
	CK_OK(ws_arena_set_flags(nb, WS_ARENA_NONBLOCK));
	rc = ws_event_create(nb, false, false, &x);
	ck_assert_msg(rc == 0, "create while the setter is suspended: %d (%s)", rc, errname(rc));
	CK_OK(ws_close(nb, x));
	CK_OK(ws_arena_set_flags(nb, 0));
	sem_post(&resumed);
	join(t);
	CK_OK(s.rc);
	ck_assert_int_eq(atomic_load(&hooks), 1);
	waiter_join(&w);
	ws_set_suspend_hook(NULL);
	signal(SIGUSR1, SIG_DFL);
	ws_arena_close(a);
}
END_TEST

/* With no hook set, a deferred suspension is simply dropped at the way out. */
START_TEST(deferral_without_hook)
{
	int rc;

	signal(SIGUSR1, on_suspend_signal);
	ws_set_suspend_hook(NULL);
	run_op(&ops[0], 1, &rc);
	CK_OK(rc);
	ck_assert_int_eq(atomic_load(&deferred), 1);
	ck_assert_int_eq(atomic_load(&hooks), 0);
	ck_assert(!ws_in_critical_section());
	signal(SIGUSR1, SIG_DFL);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("suspend");
	TCase *tc = tcase_create("suspend");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, defer_exactly_inside_critical_sections, 0,
			    (int)(sizeof ops / sizeof ops[0]));
	tcase_add_test(tc, no_deferral_outside);
	tcase_add_test(tc, suspended_in_hook_holds_nothing);
	tcase_add_test(tc, deferral_without_hook);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
