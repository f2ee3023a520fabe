/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the tester records and says: each actor's ring of its last
 * operations, the histogram of return values per call, violations (one full
 * report per kind, counted after), and the summary of a run.
 */
#include "rt.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct rt_shm *rt_shm;
struct rt_pool_obj *rt_pool;
size_t rt_shm_size;

static const char *const call_names[RT_CALLS] = {
	[C_ARENA_CREATE] = "ws_arena_create", [C_ARENA_OPEN] = "ws_arena_open",
	[C_ARENA_CLOSE] = "ws_arena_close", [C_ARENA_UNLINK] = "ws_arena_unlink",
	[C_ARENA_SET_FLAGS] = "ws_arena_set_flags", [C_SEM_CREATE] = "ws_sem_create",
	[C_SEM_RELEASE] = "ws_sem_release", [C_SEM_READ] = "ws_sem_read",
	[C_MUTEX_CREATE] = "ws_mutex_create", [C_MUTEX_UNLOCK] = "ws_mutex_unlock",
	[C_MUTEX_KILL] = "ws_mutex_kill", [C_MUTEX_READ] = "ws_mutex_read",
	[C_OWNER_DIED] = "ws_owner_died", [C_EVENT_CREATE] = "ws_event_create",
	[C_EVENT_SET] = "ws_event_set", [C_EVENT_RESET] = "ws_event_reset",
	[C_EVENT_PULSE] = "ws_event_pulse", [C_EVENT_READ] = "ws_event_read",
	[C_CLOSE] = "ws_close", [C_WAIT_ANY] = "ws_wait_any", [C_WAIT_ALL] = "ws_wait_all",
	[C_DEFER_SUSPEND] = "ws_defer_suspend", [C_SET_SUSPEND_HOOK] = "ws_set_suspend_hook",
	[C_IN_CRITICAL] = "ws_in_critical_section", [C_ARENA_CHECK] = "ws_arena_check",
	[C_STATS_READ] = "ws_stats_read", [C_FUTEX_BACKEND] = "ws_futex_backend",
};

static const char *const rc_names[RT_RCS] = {
	[RC_OK] = "0", [RC_TRUE] = "true", [RC_EINVAL] = "-EINVAL", [RC_EBADF] = "-EBADF",
	[RC_ENOSPC] = "-ENOSPC", [RC_EOVERFLOW] = "-EOVERFLOW", [RC_EPERM] = "-EPERM",
	[RC_EOWNERDEAD] = "-EOWNERDEAD", [RC_ETIMEDOUT] = "-ETIMEDOUT", [RC_EAGAIN] = "-EAGAIN",
	[RC_EUSERS] = "-EUSERS", [RC_ECANCELED] = "-ECANCELED", [RC_EUCLEAN] = "-EUCLEAN",
	[RC_ENOENT] = "-ENOENT", [RC_EEXIST] = "-EEXIST", [RC_EACCES] = "-EACCES",
	[RC_OTHER] = "other",
};

const char *rt_call_name(enum rt_call call)
{
	return call < RT_CALLS ? call_names[call] : "?";
}

const char *rt_rc_name(enum rt_rc r)
{
	return r < RT_RCS ? rc_names[r] : "?";
}

enum rt_rc rt_bucket(int rc)
{
	switch (rc) {
	case 0: return RC_OK;
	case 1: return RC_TRUE;
	case -EINVAL: return RC_EINVAL;
	case -EBADF: return RC_EBADF;
	case -ENOSPC: return RC_ENOSPC;
	case -EOVERFLOW: return RC_EOVERFLOW;
	case -EPERM: return RC_EPERM;
	case -EOWNERDEAD: return RC_EOWNERDEAD;
	case -ETIMEDOUT: return RC_ETIMEDOUT;
	case -EAGAIN: return RC_EAGAIN;
	case -EUSERS: return RC_EUSERS;
	case -ECANCELED: return RC_ECANCELED;
	case -EUCLEAN: return RC_EUCLEAN;
	case -ENOENT: return RC_ENOENT;
	case -EEXIST: return RC_EEXIST;
	case -EACCES: return RC_EACCES;
	default: return RC_OTHER;
	}
}

const char *rt_errname(int rc)
{
	static _Thread_local char buf[24];
	enum rt_rc r = rt_bucket(rc);

	if (r != RC_OTHER)
		return rc_names[r];
	snprintf(buf, sizeof buf, "%d", rc);
	return buf;
}

/*
 * What the man pages list per call (an arena we never corrupt: -EUCLEAN is
 * never right; fewer than WS_MAX_THREADS threads: neither is -EUSERS).
 */
uint32_t rt_documented(enum rt_call call)
{
	const uint32_t handle = B(RC_OK) | B(RC_EINVAL) | B(RC_EBADF) | B(RC_EAGAIN);

	switch (call) {
	case C_ARENA_CREATE: return B(RC_OK) | B(RC_EINVAL) | B(RC_EEXIST);
	case C_ARENA_OPEN: return B(RC_OK) | B(RC_EINVAL) | B(RC_ENOENT) | B(RC_EACCES);
	case C_ARENA_UNLINK: return B(RC_OK) | B(RC_EINVAL) | B(RC_ENOENT);
	case C_ARENA_SET_FLAGS: return B(RC_OK) | B(RC_EINVAL);
	case C_SEM_CREATE: case C_MUTEX_CREATE: case C_EVENT_CREATE:
		return B(RC_OK) | B(RC_EINVAL) | B(RC_ENOSPC) | B(RC_EAGAIN);
	case C_SEM_RELEASE: return handle | B(RC_EOVERFLOW);
	case C_MUTEX_UNLOCK: case C_MUTEX_KILL: return handle | B(RC_EPERM);
	case C_MUTEX_READ: return handle | B(RC_EOWNERDEAD);
	case C_OWNER_DIED: return B(RC_OK) | B(RC_EINVAL) | B(RC_EAGAIN);
	case C_SEM_READ: case C_EVENT_SET: case C_EVENT_RESET: case C_EVENT_PULSE:
	case C_EVENT_READ: case C_CLOSE:
		return handle;
	case C_WAIT_ANY: case C_WAIT_ALL:
		return handle | B(RC_EOWNERDEAD) | B(RC_ETIMEDOUT) | B(RC_ECANCELED);
	case C_ARENA_CHECK: return B(RC_OK) | B(RC_EINVAL) | B(RC_EAGAIN);
	case C_DEFER_SUSPEND: case C_IN_CRITICAL: return B(RC_OK) | B(RC_TRUE);
	default: return B(RC_OK);
	}
}

uint64_t rt_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

double rt_elapsed(void)
{
	return (double)(rt_now_ns() - rt_shm->start_ns) / 1e9;
}

/*
 * The calling thread's time on a CPU plus its time waiting for one (the
 * kernel's schedstat), UINT64_MAX if unknown: what is left of a call's length
 * is time asleep, which a loaded machine does not add to.
 */
static uint64_t awake_ns(struct rt_ctx *c)
{
	unsigned long long run, delay;
	char buf[96];
	ssize_t n;

	if (!c->sched_fd)
		c->sched_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC) + 1;
	if (c->sched_fd <= 0)
		return UINT64_MAX;
	n = pread(c->sched_fd - 1, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return UINT64_MAX;
	buf[n] = 0;
	if (sscanf(buf, "%llu %llu", &run, &delay) != 2)
		return UINT64_MAX;
	return run + delay;
}

struct rt_oprec *rt_begin(struct rt_ctx *c, enum rt_call call)
{
	struct rt_actor *a = c->me;
	uint32_t n = atomic_load_explicit(&a->ring_next, memory_order_relaxed);
	struct rt_oprec *op = &a->ring[n % RT_RING];

	__atomic_store_n(&op->rc, RT_PENDING, __ATOMIC_RELAXED);
	op->call = (uint16_t)call;
	op->nb = c->nb && c->cur == c->nb;
	op->nobj = 0;
	op->returned = 0;
	op->stop_epoch = atomic_load_explicit(&rt_shm->stop_epoch, memory_order_relaxed);
	memset(op->a, 0, sizeof op->a);
	memset(op->out, 0, sizeof op->out);
	__atomic_store_n(&op->timeout_us, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&op->t_ns, rt_now_ns() - rt_shm->start_ns, __ATOMIC_RELAXED);
	if (op->nb)
		c->awake0 = awake_ns(c);
	atomic_store_explicit(&a->ring_next, n + 1, memory_order_release);
	return op;
}

/*
 * Through a NONBLOCK pointer no call sleeps on another thread's critical
 * section: none that ran while a child was stopped (for up to 1.5 s) sleeps
 * much longer than its own deadline.  Time on a CPU or waiting for one is not
 * counted (a loaded machine adds seconds of it); where the kernel does not
 * say, the whole length is, and calls that met no stop are not judged.
 */
#define NONBLOCK_SLACK_NS 400000000ull

static void check_nonblock_time(struct rt_ctx *c, const struct rt_oprec *op, int rc);

void rt_returned(struct rt_ctx *c, struct rt_oprec *op, int rc)
{
	if (op->returned)
		return;
	op->result = rc;
	op->returned = 1;
	if (op->nb)
		check_nonblock_time(c, op, rc);
}

static void check_nonblock_time(struct rt_ctx *c, const struct rt_oprec *op, int rc)
{
	uint64_t took = rt_now_ns() - rt_shm->start_ns - op->t_ns, limit = NONBLOCK_SLACK_NS;
	uint64_t awake = awake_ns(c), asleep = took;
	int32_t timeout = op->timeout_us;

	if (awake != UINT64_MAX && c->awake0 != UINT64_MAX)
		asleep = awake - c->awake0 < took ? took - (awake - c->awake0) : 0;

	if (op->call == C_WAIT_ANY || op->call == C_WAIT_ALL) {
		if (timeout == -1)
			return; /* no deadline */
		if (timeout > 0)
			limit += (uint64_t)timeout * 1000u;
	}
	if (asleep > limit && (op->stop_epoch != atomic_load(&rt_shm->stop_epoch) ||
			     atomic_load(&rt_shm->stopped_children))) {
		char kind[120];

		snprintf(kind, sizeof kind, "%s through a NONBLOCK pointer slept past its deadline",
			 rt_call_name((enum rt_call)op->call));
		rt_fail(c, kind, "%s returned %s after %.3f s, %.3f s of it asleep (deadline %.3f s "
			"after its start) while a child process was stopped",
			rt_call_name((enum rt_call)op->call), rt_errname(rc), (double)took / 1e9,
			(double)asleep / 1e9, timeout > 0 ? timeout / 1e6 : 0.0);
	}
}

void rt_end(struct rt_ctx *c, struct rt_oprec *op, int rc)
{
	_Atomic uint64_t *h = &c->me->hist[op->call][rt_bucket(rc)];

	rt_returned(c, op, rc);

	atomic_store_explicit(h, atomic_load_explicit(h, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&c->me->ops, atomic_load_explicit(&c->me->ops, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	__atomic_store_n(&op->rc, rc, __ATOMIC_RELEASE);
}

/* A lock between processes: the holder's pid; one that died holding it loses it after 2 s. */
void rt_lock(_Atomic int32_t *lock)
{
	int32_t me = (int32_t)getpid(), seen = 0;
	uint64_t since = 0;

	for (;;) {
		int32_t expected = 0;

		if (atomic_compare_exchange_weak(lock, &expected, me))
			return;
		if (expected != seen) {
			seen = expected;
			since = rt_now_ns();
		} else if (rt_now_ns() - since > 2000000000ull &&
			   atomic_compare_exchange_strong(lock, &expected, me)) {
			return;
		}
		usleep(50);
	}
}

void rt_unlock(_Atomic int32_t *lock)
{
	atomic_store(lock, 0);
}

static void fd_write(int fd, const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(fd, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static int fmt_handles(char *buf, size_t size, const ws_handle *h, uint32_t n)
{
	int len = 0;

	for (uint32_t i = 0; i < n && (size_t)len + 12 < size; i++)
		len += snprintf(buf + len, size - (size_t)len, "%s%x", i ? "," : "", h[i]);
	return len;
}

void rt_format_op(const struct rt_oprec *op, char *buf, size_t size)
{
	char args[900], res[96];
	const uint32_t *a = op->a;
	int n = 0;

	args[0] = 0;
	switch (op->call) {
	case C_WAIT_ANY: case C_WAIT_ALL:
		n = snprintf(args, sizeof args, "count=%u owner=%#x alert=%#x flags=%#x nulls=%#x "
			     "timeout=%dus objs=[", a[0], a[1], a[2], a[3], a[5], op->timeout_us);
		n += fmt_handles(args + n, sizeof args - (size_t)n, op->objs, op->nobj);
		snprintf(args + n, sizeof args - (size_t)n, "]");
		break;
	case C_SEM_CREATE: case C_MUTEX_CREATE: case C_EVENT_CREATE:
		snprintf(args, sizeof args, "%u, %u, nulls=%#x", a[0], a[1], a[5]);
		break;
	case C_ARENA_CREATE: case C_ARENA_OPEN: case C_ARENA_UNLINK: case C_ARENA_SET_FLAGS:
		snprintf(args, sizeof args, "value=%#x name-kind=%u nulls=%#x", a[0], a[1], a[5]);
		break;
	default:
		snprintf(args, sizeof args, "%#x, %#x, %#x, nulls=%#x", a[0], a[1], a[2], a[5]);
		break;
	}
	if (op->rc == RT_PENDING && op->returned)
		snprintf(res, sizeof res, "%s [out %#x %#x %#x] (being checked)", rt_errname(op->result),
			 op->out[0], op->out[1], op->out[2]);
	else if (op->rc == RT_PENDING)
		snprintf(res, sizeof res, "(running)");
	else
		snprintf(res, sizeof res, "%s [out %#x %#x %#x]", rt_errname(op->rc), op->out[0],
			 op->out[1], op->out[2]);
	snprintf(buf, size, "  +%.6f %s%s(%s) -> %s\n", (double)op->t_ns / 1e9,
		 op->nb ? "(nonblock) " : "", rt_call_name(op->call), args, res);
}

void rt_print_ring(const struct rt_actor *a, int fd)
{
	uint32_t next = atomic_load(&a->ring_next), from = next > RT_RING ? next - RT_RING : 0;
	char line[1200];

	snprintf(line, sizeof line, "last operations of actor serial %u (pid %d, tid %d), oldest first:\n",
		 a->serial, (int)a->pid, (int)atomic_load(&a->tid));
	fd_write(fd, line);
	for (uint32_t i = from; i < next; i++) {
		rt_format_op(&a->ring[i % RT_RING], line, sizeof line);
		fd_write(fd, line);
	}
}

/* The kind's entry, created if new: true if this is its first occurrence. */
static bool count_kind(const char *kind, int actor)
{
	uint32_t n;
	bool first = false;

	rt_lock(&rt_shm->kinds_lock);
	n = atomic_load(&rt_shm->nkinds);
	for (uint32_t i = 0; i < n; i++) {
		if (strcmp(rt_shm->kinds[i].text, kind) == 0) {
			atomic_fetch_add(&rt_shm->kinds[i].count, 1);
			rt_unlock(&rt_shm->kinds_lock);
			return false;
		}
	}
	if (n < RT_KINDS) {
		struct rt_failure_kind *k = &rt_shm->kinds[n];

		strncpy(k->text, kind, sizeof k->text - 1);
		k->text[sizeof k->text - 1] = 0;
		atomic_store(&k->count, 1);
		k->first_s = rt_elapsed();
		k->first_actor = actor;
		atomic_store(&rt_shm->nkinds, n + 1);
		first = true;
	}
	rt_unlock(&rt_shm->kinds_lock);
	return first;
}

void rt_fail(struct rt_ctx *c, const char *kind, const char *fmt, ...)
{
	char detail[1024], head[2048];
	va_list ap;
	bool first;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	atomic_fetch_add(&rt_shm->violations, 1);
	if (c)
		c->resync = true;
	first = count_kind(kind, c ? (int)c->me->serial : -1);
	if (!rt_shm->keep_going)
		atomic_store(&rt_shm->stop, 1);
	if (!first)
		return;
	rt_lock(&rt_shm->print_lock);
	snprintf(head, sizeof head,
		 "\n==== VIOLATION: %s\nseed %llu, mode %s, at %.3f s, actor serial %d (pid %d)\n"
		 "detail: %s\nreproduce: %s\n",
		 kind, (unsigned long long)rt_shm->seed, rt_shm->mode.name, rt_elapsed(),
		 c ? (int)c->me->serial : -1, (int)getpid(), detail, rt_shm->command);
	fd_write(2, head);
	if (c) {
		rt_print_ring(c->me, 2);
		rt_check_arena(c, c->arena, "at the violation");
	}
	fd_write(2, "====\n");
	rt_unlock(&rt_shm->print_lock);
}

bool rt_expect(struct rt_ctx *c, struct rt_oprec *op, int rc, uint32_t allowed, const char *what)
{
	enum rt_rc r = rt_bucket(rc);
	char kind[512], set[200];
	int n = 0;

	if (allowed & B(r))
		return true;
	set[0] = 0;
	for (int i = 0; i < RT_RCS; i++)
		if (allowed & B(i))
			n += snprintf(set + n, sizeof set - (size_t)n, "%s%s", n ? "|" : "", rc_names[i]);
	if (!(rt_documented((enum rt_call)op->call) & B(r)))
		snprintf(kind, sizeof kind, "%s returned %s (not a documented result here)",
			 rt_call_name((enum rt_call)op->call), rt_errname(rc));
	else
		snprintf(kind, sizeof kind, "%s returned %s where %s was due (%s)",
			 rt_call_name((enum rt_call)op->call), rt_errname(rc), set, what);
	rt_fail(c, kind, "%s: got %s, allowed %s", what, rt_errname(rc), set);
	return false;
}

/* Adds an actor's histogram to the totals (after it ended), once. */
void rt_fold_actor(struct rt_actor *a)
{
	if (atomic_exchange(&a->folded, 1))
		return;
	for (int i = 0; i < RT_CALLS; i++)
		for (int j = 0; j < RT_RCS; j++)
			atomic_fetch_add(&rt_shm->retired_hist[i][j], atomic_load(&a->hist[i][j]));
	atomic_fetch_add(&rt_shm->retired_ops, atomic_load(&a->ops));
}

void rt_print_summary(FILE *f)
{
	uint64_t total = 0;
	uint32_t nkinds = atomic_load(&rt_shm->nkinds);
	const char *mode = rt_shm->mode.name;

	for (int i = 0; i < RT_CALLS; i++)
		for (int j = 0; j < RT_RCS; j++)
			total += atomic_load(&rt_shm->retired_hist[i][j]);
	fprintf(f, "\nmode %s, seed %llu: %llu calls in %.1f s (%llu threads ended mid-run, "
		"%llu processes killed, %llu stops, %llu cancels, %llu owner deaths told, "
		"%llu mutexes left owned by a dead actor's earlier id, %llu waits on a set waited on "
		"before)\n",
		mode, (unsigned long long)rt_shm->seed, (unsigned long long)total, rt_elapsed(),
		(unsigned long long)rt_shm->thread_deaths, (unsigned long long)rt_shm->proc_deaths,
		(unsigned long long)rt_shm->stops_done, (unsigned long long)rt_shm->cancels_done,
		(unsigned long long)rt_shm->dead_owners_told,
		(unsigned long long)rt_shm->kept_owned,
		(unsigned long long)atomic_load(&rt_shm->waits_again));
	for (int i = 0; i < RT_CALLS; i++) {
		uint64_t sum = 0;

		for (int j = 0; j < RT_RCS; j++)
			sum += atomic_load(&rt_shm->retired_hist[i][j]);
		fprintf(f, "  %-24s %10llu:", call_names[i], (unsigned long long)sum);
		for (int j = 0; j < RT_RCS; j++) {
			uint64_t v = atomic_load(&rt_shm->retired_hist[i][j]);

			if (v)
				fprintf(f, " %s=%llu", rc_names[j], (unsigned long long)v);
		}
		fprintf(f, "\n");
	}
	/* One line per (call, result), for scripts that add runs up. */
	for (int i = 0; i < RT_CALLS; i++)
		for (int j = 0; j < RT_RCS; j++) {
			uint64_t v = atomic_load(&rt_shm->retired_hist[i][j]);

			if (v)
				fprintf(f, "HIST %s %s %s %llu\n", mode, call_names[i], rc_names[j],
					(unsigned long long)v);
		}
	fprintf(f, "CALLS %s %llu\n", mode, (unsigned long long)total);
	for (uint32_t i = 0; i < nkinds; i++)
		fprintf(f, "KIND %s %llu first at %.3f s (actor %d): %s\n", mode,
			(unsigned long long)atomic_load(&rt_shm->kinds[i].count),
			rt_shm->kinds[i].first_s, rt_shm->kinds[i].first_actor, rt_shm->kinds[i].text);
	fprintf(f, "RESULT %s seed %llu: %s (%llu violations, %u kinds)\n", mode,
		(unsigned long long)rt_shm->seed, nkinds ? "FAIL" : "PASS",
		(unsigned long long)atomic_load(&rt_shm->violations), nkinds);
}
