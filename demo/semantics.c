/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The return values and error codes of the Win32 calls, one case a line:
 * what kernel32 (Wine's objects) answers, winsync.dll and native winsync
 * must answer too, byte for byte.
 *
 * Two cases are left out because Wine 8 differs from Windows there and
 * winsync follows Windows: a wait-all on the same handle twice (Windows and
 * winsync: ERROR_INVALID_PARAMETER; Wine: acquires it), and
 * SignalObjectAndWait releasing a mutex the thread does not own (Windows
 * and winsync: WAIT_FAILED, ERROR_NOT_OWNER; Wine: goes on to wait).
 */
#include "demo.h"

static char buf[64];

static const char *w(DWORD r, DWORD count)
{
	return demo_wait_name(r, count, buf, sizeof(buf));
}

static const char *b(BOOL ok)
{
	return ok ? "TRUE" : "FALSE";
}

/* "TRUE" or "FALSE, <last error>" */
static const char *call(BOOL ok)
{
	static char text[64];

	if (ok)
		return "TRUE";
	snprintf(text, sizeof(text), "FALSE, %s", demo_error_name(GetLastError()));
	return text;
}

/* A wait result, with the last error when it failed. */
static const char *waited(DWORD r, DWORD count)
{
	static char text[96];

	if (r != WAIT_FAILED)
		return w(r, count);
	snprintf(text, sizeof(text), "WAIT_FAILED, %s", demo_error_name(GetLastError()));
	return text;
}

static const char *created(HANDLE h)
{
	static char text[64];

	if (h)
		return "a handle";
	snprintf(text, sizeof(text), "NULL, %s", demo_error_name(GetLastError()));
	return text;
}

static HANDLE owned_mutex;
static DWORD other_result;

static DWORD WINAPI try_other(LPVOID parameter)
{
	other_result = WaitForSingleObject(parameter, 0);
	return 42;
}

static DWORD WINAPI sleeper(LPVOID parameter)
{
	return WaitForSingleObject(parameter, INFINITE) == WAIT_OBJECT_0 ? 5 : 6;
}

int main(void)
{
	HANDLE ev_manual, ev_auto, sem, mtx, h[4], t;
	LONG previous;
	DWORD r, code;
	BOOL ok;
	int line = 0;

	demo_init();
	printf("Win32 semantics, case by case\n");
	ev_manual = CreateEventA(NULL, TRUE, FALSE, NULL);
	ev_auto = CreateEventA(NULL, FALSE, FALSE, NULL);
	sem = CreateSemaphoreA(NULL, 1, 3, NULL);
	mtx = CreateMutexA(NULL, FALSE, NULL);
	DEMO_CHECK(ev_manual && ev_auto && sem && mtx, "creating the objects");

	printf("-- events\n");
	r = WaitForSingleObject(ev_manual, 0);
	printf("%2d. wait on an unsignaled event, 0 ms: %s\n", ++line, w(r, 1));
	r = WaitForSingleObject(ev_manual, 30);
	printf("%2d. wait on an unsignaled event, 30 ms: %s\n", ++line, w(r, 1));
	ok = SetEvent(ev_manual);
	printf("%2d. SetEvent (manual reset): %s\n", ++line, b(ok));
	r = WaitForSingleObject(ev_manual, 0);
	printf("%2d. wait: %s; again: ", ++line, w(r, 1));
	r = WaitForSingleObject(ev_manual, 0);
	printf("%s (a manual-reset event stays signaled)\n", w(r, 1));
	ok = ResetEvent(ev_manual);
	r = WaitForSingleObject(ev_manual, 0);
	printf("%2d. ResetEvent: %s; wait: %s\n", ++line, b(ok), w(r, 1));
	SetEvent(ev_auto);
	r = WaitForSingleObject(ev_auto, 0);
	printf("%2d. SetEvent (auto reset), wait: %s; ", ++line, w(r, 1));
	r = WaitForSingleObject(ev_auto, 0);
	printf("again: %s (the wait reset it)\n", w(r, 1));
	SetEvent(ev_auto);
	SetEvent(ev_auto);
	r = WaitForSingleObject(ev_auto, 0);
	printf("%2d. SetEvent twice, wait: %s; ", ++line, w(r, 1));
	r = WaitForSingleObject(ev_auto, 0);
	printf("again: %s\n", w(r, 1));
	SetLastError(ERROR_SUCCESS);
	ok = ReleaseMutex(ev_auto);
	printf("%2d. ReleaseMutex on an event: %s\n", ++line, call(ok));
	ok = ReleaseSemaphore(ev_auto, 1, NULL);
	printf("%2d. ReleaseSemaphore on an event: %s\n", ++line, call(ok));

	printf("-- semaphores\n");
	SetLastError(ERROR_SUCCESS);
	printf("%2d. CreateSemaphore(2, max 1): %s\n", ++line, created(CreateSemaphoreA(NULL, 2, 1, NULL)));
	printf("%2d. CreateSemaphore(-1, max 1): %s\n", ++line, created(CreateSemaphoreA(NULL, -1, 1, NULL)));
	printf("%2d. CreateSemaphore(0, max 0): %s\n", ++line, created(CreateSemaphoreA(NULL, 0, 0, NULL)));
	previous = -1;
	ok = ReleaseSemaphore(sem, 2, &previous);
	printf("%2d. ReleaseSemaphore(+2) at 1 of 3: %s, previous %d\n", ++line, b(ok), (int)previous);
	previous = -1;
	ok = ReleaseSemaphore(sem, 1, &previous);
	printf("%2d. ReleaseSemaphore(+1) at 3 of 3: %s\n", ++line, call(ok));
	r = WaitForSingleObject(sem, 0);
	printf("%2d. wait: %s; ", ++line, w(r, 1));
	previous = -1;
	ok = ReleaseSemaphore(sem, 1, &previous);
	printf("ReleaseSemaphore(+1): %s, previous %d\n", b(ok), (int)previous);
	for (int i = 0; i < 3; i++)
		WaitForSingleObject(sem, 0);
	r = WaitForSingleObject(sem, 0);
	printf("%2d. after three waits the count is 0: %s\n", ++line, w(r, 1));
	SetLastError(ERROR_SUCCESS);
	ok = SetEvent(sem);
	printf("%2d. SetEvent on a semaphore: %s\n", ++line, call(ok));

	printf("-- mutexes\n");
	for (int i = 0; i < 3; i++)
		WaitForSingleObject(mtx, 0);
	printf("%2d. three waits by one thread: recursive;", ++line);
	for (int i = 0; i < 3; i++) {
		ok = ReleaseMutex(mtx);
		printf(" %s", b(ok));
	}
	SetLastError(ERROR_SUCCESS);
	ok = ReleaseMutex(mtx);
	printf("; a fourth release: %s\n", call(ok));
	owned_mutex = CreateMutexA(NULL, TRUE, NULL);
	DEMO_CHECK(owned_mutex != NULL, "CreateMutex");
	t = demo_thread(try_other, owned_mutex);
	r = WaitForSingleObject(t, INFINITE);
	ok = GetExitCodeThread(t, &code);
	printf("%2d. CreateMutex(owned): another thread's wait: %s (thread: %s, exit code %u)\n",
	       ++line, w(other_result, 1), w(r, 1), (unsigned)code);
	CloseHandle(t);
	ok = ReleaseMutex(owned_mutex);
	printf("%2d. the creator releases it: %s\n", ++line, b(ok));
	SetLastError(ERROR_SUCCESS);
	ok = ResetEvent(owned_mutex);
	printf("%2d. ResetEvent on a mutex: %s\n", ++line, call(ok));

	printf("-- WaitForMultipleObjects\n");
	SetLastError(ERROR_SUCCESS);
	h[0] = ev_manual;
	r = WaitForMultipleObjects(0, h, FALSE, 0);
	printf("%2d. no handles: %s\n", ++line, waited(r, 0));
	SetEvent(ev_manual);
	SetEvent(ev_auto);
	h[0] = ev_auto;
	h[1] = ev_manual;
	r = WaitForMultipleObjects(2, h, FALSE, 0);
	printf("%2d. any of two signaled: %s (the lowest index); ", ++line, w(r, 2));
	r = WaitForMultipleObjects(2, h, FALSE, 0);
	printf("again: %s\n", w(r, 2));
	h[0] = ev_manual;
	h[1] = ev_manual;
	r = WaitForMultipleObjects(2, h, FALSE, 0);
	printf("%2d. any, the same event twice: %s\n", ++line, waited(r, 2));
	ReleaseSemaphore(sem, 1, NULL);
	ResetEvent(ev_auto);
	h[0] = sem;
	h[1] = ev_auto;
	r = WaitForMultipleObjects(2, h, TRUE, 20);
	printf("%2d. all of {semaphore at 1, unsignaled event}, 20 ms: %s; ", ++line, w(r, 2));
	r = WaitForSingleObject(sem, 0);
	printf("the semaphore was not taken: %s\n", w(r, 1));
	ReleaseSemaphore(sem, 1, NULL);
	SetEvent(ev_auto);
	r = WaitForMultipleObjects(2, h, TRUE, 0);
	printf("%2d. all, both signaled: %s; ", ++line, w(r, 2));
	r = WaitForMultipleObjects(2, h, FALSE, 0);
	printf("then any: %s (both were taken)\n", w(r, 2));
	h[0] = ev_manual;
	h[1] = (HANDLE)(ULONG_PTR)0x7ffffff0;
	SetLastError(ERROR_SUCCESS);
	r = WaitForMultipleObjects(2, h, FALSE, 0);
	printf("%2d. any, with an invalid handle: %s\n", ++line, waited(r, 2));

	printf("-- SignalObjectAndWait\n");
	ResetEvent(ev_auto);
	r = SignalObjectAndWait(ev_manual, ev_auto, 20, FALSE);
	printf("%2d. set an event, wait 20 ms on another: %s\n", ++line, waited(r, 1));
	r = SignalObjectAndWait(ev_auto, ev_auto, 0, FALSE);
	printf("%2d. set an auto-reset event and wait on it: %s\n", ++line, waited(r, 1));
	ReleaseSemaphore(sem, 2, NULL); /* at its maximum, 3 */
	SetLastError(ERROR_SUCCESS);
	r = SignalObjectAndWait(sem, ev_manual, 0, FALSE);
	printf("%2d. release a full semaphore, then wait: %s\n", ++line, waited(r, 1));
	WaitForSingleObject(mtx, 0);
	r = SignalObjectAndWait(mtx, sem, 0, FALSE);
	printf("%2d. release an owned mutex, wait on a semaphore: %s\n", ++line, waited(r, 1));

	printf("-- threads and handles\n");
	ResetEvent(ev_manual);
	t = demo_thread(sleeper, ev_manual);
	r = WaitForSingleObject(t, 0);
	ok = GetExitCodeThread(t, &code);
	printf("%2d. a running thread: wait %s, exit code %u\n", ++line, w(r, 1), (unsigned)code);
	SetEvent(ev_manual);
	r = WaitForSingleObject(t, INFINITE);
	ok = GetExitCodeThread(t, &code);
	printf("%2d. after it ended: wait %s, exit code %u; ", ++line, w(r, 1), (unsigned)code);
	r = WaitForSingleObject(t, 0);
	printf("again: %s (stays signaled)\n", w(r, 1));
	SetLastError(ERROR_SUCCESS);
	ok = SetEvent(t);
	printf("%2d. SetEvent on a thread handle: %s\n", ++line, call(ok));
	ok = CloseHandle(t);
	printf("%2d. CloseHandle: %s; ", ++line, b(ok));
	SetLastError(ERROR_SUCCESS);
	ok = CloseHandle(t);
	printf("again: %s\n", call(ok));
	ok = CloseHandle(mtx);
	SetLastError(ERROR_SUCCESS);
	ok = ReleaseMutex(mtx);
	printf("%2d. ReleaseMutex on a closed handle: %s\n", ++line, call(ok));

	CloseHandle(ev_manual);
	CloseHandle(ev_auto);
	CloseHandle(sem);
	CloseHandle(owned_mutex);
	return 0;
}
