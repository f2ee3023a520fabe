/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Issue 21, finding 7: ws_sem_read, ws_event_read and ws_sem_release racing
 * ws_close (and the reuse of the slot by a new object) must answer with one
 * of the object's real states, or -EBADF.  Using a handle while another
 * thread closes it is an application error, but it must not invent a
 * semaphore of maximum 0, a count above the maximum, an auto-reset event that
 * was created manual-reset, or -EOVERFLOW for a release that cannot overflow.
 *
 * A race, so a bounded stress on one slot: every other slot of a small arena
 * is taken, so the slot a close frees is the one the next create gets back;
 * reader threads use the current handle while a cycler closes it and creates
 * the next object, and just before closing it signals the readers: a reader
 * the signal finds inside the call under test is held there for a while (as
 * a suspension would hold it), so that the close lands in the middle of that
 * call.  On main each test fails within a second on this machine; with the
 * fix it runs its full time.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "harness.h"

#define CAPACITY 32u
#define READERS 3
#define SEM_MAX 1000u
#define RELEASE_MAX (1u << 30)
#define HOLD_US 300L
#define RUN_MS 6000L

enum kind { SEM_READ, EVENT_READ, SEM_RELEASE };

struct race {
	ws_arena *arena;
	enum kind kind;
	_Atomic ws_handle current;   /* the object the readers use, of the kind under test */
	_Atomic int stop;
	_Atomic pid_t tids[READERS];
	_Atomic int bad;
	char what[200];
};

static void sleep_us(long us)
{
	struct timespec t = { 0, us * 1000 };

	nanosleep(&t, NULL);
}

/* The code of the call under test, [from, to): where a signal holds a reader. */
static uintptr_t call_from, call_to;

static void find_call(void *fn)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;

	call_from = (uintptr_t)fn;
	call_to = call_from + 4096; /* no symbol size: about a page of code */
	if (dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size)
		call_to = (uintptr_t)info.dli_saddr + sym->st_size;
}

static uintptr_t interrupted_at(void *uctx)
{
	const ucontext_t *uc = uctx;

#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)uc->uc_mcontext.pc;
#else
	(void)uc;
	return call_from; /* unknown: hold every reader */
#endif
}

static void hold(int sig, siginfo_t *info, void *uctx)
{
	uintptr_t pc = interrupted_at(uctx);
	struct timespec t = { 0, HOLD_US * 1000 };

	(void)sig;
	(void)info;
	if (pc >= call_from && pc < call_to)
		nanosleep(&t, NULL);
}

static void invented(struct race *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void invented(struct race *r, const char *fmt, ...)
{
	va_list ap;

	if (atomic_exchange(&r->bad, 1))
		return;
	va_start(ap, fmt);
	vsnprintf(r->what, sizeof r->what, fmt, ap);
	va_end(ap);
}

static void *reader(void *arg)
{
	struct race *r = arg;
	static _Atomic int next;
	int me = atomic_fetch_add(&next, 1) % READERS;

	atomic_store(&r->tids[me], (pid_t)syscall(SYS_gettid));
	while (!atomic_load(&r->stop)) {
		ws_handle h = atomic_load(&r->current);
		uint32_t count = 0, max = 0;
		bool signaled = false, manual = false;
		int rc;

		switch (r->kind) {
		case SEM_READ:
			/* Created with count SEM_MAX, maximum SEM_MAX, never changed. */
			rc = ws_sem_read(r->arena, h, &count, &max);
			if (rc == 0 && (count != SEM_MAX || max != SEM_MAX))
				invented(r, "ws_sem_read(%#x): count %u max %u, created %u/%u", h, count,
					 max, SEM_MAX, SEM_MAX);
			else if (rc != 0 && rc != -EBADF)
				invented(r, "ws_sem_read(%#x): %s", h, errname(rc));
			break;
		case EVENT_READ:
			/* Created manual-reset and signaled, never changed. */
			rc = ws_event_read(r->arena, h, &signaled, &manual);
			if (rc == 0 && (!signaled || !manual))
				invented(r, "ws_event_read(%#x): signaled %d manual %d, created 1/1", h,
					 signaled, manual);
			else if (rc != 0 && rc != -EBADF)
				invented(r, "ws_event_read(%#x): %s", h, errname(rc));
			break;
		case SEM_RELEASE:
			/*
			 * Count 0, maximum RELEASE_MAX; each reader takes its unit back, so
			 * the count stays at READERS or below and no release can overflow.
			 */
			rc = ws_sem_release(r->arena, h, 1, &count);
			if (rc == 0 && count >= READERS)
				invented(r, "ws_sem_release(%#x): previous count %u, at most %d", h, count,
					 READERS - 1);
			else if (rc != 0 && rc != -EBADF)
				invented(r, "ws_sem_release(%#x) of 1 unit (count at most %d, maximum %u): %s",
					 h, READERS, RELEASE_MAX, errname(rc));
			if (rc == 0) {
				uint32_t index;

				poll_any(r->arena, &h, 1, 1, &index);
			}
			break;
		}
	}
	return NULL;
}

static ws_handle make(struct race *r, int which)
{
	ws_handle h = 0;

	/*
	 * The kind under test, or another kind in its slot; only a semaphore read
	 * shows a mutex there (its recursion count would read as manual-reset, and a
	 * release overflows a maximum of 0 only).
	 */
	if (which == 2 && r->kind != SEM_READ)
		which = 1;
	switch (which) {
	case 0:
		if (r->kind == EVENT_READ)
			CK_OK(ws_event_create(r->arena, true, true, &h));
		else if (r->kind == SEM_READ)
			CK_OK(ws_sem_create(r->arena, SEM_MAX, SEM_MAX, &h));
		else
			CK_OK(ws_sem_create(r->arena, 0, RELEASE_MAX, &h));
		break;
	case 1:
		CK_OK(ws_event_create(r->arena, false, false, &h));
		break;
	default:
		CK_OK(ws_mutex_create(r->arena, 77, 3, &h));
		break;
	}
	return h;
}

static void race(enum kind kind)
{
	struct race r;
	pthread_t threads[READERS];
	struct sigaction sa;
	ws_handle filler, last, other;
	struct timespec end;
	char report[256];
	int which = 0, rc;

	memset(&r, 0, sizeof r);
	r.kind = kind;
	r.arena = test_arena_cap(CAPACITY);
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = hold;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	find_call(kind == SEM_READ ? (void *)ws_sem_read :
		  kind == EVENT_READ ? (void *)ws_event_read : (void *)ws_sem_release);
	/* Every slot but one taken: a close frees the one the next create reuses. */
	for (uint32_t i = 0; i + 1 < CAPACITY; i++)
		CK_OK(ws_event_create(r.arena, false, false, &filler));
	last = make(&r, 0);
	atomic_store(&r.current, last);
	for (int i = 0; i < READERS; i++)
		threads[i] = spawn(reader, &r);
	end = deadline_ms(RUN_MS);
	while (!atomic_load(&r.bad) && ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0) {
		/* The readers busy on a live handle for a moment, interrupted, and it is closed. */
		struct timespec busy = ts_add_ms(ts_now(CLOCK_MONOTONIC), 0);

		busy.tv_nsec += 20000;
		while (ts_cmp(ts_now(CLOCK_MONOTONIC), busy) < 0)
			;
		for (int i = 0; i < READERS; i++) {
			pid_t tid = atomic_load(&r.tids[i]);

			if (tid)
				syscall(SYS_tgkill, getpid(), tid, SIGUSR1);
		}
		CK_OK(ws_close(r.arena, last));
		/* Another kind of object in the slot while the held readers resume. */
		other = make(&r, 1 + which++ % 2);
		sleep_us(HOLD_US + 100);
		CK_OK(ws_close(r.arena, other));
		last = make(&r, 0);
		atomic_store(&r.current, last);
	}
	atomic_store(&r.stop, 1);
	for (int i = 0; i < READERS; i++)
		join(threads[i]);
	ck_assert_msg(!atomic_load(&r.bad), "an invented state after %d closes: %s", which, r.what);
	report[0] = 0;
	rc = ws_arena_check(r.arena, report, sizeof report);
	ck_assert_msg(rc == 0, "ws_arena_check: %s: %s", errname(rc), report);
	ws_arena_close(r.arena);
}

START_TEST(sem_read_racing_close_and_reuse)
{
	race(SEM_READ);
}
END_TEST

START_TEST(event_read_racing_close_and_reuse)
{
	race(EVENT_READ);
}
END_TEST

START_TEST(sem_release_racing_close_and_reuse)
{
	race(SEM_RELEASE);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("reliability_torn_reads");
	TCase *tc = tcase_create("torn_reads");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, sem_read_racing_close_and_reuse);
	tcase_add_test(tc, event_read_racing_close_and_reuse);
	tcase_add_test(tc, sem_release_racing_close_and_reuse);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
