/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How late the thread pool's callbacks come, signaled and timed out: the
 * figures behind ntdll_test threadpool's failures, which wait 100-200 ms
 * windows for a pool callback and miss them on a loaded machine with the
 * backend off as with it on (wine/units-results.md).
 *
 *   signal   SetThreadpoolWait(NULL timeout) and RegisterWaitForSingleObject
 *            on a semaphore, then ReleaseSemaphore: from the release to the
 *            callback (the pool's wait thread woken by an in-process signal)
 *   timeout  SetThreadpoolWait with a relative 50 ms timeout: how much later
 *            than 50 ms the callback runs
 *
 * Prints each set's median, 90th and 99th percentiles, maximum and the
 * number of callbacks more than 100 ms late (the windows of Wine's test),
 * and checks what must hold whatever the load: every callback came with
 * the right result, none early, and the medians are within LATE_MS.
 * Ends with "N passed, N failed"; CTest runs it off and on (wine-poolwake-
 * off/on); run it several times both ways to compare the tails.
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include "verdict.h"

#define SIGNALS    200
#define TIMEOUTS   40
#define TIMEOUT_MS 50
#define LATE_MS    20   /* median lateness allowed, signaled or timed out */
#define EARLY_MS   2    /* clock granularity: QPC against the pool's clock */
#define WINDOW_MS  100  /* the windows of ntdll_test threadpool */


static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts the lateness figures, prints them and checks the median. */
static void report(const char *what, double *ms, int n, int all_right)
{
	char line[256];
	int i, over = 0;

	qsort(ms, n, sizeof(*ms), cmp);
	for (i = 0; i < n; i++)
		over += ms[i] > WINDOW_MS;
	snprintf(line, sizeof(line),
		 "%s: %d callbacks, late by median %.2f ms, p90 %.2f, p99 %.2f, max %.2f; %d over %d ms",
		 what, n, ms[n / 2], ms[n * 9 / 10], ms[n * 99 / 100], ms[n - 1], over, WINDOW_MS);
	check(all_right && ms[0] >= -EARLY_MS && ms[n / 2] <= LATE_MS, line);
}

struct fired {
	HANDLE done;
	double at;
	int timed_out;
};

static void CALLBACK tp_wait_cb(PTP_CALLBACK_INSTANCE inst, void *ctx, PTP_WAIT wait, TP_WAIT_RESULT result)
{
	struct fired *f = ctx;

	(void)inst;
	(void)wait;
	f->at = now_ms();
	f->timed_out = result == WAIT_TIMEOUT;
	SetEvent(f->done);
}

static void CALLBACK registered_cb(void *ctx, BOOLEAN timer_or_wait_fired)
{
	struct fired *f = ctx;

	f->at = now_ms();
	f->timed_out = timer_or_wait_fired;
	SetEvent(f->done);
}

int main(void)
{
	static double sig[SIGNALS], reg[SIGNALS], tmo[TIMEOUTS];
	struct fired f = { CreateEventA(NULL, FALSE, FALSE, NULL), 0, 0 };
	HANDLE sem = CreateSemaphoreA(NULL, 0, 1, NULL), handle;
	PTP_WAIT wait = CreateThreadpoolWait(tp_wait_cb, &f, NULL);
	int i, right;
	double t0;

	if (!f.done || !sem || !wait) {
		printf("FAILED: setup (error %lu)\n0 passed, 1 failed\n", GetLastError());
		return 1;
	}

	for (i = 0, right = 1; i < SIGNALS; i++) {
		SetThreadpoolWait(wait, sem, NULL);
		Sleep(1);  /* let the wait thread block on it first */
		t0 = now_ms();
		ReleaseSemaphore(sem, 1, NULL);
		right &= WaitForSingleObject(f.done, 5000) == WAIT_OBJECT_0 && !f.timed_out;
		sig[i] = f.at - t0;
	}
	report("SetThreadpoolWait, signaled", sig, SIGNALS, right);

	for (i = 0, right = 1; i < SIGNALS; i++) {
		if (!RegisterWaitForSingleObject(&handle, sem, registered_cb, &f, INFINITE, WT_EXECUTEONLYONCE)) {
			right = 0;
			break;
		}
		Sleep(1);
		t0 = now_ms();
		ReleaseSemaphore(sem, 1, NULL);
		right &= WaitForSingleObject(f.done, 5000) == WAIT_OBJECT_0 && !f.timed_out;
		reg[i] = f.at - t0;
		UnregisterWaitEx(handle, INVALID_HANDLE_VALUE);
	}
	report("RegisterWaitForSingleObject, signaled", reg, i ? i : 1, right && i == SIGNALS);

	for (i = 0, right = 1; i < TIMEOUTS; i++) {
		LARGE_INTEGER rel;
		FILETIME ft;

		rel.QuadPart = -(LONGLONG)TIMEOUT_MS * 10000;
		ft.dwLowDateTime = rel.LowPart;
		ft.dwHighDateTime = (DWORD)rel.HighPart;
		t0 = now_ms();
		SetThreadpoolWait(wait, sem, &ft);
		right &= WaitForSingleObject(f.done, 5000) == WAIT_OBJECT_0 && f.timed_out;
		tmo[i] = f.at - t0 - TIMEOUT_MS;
	}
	report("SetThreadpoolWait, 50 ms timeout", tmo, TIMEOUTS, right);

	SetThreadpoolWait(wait, NULL, NULL);
	WaitForThreadpoolWaitCallbacks(wait, TRUE);
	CloseThreadpoolWait(wait);
	CloseHandle(sem);
	CloseHandle(f.done);
	printf("%d passed, %d failed\n", passed, failed);
	return failed;
}
