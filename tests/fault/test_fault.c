/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fault injection (libwinsync-fault): processes that use a shared arena are
 * killed with SIGKILL at fault points chosen at random, at random times
 * (anywhere, blocked waits included), and at every fault point of chosen
 * operations in turn, while threads of this process wait and signal.  After
 * each death:
 *   hang    a survivor's wait ends later than its deadline allows, or a
 *           waiter that the dead process's operation had already served
 *           (or had committed to serve) sleeps on until somebody else enters
 *           the arena: with no deadline it would sleep forever;
 *   lost    a signal given after the death does not reach the live waiter
 *           it is for;
 *   broken  ws_arena_check reports an invariant, or an operation took
 *           effect partly (a pulse that released some of its waiters, a
 *           ws_owner_died that did half), or twice.
 * The summary gives the kills, hangs, lost signals, broken invariants and
 * the distinct fault points (call sites) where victims died; all but the
 * kills must be 0.
 *
 * White-box: the test reads the waiters' records (arena.h) to tell which
 * of them the dead thread's operation served, and a victim records the
 * call site of the fault point it dies at (a backtrace in the handler of
 * the signal the point raises, then SIGKILL) so that failures name it:
 *   addr2line -fe build/<preset>/tests/test_fault <offset>
 */
#define _GNU_SOURCE
#include "robust.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../../winsync/arena.h"
#include "../../winsync/txn.h"
#include "fault_api.h"

/* The point function itself (winsync/fault.h): frames inside it are not the site. */
void ws_fault_point(void);

#define MAXW 4
#define MAXH 8
#define MAX_SITES 256
#define CAPACITY 32

/* ---- what victims report (memory shared with them) ---- */

struct report {
	long armed_at;        /* ws_fault_passed() when armed */
	long points;          /* points the operation passed (calibration) */
	uintptr_t site;       /* call site offset of the point it died at; 0: after the op */
	_Atomic int ready;    /* the victim's preparations are done */
	_Atomic int go;       /* the waiters are in place: act */
	_Atomic int returned; /* the operation returned */
	int rc;
	int fault_signal;     /* SIGUSR2: the handler records the site, then SIGKILL */
	_Atomic int tid;      /* the victim's thread: its record holds the log it dies with */
};

static struct report *rep;
static uintptr_t exe_base;

static uintptr_t base_of(const void *addr)
{
	Dl_info info;

	if (!dladdr(addr, &info))
		return 0;
	return (uintptr_t)info.dli_fbase;
}

/*
 * The call site: below the handler (ours) come the signal trampoline and
 * raise() (libc), then ws_fault_point unless it tail-called raise(), then
 * the site: the first frame of ours after the first foreign one that
 * follows the handler.
 */
static void record_site_and_die(int sig)
{
	uintptr_t lo = (uintptr_t)&ws_fault_point, hi = lo + 64;
	void *frames[32];
	int n = backtrace(frames, 32), phase = 0;

	(void)sig;
	if ((uintptr_t)&ws_fault_arm > lo && (uintptr_t)&ws_fault_arm < lo + 4096)
		hi = (uintptr_t)&ws_fault_arm;
	rep->site = 1; /* unknown */
	for (int i = 0; i < n; i++) {
		uintptr_t pc = (uintptr_t)frames[i];
		bool ours = base_of(frames[i]) == exe_base;

		if (phase == 0 && ours)
			phase = 1; /* the handler */
		else if (phase == 1 && !ours)
			phase = 2; /* the trampoline, raise() */
		else if (phase == 2 && ours && !(pc >= lo && pc < hi)) {
			rep->site = pc - 1 - exe_base;
			break;
		}
	}
	raise(SIGKILL);
}

static void victim_setup(void)
{
	void *warm[4];

	/* Load the unwinder now, not in the handler. */
	backtrace(warm, 4);
	signal(SIGUSR2, record_site_and_die);
}

/* Arms the victim `k` points ahead (k = 0: only counts, for calibration). */
static void victim_arm(long k)
{
	rep->armed_at = ws_fault_passed();
	if (k > 0)
		ws_fault_arm_signal(k, rep->fault_signal);
}

static void victim_ready_go(void)
{
	atomic_store(&rep->ready, 1);
	while (!atomic_load(&rep->go))
		sleep_ms(1);
}

/* After the operation: dies anyway, as a victim whose point came after it. */
static _Noreturn void victim_end(int rc)
{
	ws_fault_arm(0);
	rep->points = ws_fault_passed() - rep->armed_at;
	rep->rc = rc;
	atomic_store(&rep->returned, 1);
	raise(SIGKILL);
	_exit(99);
}

/* ---- tallies ---- */

struct tally {
	long kills, point_kills, external_kills, trials, reruns;
	long hangs, lost, broken;
	long stranded_claimed, stranded_owed;
	uintptr_t sites[MAX_SITES];
	int nsites;
	char first[6][320];
	int nfirst;
};

static struct tally tl;

/* All tests together: Check runs each in its own child, so they add up in shared memory. */
struct total {
	_Atomic long kills, point_kills, external_kills, hangs, lost, broken, trials;
	_Atomic long stranded_claimed, stranded_owed;
	_Atomic int lock;
	uintptr_t sites[MAX_SITES];
	int nsites;
};

static struct total *total;

static void add_to_total(void)
{
	atomic_fetch_add(&total->kills, tl.kills);
	atomic_fetch_add(&total->point_kills, tl.point_kills);
	atomic_fetch_add(&total->external_kills, tl.external_kills);
	atomic_fetch_add(&total->hangs, tl.hangs);
	atomic_fetch_add(&total->lost, tl.lost);
	atomic_fetch_add(&total->broken, tl.broken);
	atomic_fetch_add(&total->trials, tl.trials);
	atomic_fetch_add(&total->stranded_claimed, tl.stranded_claimed);
	atomic_fetch_add(&total->stranded_owed, tl.stranded_owed);
	while (atomic_exchange(&total->lock, 1))
		sleep_ms(1);
	for (int i = 0; i < tl.nsites; i++) {
		int j = 0;

		while (j < total->nsites && total->sites[j] != tl.sites[i])
			j++;
		if (j == total->nsites && total->nsites < MAX_SITES)
			total->sites[total->nsites++] = tl.sites[i];
	}
	atomic_store(&total->lock, 0);
}

static void add_site(uintptr_t site)
{
	if (site <= 1)
		return;
	for (int i = 0; i < tl.nsites; i++)
		if (tl.sites[i] == site)
			return;
	if (tl.nsites < MAX_SITES)
		tl.sites[tl.nsites++] = site;
}

static void remember(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (tl.nfirst < 6)
		vsnprintf(tl.first[tl.nfirst++], sizeof tl.first[0], fmt, ap);
	va_end(ap);
}

static void print_tally(const char *what)
{
	printf("%s: %ld kills (%ld at fault points, %ld at random times), %ld hangs "
	       "(%ld stranded waiters: %ld claimed but not woken, %ld owed by an unfinished "
	       "operation), %ld lost signals, %ld broken invariants, %d distinct fault points, "
	       "%ld trials (%ld re-run with a longer grace)\n",
	       what, tl.kills, tl.point_kills, tl.external_kills, tl.hangs,
	       tl.stranded_claimed + tl.stranded_owed, tl.stranded_claimed, tl.stranded_owed, tl.lost,
	       tl.broken, tl.nsites, tl.trials, tl.reruns);
	for (int i = 0; i < tl.nfirst; i++)
		printf("  %s\n", tl.first[i]);
	fflush(stdout);
}

static void assert_tally(void)
{
	add_to_total();
	ck_assert_msg(tl.hangs == 0 && tl.lost == 0 && tl.broken == 0,
		      "%ld hangs, %ld lost signals, %ld broken invariants; first: %s", tl.hangs,
		      tl.lost, tl.broken, tl.nfirst ? tl.first[0] : "");
}

/* ---- chosen-point trials ---- */

struct trial;

struct scenario {
	const char *name;
	/* Coordinator, before the victim exists: objects (and a dead waiter). */
	void (*objects)(struct trial *t);
	/* In the victim: preparations, victim_ready_go(), victim_arm(k), the operation. */
	int (*victim)(ws_arena *a, const ws_handle *h, long k);
	/* Coordinator, once the victim is ready: the waiters it acts on. */
	void (*waiters)(struct trial *t);
	/* Coordinator, after the death and the generic checks. */
	void (*judge)(struct trial *t);
	long t1_ms;           /* grace for waiters to wake by themselves after the death */
};

struct trial {
	const struct scenario *sc;
	char name[80];
	ws_arena *a;
	ws_handle h[MAXH];
	struct waiter *w[MAXW];
	int record[MAXW];     /* the waiters' records */
	int nw;
	pid_t dead;           /* a process killed while blocked (reap scenario) */
	long k;
	long t1_ms;
	/* outcome */
	int served;           /* waiters whose wait is over after the check's recovery */
	int woke;             /* of them, those that returned within t1 by themselves */
	bool claimed[MAXW];   /* at the death: handed something, or named by a committed hand-off */
	int stranded_claimed; /* served, claimed at the death, yet not woken */
	int stranded_owed;    /* served by the recovery of an operation the dead thread began */
	bool late, leak;
	int hangs, lost, broken;
	char why[320];
	uintptr_t site;
	bool op_returned;
};

static void fail_note(struct trial *t, int *counter, const char *fmt, ...)
{
	va_list ap;

	(*counter)++;
	if (!t->why[0]) {
		va_start(ap, fmt);
		vsnprintf(t->why, sizeof t->why, fmt, ap);
		va_end(ap);
	}
}

#define BROKEN(t, ...) fail_note((t), &(t)->broken, __VA_ARGS__)
#define LOST(t, ...)   fail_note((t), &(t)->lost, __VA_ARGS__)
#define HANG(t, ...)   fail_note((t), &(t)->hangs, __VA_ARGS__)

static long long_ms(void)
{
	return 5000 * slow_factor();
}

static struct waiter *add_waiter_nb(struct trial *t, uint32_t owner, bool all,
				    const ws_handle *objs, uint32_t n, long timeout_ms, bool blocks)
{
	struct waiter *w = calloc(1, sizeof(*w));

	ck_assert_ptr_nonnull(w);
	waiter_init(w, t->a, owner, all, objs, n);
	w->forever = timeout_ms == 0;
	w->timeout_ms = timeout_ms ? timeout_ms : LONG_MS;
	waiter_start(w);
	if (blocks)
		waiter_asleep(w);
	t->w[t->nw++] = w;
	return w;
}

/* A waiter that must block (asleep when this returns). */
static struct waiter *add_waiter(struct trial *t, uint32_t owner, bool all, const ws_handle *objs,
				 uint32_t n, long timeout_ms)
{
	return add_waiter_nb(t, owner, all, objs, n, timeout_ms, true);
}

static int count_done(struct trial *t)
{
	int n = 0;

	for (int i = 0; i < t->nw; i++)
		n += waiter_done(t->w[i]);
	return n;
}

/* Waits until `n` waiters are done or `ms` passed: the number done. */
static int await_done(struct trial *t, int n, long ms)
{
	struct timespec end = deadline_ms(ms);

	while (count_done(t) < n && ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0)
		sleep_ms(1);
	return count_done(t);
}

/* The live record of thread `tid` (after a locked call, which orders our reads). */
static int record_of(ws_arena *a, pid_t tid)
{
	uint32_t n = a->header->fresh_records;

	for (uint32_t r = 0; r < n && r < a->records_count; r++)
		if (a->records[r].tid == (uint32_t)tid &&
		    (atomic_load(&a->records[r].alive) & WS_FUTEX_TID_MASK) == (uint32_t)tid)
			return (int)r;
	return -1;
}

/* The record a thread that may have died last held (its tid stays until reuse). */
static int record_of_dead(ws_arena *a, pid_t tid)
{
	uint32_t n = a->header->fresh_records;

	for (uint32_t r = 0; r < n && r < a->records_count; r++)
		if (a->records[r].tid == (uint32_t)tid)
			return (int)r;
	return -1;
}

static bool wait_over(struct trial *t, int i)
{
	if (waiter_done(t->w[i]))
		return true;
	if (t->record[i] < 0)
		return false;
	return atomic_load(&t->a->records[t->record[i]].state) != WS_WAIT_PENDING;
}

static int check_arena(struct trial *t, const char *when)
{
	char report[256];
	int rc = ws_arena_check(t->a, report, sizeof report);

	if (rc)
		BROKEN(t, "ws_arena_check %s: %d (%s) %s", when, rc, errname(rc), report);
	return rc;
}

/* ---- scenarios ---- */

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
	uint32_t me = (uint32_t)syscall(SYS_gettid), idx;
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
	bool s, m;
	int rc = ws_event_read(t->a, t->h[0], &s, &m);

	if (t->served)
		BROKEN(t, "a close served its waiter");
	if (rc == 0)
		CK_OK(ws_close(t->a, t->h[0]));
	else if (rc != -EBADF)
		BROKEN(t, "event read after the close: %d (%s)", rc, errname(rc));
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

/* Creating and closing objects. */
static void no_objects(struct trial *t)
{
	(void)t;
}

static int create_victim(ws_arena *a, const ws_handle *h, long k)
{
	uint32_t me = (uint32_t)syscall(SYS_gettid);
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

static int enqueue_victim(ws_arena *a, const ws_handle *h, long k)
{
	uint32_t me = (uint32_t)syscall(SYS_gettid), idx;
	struct timespec dl;
	struct ws_wait w = { .objects = h, .count = 3, .owner = me, .deadline = &dl };

	victim_ready_go();
	victim_arm(k);
	dl = deadline_ms(30);
	return ws_wait_any(a, &w, &idx);
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
	uint32_t me = (uint32_t)syscall(SYS_gettid), idx;
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

static const struct scenario scenarios[] = {
	{ "event set, 2 waiters", set_auto_objects, set_auto_victim, two_waiters_on_h0,
	  set_auto_judge, 80 },
	{ "semaphore release 2, wait_any + wait_all", release2_objects, release2_victim,
	  release2_waiters, release2_judge, 80 },
	{ "mutex unlock to a waiter", mutex_objects, unlock_victim, mutex_waiter, unlock_judge,
	  250 },
	{ "pulse manual event, 2 waiters", manual_objects, pulse_victim, two_waiters_on_h0,
	  pulse_manual_judge, 80 },
	{ "pulse auto event, 2 waiters", set_auto_objects, pulse_victim, two_waiters_on_h0,
	  pulse_auto_judge, 80 },
	{ "release completing a wait_all", wait_all_objects, release1_victim, wait_all_waiter,
	  wait_all_judge, 80 },
	{ "close with a waiter", set_auto_objects, close_victim, close_waiter, close_judge, 0 },
	{ "create and close", no_objects, create_victim, no_waiters, create_judge, 0 },
	{ "wait: queue, sleep, time out", enqueue_objects, enqueue_victim, no_waiters,
	  enqueue_judge, 0 },
	{ "set passing a dead waiter, reap", reap_objects, set_auto_victim, one_waiter_on_h0,
	  reap_judge, 80 },
	{ "ws_owner_died", owner_objects, owner_died_victim, owner_waiters, owner_judge, 80 },
};

static int victim_main(void *arg)
{
	struct trial *t = arg;
	ws_arena *a = NULL;

	CHILD_CHECK(ws_arena_open(t->name, &a) == 0, 10);
	atomic_store(&rep->tid, (int)gettid());
	victim_setup();
	victim_end(t->sc->victim(a, t->h, t->k));
}

/* Stops every waiter still blocked; false if one cannot be stopped (it is leaked). */
static bool stop_waiters(struct trial *t)
{
	bool all = true;

	for (int i = 0; i < t->nw; i++) {
		struct waiter *w = t->w[i];

		if (!waiter_done(w))
			ws_owner_died(t->a, w->owner);
		if (!waiter_wait_done(w, long_ms())) {
			HANG(t, "waiter %d cannot be stopped: asleep with its wait over", i);
			atomic_store(&w->release, 1);
			pthread_detach(w->thread);
			all = false;
			continue;
		}
		waiter_join(w);
		free(w);
	}
	t->nw = 0;
	return all;
}

/* One trial: a fresh arena, the victim killed at point k (0: not at all), the verdict. */
static void run_trial(const struct scenario *sc, long k, long t1_ms, struct trial *t)
{
	int status;
	char sbuf[64];

	memset(t, 0, sizeof(*t));
	memset(rep, 0, sizeof(*rep));
	rep->fault_signal = SIGUSR2;
	t->sc = sc;
	t->k = k;
	t->t1_ms = t1_ms;
	t->a = named_arena(t->name, sizeof t->name, "fault", CAPACITY);
	for (int i = 0; i < MAXW; i++)
		t->record[i] = -1;
	sc->objects(t);
	pid_t victim = fork_child_fn(victim_main, t);
	struct timespec end = deadline_ms(60000);

	while (!atomic_load(&rep->ready)) {
		ck_assert_msg(ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0, "victim never got ready");
		if (reap_child(victim, 0, &status))
			ck_abort_msg("%s: victim died before it was armed: %s", sc->name,
				     status_str(status, sbuf, sizeof sbuf));
		sleep_ms(1);
	}
	sc->waiters(t);
	/* A locked call orders our reads of the waiters' records after their writes. */
	CK_OK(ws_arena_check(t->a, NULL, 0));
	for (int i = 0; i < t->nw; i++)
		t->record[i] = record_of(t->a, atomic_load(&t->w[i]->tid));
	atomic_store(&rep->go, 1);
	if (!reap_child(victim, 20000 * slow_factor(), &status)) {
		HANG(t, "the victim's operation never returned");
		kill_reap(victim);
	} else if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
		BROKEN(t, "victim ended with %s", status_str(status, sbuf, sizeof sbuf));
	}
	tl.kills++;
	t->site = rep->site;
	t->op_returned = atomic_load(&rep->returned);
	if (!t->op_returned)
		tl.point_kills++;
	add_site(t->site);
	if (t->op_returned && k > 0 && rep->rc != 0)
		BROKEN(t, "the operation returned %d (%s)", rep->rc, errname(rep->rc));

	/* What the dead thread left (read only; racy reads only label a failure). */
	int victim_record = record_of_dead(t->a, atomic_load(&rep->tid));

	if (!under_tsan() && victim_record >= 0) {
		struct ws_log *log = &t->a->records[victim_record].log;
		bool committed = atomic_load(&log->state) == WS_LOG_COMMITTED;

		for (int i = 0; i < t->nw; i++)
			t->claimed[i] = wait_over(t, i) ||
					(committed && t->record[i] >= 0 &&
					 log->claim_record == (uint32_t)t->record[i] + 1);
	}
	/* Those the dead thread's operation served must wake without anyone's help. */
	bool done_a[MAXW];

	if (t1_ms) {
		struct timespec t0 = ts_now(CLOCK_MONOTONIC);
		int n = await_done(t, t->nw, t1_ms);

		/* WINSYNC_FAULT_DEBUG: how long the waiters took to wake by themselves. */
		if (getenv("WINSYNC_FAULT_DEBUG"))
			printf("point %ld: %d of %d waiters done %ld ms after the death\n", k, n,
			       t->nw, ts_diff_ms(ts_now(CLOCK_MONOTONIC), t0));
	}
	for (int i = 0; i < t->nw; i++)
		done_a[i] = waiter_done(t->w[i]);
	t->woke = count_done(t);
	check_arena(t, "after the death");
	for (int i = 0; i < t->nw; i++) {
		bool over = wait_over(t, i);

		t->served += over;
		if (over && !done_a[i]) {
			t->late = true;
			if (t->claimed[i])
				t->stranded_claimed++;
			else
				t->stranded_owed++;
		}
	}
	sc->judge(t);
	check_arena(t, "at the end");
	t->leak = !stop_waiters(t);
	if (t->leak)
		ws_arena_close(t->a); /* the mapping stays while the waiter lives */
	else
		drop_arena(t->a, t->name);
	if (t->leak)
		ws_arena_unlink(t->name);
}

/*
 * A trial, re-run with a long grace if a waiter seemed stranded (it may only
 * have been slow to run on a busy machine).  Once one is confirmed in a
 * scenario (or after a few re-runs), later ones count without a re-run: the
 * verdict is made, and the run stays short.
 */
static int confirmed, reruns_left;

static void judged_trial(const struct scenario *sc, long k)
{
	struct trial t;
	long t1 = sc->t1_ms * slow_factor();

	run_trial(sc, k, t1, &t);
	if (t.late && t1 && !confirmed && reruns_left > 0) {
		tl.reruns++;
		if (getenv("WINSYNC_FAULT_DEBUG"))
			printf("re-run: %s point %ld site %#lx\n", sc->name, k, (unsigned long)t.site);
		reruns_left--;
		run_trial(sc, k, 1500 * slow_factor(), &t);
	}
	if (t.late) {
		confirmed++;
		HANG(&t, "%d waiter(s) slept until another thread entered the arena: %d "
			 "handed an object (or named by a committed hand-off) but not woken, "
			 "%d owed by the operation the dead thread had begun",
		     t.stranded_claimed + t.stranded_owed, t.stranded_claimed, t.stranded_owed);
		tl.stranded_claimed += t.stranded_claimed;
		tl.stranded_owed += t.stranded_owed;
	}
	tl.trials++;
	tl.hangs += t.hangs;
	tl.lost += t.lost;
	tl.broken += t.broken;
	if (t.hangs || t.lost || t.broken) {
		remember("%s, point %ld (site %#lx%s): %s", sc->name, k, (unsigned long)t.site,
			 t.op_returned ? ", after the op" : "", t.why);
		printf("FAIL %s, point %ld (site %#lx%s): %s\n", sc->name, k, (unsigned long)t.site,
		       t.op_returned ? ", after the op" : "", t.why);
	}
}

START_TEST(chosen_points)
{
	const struct scenario *sc = &scenarios[_i];
	const char *only = getenv("WINSYNC_FAULT_SCENARIO");
	struct trial cal;

	/* WINSYNC_FAULT_SCENARIO=i runs only scenario i; =random only the random kills. */
	if (only && (strcmp(only, "random") == 0 || atoi(only) != _i))
		return;
	long points, stride, offset;
	struct rng r;

	rep = shared_alloc(sizeof(*rep));
	exe_base = base_of((void *)&record_site_and_die);
	memset(&tl, 0, sizeof tl);
	confirmed = 0;
	reruns_left = 6;
	/* Calibration: the whole operation, the victim killed only after it. */
	run_trial(sc, 0, sc->t1_ms * slow_factor(), &cal);
	points = rep->points;
	tl.trials++;
	tl.hangs += cal.hangs;
	tl.lost += cal.lost;
	tl.broken += cal.broken;
	if (cal.hangs || cal.lost || cal.broken)
		remember("%s, no kill in the op: %s", sc->name, cal.why);
	ck_assert_msg(points > 0, "%s passes no fault point", sc->name);
	/* WINSYNC_FAULT_POINT=k: that point only (with WINSYNC_FAULT_SCENARIO=i to debug one). */
	if (getenv("WINSYNC_FAULT_POINT")) {
		judged_trial(sc, atol(getenv("WINSYNC_FAULT_POINT")));
		print_tally(sc->name);
		assert_tally();
		return;
	}
	/* Every point on the host; a sample elsewhere, from a random offset. */
	stride = (100 + robust_scale() - 1) / robust_scale();
	rng_seed(&r, test_seed(sc->name));
	offset = rng_below(&r, (uint32_t)stride);
	for (long k = 1; k <= points; k++)
		if ((k - 1) % stride == offset || k == points)
			judged_trial(sc, k);
	printf("%s: %ld fault points in the operation\n", sc->name, points);
	print_tally(sc->name);
	assert_tally();
	shared_free(rep, sizeof(*rep));
}
END_TEST

/* ---- random kills ---- */

enum { EA0, EA1, EM, S0, S1, M0, M1, NOBJ };
#define VICTIMS 3
#define SURVIVORS 2

struct rshared {
	char name[80];
	ws_handle h[NOBJ];
	uint32_t dead[512];        /* owner ids of dead victims (their thread ids) */
	_Atomic uint32_t ndead;
	struct report rep[VICTIMS];
	char complaint[VICTIMS][400];
	uint64_t seed;
};

static struct rshared *rs;

static bool is_mutex(int i)
{
	return i == M0 || i == M1;
}

/* A random subset of distinct objects, in random order. */
static uint32_t pick(struct rng *r, int *idx, ws_handle *objs, uint32_t max)
{
	uint32_t n = 1 + rng_below(r, max), k = 0;
	bool used[NOBJ] = { false };

	while (k < n) {
		int i = (int)rng_below(r, NOBJ);

		if (used[i])
			continue;
		used[i] = true;
		idx[k] = i;
		objs[k++] = rs->h[i];
	}
	return n;
}

#define COMPLAIN(v, ...)                                                               \
	do {                                                                           \
		snprintf(rs->complaint[v], sizeof rs->complaint[v], __VA_ARGS__);      \
		_exit(3);                                                              \
	} while (0)

static int random_victim(void *arg)
{
	int v = (int)(intptr_t)arg;
	ws_arena *a = NULL;
	struct rng r;
	uint32_t me = (uint32_t)syscall(SYS_gettid), held[NOBJ] = { 0 };
	ws_handle temp[8];
	int ntemp = 0;
	bool all;

	rng_seed(&r, rs->seed ^ me);
	rep = &rs->rep[v];
	CHILD_CHECK(ws_arena_open(rs->name, &a) == 0, 2);
	victim_setup();
	if (rng_below(&r, 10) < 7)
		victim_arm(1 + rng_below(&r, 400));
	for (int op = 0; op < 100000; op++) {
		int idx[4], rc;
		ws_handle objs[4];
		uint32_t n, index;
		struct timespec dl = deadline_ms(rng_below(&r, 15));
		struct ws_wait w = { .objects = objs, .owner = me, .deadline = &dl };

		switch (rng_below(&r, 11)) {
		case 0:
		case 1:
		case 2:
			w.count = n = pick(&r, idx, objs, 4);
			if (rng_below(&r, 4) == 0)
				w.alert = rs->h[rng_below(&r, 2) ? EA0 : EM];
			all = rng_below(&r, 3) == 0;
			rc = all ? ws_wait_all(a, &w, &index) : ws_wait_any(a, &w, &index);
			if (rc == -EINVAL && all && w.alert)
				break; /* the alert was one of the objects of a wait_all */
			if (rc != 0 && rc != -ETIMEDOUT && rc != -EOWNERDEAD)
				COMPLAIN(v, "wait: %d (%s)", rc, errname(rc));
			if (rc == -ETIMEDOUT || index == n)
				break;
			/* Mutexes taken are kept a while: some victims die holding them. */
			for (uint32_t i = 0; i < n; i++)
				if (is_mutex(idx[i]) && (all || i == index))
					held[idx[i]]++;
			break;
		case 3:
			rc = ws_event_set(a, rs->h[rng_below(&r, 3)], NULL);
			if (rc)
				COMPLAIN(v, "set: %d (%s)", rc, errname(rc));
			break;
		case 4:
			rc = ws_event_pulse(a, rs->h[rng_below(&r, 3)], NULL);
			if (rc)
				COMPLAIN(v, "pulse: %d (%s)", rc, errname(rc));
			break;
		case 5:
			rc = ws_event_reset(a, rs->h[rng_below(&r, 3)], NULL);
			if (rc)
				COMPLAIN(v, "reset: %d (%s)", rc, errname(rc));
			break;
		case 6:
			rc = ws_sem_release(a, rs->h[S0 + rng_below(&r, 2)], 1 + rng_below(&r, 2), NULL);
			if (rc && rc != -EOVERFLOW)
				COMPLAIN(v, "release: %d (%s)", rc, errname(rc));
			break;
		case 7: {
			int m = M0 + (int)rng_below(&r, 2);

			if (!held[m])
				break;
			rc = rng_below(&r, 5) ? ws_mutex_unlock(a, rs->h[m], me, NULL)
					      : ws_mutex_kill(a, rs->h[m], me);
			if (rc)
				COMPLAIN(v, "unlock/kill: %d (%s)", rc, errname(rc));
			held[m] = 0;
			if (rc == 0)
				while (ws_mutex_unlock(a, rs->h[m], me, NULL) == 0)
					;
			break;
		}
		case 8:
			if (ntemp < 8 && rng_below(&r, 2)) {
				rc = ws_sem_create(a, 0, 1, &temp[ntemp]);
				if (rc == 0)
					ntemp++;
				else if (rc != -ENOSPC)
					COMPLAIN(v, "create: %d (%s)", rc, errname(rc));
			} else if (ntemp) {
				rc = ws_close(a, temp[--ntemp]);
				if (rc)
					COMPLAIN(v, "close: %d (%s)", rc, errname(rc));
			}
			break;
		case 9: {
			uint32_t nd = atomic_load(&rs->ndead), who;

			who = nd && rng_below(&r, 2) ? rs->dead[rng_below(&r, nd)] : 0x5000 + rng_below(&r, 64);
			rc = ws_owner_died(a, who);
			if (rc)
				COMPLAIN(v, "ws_owner_died: %d (%s)", rc, errname(rc));
			break;
		}
		case 10: {
			char report[200];

			rc = ws_arena_check(a, report, sizeof report);
			if (rc)
				COMPLAIN(v, "ws_arena_check: %d (%s) %s", rc, errname(rc), report);
			break;
		}
		}
	}
	return 0;
}

struct survivor {
	ws_arena *a;
	uint32_t owner;
	_Atomic int *stop;
	long waits, overshoot_max, hangs, unexpected;
	char why[300];
	uint64_t seed;
};

static void *survivor_main(void *arg)
{
	struct survivor *s = arg;
	struct rng r;

	rng_seed(&r, s->seed);
	while (!atomic_load(s->stop)) {
		int idx[4], rc;
		ws_handle objs[4];
		uint32_t n, index;
		struct timespec dl = deadline_ms(rng_below(&r, 20));
		struct ws_wait w = { .objects = objs, .owner = s->owner, .deadline = &dl };
		long over;
		bool all;

		switch (rng_below(&r, 4)) {
		case 0:
		case 1:
			w.count = n = pick(&r, idx, objs, 3);
			all = rng_below(&r, 3) == 0;
			rc = all ? ws_wait_all(s->a, &w, &index) : ws_wait_any(s->a, &w, &index);
			over = ts_diff_ms(ts_now(CLOCK_MONOTONIC), dl);
			s->waits++;
			if (over > s->overshoot_max)
				s->overshoot_max = over;
			if (over > 3000 * slow_factor()) {
				s->hangs++;
				snprintf(s->why, sizeof s->why, "a survivor's wait returned %ld ms late",
					 over);
			}
			if (rc != 0 && rc != -ETIMEDOUT && rc != -EOWNERDEAD) {
				s->unexpected++;
				snprintf(s->why, sizeof s->why, "survivor wait: %d (%s)", rc,
					 errname(rc));
			}
			if (rc == -ETIMEDOUT)
				break;
			/* Give back the mutexes it took: the probe wants them free or abandoned. */
			for (uint32_t i = 0; i < n; i++) {
				int urc;

				if (!is_mutex(idx[i]) || !(all || i == index))
					continue;
				urc = ws_mutex_unlock(s->a, objs[i], s->owner, NULL);
				if (urc) {
					uint32_t count = 0, owner = 0;
					int mrc = ws_mutex_read(s->a, objs[i], &count, &owner);

					s->unexpected++;
					snprintf(s->why, sizeof s->why,
						 "survivor %#x: %s of %u objects returned %d (%s) "
						 "index %u, then unlocking M%d: %d (%s); it reads %d, "
						 "owner %#x count %u",
						 s->owner, all ? "wait_all" : "wait_any", n, rc,
						 errname(rc), index, idx[i] - M0, urc, errname(urc),
						 mrc, owner, count);
				}
			}
			break;
		case 2:
			ws_event_set(s->a, rs->h[rng_below(&r, 3)], NULL);
			break;
		case 3:
			ws_sem_release(s->a, rs->h[S0 + rng_below(&r, 2)], 1, NULL);
			break;
		}
	}
	return NULL;
}

struct rtally {
	bool replace;
	long rounds, probes;
	long overshoot_max, survivor_waits;
};

/* A call of the probe that must work on a consistent arena: else a broken invariant. */
static bool probe_ok(ws_arena *a, struct rtally *rt, int rc, const char *what, int object)
{
	char report[256];

	if (rc == 0)
		return true;
	tl.broken++;
	ws_arena_check(a, report, sizeof report);
	remember("random round %ld: %s of object %d after the deaths: %d (%s); the check says: %s",
		 rt->rounds, what, object, rc, errname(rc), report);
	return false;
}

/* Signals given after the round's deaths, each to one live waiter. */
static bool probe(ws_arena *a, struct rtally *rt)
{
	struct waiter *p[NOBJ];
	uint32_t idx;

	/* Nothing signaled to start with: events reset, semaphores drained. */
	for (int i = 0; i <= EM; i++)
		if (!probe_ok(a, rt, ws_event_reset(a, rs->h[i], NULL), "reset", i))
			return false;
	for (int i = S0; i <= S1; i++)
		while (poll_any(a, &rs->h[i], 1, 1, &idx) == 0)
			;
	for (int i = 0; i < NOBJ; i++) {
		p[i] = calloc(1, sizeof(**p));
		ck_assert_ptr_nonnull(p[i]);
		waiter_init(p[i], a, new_owner(), false, &rs->h[i], 1);
		p[i]->timeout_ms = LONG_MS;
		waiter_start(p[i]);
		/* A mutex of dead owners comes by itself (abandoned): no signal needed. */
		if (!is_mutex(i))
			waiter_asleep(p[i]);
	}
	probe_ok(a, rt, ws_event_set(a, rs->h[EA0], NULL), "set", EA0);
	probe_ok(a, rt, ws_event_set(a, rs->h[EA1], NULL), "set", EA1);
	probe_ok(a, rt, ws_event_set(a, rs->h[EM], NULL), "set", EM);
	probe_ok(a, rt, ws_sem_release(a, rs->h[S0], 1, NULL), "release", S0);
	probe_ok(a, rt, ws_sem_release(a, rs->h[S1], 1, NULL), "release", S1);
	for (int i = 0; i < NOBJ; i++) {
		rt->probes++;
		if (!waiter_wait_done(p[i], long_ms())) {
			tl.lost++;
			remember("random round %ld: object %d: no live waiter got the signal given after "
				 "the deaths",
				 rt->rounds, i);
			ws_owner_died(a, p[i]->owner);
			if (!waiter_wait_done(p[i], long_ms())) {
				tl.hangs++;
				atomic_store(&p[i]->release, 1);
				pthread_detach(p[i]->thread);
				continue;
			}
		} else if (p[i]->rc != 0 && !(is_mutex(i) && p[i]->rc == -EOWNERDEAD)) {
			tl.broken++;
			remember("random round %ld: probe of object %d returned %d (%s)", rt->rounds, i,
				 p[i]->rc, errname(p[i]->rc));
		}
		if (is_mutex(i) && (p[i]->rc == 0 || p[i]->rc == -EOWNERDEAD))
			probe_ok(a, rt, ws_mutex_unlock(a, rs->h[i], p[i]->owner, NULL), "unlock", i);
		waiter_join(p[i]);
		free(p[i]);
	}
	if (ev_signaled(a, rs->h[EA0]) || ev_signaled(a, rs->h[EA1]) || sem_count(a, rs->h[S0]) ||
	    sem_count(a, rs->h[S1])) {
		tl.broken++;
		remember("random round %ld: a signal given once was received and also left behind",
			 rt->rounds);
	}
	return true;
}

static void random_round(ws_arena *a, struct rng *r, struct rtally *rt)
{
	_Atomic int stop = 0;
	struct survivor sv[SURVIVORS];
	pthread_t th[SURVIVORS];
	pid_t pid[VICTIMS];
	long external_at[VICTIMS];
	struct timespec start = ts_now(CLOCK_MONOTONIC);
	char report[256];
	int rc;

	rs->seed = rng_next(r) | (uint64_t)rng_next(r) << 32;
	memset(rs->rep, 0, sizeof rs->rep);
	for (int i = 0; i < SURVIVORS; i++) {
		sv[i] = (struct survivor){ .a = a, .owner = new_owner(), .stop = &stop,
					   .seed = rng_next(r) };
		th[i] = spawn(survivor_main, &sv[i]);
	}
	for (int v = 0; v < VICTIMS; v++) {
		rs->rep[v].fault_signal = SIGUSR2;
		external_at[v] = 1 + rng_below(r, 40);
		pid[v] = fork_child_fn(random_victim, (void *)(intptr_t)v);
	}
	for (int v = 0; v < VICTIMS; v++) {
		int status;
		long left = external_at[v] - ts_diff_ms(ts_now(CLOCK_MONOTONIC), start);
		bool ended = reap_child(pid[v], left > 0 ? left : 0, &status);
		char sbuf[64];

		if (!ended) {
			kill(pid[v], SIGKILL);
			ck_assert_int_eq(waitpid(pid[v], &status, 0), pid[v]);
			tl.external_kills++;
		} else if (rs->rep[v].site) {
			tl.point_kills++;
			add_site(rs->rep[v].site);
		} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
			tl.point_kills++; /* at a point, not recorded (TSan) */
		}
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
			tl.kills++;
		} else {
			tl.broken++;
			remember("random round %ld: victim ended with %s: %s", rt->rounds,
				 status_str(status, sbuf, sizeof sbuf), rs->complaint[v]);
		}
		if (rs->ndead < 512)
			rs->dead[rs->ndead++] = (uint32_t)pid[v];
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < SURVIVORS; i++) {
		join(th[i]);
		tl.hangs += sv[i].hangs;
		tl.broken += sv[i].unexpected;
		if (sv[i].hangs || sv[i].unexpected)
			remember("random round %ld: %s", rt->rounds, sv[i].why);
		if (sv[i].overshoot_max > rt->overshoot_max)
			rt->overshoot_max = sv[i].overshoot_max;
		rt->survivor_waits += sv[i].waits;
	}
	rc = ws_arena_check(a, report, sizeof report);
	if (rc) {
		tl.broken++;
		remember("random round %ld: ws_arena_check after the deaths: %d (%s) %s", rt->rounds,
			 rc, errname(rc), report);
	}
	/* A broken arena is replaced: later rounds test the deaths, not the debris. */
	if (rc || !probe(a, rt))
		rt->replace = true;
	else if ((rc = ws_arena_check(a, report, sizeof report)) != 0) {
		tl.broken++;
		rt->replace = true;
		remember("random round %ld: ws_arena_check after the probe: %d (%s) %s", rt->rounds,
			 rc, errname(rc), report);
	}
	rt->rounds++;
}

START_TEST(random_kills)
{
	const char *only = getenv("WINSYNC_FAULT_SCENARIO");

	if (only && strcmp(only, "random") != 0)
		return;
	long rounds = scaled(60, 3);
	struct rtally rt = { 0 };
	struct rng r;
	ws_arena *a = NULL;

	memset(&tl, 0, sizeof tl);
	rs = shared_alloc(sizeof(*rs));
	exe_base = base_of((void *)&record_site_and_die);
	rng_seed(&r, test_seed("random kills"));
	for (long i = 0; i < rounds; i++) {
		/* A new arena every 10 rounds: most rounds inherit what earlier deaths left. */
		if (i % 10 == 0 || rt.replace) {
			rt.replace = false;
			if (a)
				drop_arena(a, rs->name);
			a = named_arena(rs->name, sizeof rs->name, "random", 64);
			rs->h[EA0] = mk_event(a, false, false);
			rs->h[EA1] = mk_event(a, false, true);
			rs->h[EM] = mk_event(a, true, false);
			rs->h[S0] = mk_sem(a, 0, 4);
			rs->h[S1] = mk_sem(a, 2, 4);
			rs->h[M0] = mk_mutex(a, 0, 0);
			rs->h[M1] = mk_mutex(a, 0, 0);
		}
		random_round(a, &r, &rt);
	}
	drop_arena(a, rs->name);
	printf("random kills: %ld rounds, %ld survivor waits (latest %ld ms past a deadline), "
	       "%ld probe signals\n",
	       rt.rounds, rt.survivor_waits, rt.overshoot_max, rt.probes);
	print_tally("random kills");
	assert_tally();
	shared_free(rs, sizeof(*rs));
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("fault");
	TCase *tc = tcase_create("fault");

	tcase_set_timeout(tc, 280);
	tcase_add_test(tc, random_kills);
	tcase_add_loop_test(tc, chosen_points, 0, (int)(sizeof scenarios / sizeof scenarios[0]));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int ret;

	total = mmap(NULL, sizeof(*total), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (total == MAP_FAILED)
		return 1;
	ret = harness_run(make_suite());
	printf("fault injection: %ld kills (%ld at fault points, %ld at random times), "
	       "%ld hangs (%ld waiters stranded: %ld claimed but not woken, %ld owed), "
	       "%ld lost signals, %ld broken invariants, %d distinct fault points\n",
	       atomic_load(&total->kills), atomic_load(&total->point_kills),
	       atomic_load(&total->external_kills), atomic_load(&total->hangs),
	       atomic_load(&total->stranded_claimed) + atomic_load(&total->stranded_owed),
	       atomic_load(&total->stranded_claimed), atomic_load(&total->stranded_owed),
	       atomic_load(&total->lost), atomic_load(&total->broken), total->nsites);
	return ret;
}
