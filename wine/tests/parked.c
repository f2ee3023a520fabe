/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parked threads, as a game parks its workers: 8 threads blocked on an
 * event nobody sets, 8 on a mutex the main thread holds, 4 looping on
 * 5-second timeouts of another such event.  The program prints
 *   parked: pid <linux pid> threads <n>
 * once they are all blocked, holds them for the seconds given (default
 * 25), then releases them and exits with 0 when every thread ended as
 * expected.  wine/parked.sh counts the process's context switches while it
 * holds them (a wake-up of a parked thread is one).
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>

#define ON_EVENT   8
#define ON_MUTEX   8
#define ON_TIMEOUT 4
#define THREADS    (ON_EVENT + ON_MUTEX + ON_TIMEOUT)

static HANDLE never;       /* manual reset, set only at the end */
static HANDLE quiet;       /* manual reset, set only at the end: the timeout loops' object */
static HANDLE held;        /* owned by the main thread until the end */
static volatile LONG started, bad;

static DWORD WINAPI on_event(void *arg)
{
	(void)arg;
	InterlockedIncrement(&started);
	if (WaitForSingleObject(never, INFINITE) != WAIT_OBJECT_0)
		InterlockedIncrement(&bad);
	return 0;
}

static DWORD WINAPI on_mutex(void *arg)
{
	(void)arg;
	InterlockedIncrement(&started);
	if (WaitForSingleObject(held, INFINITE) != WAIT_OBJECT_0)
		InterlockedIncrement(&bad);
	else
		ReleaseMutex(held);
	return 0;
}

static DWORD WINAPI on_timeout(void *arg)
{
	DWORD ret;

	(void)arg;
	InterlockedIncrement(&started);
	while ((ret = WaitForSingleObject(quiet, 5000)) == WAIT_TIMEOUT)
		;
	if (ret != WAIT_OBJECT_0)
		InterlockedIncrement(&bad);
	return 0;
}

/* The Linux process id: a raw getpid system call (Wine's ids are its own). */
static long long linux_pid(void)
{
	long long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(39LL) : "rcx", "r11", "memory");
	return ret;
}

int main(int argc, char **argv)
{
	HANDLE threads[THREADS];
	int seconds = argc > 1 ? atoi(argv[1]) : 25, n = 0, i;

	never = CreateEventA(NULL, TRUE, FALSE, NULL);
	quiet = CreateEventA(NULL, TRUE, FALSE, NULL);
	held = CreateMutexA(NULL, TRUE, NULL);
	if (!never || !quiet || !held || seconds <= 0) {
		printf("FAILED: setup\n");
		return 2;
	}
	for (i = 0; i < ON_EVENT; i++)
		threads[n++] = CreateThread(NULL, 0, on_event, NULL, 0, NULL);
	for (i = 0; i < ON_MUTEX; i++)
		threads[n++] = CreateThread(NULL, 0, on_mutex, NULL, 0, NULL);
	for (i = 0; i < ON_TIMEOUT; i++)
		threads[n++] = CreateThread(NULL, 0, on_timeout, NULL, 0, NULL);
	for (i = 0; i < n; i++)
		if (!threads[i]) {
			printf("FAILED: CreateThread\n");
			return 2;
		}
	while (started < THREADS)
		Sleep(10);
	Sleep(500); /* from "started" to blocked in the kernel */
	printf("parked: pid %lld threads %d\n", linux_pid(), THREADS);
	fflush(stdout);

	Sleep(seconds * 1000);

	SetEvent(never);
	SetEvent(quiet);
	ReleaseMutex(held);
	if (WaitForMultipleObjects(ON_EVENT + ON_MUTEX, threads, TRUE, 30000) != WAIT_OBJECT_0 ||
	    WaitForMultipleObjects(ON_TIMEOUT, threads + ON_EVENT + ON_MUTEX, TRUE, 30000) != WAIT_OBJECT_0) {
		printf("FAILED: the threads did not end\n");
		return 1;
	}
	printf("released: %ld threads woke wrongly\n", (long)bad);
	return bad ? 1 : 0;
}
