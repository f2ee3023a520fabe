/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A thread that adopts a dead record whose log is busy finishes that log
 * as its own while it holds the arena lock, and must say it holds the lock
 * all the while (its log's arena_lock flag): a holder that does not, found
 * twice with nothing moved, is taken for a stale name and its lock taken
 * over (lock.c's suspicion rule) while it is still inside.
 *
 * A victim process is killed at each fault point of an operation that
 * hands an object to a queued waiter (an auto-reset event's set, a manual
 * event's pulse, a semaphore's release, a mutex's unlock), or of a wait_all
 * that takes two objects at once, leaving its log busy; every other
 * record is then made unavailable by hand, so that the next new thread
 * must adopt the victim's.  That adopter, in a process of its own, is
 * stopped (SIGSTOP) at each fault point of the same operation.  Wherever
 * it is stopped holding the arena lock, its flag must be set, and a
 * WS_ARENA_NONBLOCK call that needs the arena lock must give up with
 * -EAGAIN, not take the lock over.  19d2098 fixed the flag's being cleared
 * by the recovery of the adopted record.  And the adopted log is replayed
 * as the dead thread's, not as ours: a release it cut short between its
 * flag and its clear once left the object LOCKED for good (-EUCLEAN at the
 * 24th point).  A wait_all's two objects end up both taken, by the victim
 * or the adopter, never one.  The wait_all is the one operation here whose
 * victim dies holding the arena lock itself: its adopter, stopped before
 * it had taken that lock over, once had its record's `holding` counter
 * zeroed, so the non-blocking check took the word for a stale name, took
 * the lock, and could not replay the busy log of a live record (victim
 * point 5, adopter point 3).
 *
 * Then the same with the adopter killed at its point instead of stopped,
 * dead in the middle of the first dead thread's work: a second adopter,
 * with no fault, runs the operation and an arena check, adopting the
 * record once more, and everything must come out whole (the waiter gets
 * its object; the wait_all's two objects go together).  Against the fault
 * build.
 */
#define _GNU_SOURCE
#include "fault_api.h"
#include "robust.h"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "../../winsync/arena.h"
#include "../whitebox.h"

/* The mutex's holder before the unlock, the waiter's owner id, the wait_all's. */
#define HOLDER 0x51u
#define WAITER 0x80u
#define TAKER  0x61u

/*
 * An operation run by the victim and then by the adopter, on the object the
 * waiter is queued on (or, for a wait_all, on two others).
 */
struct op {
	const char *what;
	ws_handle (*make)(ws_arena *a);
	int (*give)(ws_arena *a, ws_handle h);
	int (*settle)(ws_arena *a, ws_handle h); /* makes sure the waiter gets it, after */
	/* What must hold after the trial; may be NULL. */
	void (*judge)(ws_arena *a, const char *what, bool one_ended);
};

static ws_handle auto_event(ws_arena *a)
{
	return mk_event(a, false, false);
}

static ws_handle manual_event(ws_arena *a)
{
	return mk_event(a, true, false);
}

static ws_handle empty_sem(ws_arena *a)
{
	return mk_sem(a, 0, 4);
}

static int set(ws_arena *a, ws_handle h)
{
	return ws_event_set(a, h, NULL);
}

static int pulse(ws_arena *a, ws_handle h)
{
	return ws_event_pulse(a, h, NULL);
}

static int release(ws_arena *a, ws_handle h)
{
	return ws_sem_release(a, h, 1, NULL);
}

static ws_handle held_mutex(ws_arena *a)
{
	return mk_mutex(a, HOLDER, 1);
}

/*
 * The victim's unlock hands the mutex to the waiter, or the adopter's does:
 * the second unlock is -EPERM, and then the waiter must own it.
 */
static int unlock(ws_arena *a, ws_handle h)
{
	uint32_t count = 0, owner = 0;
	int rc = ws_mutex_unlock(a, h, HOLDER, NULL);

	if (rc != -EPERM)
		return rc;
	rc = ws_mutex_read(a, h, &count, &owner);
	if (rc)
		return rc;
	return owner == WAITER && count == 1 ? 0 : -EPERM;
}

static char name[96];
static struct {
	ws_handle h;
	ws_handle pair[2]; /* a wait_all's objects */
	int op;
} *sh;

/* The waiter's event, and two signaled objects of another type each for the wait_all. */
static ws_handle pair_and_event(ws_arena *a)
{
	sh->pair[0] = mk_event(a, false, true);
	sh->pair[1] = mk_sem(a, 1, 1);
	return mk_event(a, false, false);
}

/* Takes both, or (taken by the victim already) finds neither ready. */
static int take_both(ws_arena *a, ws_handle h)
{
	static const struct timespec past = { 0, 0 };
	const struct ws_wait w = { .objects = sh->pair, .count = 2, .owner = TAKER,
				   .deadline = &past };
	uint32_t index = 9;
	int rc = ws_wait_all(a, &w, &index);

	(void)h;
	if (rc == -ETIMEDOUT)
		return 0;
	return rc ? rc : index == 0 ? 0 : -ERANGE;
}

/*
 * Both taken or neither, never one; both, once a wait_all (the victim's or
 * the adopter's) has run to its end.  Then both are closed.
 */
static void both_or_neither(ws_arena *a, const char *what, bool one_ended)
{
	bool signaled = true, manual = true;
	uint32_t count = 9, max = 0;

	CK_OK(ws_event_read(a, sh->pair[0], &signaled, &manual));
	CK_OK(ws_sem_read(a, sh->pair[1], &count, &max));
	ck_assert_msg(signaled == (count == 1), "%s: the event %s, the semaphore %u: one taken alone",
		      what, signaled ? "signaled" : "taken", count);
	ck_assert_msg(!one_ended || !signaled, "%s: a wait_all ended, and neither was taken", what);
	CK_OK(ws_close(a, sh->pair[0]));
	CK_OK(ws_close(a, sh->pair[1]));
}

static const struct op ops[] = {
	{ "set", auto_event, set, set, NULL },
	{ "pulse", manual_event, pulse, set, NULL },
	{ "release", empty_sem, release, release, NULL },
	{ "unlock", held_mutex, unlock, unlock, NULL },
	{ "wait_all", pair_and_event, take_both, set, both_or_neither },
};

/*
 * The operation through `a`, killed or stopped (signo) at its k-th fault
 * point (k 0: none).  0: it ended before that point; 51: it failed.
 */
static int give_in(ws_arena *a, long k, int signo)
{
	int rc;

	ws_fault_arm_signal(k, signo);
	rc = ops[sh->op].give(a, sh->h);
	if (rc) {
		fprintf(stderr, "%s, point %ld: %d\n", ops[sh->op].what, k, rc);
		return 51;
	}
	ws_fault_arm(0);
	return 0;
}

static int give_with_fault(long k, int signo)
{
	ws_arena *a = NULL;

	if (ws_arena_open(name, &a))
		return 50;
	return give_in(a, k, signo);
}

static int victim(void *arg)
{
	return give_with_fault((long)(intptr_t)arg, SIGKILL);
}

static int adopter(void *arg)
{
	return give_with_fault((long)(intptr_t)arg, SIGSTOP);
}

static int adopter_killed(void *arg)
{
	return give_with_fault((long)(intptr_t)arg, SIGKILL);
}

/* The waiter the operation hands the object to, stopped so that it recovers nothing itself. */
static int waiting(void *arg)
{
	(void)arg;
	return child_wait_one(name, sh->h, WAITER);
}

/* What each record's alive word held before leave_only(): given back after. */
static uint32_t saved[WS_MAX_THREADS];
static uint32_t saved_fresh;

/*
 * Every record but `dead` made to look live (this thread's tid: neither
 * claimed nor adopted nor reaped): a new thread must adopt `dead`.
 */
static void leave_only(ws_arena *a, int dead)
{
	uint32_t self = (uint32_t)syscall(SYS_gettid);

	saved_fresh = atomic_load(&a->header->fresh_records);
	atomic_store(&a->header->fresh_records, a->records_count);
	for (uint32_t r = 0; r < a->records_count; r++) {
		uint32_t alive = atomic_load(&a->records[r].alive);

		saved[r] = alive;
		if ((int)r != dead && (alive == 0 || (alive & WS_FUTEX_OWNER_DIED)))
			atomic_store(&a->records[r].alive, self);
	}
}

/* The forged marks undone: each record as it was. */
static void give_back(ws_arena *a)
{
	uint32_t self = (uint32_t)syscall(SYS_gettid);

	for (uint32_t r = 0; r < a->records_count; r++)
		if (saved[r] != self && atomic_load(&a->records[r].alive) == self)
			atomic_store(&a->records[r].alive, saved[r]);
	atomic_store(&a->header->fresh_records, saved_fresh);
}

/* Is the arena lock held by the record thread `tid` lives in? That record, or -1. */
static int arena_lock_holder(ws_arena *a, pid_t tid)
{
	uint32_t word = atomic_load(&a->header->lock) & ~WS_LOCK_CONTENDED;
	int r = wb_live_record(a, tid);

	return word && r >= 0 && word == wb_lock_ref(a, (uint32_t)r) ? r : -1;
}

enum outcome {
	VICTIM_ENDED,   /* the victim's operation ended before its point */
	LOG_IDLE,       /* killed with no record or its log idle: nothing for an adopter to do */
	ADOPTER_ENDED,  /* the adopter's operation ended before its point */
	ADOPTER_CAUGHT, /* stopped (or killed) there */
};

static ws_arena *a, *nonblock;
static int held;

/* The adopter stopped at its point j: if it holds the arena lock, it must say so. */
static enum outcome adopt_stopped(long k, long j, int dead)
{
	const char *what = ops[sh->op].what;
	enum outcome out = ADOPTER_CAUGHT;
	char report[256] = "";
	int status = 0, rc;
	pid_t ad;

	leave_only(a, dead);
	ad = fork_child_fn(adopter, (void *)(intptr_t)j);
	if (stopped_or_ended(ad, 60000, &status)) {
		int r = arena_lock_holder(a, ad), mine = wb_named_record(a, ad);

		/* -1: stopped before it looked for a record. */
		ck_assert_msg(mine == -1 || mine == dead,
			      "%s, points %ld/%ld: the adopter took record %d, not %d", what, k, j,
			      mine, dead);
		if (r >= 0) {
			held++;
			ck_assert_msg(atomic_load(&a->records[r].log.arena_lock),
				      "%s, points %ld/%ld: the adopter holds the arena lock and "
				      "does not say so", what, k, j);
			/* Taken over, it would return 0 with the adopter still inside. */
			rc = ws_arena_check(nonblock, report, sizeof report);
			ck_assert_msg(rc == -EAGAIN, "%s, points %ld/%ld: a non-blocking check "
				      "returned %d (%s), not -EAGAIN", what, k, j, rc, report);
		}
		kill(ad, SIGCONT);
		ck_assert_msg(reap_child(ad, 60000, &status), "%s, points %ld/%ld: the adopter hung",
			      what, k, j);
	} else {
		out = ADOPTER_ENDED;
	}
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "%s, points %ld/%ld: adopter status %#x", what, k, j, status);
	give_back(a);
	return out;
}

/*
 * A second adopter, with no fault: its operation (which may need no record
 * if the first finished the hand-off) and an arena check, which enters the
 * arena lock and so must adopt record `dead` and find all whole.
 */
static int second_adopter(void *arg)
{
	ws_arena *mine = NULL;
	char report[256] = "";
	int rc;

	if (ws_arena_open(name, &mine))
		return 50;
	/* The same arena pointer for the check: a second would want a record of its own. */
	rc = give_in(mine, 0, SIGKILL);
	if (rc)
		return rc;
	rc = ws_arena_check(mine, report, sizeof report);
	if (rc) {
		fprintf(stderr, "%s, second adopter's check: %d (%s)\n", ops[sh->op].what, rc, report);
		return 52;
	}
	return wb_named_record(mine, (pid_t)syscall(SYS_gettid)) == (int)(intptr_t)arg ? 0 : 55;
}

/*
 * The adopter killed at its point j instead, dead in the middle of the
 * dead thread's work: a second adopter takes the record again and must
 * finish both (recovery nested in an adopted record).
 */
static enum outcome adopt_killed(long k, long j, int dead)
{
	const char *what = ops[sh->op].what;
	int status = 0;
	pid_t ad;

	leave_only(a, dead);
	ad = fork_child_fn(adopter_killed, (void *)(intptr_t)j);
	ck_assert_msg(reap_child(ad, 60000, &status), "%s, points %ld/%ld: the adopter hung", what,
		      k, j);
	give_back(a);
	if (WIFEXITED(status)) {
		ck_assert_msg(WEXITSTATUS(status) == 0, "%s, points %ld/%ld: adopter status %#x",
			      what, k, j, status);
		return ADOPTER_ENDED;
	}
	ck_assert_msg(WTERMSIG(status) == SIGKILL, "%s, points %ld/%ld: adopter status %#x", what,
		      k, j, status);
	leave_only(a, dead);
	ad = fork_child_fn(second_adopter, (void *)(intptr_t)dead);
	ck_assert_msg(reap_child(ad, 60000, &status), "%s, points %ld/%ld: the second adopter hung",
		      what, k, j);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "%s, points %ld/%ld: second adopter status %#x", what, k, j, status);
	give_back(a);
	return ADOPTER_CAUGHT;
}

/* One victim killed at point k, one adopter stopped (or killed) at point j, judged. */
static enum outcome trial(long k, long j, bool kill_adopter)
{
	const char *what = ops[sh->op].what;
	enum outcome out = ADOPTER_CAUGHT;
	char report[256] = "";
	int status = 0, dead;
	pid_t waiter, v;

	sh->h = ops[sh->op].make(a);
	waiter = fork_child_fn(waiting, NULL);
	ck_assert(proc_asleep(waiter, 60000));
	kill(waiter, SIGSTOP);
	ck_assert(wait_stopped(waiter, 60000));
	v = fork_child_fn(victim, (void *)(intptr_t)k);
	ck_assert_msg(reap_child(v, 60000, &status), "%s, point %ld: the victim hung", what, k);
	ck_assert_msg(WIFEXITED(status) ? WEXITSTATUS(status) == 0 : WTERMSIG(status) == SIGKILL,
		      "%s, point %ld: victim status %#x", what, k, status);
	/* Killed before it had a record (-1), or with its log idle: nothing to adopt. */
	dead = wb_named_record(a, v);
	if (WIFEXITED(status))
		out = VICTIM_ENDED;
	else if (dead < 0 || atomic_load(&a->records[dead].log.state) == WS_LOG_IDLE)
		out = LOG_IDLE;
	if (out == ADOPTER_CAUGHT)
		out = kill_adopter ? adopt_killed(k, j, dead) : adopt_stopped(k, j, dead);
	ck_assert_msg(ws_arena_check(a, report, sizeof report) == 0, "%s, points %ld/%ld: %s", what,
		      k, j, report);
	/* The hand-off happened, or happens now: the waiter gets the object. */
	CK_OK(ops[sh->op].settle(a, sh->h));
	kill(waiter, SIGCONT);
	ck_assert_msg(reap_child(waiter, 60000, &status), "%s, points %ld/%ld: the waiter hung", what,
		      k, j);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "%s, points %ld/%ld: waiter status %#x", what, k, j, status);
	CK_OK(ws_close(a, sh->h));
	if (ops[sh->op].judge) {
		char at[64];

		snprintf(at, sizeof at, "%s, points %ld/%ld", what, k, j);
		ops[sh->op].judge(a, at, out != LOG_IDLE);
	}
	return out;
}

#define NOPS ((int)(sizeof ops / sizeof ops[0]))

/* Every victim point k, and for each a stride of adopter points j. */
static void campaign(int op, bool kill_adopter)
{
	int busy = 0, caught = 0;
	enum outcome out = LOG_IDLE;
	/* As test_nested_recovery: every point natively, fewer where all is slower;
	 * half as many again for a killed adopter, whose trial runs one more process. */
	long stride = (100 + robust_scale() - 1) / robust_scale() * (kill_adopter ? 2 : 1);

	sh = shared_alloc(sizeof(*sh));
	sh->op = op;
	held = 0;
	a = named_arena(name, sizeof name, "adopted", 64);
	CK_OK(ws_arena_open(name, &nonblock));
	CK_OK(ws_arena_set_flags(nonblock, WS_ARENA_NONBLOCK));
	/* This thread's record through the second pointer too, before records run out. */
	CK_OK(ws_arena_check(nonblock, NULL, 0));
	for (long k = 1; out != VICTIM_ENDED; k++) {
		for (long j = 1 + k % stride;; j += stride) {
			out = trial(k, j, kill_adopter);
			if (out != ADOPTER_CAUGHT)
				break;
			caught++;
		}
		busy += out == ADOPTER_ENDED;
	}
	if (kill_adopter)
		printf("adopted recovery, %s: %d victim points left a busy log; the adopter killed "
		       "%d times, a second adopter finished (every %ld points)\n", ops[op].what,
		       busy, caught, stride);
	else
		printf("adopted recovery, %s: %d victim points left a busy log; the adopter stopped "
		       "%d times, %d of them holding the arena lock (every %ld points)\n",
		       ops[op].what, busy, caught, held, stride);
	ck_assert_int_ge(busy, 1);
	ck_assert_int_ge(caught, 1);
	ck_assert(kill_adopter || held >= 1);
	ws_arena_close(nonblock);
	drop_arena(a, name);
	shared_free(sh, sizeof(*sh));
}

START_TEST(adopter_says_it_holds_the_arena_lock)
{
	campaign(_i, false);
}
END_TEST

START_TEST(second_adopter_finishes_both)
{
	campaign(_i, true);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("adopted_recovery");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 850);
	tcase_add_loop_test(tc, adopter_says_it_holds_the_arena_lock, 0, NOPS);
	tcase_add_loop_test(tc, second_adopter_finishes_both, 0, NOPS);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
