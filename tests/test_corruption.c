/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Corruption: a process that can write a shared arena scribbles over it
 * (random words, small numbers, flipped bits, copies of other words: in the
 * header, the objects, the thread records, the log and the lock word) while
 * another process calls every function on it from two threads with short
 * deadlines.  No call may crash or hang, and every result must be one the
 * API documents for that call (-EUCLEAN for what it finds broken).  A
 * watchdog kills the caller if a thread stops making progress.
 *
 * The summary gives trials, crashes, hangs and unexpected results; all but
 * the trials must be 0.  The sanitizer presets run this too.
 */
#define _GNU_SOURCE
#include "robust.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../winsync/arena.h"
#include "../winsync/lock.h"
#include "whitebox.h"

#define NH 8
#define THREADS 2

enum call {
	C_EVENT_CREATE, C_SEM_CREATE, C_MUTEX_CREATE, C_CLOSE, C_SET, C_RESET, C_PULSE,
	C_EVENT_READ, C_RELEASE, C_SEM_READ, C_UNLOCK, C_KILL, C_MUTEX_READ, C_WAIT_ANY,
	C_WAIT_ALL, C_OWNER_DIED, C_CHECK, C_OPEN, C_COUNT
};

static const char *const call_names[C_COUNT] = {
	"ws_event_create", "ws_sem_create", "ws_mutex_create", "ws_close", "ws_event_set",
	"ws_event_reset", "ws_event_pulse", "ws_event_read", "ws_sem_release", "ws_sem_read",
	"ws_mutex_unlock", "ws_mutex_kill", "ws_mutex_read", "ws_wait_any", "ws_wait_all",
	"ws_owner_died", "ws_arena_check", "ws_arena_open",
};

#define E(x) (1u << (x))
enum { RC_OK, RC_INVAL, RC_BADF, RC_NOSPC, RC_OVERFLOW, RC_PERM, RC_OWNERDEAD, RC_TIMEDOUT, RC_USERS,
       RC_CANCELED, RC_UCLEAN, RC_OTHER };

static int rcode(int rc)
{
	switch (rc) {
	case 0: return RC_OK;
	case -EINVAL: return RC_INVAL;
	case -EBADF: return RC_BADF;
	case -ENOSPC: return RC_NOSPC;
	case -EOVERFLOW: return RC_OVERFLOW;
	case -EPERM: return RC_PERM;
	case -EOWNERDEAD: return RC_OWNERDEAD;
	case -ETIMEDOUT: return RC_TIMEDOUT;
	case -EUSERS: return RC_USERS;
	case -ECANCELED: return RC_CANCELED;
	case -EUCLEAN: return RC_UCLEAN;
	default: return RC_OTHER;
	}
}

/* What each call may return (its documented errors; -EINVAL: a handle whose type changed). */
static const unsigned allowed[C_COUNT] = {
	[C_EVENT_CREATE] = E(RC_OK) | E(RC_NOSPC) | E(RC_UCLEAN) | E(RC_USERS),
	[C_SEM_CREATE] = E(RC_OK) | E(RC_NOSPC) | E(RC_UCLEAN) | E(RC_USERS),
	[C_MUTEX_CREATE] = E(RC_OK) | E(RC_NOSPC) | E(RC_UCLEAN) | E(RC_USERS),
	[C_CLOSE] = E(RC_OK) | E(RC_BADF) | E(RC_UCLEAN) | E(RC_USERS),
	[C_SET] = E(RC_OK) | E(RC_BADF) | E(RC_INVAL) | E(RC_UCLEAN) | E(RC_USERS),
	[C_RESET] = E(RC_OK) | E(RC_BADF) | E(RC_INVAL) | E(RC_UCLEAN) | E(RC_USERS),
	[C_PULSE] = E(RC_OK) | E(RC_BADF) | E(RC_INVAL) | E(RC_UCLEAN) | E(RC_USERS),
	[C_EVENT_READ] = E(RC_OK) | E(RC_BADF) | E(RC_INVAL) | E(RC_UCLEAN) | E(RC_USERS),
	[C_RELEASE] = E(RC_OK) | E(RC_BADF) | E(RC_INVAL) | E(RC_OVERFLOW) | E(RC_UCLEAN) | E(RC_USERS),
	[C_SEM_READ] = E(RC_OK) | E(RC_BADF) | E(RC_INVAL) | E(RC_UCLEAN) | E(RC_USERS),
	[C_UNLOCK] = E(RC_OK) | E(RC_BADF) | E(RC_INVAL) | E(RC_PERM) | E(RC_UCLEAN) | E(RC_USERS),
	[C_KILL] = E(RC_OK) | E(RC_BADF) | E(RC_INVAL) | E(RC_PERM) | E(RC_UCLEAN) | E(RC_USERS),
	[C_MUTEX_READ] = E(RC_OK) | E(RC_BADF) | E(RC_INVAL) | E(RC_OWNERDEAD) | E(RC_UCLEAN) |
			 E(RC_USERS),
	[C_WAIT_ANY] = E(RC_OK) | E(RC_BADF) | E(RC_INVAL) | E(RC_OWNERDEAD) | E(RC_TIMEDOUT) |
		       E(RC_CANCELED) | E(RC_UCLEAN) | E(RC_USERS),
	[C_WAIT_ALL] = E(RC_OK) | E(RC_BADF) | E(RC_INVAL) | E(RC_OWNERDEAD) | E(RC_TIMEDOUT) |
		       E(RC_CANCELED) | E(RC_UCLEAN) | E(RC_USERS),
	[C_OWNER_DIED] = E(RC_OK) | E(RC_UCLEAN) | E(RC_USERS),
	[C_CHECK] = E(RC_OK) | E(RC_UCLEAN) | E(RC_USERS),
	[C_OPEN] = E(RC_OK) | E(RC_INVAL),
};

/* Shared with the caller and the scribbler. */
struct board {
	char name[80];
	size_t size;
	struct { size_t off, len; } region[8];
	int nregions;
	uint64_t seed;
	long writes;                          /* the scribbler's budget for this trial */
	_Atomic int stop;
	_Atomic int ready;
	ws_handle h[NH];
	struct {
		_Atomic long beats;               /* calls finished */
		_Atomic int call;                 /* in progress */
		_Atomic long started_ms;
		long max_ms[C_COUNT];
	} t[THREADS];
	_Atomic long calls, unexpected, ucleans;
	char first[3][200];
	_Atomic int nfirst;
};

static struct board *bd;

static long now_ms(void)
{
	struct timespec t = ts_now(CLOCK_MONOTONIC);

	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

static void note(const char *fmt, ...)
{
	int i = atomic_fetch_add(&bd->nfirst, 1);
	va_list ap;

	if (i >= 3)
		return;
	va_start(ap, fmt);
	vsnprintf(bd->first[i], sizeof bd->first[i], fmt, ap);
	va_end(ap);
}

/* ---- the caller ---- */

struct caller {
	ws_arena *a;
	int id;
	struct rng r;
};

static ws_handle some_handle(struct rng *r)
{
	ws_handle h = bd->h[rng_below(r, NH)];

	switch (rng_below(r, 16)) {
	case 0:
		return rng_next(r);
	case 1:
		return 0;
	case 2:
		return h ^ (1u << rng_below(r, 32));
	default:
		return h;
	}
}

static int one_call(struct caller *c, enum call call)
{
	ws_arena *a = c->a;
	struct rng *r = &c->r;
	ws_handle objs[4], h = some_handle(r), made;
	uint32_t u1, u2, idx = 0xdead, n = 1 + rng_below(r, 4), owner = 0x100 + (uint32_t)c->id;
	bool b1, b2;
	struct timespec dl = deadline_ms(rng_below(r, 10));
	struct ws_wait w = { .objects = objs, .count = n, .owner = owner, .deadline = &dl };
	int rc;

	for (uint32_t i = 0; i < n; i++)
		objs[i] = some_handle(r);
	if (rng_below(r, 4) == 0)
		w.alert = some_handle(r);
	switch (call) {
	case C_EVENT_CREATE:
		rc = ws_event_create(a, rng_below(r, 2), rng_below(r, 2), &made);
		break;
	case C_SEM_CREATE:
		rc = ws_sem_create(a, 1, 3, &made);
		break;
	case C_MUTEX_CREATE:
		rc = ws_mutex_create(a, owner, 1, &made);
		break;
	case C_CLOSE:
		/* Closing the shared handles would end the trial early: mostly strays. */
		rc = ws_close(a, rng_below(r, 4) ? rng_next(r) : h);
		break;
	case C_SET:
		rc = ws_event_set(a, h, &b1);
		break;
	case C_RESET:
		rc = ws_event_reset(a, h, &b1);
		break;
	case C_PULSE:
		rc = ws_event_pulse(a, h, &b1);
		break;
	case C_EVENT_READ:
		rc = ws_event_read(a, h, &b1, &b2);
		break;
	case C_RELEASE:
		rc = ws_sem_release(a, h, 1 + rng_below(r, 2), &u1);
		break;
	case C_SEM_READ:
		rc = ws_sem_read(a, h, &u1, &u2);
		break;
	case C_UNLOCK:
		rc = ws_mutex_unlock(a, h, owner, &u1);
		break;
	case C_KILL:
		rc = ws_mutex_kill(a, h, owner);
		break;
	case C_MUTEX_READ:
		rc = ws_mutex_read(a, h, &u1, &u2);
		break;
	case C_WAIT_ANY:
		rc = ws_wait_any(a, &w, &idx);
		if ((rc == 0 || rc == -EOWNERDEAD) && idx > n)
			rc = -ERANGE;
		break;
	case C_WAIT_ALL:
		rc = ws_wait_all(a, &w, &idx);
		if ((rc == 0 || rc == -EOWNERDEAD) && idx != 0 && idx != n)
			rc = -ERANGE;
		break;
	case C_OWNER_DIED:
		rc = ws_owner_died(a, 0x5000 + rng_below(r, 4));
		break;
	case C_CHECK:
		rc = ws_arena_check(a, NULL, 0);
		break;
	case C_OPEN: {
		ws_arena *b = NULL;

		rc = ws_arena_open(bd->name, &b);
		if (rc == 0)
			ws_arena_close(b);
		break;
	}
	default:
		rc = -ERANGE;
	}
	return rc;
}

static void *caller_thread(void *arg)
{
	struct caller *c = arg;

	while (!atomic_load(&bd->stop)) {
		enum call call = (enum call)rng_below(&c->r, C_COUNT);
		long t0 = now_ms(), took;
		int rc;

		/* Opening maps the arena again: rarely. */
		if (call == C_OPEN && rng_below(&c->r, 20))
			call = C_CHECK;
		atomic_store(&bd->t[c->id].call, call);
		atomic_store(&bd->t[c->id].started_ms, t0);
		rc = one_call(c, call);
		took = now_ms() - t0;
		if (took > bd->t[c->id].max_ms[call])
			bd->t[c->id].max_ms[call] = took;
		atomic_fetch_add(&bd->calls, 1);
		if (rc == -EUCLEAN)
			atomic_fetch_add(&bd->ucleans, 1);
		if (!(allowed[call] & E(rcode(rc)))) {
			atomic_fetch_add(&bd->unexpected, 1);
			note("%s returned %d (%s)%s", call_names[call], rc, errname(rc),
			     rc == -ERANGE ? ": index out of range" : "");
		}
		atomic_fetch_add(&bd->t[c->id].beats, 1);
	}
	return NULL;
}

static int caller_main(void *arg)
{
	struct caller c[THREADS];
	pthread_t t[THREADS];
	ws_arena *a = NULL;

	(void)arg;
	CHILD_CHECK(ws_arena_open(bd->name, &a) == 0, 10);
	for (int i = 0; i < NH; i++) {
		int rc = i % 3 == 0   ? ws_event_create(a, i & 1, false, &bd->h[i])
			 : i % 3 == 1 ? ws_sem_create(a, 1, 4, &bd->h[i])
				      : ws_mutex_create(a, 0, 0, &bd->h[i]);

		CHILD_CHECK(rc == 0, 11);
	}
	atomic_store(&bd->ready, 1);
	for (int i = 0; i < THREADS; i++) {
		c[i].a = a;
		c[i].id = i;
		rng_seed(&c[i].r, bd->seed + (uint64_t)i * 7919);
		CHILD_CHECK(pthread_create(&t[i], NULL, caller_thread, &c[i]) == 0, 12);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return atomic_load(&bd->unexpected) ? 3 : 0;
}

/* ---- the scribbler ---- */

static int scribbler_main(void *arg)
{
	char path[160];
	struct rng r;
	char *raw;
	int fd;

	(void)arg;
	snprintf(path, sizeof path, "/dev/shm/winsync-%s", bd->name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	CHILD_CHECK(fd >= 0, 20);
	raw = mmap(NULL, bd->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHILD_CHECK(raw != MAP_FAILED, 21);
	close(fd);
	rng_seed(&r, bd->seed ^ 0xabcdef);
	for (long i = 0; i < bd->writes && !atomic_load(&bd->stop); i++) {
		int g = (int)rng_below(&r, (uint32_t)bd->nregions);
		size_t off = bd->region[g].off + 4 * rng_below(&r, (uint32_t)(bd->region[g].len / 4));
		size_t other = bd->region[g].off + 4 * rng_below(&r, (uint32_t)(bd->region[g].len / 4));
		_Atomic uint32_t *word = (_Atomic uint32_t *)(raw + off);
		uint32_t v;

		switch (rng_below(&r, 6)) {
		case 0:
			v = rng_next(&r);
			break;
		case 1:
			v = rng_below(&r, 70);
			break;
		case 2:
			v = atomic_load(word) ^ (1u << rng_below(&r, 32));
			break;
		case 3:
			v = atomic_load((_Atomic uint32_t *)(raw + other));
			break;
		case 4:
			v = 0;
			break;
		default:
			v = atomic_load(word) + (rng_below(&r, 2) ? 1 : -1u);
			break;
		}
		atomic_store(word, v);
		usleep(rng_below(&r, 300));
	}
	for (;;)
		pause();
}

/* ---- the trials ---- */

struct totals {
	long trials, crashes, hangs, unexpected, calls, ucleans, writes;
	char first[4][400];
	int nfirst;
};

static void remember(struct totals *tt, const char *fmt, ...)
{
	va_list ap;

	if (tt->nfirst >= 4)
		return;
	va_start(ap, fmt);
	vsnprintf(tt->first[tt->nfirst++], sizeof tt->first[0], fmt, ap);
	va_end(ap);
}

static void layout(ws_arena *a)
{
	size_t objects = (size_t)((char *)a->objects - a->base);
	size_t records = (size_t)((char *)a->records - a->base);
	/* The first record's log: the first thread to take the lock keeps using it. */
	size_t log = records + offsetof(struct ws_record, log);
	size_t lock = (size_t)((char *)&a->header->lock - a->base);

	bd->size = a->size;
	bd->region[0].off = 0;
	bd->region[0].len = offsetof(struct ws_arena_header, lock);
	bd->region[1].off = lock;
	bd->region[1].len = 4;
	bd->region[2].off = objects;
	bd->region[2].len = 16 * sizeof(struct ws_object);
	/* The records' identities, waits and entries (each record's part before its log). */
	for (int r = 0; r < 3; r++) {
		bd->region[3 + r].off = records + r * sizeof(struct ws_record);
		bd->region[3 + r].len = offsetof(struct ws_record, log);
	}
	bd->region[6].off = log;
	bd->region[6].len = offsetof(struct ws_log, locked) + 8 * sizeof(struct ws_log_locked);
	bd->region[7].off = log + offsetof(struct ws_log, undo);
	bd->region[7].len = 64 * sizeof(struct ws_log_undo);
	bd->nregions = 8;
}

/* The lock word and the log's state, for a hang's report (a read-only look). */
static const char *peek(char *buf, size_t size)
{
	char path[160];
	int fd;
	char *raw;
	struct ws_arena_header *h;
	int n;

	snprintf(path, sizeof path, "/dev/shm/winsync-%s", bd->name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	raw = fd < 0 ? MAP_FAILED : mmap(NULL, bd->size, PROT_READ, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	if (raw == MAP_FAILED) {
		snprintf(buf, size, "arena not readable");
		return buf;
	}
	h = (struct ws_arena_header *)raw;
	n = snprintf(buf, size, "lock word %#x, log state %u; records (generation alive holding "
		     "object_lock):", atomic_load(&h->lock),
		     atomic_load((_Atomic uint32_t *)(raw + bd->region[6].off)));
	/* Whom the word may name: the caller's main thread and its two callers. */
	for (int r = 0; r < 3 && n > 0 && (size_t)n < size; r++) {
		const struct ws_record *rec =
			(const struct ws_record *)(raw + bd->region[3 + r].off);

		n += snprintf(buf + n, size - (size_t)n, " %u %u %u %u;",
			      atomic_load(&rec->generation), atomic_load(&rec->alive),
			      atomic_load(&rec->holding), ws_get(&rec->log.object_lock));
	}
	munmap(raw, bd->size);
	return buf;
}

static void trial(struct totals *tt, long i, uint64_t seed)
{
	long duration = 250 * slow_factor(), hang_ms = 10000 * slow_factor();
	pid_t caller, scribbler;
	ws_arena *a = NULL;
	long end, last_beat[THREADS], last_change[THREADS];
	int status;
	bool hung = false;
	char sbuf[240];

	memset(bd, 0, sizeof(*bd));
	bd->seed = seed;
	bd->writes = 1L << (i % 11); /* from one word to a thousand */
	test_arena_name(bd->name, sizeof bd->name, "corrupt");
	/* This process never enters the arena: only the children touch it. */
	CK_OK(ws_arena_create(bd->name, 32, &a));
	layout(a);
	ws_arena_close(a);
	caller = fork_child_fn(caller_main, NULL);
	for (int k = 0; k < 60000 && !atomic_load(&bd->ready); k++)
		sleep_ms(1);
	ck_assert_msg(atomic_load(&bd->ready), "the caller never got ready");
	scribbler = fork_child_fn(scribbler_main, NULL);
	end = now_ms() + duration;
	for (int t = 0; t < THREADS; t++) {
		last_beat[t] = -1;
		last_change[t] = now_ms();
	}
	/* The watchdog: every thread must keep finishing calls. */
	for (;;) {
		long now = now_ms();

		if (now >= end)
			atomic_store(&bd->stop, 1);
		if (waitpid(caller, &status, WNOHANG) == caller)
			break;
		for (int t = 0; t < THREADS; t++) {
			long beats = atomic_load(&bd->t[t].beats);

			if (beats != last_beat[t]) {
				last_beat[t] = beats;
				last_change[t] = now;
			} else if (now - last_change[t] > hang_ms && !hung) {
				int call = atomic_load(&bd->t[t].call);

				hung = true;
				tt->hangs++;
				remember(tt, "trial %ld: thread %d stuck in %s for %ld ms (%s)", i, t,
					 call_names[call], now - last_change[t], peek(sbuf, sizeof sbuf));
			}
		}
		if (hung) {
			/* For whoever chases a hang by hand: the caller's threads, where they are. */
			if (getenv("WINSYNC_HANG_GDB")) {
				char cmd[160];

				snprintf(cmd, sizeof cmd, "gdb -p %d -batch -ex 'thread apply all bt' "
					 ">&2 2>/dev/null", (int)caller);
				if (system(cmd) != 0)
					fprintf(stderr, "gdb could not look at the caller\n");
			}
			kill(caller, SIGKILL);
			waitpid(caller, &status, 0);
			break;
		}
		sleep_ms(5);
	}
	kill_reap(scribbler);
	if (!hung && WIFSIGNALED(status)) {
		tt->crashes++;
		remember(tt, "trial %ld: the caller died: %s", i, status_str(status, sbuf, sizeof sbuf));
	} else if (!hung && WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
		   WEXITSTATUS(status) != 3) {
		tt->crashes++;
		remember(tt, "trial %ld: the caller failed: %s (a sanitizer report?)", i,
			 status_str(status, sbuf, sizeof sbuf));
	}
	tt->unexpected += atomic_load(&bd->unexpected);
	for (int k = 0; k < atomic_load(&bd->nfirst) && k < 3; k++)
		remember(tt, "trial %ld: %s", i, bd->first[k]);
	tt->calls += atomic_load(&bd->calls);
	tt->ucleans += atomic_load(&bd->ucleans);
	tt->writes += bd->writes;
	tt->trials++;
	CK_OK(ws_arena_unlink(bd->name));
}

START_TEST(scribbled_arena)
{
	long trials = scaled(60, 5);
	struct totals tt = { 0 };
	struct rng r;
	long max_ms = 0;

	if (under_tsan()) {
		/*
		 * A scribbled lock word can let two threads hold the lock at once (the
		 * arena promises clean errors then, not exclusion): TSan would report
		 * the races that follow, by design.
		 */
		printf("SKIP scribbled_arena under TSan: corruption breaks mutual exclusion\n");
		return;
	}
	bd = shared_alloc(sizeof(*bd));
	rng_seed(&r, test_seed("corruption"));
	for (long i = 0; i < trials; i++) {
		trial(&tt, i, rng_next(&r) | (uint64_t)rng_next(&r) << 32);
		for (int t = 0; t < THREADS; t++)
			for (int c = 0; c < C_COUNT; c++)
				if (bd->t[t].max_ms[c] > max_ms)
					max_ms = bd->t[t].max_ms[c];
	}
	printf("corruption: %ld trials, %ld crashes, %ld hangs, %ld unexpected results "
	       "(%ld calls, %ld of them -EUCLEAN, %ld words scribbled, slowest call %ld ms)\n",
	       tt.trials, tt.crashes, tt.hangs, tt.unexpected, tt.calls, tt.ucleans, tt.writes,
	       max_ms);
	for (int k = 0; k < tt.nfirst; k++)
		printf("  %s\n", tt.first[k]);
	fflush(stdout);
	ck_assert_msg(tt.crashes == 0 && tt.hangs == 0 && tt.unexpected == 0,
		      "%ld crashes, %ld hangs, %ld unexpected results; first: %s", tt.crashes,
		      tt.hangs, tt.unexpected, tt.nfirst ? tt.first[0] : "");
	shared_free(bd, sizeof(*bd));
}
END_TEST

/*
 * The scribbler found it at random; here deterministically: a blocked
 * waiter whose record says it was handed entry 37 of its 2 objects must not
 * return success with that index (a caller would index past its array).
 */
static void forged_result(bool all, uint32_t forged_index)
{
	char name[80], path[160];
	ws_arena *a = named_arena(name, sizeof name, "forged", 32);
	ws_handle objs[2] = { mk_event(a, false, false), mk_sem(a, 0, 1) };
	struct waiter w;
	uint32_t r;
	int rec_index;
	char *raw;
	int fd;

	waiter_init(&w, a, 0x66, all, objs, 2);
	waiter_start(&w);
	waiter_asleep(&w);
	CK_OK(ws_arena_check(a, NULL, 0)); /* orders our reads after the waiter's writes */
	rec_index = wb_live_record(a, atomic_load(&w.tid));
	ck_assert_int_ge(rec_index, 0);
	r = (uint32_t)rec_index;
	snprintf(path, sizeof path, "/dev/shm/winsync-%s", name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	raw = mmap(NULL, a->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert(raw != MAP_FAILED);
	close(fd);
	/* Another process's write: "handed entry N", and its wake-up. */
	size_t off = (size_t)((char *)&a->records[r] - a->base);
	struct ws_record *rec = (struct ws_record *)(raw + off);

	atomic_store(&rec->state, WS_WAIT_GOT | forged_index);
	atomic_store(&rec->wake, WS_FUTEX_OWNER_DIED);
	syscall(SYS_futex, &rec->wake, FUTEX_WAKE, 1, NULL, NULL, 0);
	ck_assert(waiter_wait_done(&w, LONG_MS));
	ck_assert_msg(w.rc != 0 && w.rc != -EOWNERDEAD,
		      "%s returned %d (%s) with index %u of 2 objects", all ? "ws_wait_all" : "ws_wait_any",
		      w.rc, errname(w.rc), w.index);
	CK_RC(w.rc, -EUCLEAN);
	waiter_join(&w);
	munmap(raw, a->size);
	drop_arena(a, name);
}

START_TEST(forged_index_is_not_returned)
{
	forged_result(false, 37);
	forged_result(true, 1);
}
END_TEST

/*
 * Every object's lock word scribbled with the name of a live thread that
 * holds nothing: each is taken over at the second look, which needs no
 * sleep (lock.c's holder_gone).  It took two 100 ms sleeps a word, 12.8 s
 * here, and the random scribbler's parallel runs a stuck ws_arena_check.
 */
START_TEST(stale_object_words_cost_no_sleep)
{
	enum { OBJECTS = 64 };
	ws_arena *a = test_arena_cap(OBJECTS);
	struct bystander idler;
	ws_handle h[OBJECTS];
	uint32_t r, ref;
	int rec_index;
	long t0, took, check_ms;

	for (int k = 0; k < OBJECTS; k++)
		h[k] = mk_event(a, false, false);
	bystander_start(&idler, a);
	rec_index = wb_live_record(a, atomic_load(&idler.tid));
	ck_assert_int_ge(rec_index, 0);
	r = (uint32_t)rec_index;
	ck_assert_msg(!(atomic_load(&a->records[r].holding) & 1), "the idler holds a word");
	ref = wb_lock_ref(a, r);
	for (int k = 0; k < OBJECTS; k++)
		atomic_store(&a->objects[k].lock, ref);
	t0 = now_ms();
	CK_OK(ws_arena_check(a, NULL, 0));
	check_ms = now_ms() - t0;
	ck_assert_msg(check_ms < 3000, "ws_arena_check took %ld ms over %d stale words", check_ms,
		      OBJECTS);
	for (int k = 0; k < OBJECTS; k++) {
		ck_assert_uint_eq(atomic_load(&a->objects[k].lock), 0);
		atomic_store(&a->objects[k].lock, ref | WS_LOCK_CONTENDED);
	}
	/* The same words met by the objects' own operations, sleepers' flag set. */
	t0 = now_ms();
	for (int k = 0; k < OBJECTS; k++)
		ck_assert_int_ge(ws_event_set(a, h[k], NULL), 0);
	took = now_ms() - t0;
	ck_assert_msg(took < 3000, "%d sets took %ld ms over stale words", OBJECTS, took);
	printf("stale words: ws_arena_check over %d took %ld ms, %d sets %ld ms\n", OBJECTS,
	       check_ms, OBJECTS, took);
	CK_OK(ws_arena_check(a, NULL, 0));
	for (int k = 0; k < OBJECTS; k++) {
		uint32_t index = 99;

		CK_OK(ws_wait_any(a, &(struct ws_wait){ .objects = &h[k], .count = 1, .owner = 0x77 },
				   &index));
		ck_assert_uint_eq(index, 0);
	}
	bystander_stop(&idler);
	ws_arena_close(a);
}
END_TEST

/*
 * A lock word scribbled with the name of a live thread parked outside the
 * arena, whose record was scribbled too so that it shows some of the three
 * signs of a holder (lock.c's holder_gone): its `holding` counter odd, its
 * `holding_stamp` the counter's, its log naming the word.  Short of all
 * three the word is stale and taken over at the second look, with no
 * sleep; with all three (a holder as the take leaves it) a non-blocking
 * call gives up (-EAGAIN) and leaves the word alone.  The random scribbler
 * found the counter alone ("stuck in ws_close for 10003 ms (lock word
 * 0x80000001, ...)", about one run in 40) and then the counter and the log
 * flag together (the main thread, parked in pthread_join, "stuck in
 * ws_arena_check", seed 11702163357180222, trial 20): each kept the word
 * "held" for ever.
 */
enum sign { SIGN_ODD = 1, SIGN_STAMP = 2, SIGN_LOG = 4, SIGNS_ALL = 7 };

static void show_signs(ws_arena *a, uint32_t r, uint32_t counter, unsigned signs, uint32_t slot)
{
	struct ws_record *rec = &a->records[r];
	uint32_t odd = counter | 1;

	atomic_store(&rec->holding, signs & SIGN_ODD ? odd : counter);
	/* The stamp an odd counter would have, shown with the even one too. */
	atomic_store(&rec->holding_stamp, signs & SIGN_STAMP ? ws_lock_stamp(odd) : 0);
	if (slot == UINT32_MAX)
		atomic_store(&rec->log.arena_lock, signs & SIGN_LOG ? 1 : 0);
	else
		atomic_store(&rec->log.object_lock, signs & SIGN_LOG ? slot + 1 : 0);
}

/* One lock word (the arena's, or object `slot`'s) named by the idler showing `signs`. */
static void partial_holder(ws_arena *a, ws_handle h, uint32_t slot, struct bystander *idler,
			   unsigned signs)
{
	_Atomic uint32_t *word = slot == UINT32_MAX ? &a->header->lock : &a->objects[slot].lock;
	const char *what = slot == UINT32_MAX ? "the arena's word" : "an object's word";
	int rec_index = wb_live_record(a, atomic_load(&idler->tid));
	uint32_t r, counter, ref;
	struct bg_check check;
	long t0, took;
	bool on_time, was;

	ck_assert_int_ge(rec_index, 0);
	r = (uint32_t)rec_index;
	counter = atomic_load(&a->records[r].holding);
	ck_assert_msg(!(counter & 1), "the idler holds a word");
	ref = wb_lock_ref(a, r);
	show_signs(a, r, counter, signs, slot);
	atomic_store(word, ref | WS_LOCK_CONTENDED);
	if (signs == SIGNS_ALL) {
		CK_OK(ws_arena_set_flags(a, WS_ARENA_NONBLOCK));
		CK_RC(ws_arena_check(a, NULL, 0), -EAGAIN);
		CK_OK(ws_arena_set_flags(a, 0));
		ck_assert_msg((atomic_load(word) & ~WS_LOCK_CONTENDED) == ref,
			      "%s, named by a holder that shows every sign, was taken over", what);
		atomic_store(word, 0);
		show_signs(a, r, counter, 0, slot);
		return;
	}
	t0 = now_ms();
	bg_check_start(&check, a);
	on_time = bg_check_wait(&check, 3000 * slow_factor());
	took = now_ms() - t0;
	/* Cleared, so that a check that still waits finds the word stale and ends. */
	show_signs(a, r, counter, 0, slot);
	ck_assert_msg(on_time, "ws_arena_check waited %ld ms on %s named by a parked thread "
		      "showing signs %#x", took, what, signs);
	CK_OK(bg_check_join(&check));
	ck_assert_uint_eq(atomic_load(word), 0);
	ck_assert_msg(took < 1000 * slow_factor(), "%s with signs %#x took %ld ms", what, signs,
		      took);
	if (slot != UINT32_MAX)
		ck_assert_int_ge(ws_event_set(a, h, &was), 0);
}

START_TEST(stale_words_with_some_signs_of_a_holder)
{
	ws_arena *a = test_arena_cap(8);
	struct bystander idler;
	ws_handle h = mk_event(a, false, false);
	uint32_t slot = ws_handle_slot(a, h);
	long t0 = now_ms();

	bystander_start(&idler, a);
	for (unsigned signs = 0; signs <= SIGNS_ALL; signs++) {
		partial_holder(a, h, UINT32_MAX, &idler, signs);
		partial_holder(a, h, slot, &idler, signs);
	}
	printf("stale words with some signs of a holder: 14 taken over, 2 left, in %ld ms\n",
	       now_ms() - t0);
	bystander_stop(&idler);
	CK_OK(ws_arena_check(a, NULL, 0));
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("corruption");
	TCase *tc = tcase_create("corruption");

	tcase_set_timeout(tc, 280);
	tcase_add_test(tc, scribbled_arena);
	tcase_add_test(tc, forged_index_is_not_returned);
	tcase_add_test(tc, stale_object_words_cost_no_sleep);
	tcase_add_test(tc, stale_words_with_some_signs_of_a_holder);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
