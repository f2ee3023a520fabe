/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Absolute NT timeouts under Wine (wine/patches/0005 waits them on
 * CLOCK_REALTIME): NtWaitForSingleObject with an absolute time, and the
 * thread pool, whose wait and timer threads turn every timeout into an
 * absolute one (RegisterWaitForSingleObject, SetThreadpoolWait,
 * SetThreadpoolTimer).  A 200 ms timeout must fire no earlier than 200 ms
 * and at most LATE_MS later (the median of TRIES tries), relative timeouts
 * too; a past time polls; a far time does not end a wait that a signal ends,
 * nor do times past 2038 and relative ones of centuries (patch 0008 clamps
 * them); a time before 1970 (which the patch clamps) is past too.
 * Prints one line per check, the measured figures, and "N passed, N
 * failed"; exits with the number of failures.  Run by CTest (wine-deadline-
 * off/on) through wine/run-tests.sh.
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include "verdict.h"

#define TIMEOUT_MS 200
#define LATE_MS    50   /* "within tens of milliseconds" */
#define EARLY_MS   2    /* clock granularity: QPC against the wall clock */
#define TRIES      5

typedef LONG(NTAPI *wait_fn)(HANDLE, BOOLEAN, const LARGE_INTEGER *);
static wait_fn pNtWaitForSingleObject;


/* The NT system time (100 ns since 1601) plus ms: an absolute timeout. */
static LONGLONG system_time_in(LONGLONG ms)
{
	FILETIME ft;
	ULARGE_INTEGER u;

	GetSystemTimePreciseAsFileTime(&ft);
	u.LowPart = ft.dwLowDateTime;
	u.HighPart = ft.dwHighDateTime;
	return (LONGLONG)u.QuadPart + ms * 10000;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts the tries' elapsed times, checks the median and the earliest. */
static void check_times(const char *what, double *ms, int n, int all_fired)
{
	char line[256];
	double median;

	qsort(ms, n, sizeof(*ms), cmp);
	median = ms[n / 2];
	snprintf(line, sizeof(line), "%s: %d ms timeout fired after %.1f ms median (%.1f..%.1f ms; late by %.1f ms)",
		 what, TIMEOUT_MS, median, ms[0], ms[n - 1], median - TIMEOUT_MS);
	check(all_fired && ms[0] >= TIMEOUT_MS - EARLY_MS && median <= TIMEOUT_MS + LATE_MS, line);
}

/* --- NtWaitForSingleObject with absolute times ------------------------------ */

static HANDLE signal_target;

static DWORD WINAPI set_later(void *arg)
{
	Sleep((DWORD)(ULONG_PTR)arg);
	SetEvent(signal_target);
	return 0;
}

static void test_nt_wait(HANDLE event)
{
	double ms[TRIES], t0;
	LARGE_INTEGER when;
	HANDLE thread;
	char line[160];
	LONG ret;
	int i, timed_out = 1;

	for (i = 0; i < TRIES; i++) {
		when.QuadPart = system_time_in(TIMEOUT_MS);
		t0 = now_ms();
		ret = pNtWaitForSingleObject(event, FALSE, &when);
		ms[i] = now_ms() - t0;
		timed_out &= ret == STATUS_TIMEOUT;
	}
	check_times("NtWaitForSingleObject, absolute", ms, TRIES, timed_out);

	/* relative: a deadline that lost its fraction of a second (patch 0008: the
	 * 32-bit time_t of the library against Wine's 64-bit one) fires early */
	timed_out = 1;
	for (i = 0; i < TRIES; i++) {
		when.QuadPart = -(LONGLONG)TIMEOUT_MS * 10000;
		t0 = now_ms();
		ret = pNtWaitForSingleObject(event, FALSE, &when);
		ms[i] = now_ms() - t0;
		timed_out &= ret == STATUS_TIMEOUT;
	}
	check_times("NtWaitForSingleObject, relative", ms, TRIES, timed_out);

	when.QuadPart = system_time_in(-1000);
	t0 = now_ms();
	ret = pNtWaitForSingleObject(event, FALSE, &when);
	t0 = now_ms() - t0;
	snprintf(line, sizeof(line), "a past absolute time polls (status %#lx, %.1f ms)", (unsigned long)ret, t0);
	check(ret == STATUS_TIMEOUT && t0 < LATE_MS, line);

	/* 1601 + 100 ns: before 1970, where the wall clock cannot go */
	when.QuadPart = 1;
	t0 = now_ms();
	ret = pNtWaitForSingleObject(event, FALSE, &when);
	t0 = now_ms() - t0;
	snprintf(line, sizeof(line), "an absolute time before 1970 polls (status %#lx, %.1f ms)", (unsigned long)ret, t0);
	check(ret == STATUS_TIMEOUT && t0 < LATE_MS, line);

	/* far ahead: the signal after 100 ms ends it, not the time */
	signal_target = event;
	thread = CreateThread(NULL, 0, set_later, (void *)(ULONG_PTR)100, 0, NULL);
	when.QuadPart = system_time_in(20000);
	t0 = now_ms();
	ret = pNtWaitForSingleObject(event, FALSE, &when);
	t0 = now_ms() - t0;
	snprintf(line, sizeof(line), "a signal ends a wait with an absolute time 20 s ahead (status %#lx, %.1f ms)",
		 (unsigned long)ret, t0);
	check(ret == STATUS_WAIT_0 && t0 >= 100 - EARLY_MS && t0 < 5000, line);
	WaitForSingleObject(thread, INFINITE);
	CloseHandle(thread);
	ResetEvent(event);

	/* times past what a 32-bit time_t holds (2038), absolute and relative: they
	 * must not wrap to a past deadline (patch 0008 clamps them) */
	{
		static const LONGLONG distant[] = {
			154000000000000000LL,   /* 2089 */
			0x7ffffffffffffff0LL,   /* the largest but TIMEOUT_INFINITE */
			-0x0100000000000000LL,  /* 2,283 years */
			-0x7ffffffffffffff0LL,
		};

		for (i = 0; i < (int)(sizeof(distant) / sizeof(distant[0])); i++) {
			thread = CreateThread(NULL, 0, set_later, (void *)(ULONG_PTR)100, 0, NULL);
			when.QuadPart = distant[i];
			t0 = now_ms();
			ret = pNtWaitForSingleObject(event, FALSE, &when);
			t0 = now_ms() - t0;
			snprintf(line, sizeof(line), "a signal ends a wait with the timeout %#llx (status %#lx, %.1f ms)",
				 (unsigned long long)distant[i], (unsigned long)ret, t0);
			check(ret == STATUS_WAIT_0 && t0 >= 100 - EARLY_MS && t0 < 5000, line);
			WaitForSingleObject(thread, INFINITE);
			CloseHandle(thread);
			ResetEvent(event);
		}
	}
}

/* --- the thread pool --------------------------------------------------------- */

struct fired {
	HANDLE done;
	double at;
	int timed_out;
};

static void CALLBACK registered_cb(void *ctx, BOOLEAN timer_or_wait_fired)
{
	struct fired *f = ctx;

	f->at = now_ms();
	f->timed_out = timer_or_wait_fired;
	SetEvent(f->done);
}

static void CALLBACK tp_wait_cb(PTP_CALLBACK_INSTANCE inst, void *ctx, PTP_WAIT wait, TP_WAIT_RESULT result)
{
	struct fired *f = ctx;

	(void)inst;
	(void)wait;
	f->at = now_ms();
	f->timed_out = result == WAIT_TIMEOUT;
	SetEvent(f->done);
}

static void CALLBACK tp_timer_cb(PTP_CALLBACK_INSTANCE inst, void *ctx, PTP_TIMER timer)
{
	struct fired *f = ctx;

	(void)inst;
	(void)timer;
	f->at = now_ms();
	f->timed_out = 1;
	SetEvent(f->done);
}

static void test_registered_wait(HANDLE event)
{
	struct fired f = { CreateEventA(NULL, FALSE, FALSE, NULL), 0, 0 };
	double ms[TRIES], t0;
	HANDLE wait;
	int i, ok = f.done != NULL;

	for (i = 0; i < TRIES; i++) {
		f.timed_out = 0;
		t0 = now_ms();
		if (!RegisterWaitForSingleObject(&wait, event, registered_cb, &f, TIMEOUT_MS, WT_EXECUTEONLYONCE)) {
			ok = 0;
			break;
		}
		ok &= WaitForSingleObject(f.done, 5000) == WAIT_OBJECT_0 && f.timed_out;
		ms[i] = f.at - t0;
		UnregisterWaitEx(wait, INVALID_HANDLE_VALUE);
	}
	if (i == TRIES)
		check_times("RegisterWaitForSingleObject (RtlRegisterWait)", ms, TRIES, ok);
	else
		check(0, "RegisterWaitForSingleObject");
	CloseHandle(f.done);
}

static void test_tp_wait(HANDLE event)
{
	struct fired f = { CreateEventA(NULL, FALSE, FALSE, NULL), 0, 0 };
	PTP_WAIT wait = CreateThreadpoolWait(tp_wait_cb, &f, NULL);
	double ms[TRIES], t0;
	ULARGE_INTEGER when;
	FILETIME ft;
	int i, ok = f.done && wait;

	for (i = 0; ok && i < TRIES; i++) {
		f.timed_out = 0;
		when.QuadPart = (ULONGLONG)system_time_in(TIMEOUT_MS); /* positive: absolute */
		ft.dwLowDateTime = when.LowPart;
		ft.dwHighDateTime = when.HighPart;
		t0 = now_ms();
		SetThreadpoolWait(wait, event, &ft);
		ok &= WaitForSingleObject(f.done, 5000) == WAIT_OBJECT_0 && f.timed_out;
		ms[i] = f.at - t0;
		WaitForThreadpoolWaitCallbacks(wait, FALSE);
	}
	if (ok)
		check_times("SetThreadpoolWait (TpSetWait), absolute", ms, TRIES, ok);
	else
		check(0, "SetThreadpoolWait");
	if (wait)
		CloseThreadpoolWait(wait);
	CloseHandle(f.done);
}

static void test_tp_timer(void)
{
	struct fired f = { CreateEventA(NULL, FALSE, FALSE, NULL), 0, 0 };
	PTP_TIMER timer = CreateThreadpoolTimer(tp_timer_cb, &f, NULL);
	double ms[TRIES], t0;
	ULARGE_INTEGER when;
	FILETIME ft;
	int i, ok = f.done && timer;

	for (i = 0; ok && i < TRIES; i++) {
		when.QuadPart = (ULONGLONG)(-(LONGLONG)TIMEOUT_MS * 10000); /* negative: relative */
		ft.dwLowDateTime = when.LowPart;
		ft.dwHighDateTime = when.HighPart;
		t0 = now_ms();
		SetThreadpoolTimer(timer, &ft, 0, 0);
		ok &= WaitForSingleObject(f.done, 5000) == WAIT_OBJECT_0;
		ms[i] = f.at - t0;
		WaitForThreadpoolTimerCallbacks(timer, FALSE);
	}
	if (ok)
		check_times("SetThreadpoolTimer (TpSetTimer), relative", ms, TRIES, ok);
	else
		check(0, "SetThreadpoolTimer");
	if (timer)
		CloseThreadpoolTimer(timer);
	CloseHandle(f.done);
}

int main(void)
{
	HANDLE event = CreateEventA(NULL, FALSE, FALSE, NULL); /* never set but by test_nt_wait */

	pNtWaitForSingleObject = (wait_fn)(void (*)(void))GetProcAddress(GetModuleHandleA("ntdll.dll"),
									   "NtWaitForSingleObject");
	check(event && pNtWaitForSingleObject, "setup");
	if (event && pNtWaitForSingleObject) {
		test_nt_wait(event);
		test_registered_wait(event);
		test_tp_wait(event);
		test_tp_timer();
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed;
}
