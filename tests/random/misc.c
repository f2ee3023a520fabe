/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The calls that are not about one object: arenas (private, named, a second
 * pointer to the shared one, flags, names good and bad), ws_arena_check,
 * ws_stats_read, ws_futex_backend, and suspension (ws_defer_suspend from a
 * signal handler, the hook, ws_in_critical_section).
 */
#include "rt.h"

#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <ucontext.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * Suspension, per thread: a deferral is pending until the hook runs (several
 * deferrals in one critical section may share one hook), and anything
 * inconsistent is counted.
 */
static _Thread_local uint32_t t_pending, t_deferred, t_immediate, t_hooks, t_spurious, t_mismatch;
static _Thread_local uint32_t t_hook_in_cs;
static _Thread_local unsigned t_seed;

/*
 * The bodies of the public calls: a suspension that lands in one is held
 * longer.  Their own code is mostly the uncontended paths (the locked ones
 * and the spinning are in internal functions), where the header allows a
 * suspension at any instruction.
 */
#define CALLS_KEPT 32
static struct { uintptr_t from, to; } bodies[CALLS_KEPT];
static int nbodies;

static void add_body(void *fn)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;

	if (nbodies < CALLS_KEPT && dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
	    sym->st_size) {
		bodies[nbodies].from = (uintptr_t)info.dli_saddr;
		bodies[nbodies].to = (uintptr_t)info.dli_saddr + sym->st_size;
		nbodies++;
	}
}

static void find_bodies(void)
{
	void *const fns[] = {
		(void *)ws_sem_create, (void *)ws_sem_release, (void *)ws_sem_read,
		(void *)ws_mutex_create, (void *)ws_mutex_unlock, (void *)ws_mutex_kill,
		(void *)ws_mutex_read, (void *)ws_owner_died, (void *)ws_event_create,
		(void *)ws_event_set, (void *)ws_event_reset, (void *)ws_event_pulse,
		(void *)ws_event_read, (void *)ws_close, (void *)ws_wait_any, (void *)ws_wait_all,
		(void *)ws_arena_check,
	};

	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
		add_body(fns[i]);
}

static bool in_call_body(const void *uctx)
{
	const ucontext_t *uc = uctx;
	uintptr_t pc;

#if defined(__x86_64__)
	pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	pc = (uintptr_t)uc->uc_mcontext.pc;
#else
	(void)uc;
	return false;
#endif
	for (int i = 0; i < nbodies; i++)
		if (pc >= bodies[i].from && pc < bodies[i].to)
			return true;
	return false;
}

/*
 * A suspension's length: a moment, or, when it finds the thread inside a
 * call (on a path without a critical section: those defer it), long enough
 * for others to do much, as when a host suspends a thread in the middle of
 * an uncontended set or read.
 */
static long suspension_us(bool inside_call)
{
	unsigned r = (unsigned)rand_r(&t_seed);

	if (inside_call)
		return 500 + (long)(r >> 8) % 2500;
	return (long)(r >> 8) % 20;
}

static void pause_us(long us)
{
	struct timespec t = { 0, us * 1000 };

	nanosleep(&t, NULL);
}

static void on_suspend(int sig, siginfo_t *info, void *uctx)
{
	int saved = errno;
	bool inside = ws_in_critical_section();
	bool deferred = ws_defer_suspend();

	(void)sig;
	(void)info;
	if (deferred != inside)
		t_mismatch++;
	if (deferred) {
		t_deferred++;
		t_pending = 1;
	} else {
		t_immediate++;
		pause_us(suspension_us(in_call_body(uctx))); /* holding nothing, as promised */
	}
	errno = saved;
}

static void suspend_hook(void)
{
	if (ws_in_critical_section())
		t_hook_in_cs++;
	if (!t_pending)
		t_spurious++;
	t_pending = 0;
	t_hooks++;
	pause_us(suspension_us(false));
}

void rt_suspend_setup(void)
{
	struct sigaction sa;

	find_bodies();
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_suspend;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: waits must not end early on EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	ws_set_suspend_hook(suspend_hook);
}

void rt_signal_thread(pid_t pid, pid_t tid)
{
	syscall(SYS_tgkill, pid, tid, SIGUSR1);
}

/* Between calls: every deferred suspension has run its hook, each at the right time. */
void rt_suspend_verify(struct rt_ctx *c)
{
	if (t_pending || t_spurious || t_mismatch || t_hook_in_cs) {
		rt_fail(c, "suspension: ws_defer_suspend and the hook disagree",
			"a deferral without its hook after the call: %u; hooks without a deferral %u "
			"(deferred %u, hooks %u); ws_defer_suspend != ws_in_critical_section %u times; "
			"hook inside a critical section %u times",
			t_pending, t_spurious, t_deferred, t_hooks, t_mismatch, t_hook_in_cs);
		t_pending = t_spurious = t_mismatch = t_hook_in_cs = 0;
	}
}

int rt_check_arena(struct rt_ctx *c, ws_arena *a, const char *when)
{
	char report[512], line[700];
	struct rt_oprec *op = rt_begin(c, C_ARENA_CHECK);
	int rc;

	report[0] = 0;
	rc = ws_arena_check(a, report, sizeof report);
	rt_end(c, op, rc);
	if (rc == 0 && !when)
		return 0;
	snprintf(line, sizeof line, "ws_arena_check (%s): %s%s%s\n", when ? when : "", rt_errname(rc),
		 report[0] ? ": " : "", report);
	if (write(2, line, strlen(line)) < 0)
		return rc;
	return rc;
}

/* The report without its numbers: one kind per broken invariant. */
static void kind_of_report(const char *report, char *kind, size_t size)
{
	size_t n = snprintf(kind, size, "ws_arena_check: ");

	for (const char *p = report; *p && n + 1 < size; p++) {
		if (*p >= '0' && *p <= '9') {
			if (n && kind[n - 1] != '#')
				kind[n++] = '#';
			continue;
		}
		kind[n++] = *p;
	}
	kind[n] = 0;
}

static void op_check(struct rt_ctx *c)
{
	char report[512], kind[160];
	size_t size = rt_pct(&c->rng, 10) ? rt_below(&c->rng, 16) : sizeof report;
	bool null_report = rt_pct(&c->rng, 5), null_arena = rt_bad(c);
	struct rt_oprec *op;
	int rc;

	rt_pick_arena(c);
	memset(report, 'x', sizeof report);
	op = rt_begin(c, C_ARENA_CHECK);
	op->a[0] = (uint32_t)size;
	op->a[5] = null_arena | null_report << 1;
	rc = ws_arena_check(null_arena ? NULL : c->cur, null_report ? NULL : report, size);
	rt_end(c, op, rc);
	if (rc == -EUCLEAN) {
		report[sizeof report - 1] = 0;
		if (size < sizeof report || null_report) {
			/* Not told all: ask again with room for the report. */
			ws_arena_check(c->arena, report, sizeof report);
		}
		if (report[0])
			kind_of_report(report, kind, sizeof kind);
		else
			snprintf(kind, sizeof kind, "ws_arena_check returned -EUCLEAN without a report");
		rt_fail(c, kind, "ws_arena_check: %s", report);
		return;
	}
	rt_expect(c, op, rc, null_arena ? B(RC_EINVAL) : B(RC_OK) | (c->cur == c->nb ? B(RC_EAGAIN) : 0),
		  null_arena ? "NULL arena" : "check");
	if (!null_report && size > 0 && rc == 0 && memchr(report, 0, size) == NULL)
		rt_fail(c, "ws_arena_check: report not terminated within size", "size %zu", size);
}

static void op_stats(struct rt_ctx *c)
{
	struct ws_stats s;
	struct rt_oprec *op = rt_begin(c, C_STATS_READ);

	ws_stats_read(&s);
	rt_end(c, op, 0);
	if (c->have_stats &&
	    (s.futex_waits < c->stats.futex_waits || s.futex_wakes < c->stats.futex_wakes ||
	     s.lock_sleeps < c->stats.lock_sleeps || s.locked_calls < c->stats.locked_calls ||
	     s.recoveries < c->stats.recoveries || s.reaped < c->stats.reaped))
		rt_fail(c, "ws_stats_read: a counter went down", "locked_calls %llu -> %llu",
			(unsigned long long)c->stats.locked_calls, (unsigned long long)s.locked_calls);
	c->stats = s;
	c->have_stats = true;
}

static void op_suspend_calls(struct rt_ctx *c)
{
	struct rt_oprec *op;
	const char *b;
	bool r;

	switch (rt_below(&c->rng, 4)) {
	case 0:
		op = rt_begin(c, C_IN_CRITICAL);
		r = ws_in_critical_section();
		rt_end(c, op, r);
		rt_expect(c, op, r, B(RC_OK), "between calls");
		break;
	case 1:
		op = rt_begin(c, C_DEFER_SUSPEND);
		r = ws_defer_suspend();
		rt_end(c, op, r);
		rt_expect(c, op, r, B(RC_OK), "between calls");
		break;
	case 2:
		op = rt_begin(c, C_SET_SUSPEND_HOOK);
		ws_set_suspend_hook(suspend_hook);
		rt_end(c, op, 0);
		break;
	default:
		op = rt_begin(c, C_FUTEX_BACKEND);
		b = ws_futex_backend();
		rt_end(c, op, 0);
		if (!b || (c->backend && strcmp(b, c->backend) != 0) ||
		    (strcmp(b, "futex_waitv") != 0 && strcmp(b, "futex_wait_multiple") != 0))
			rt_fail(c, "ws_futex_backend: not one backend", "%s then %s",
				c->backend ? c->backend : "(none)", b ? b : "NULL");
		c->backend = b;
		break;
	}
}

static const char *bad_name(struct rt_ctx *c)
{
	static const char *const names[] = {
		"", "a b", "../x", "x/y", "caf\xc3\xa9",
		"x123456789x123456789x123456789x123456789x123456789x123456789x1234",
	};

	return names[rt_below(&c->rng, sizeof names / sizeof names[0])];
}

/* A private or named arena of our own: made, used a little, closed. */
static void op_arena_life(struct rt_ctx *c)
{
	ws_arena *a = NULL, *b = NULL;
	char name[64];
	struct rt_oprec *op;
	ws_handle ev = 0;
	uint32_t idx = 0;
	bool named = rt_pct(&c->rng, 40);
	uint32_t cap = rt_pct(&c->rng, 50) ? 1 : rt_range(&c->rng, 2, 200);
	int rc;

	/* Under the run's prefix, so that the end of the run removes it even
	 * when this actor is killed before it unlinks it. */
	snprintf(name, sizeof name, "%.40s-%u-%u", rt_shm->arena_name, c->me->serial,
		 rt_u32(&c->rng) & 0xffff);
	op = rt_begin(c, C_ARENA_CREATE);
	op->a[0] = cap;
	op->a[1] = named;
	rc = ws_arena_create(named ? name : NULL, cap, &a);
	rt_end(c, op, rc);
	if (!rt_expect(c, op, rc, B(RC_OK), "create an arena") || rc)
		return;
	if (named) {
		op = rt_begin(c, C_ARENA_CREATE);
		op->a[1] = 1;
		rc = ws_arena_create(name, cap, &b);
		rt_end(c, op, rc);
		rt_expect(c, op, rc, B(RC_EEXIST), "create an arena that exists");
		op = rt_begin(c, C_ARENA_OPEN);
		op->a[1] = 1;
		rc = ws_arena_open(name, &b);
		rt_end(c, op, rc);
		if (!rt_expect(c, op, rc, B(RC_OK), "open an arena just made"))
			b = NULL;
	}
	op = rt_begin(c, C_EVENT_CREATE);
	rc = ws_event_create(a, false, true, &ev);
	rt_end(c, op, rc);
	if (rt_expect(c, op, rc, B(RC_OK), "event in a fresh arena")) {
		struct timespec past = { 0, 0 };
		struct ws_wait w = { .objects = &ev, .count = 1, .owner = c->me->owners[0],
				     .deadline = &past };

		op = rt_begin(c, C_WAIT_ANY);
		op->a[0] = 1;
		rc = ws_wait_any(b ? b : a, &w, &idx);
		rt_end(c, op, rc);
		rt_expect(c, op, rc, B(RC_OK), "poll of a signaled event in a fresh arena");
		/* A second event with a capacity of 1: full. */
		if (cap == 1) {
			ws_handle ev2;

			op = rt_begin(c, C_EVENT_CREATE);
			rc = ws_event_create(a, false, false, &ev2);
			rt_end(c, op, rc);
			rt_expect(c, op, rc, B(RC_ENOSPC), "second object in an arena of capacity 1");
		}
	}
	if (rt_check_arena(c, a, NULL))
		rt_fail(c, "ws_arena_check: a fresh arena is inconsistent", "capacity %u", cap);
	if (b) {
		op = rt_begin(c, C_ARENA_CLOSE);
		ws_arena_close(b);
		rt_end(c, op, 0);
	}
	op = rt_begin(c, C_ARENA_CLOSE);
	ws_arena_close(a);
	rt_end(c, op, 0);
	if (named) {
		op = rt_begin(c, C_ARENA_UNLINK);
		op->a[1] = 1;
		rc = ws_arena_unlink(name);
		rt_end(c, op, rc);
		rt_expect(c, op, rc, B(RC_OK), "unlink an arena");
		op = rt_begin(c, C_ARENA_UNLINK);
		rc = ws_arena_unlink(name);
		rt_end(c, op, rc);
		rt_expect(c, op, rc, B(RC_ENOENT), "unlink an arena twice");
		op = rt_begin(c, C_ARENA_OPEN);
		rc = ws_arena_open(name, &b);
		rt_end(c, op, rc);
		rt_expect(c, op, rc, B(RC_ENOENT), "open an arena unlinked");
	}
}

static void op_arena_bad(struct rt_ctx *c)
{
	ws_arena *a = NULL;
	struct rt_oprec *op;
	int rc;

	switch (rt_below(&c->rng, 6)) {
	case 0:
		op = rt_begin(c, C_ARENA_CREATE);
		op->a[0] = WS_MAX_CAPACITY + 1 + rt_below(&c->rng, 100);
		rc = ws_arena_create(NULL, op->a[0], &a);
		rt_end(c, op, rc);
		rt_expect(c, op, rc, B(RC_EINVAL), "capacity above WS_MAX_CAPACITY");
		break;
	case 1:
		op = rt_begin(c, C_ARENA_CREATE);
		op->a[5] = 2;
		rc = ws_arena_create(NULL, 16, NULL);
		rt_end(c, op, rc);
		rt_expect(c, op, rc, B(RC_EINVAL), "NULL arena pointer");
		break;
	case 2:
		op = rt_begin(c, C_ARENA_CREATE);
		op->a[1] = 9;
		rc = ws_arena_create(bad_name(c), 16, &a);
		rt_end(c, op, rc);
		rt_expect(c, op, rc, B(RC_EINVAL), "a bad arena name");
		break;
	case 3:
		op = rt_begin(c, C_ARENA_OPEN);
		op->a[1] = 9;
		rc = rt_pct(&c->rng, 30) ? ws_arena_open(NULL, &a) :
		     rt_pct(&c->rng, 50) ? ws_arena_open(rt_shm->arena_name, NULL) :
					   ws_arena_open(bad_name(c), &a);
		rt_end(c, op, rc);
		rt_expect(c, op, rc, B(RC_EINVAL), "a bad arena name or NULL pointer");
		break;
	case 4:
		op = rt_begin(c, C_ARENA_UNLINK);
		op->a[1] = 9;
		rc = ws_arena_unlink(rt_pct(&c->rng, 30) ? NULL : bad_name(c));
		rt_end(c, op, rc);
		rt_expect(c, op, rc, B(RC_EINVAL), "a bad arena name");
		break;
	default:
		op = rt_begin(c, C_ARENA_SET_FLAGS);
		/* Past WS_ARENA_NONBLOCK and WS_ARENA_SPIN: unknown. */
		op->a[0] = rt_pct(&c->rng, 50) ? WS_ARENA_NONBLOCK : 4u << rt_below(&c->rng, 29);
		op->a[5] = 1;
		rc = ws_arena_set_flags(rt_pct(&c->rng, 50) || !c->nb ? NULL : c->nb,
					op->a[0] == WS_ARENA_NONBLOCK ? 4 : op->a[0]);
		rt_end(c, op, rc);
		rt_expect(c, op, rc, B(RC_EINVAL), "NULL arena or unknown flags");
		break;
	}
}

/* Another pointer to the shared arena, in this thread only, used and closed. */
static void op_second_pointer(struct rt_ctx *c)
{
	ws_arena *a = NULL;
	struct rt_oprec *op = rt_begin(c, C_ARENA_OPEN);
	uint32_t x, y;
	int rc;

	rc = ws_arena_open(rt_shm->arena_name, &a);
	rt_end(c, op, rc);
	if (!rt_expect(c, op, rc, B(RC_OK), "open the shared arena again") || rc)
		return;
	if (rt_pct(&c->rng, 50)) {
		op = rt_begin(c, C_ARENA_SET_FLAGS);
		op->a[0] = WS_ARENA_NONBLOCK;
		rc = ws_arena_set_flags(a, WS_ARENA_NONBLOCK);
		rt_end(c, op, rc);
		rt_expect(c, op, rc, B(RC_OK), "set NONBLOCK");
	}
	for (uint32_t i = 0; i < c->nown; i++) {
		if (c->own[i].type != RT_SEM)
			continue;
		op = rt_begin(c, C_SEM_READ);
		op->a[0] = c->own[i].h;
		rc = ws_sem_read(a, c->own[i].h, &x, &y);
		rt_end(c, op, rc);
		if (rt_expect(c, op, rc, B(RC_OK) | B(RC_EAGAIN), "read through a second pointer") &&
		    rc == 0 && (x != c->own[i].count || y != c->own[i].max))
			rt_fail(c, "ws_sem_read: own semaphore differs from its model",
				"through a second pointer: %u/%u, model %u/%u", x, y,
				c->own[i].count, c->own[i].max);
		break;
	}
	op = rt_begin(c, C_ARENA_CLOSE);
	ws_arena_close(a);
	rt_end(c, op, 0);
}

void rt_misc_op(struct rt_ctx *c, enum rt_kind kind)
{
	switch (kind) {
	case K_CHECK:
		op_check(c);
		return;
	case K_ARENA:
		/* Children that may lose a thread keep out of malloc-heavy calls. */
		if (rt_shm->mode.kills && c->nb == NULL && getpid() != (pid_t)rt_shm->parent_pid)
			return;
		switch (rt_below(&c->rng, 10)) {
		case 0: case 1: op_arena_life(c); return;
		case 2: case 3: case 4: op_second_pointer(c); return;
		default: op_arena_bad(c); return;
		}
	default:
		if (rt_pct(&c->rng, 40))
			op_stats(c);
		else
			op_suspend_calls(c);
		return;
	}
}
