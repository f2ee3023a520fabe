/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync.dll's thread handles under Wine: a handle is signaled when the
 * thread has ended, as on Windows, not when its start routine returns.
 * Between the two the thread still runs its DLL detach (here a TLS callback
 * that takes 300 ms) and Wine's thread exit; a program that waits for its
 * threads and then exits must not find them still running (ExitProcess
 * would kill them there, with SIGQUIT under Wine).  Windows only: the
 * thread's end is read from kernel32's own handle (OpenThread).
 * Exits with 0 if every check holds.
 *
 * `thread-end.exe exit FILE`: EXIT_THREADS threads, each of which takes
 * EXIT_DETACH_MS in its fiber-local storage callback (which Wine runs at
 * thread exit outside the loader lock, so that the main thread's exit does
 * not wait for it) and then writes a line to FILE; the program waits for
 * their handles and returns at once, so that ExitProcess runs right after
 * the last handle is signaled.  The caller counts the lines: every thread
 * must have ended before the process did (with handles signaled too early,
 * Wine kills the threads still in their exit, with SIGQUIT, and their
 * lines are missing).
 */
#include "demo.h"

#define DETACH_MS 300
#define EXIT_THREADS 8
#define EXIT_DETACH_MS 100

static int failures;
static volatile LONG slow_thread;   /* the thread whose detach takes DETACH_MS */
static volatile LONG detach_done;
static HANDLE detach_started;
static HANDLE exit_file;

static void expect(int ok, const char *what)
{
	printf("%s: %s\n", what, ok ? "as expected" : "WRONG");
	failures += !ok;
}

/* Runs in every ending thread, before Wine's server marks it ended. */
static void NTAPI on_tls(PVOID module, DWORD reason, PVOID reserved)
{
	(void)module, (void)reserved;
	if (reason != DLL_THREAD_DETACH || (DWORD)slow_thread != GetCurrentThreadId())
		return;
	SetEvent(detach_started);
	Sleep(DETACH_MS);
	InterlockedExchange(&detach_done, 1);
}

__attribute__((section(".CRT$XLB"), used)) PIMAGE_TLS_CALLBACK thread_end_tls = on_tls;

/* Returns 5, once `parameter` (an event, if any) is set. */
static DWORD WINAPI returns(LPVOID parameter)
{
	if (parameter)
		WaitForSingleObject((HANDLE)parameter, INFINITE);
	return 5;
}

static DWORD WINAPI exits(LPVOID parameter)
{
	(void)parameter;
	ExitThread(7);
}

static DWORD WINAPI abandons(LPVOID parameter)
{
	return WaitForSingleObject((HANDLE)parameter, INFINITE) == WAIT_OBJECT_0 ? 0 : 1;
}

/* A thread of the exit mode is ending (its fiber-local value is set). */
static void WINAPI slow_end(PVOID value)
{
	DWORD written;

	if (!value)
		return;
	Sleep(EXIT_DETACH_MS);
	WriteFile(exit_file, "ended\n", 6, &written, NULL);
}

static DWORD exit_slot;

static DWORD WINAPI marked(LPVOID parameter)
{
	(void)parameter;
	FlsSetValue(exit_slot, (PVOID)1);
	return 0;
}

/* The exit mode: returns from main as soon as every thread's handle is signaled. */
static int exit_after_threads(const char *path)
{
	HANDLE threads[EXIT_THREADS];

	exit_file = CreateFileA(path, FILE_APPEND_DATA, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
				CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
	DEMO_CHECK(exit_file != INVALID_HANDLE_VALUE, "CreateFile %s", path);
	exit_slot = FlsAlloc(slow_end);
	DEMO_CHECK(exit_slot != FLS_OUT_OF_INDEXES, "FlsAlloc");
	for (int i = 0; i < EXIT_THREADS; i++) {
		threads[i] = CreateThread(NULL, 0, marked, NULL, 0, NULL);
		DEMO_CHECK(threads[i] != NULL, "CreateThread");
	}
	DEMO_CHECK(WaitForMultipleObjects(EXIT_THREADS, threads, TRUE, INFINITE) == WAIT_OBJECT_0,
		   "wait for the threads");
	printf("%d threads waited for, exiting\n", EXIT_THREADS);
	return 0;
}

int main(int argc, char **argv)
{
	HANDLE thread, os_thread, mutex, go;
	DWORD id, code;

	demo_init();
	if (argc == 3 && !strcmp(argv[1], "exit"))
		return exit_after_threads(argv[2]);
	detach_started = CreateEventA(NULL, TRUE, FALSE, NULL);
	DEMO_CHECK(detach_started != NULL, "CreateEvent");

	/* The start routine returns on `go`; the thread's detach takes 300 ms more. */
	go = CreateEventA(NULL, TRUE, FALSE, NULL);
	DEMO_CHECK(go != NULL, "CreateEvent");
	thread = CreateThread(NULL, 0, returns, go, 0, &id);
	DEMO_CHECK(thread != NULL, "CreateThread");
	InterlockedExchange(&slow_thread, (LONG)id);
	os_thread = OpenThread(SYNCHRONIZE | THREAD_QUERY_LIMITED_INFORMATION, FALSE, id);
	DEMO_CHECK(os_thread != NULL, "OpenThread");
	SetEvent(go);
	DEMO_CHECK(WaitForSingleObject(detach_started, 10000) == WAIT_OBJECT_0, "the TLS callback");
	expect(WaitForSingleObject(thread, 0) == WAIT_TIMEOUT,
	       "handle not signaled while the thread runs its DLL detach");
	expect(GetExitCodeThread(thread, &code) && code == STILL_ACTIVE,
	       "exit code STILL_ACTIVE while the thread runs its DLL detach");
	expect(WaitForSingleObject(thread, INFINITE) == WAIT_OBJECT_0, "wait for the thread");
	expect(detach_done == 1, "its DLL detach has finished when the handle is signaled");
	expect(WaitForSingleObject(os_thread, 0) == WAIT_OBJECT_0,
	       "kernel32's handle is signaled when winsync's is");
	expect(GetExitCodeThread(thread, &code) && code == 5, "exit code of the start routine");
	CloseHandle(os_thread);
	CloseHandle(thread);
	CloseHandle(go);

	/* ExitThread's code, which only the thread's real end reports. */
	thread = CreateThread(NULL, 0, exits, NULL, 0, NULL);
	DEMO_CHECK(thread != NULL, "CreateThread");
	expect(WaitForSingleObject(thread, INFINITE) == WAIT_OBJECT_0, "wait for ExitThread");
	expect(GetExitCodeThread(thread, &code) && code == 7, "exit code of ExitThread(7)");
	CloseHandle(thread);

	/* Mutexes the thread still owns are abandoned before its handle is signaled. */
	mutex = CreateMutexA(NULL, FALSE, NULL);
	DEMO_CHECK(mutex != NULL, "CreateMutex");
	thread = CreateThread(NULL, 0, abandons, mutex, 0, NULL);
	DEMO_CHECK(thread != NULL, "CreateThread");
	expect(WaitForSingleObject(thread, INFINITE) == WAIT_OBJECT_0, "wait for the owner");
	expect(WaitForSingleObject(mutex, 0) == WAIT_ABANDONED_0, "its mutex is abandoned");
	ReleaseMutex(mutex);
	CloseHandle(mutex);
	CloseHandle(thread);

	/* A closed handle does not stop the thread's end from being handled. */
	thread = CreateThread(NULL, 0, returns, NULL, 0, &id);
	DEMO_CHECK(thread != NULL, "CreateThread");
	os_thread = OpenThread(SYNCHRONIZE, FALSE, id);
	CloseHandle(thread);
	expect(os_thread && WaitForSingleObject(os_thread, 10000) == WAIT_OBJECT_0,
	       "a thread whose handle was closed ends");
	if (os_thread)
		CloseHandle(os_thread);

	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
