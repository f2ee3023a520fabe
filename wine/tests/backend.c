/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What Wine's conformance tests leave out about the winsync backend, as an
 * unmodified kernel32 program (mingw-w64, no winsync header):
 *   - waits the server serves (they include a change notification, which
 *     the backend does not mirror) end on in-process signals: set, pulse,
 *     semaphore release, mutex release (the watch counters and winsync_wake)
 *   - alertable waits end on a queued user APC, which runs
 *   - SuspendThread/ResumeThread of threads busy with sync calls on shared
 *     objects deadlock nothing (suspension deferral)
 *   - named objects and DuplicateHandle reach the same object in another
 *     process; a process handle is waitable
 * Prints one line per check and "N passed, N failed"; exits with the
 * number of failures.  Run by CTest (wine-backend-on/off) through
 * wine/run.sh, with the backend on and off: both must pass.
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "verdict.h"


/* --- a server wait ends on an in-process signal ---------------------------- */

static HANDLE notify; /* a change notification: never signaled here, not mirrored */
static HANDLE target;
static DWORD result, waited_ms;

static DWORD WINAPI server_waiter(void *arg)
{
	HANDLE objects[2] = { notify, target };
	DWORD start = GetTickCount();

	(void)arg;
	result = WaitForMultipleObjects(2, objects, FALSE, 20000);
	waited_ms = GetTickCount() - start;
	return 0;
}

static void do_set(void) { SetEvent(target); }
static void do_pulse(void) { PulseEvent(target); }
static void do_release_sem(void) { ReleaseSemaphore(target, 1, NULL); }
static void do_release_mutex(void) { ReleaseMutex(target); }

/* Starts a waiter on {notify, target}, lets it block, signals, checks.  A
 * pulse finds no waiter when the thread is not in its wait yet (200 ms were
 * not always enough on a loaded machine): it is repeated until the wait
 * ends, up to 10 s; a pulse that never reaches a server wait still fails. */
static void server_wait_case(const char *what, void (*signal)(void), DWORD expected)
{
	char line[160];
	HANDLE thread;
	DWORD done;
	int tries;

	result = WAIT_FAILED;  /* not the previous case's, if the wait does not end */
	waited_ms = 0;
	thread = CreateThread(NULL, 0, server_waiter, NULL, 0, NULL);
	Sleep(200);
	signal();
	done = WaitForSingleObject(thread, signal == do_pulse ? 200 : 10000);
	for (tries = 1; done == WAIT_TIMEOUT && signal == do_pulse && tries < 50; tries++) {
		signal();
		done = WaitForSingleObject(thread, 200);
	}
	snprintf(line, sizeof(line), "%s wakes a server wait (result %lu, %lu ms)", what,
		 (unsigned long)result, (unsigned long)waited_ms);
	check(done == WAIT_OBJECT_0 && result == expected && waited_ms < 10000, line);
	CloseHandle(thread);
}

static void test_server_waits(void)
{
	char dir[MAX_PATH];

	GetTempPathA(sizeof(dir), dir);
	notify = FindFirstChangeNotificationA(dir, FALSE, FILE_NOTIFY_CHANGE_ATTRIBUTES);
	check(notify != INVALID_HANDLE_VALUE, "FindFirstChangeNotification");

	target = CreateEventA(NULL, FALSE, FALSE, NULL);
	server_wait_case("SetEvent (auto reset)", do_set, WAIT_OBJECT_0 + 1);
	check(WaitForSingleObject(target, 0) == WAIT_TIMEOUT, "the auto-reset event went to the waiter");
	CloseHandle(target);

	target = CreateEventA(NULL, TRUE, FALSE, NULL);
	server_wait_case("PulseEvent (manual reset)", do_pulse, WAIT_OBJECT_0 + 1);
	check(WaitForSingleObject(target, 0) == WAIT_TIMEOUT, "the pulsed event is reset");
	CloseHandle(target);

	target = CreateSemaphoreA(NULL, 0, 1, NULL);
	server_wait_case("ReleaseSemaphore", do_release_sem, WAIT_OBJECT_0 + 1);
	check(WaitForSingleObject(target, 0) == WAIT_TIMEOUT, "the waiter took the unit");
	CloseHandle(target);

	target = CreateMutexA(NULL, TRUE, NULL);
	server_wait_case("ReleaseMutex", do_release_mutex, WAIT_OBJECT_0 + 1);
	/* the waiter thread owned it and exited: abandoned now */
	check(WaitForSingleObject(target, 0) == WAIT_ABANDONED_0, "the waiter owned it, its exit abandoned it");
	ReleaseMutex(target);
	CloseHandle(target);
	FindCloseChangeNotification(notify);
}

/* --- alertable waits --------------------------------------------------------- */

static volatile LONG apc_ran;

static void CALLBACK apc(ULONG_PTR arg)
{
	InterlockedExchange(&apc_ran, (LONG)arg);
}

static HANDLE alertable_ready;

static DWORD WINAPI alertable_waiter(void *event)
{
	SetEvent(alertable_ready);
	return WaitForSingleObjectEx(event, 20000, TRUE);
}

static void test_alertable(void)
{
	HANDLE event = CreateEventA(NULL, TRUE, FALSE, NULL);
	HANDLE thread;
	DWORD code = 0;

	/* An APC queued before the thread runs its start routine runs at its
	 * start, not in the wait (a 200 ms sleep was not always enough on a
	 * loaded machine): queue it once the thread is at its wait.  Either it
	 * is pending when the wait starts or it interrupts the wait; both end
	 * the wait with WAIT_IO_COMPLETION. */
	alertable_ready = CreateEventA(NULL, FALSE, FALSE, NULL);
	thread = CreateThread(NULL, 0, alertable_waiter, event, 0, NULL);
	WaitForSingleObject(alertable_ready, INFINITE);
	Sleep(50);
	check(QueueUserAPC(apc, thread, 42) != 0, "QueueUserAPC");
	check(WaitForSingleObject(thread, 10000) == WAIT_OBJECT_0, "the alertable wait ended");
	GetExitCodeThread(thread, &code);
	check(code == WAIT_IO_COMPLETION && apc_ran == 42, "with WAIT_IO_COMPLETION, after the APC ran");
	check(SleepEx(0, TRUE) == 0, "no APC left");
	CloseHandle(thread);
	CloseHandle(event);
	CloseHandle(alertable_ready);
}

/* --- suspension of busy threads ------------------------------------------------ */

static HANDLE busy_event, busy_sem, busy_mutex;
static volatile LONG busy_stop;
static volatile LONG busy_ops[2];

static DWORD WINAPI busy(void *arg)
{
	LONG i = (LONG)(LONG_PTR)arg;

	while (!busy_stop) {
		SetEvent(busy_event);
		WaitForSingleObject(busy_event, 0);
		ReleaseSemaphore(busy_sem, 1, NULL);
		WaitForSingleObject(busy_sem, 0);
		/* only the suspended one takes the mutex: the other must never wait for it */
		if (i == 0 && WaitForSingleObject(busy_mutex, 1000) == WAIT_OBJECT_0)
			ReleaseMutex(busy_mutex);
		InterlockedIncrement(&busy_ops[i]);
	}
	return 0;
}

static void test_suspend(void)
{
	HANDLE threads[2];
	LONG before;
	int i, stuck = 0;

	busy_event = CreateEventA(NULL, FALSE, FALSE, NULL);
	busy_sem = CreateSemaphoreA(NULL, 0, 1000, NULL);
	busy_mutex = CreateMutexA(NULL, FALSE, NULL);
	for (i = 0; i < 2; i++)
		threads[i] = CreateThread(NULL, 0, busy, (void *)(LONG_PTR)i, 0, NULL);
	for (i = 0; i < 300; i++) {
		SuspendThread(threads[0]);
		/* the other thread goes on with the same objects meanwhile */
		before = busy_ops[1];
		Sleep(1);
		if (i % 50 == 49 && busy_ops[1] == before) {
			Sleep(500);
			if (busy_ops[1] == before)
				stuck++;
		}
		ResumeThread(threads[0]);
	}
	before = busy_ops[0];
	/* up to 2 s: a loaded machine may not run it within the first 100 ms */
	for (i = 0; i < 20 && busy_ops[0] == before; i++)
		Sleep(100);
	check(!stuck, "300 suspensions of a thread busy on shared objects: the other one never stalled");
	check(busy_ops[0] > before, "the suspended thread goes on after its last resumption");
	busy_stop = 1;
	check(WaitForMultipleObjects(2, threads, TRUE, 20000) == WAIT_OBJECT_0, "both end");
	CloseHandle(threads[0]);
	CloseHandle(threads[1]);
	CloseHandle(busy_event);
	CloseHandle(busy_sem);
	CloseHandle(busy_mutex);
}

/* --- other processes --------------------------------------------------------- */

static int child(const char *name, const char *parent_text, const char *sem_text)
{
	HANDLE event = OpenEventA(SYNCHRONIZE, FALSE, name);
	DWORD parent_id = strtoul(parent_text, NULL, 10);
	HANDLE parent = OpenProcess(PROCESS_DUP_HANDLE, FALSE, parent_id);
	HANDLE theirs = (HANDLE)(ULONG_PTR)strtoull(sem_text, NULL, 16), sem = NULL;

	if (!event || !parent)
		return 2;
	/* the parent's semaphore, duplicated from the parent into this process */
	if (!DuplicateHandle(parent, theirs, GetCurrentProcess(), &sem, 0, FALSE, DUPLICATE_SAME_ACCESS))
		return 3;
	if (WaitForSingleObject(event, 20000) != WAIT_OBJECT_0)
		return 4;
	if (!ReleaseSemaphore(sem, 2, NULL))
		return 5;
	return 0;
}

static void test_processes(const char *self)
{
	char name[64], command[MAX_PATH + 128];
	STARTUPINFOA si;
	PROCESS_INFORMATION pi;
	HANDLE event, sem;
	DWORD code = 99;
	LONG prev = -1;

	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	snprintf(name, sizeof(name), "winsync-backend-%lu", GetCurrentProcessId());
	event = CreateEventA(NULL, TRUE, FALSE, name);
	sem = CreateSemaphoreA(NULL, 0, 10, NULL);
	snprintf(command, sizeof(command), "\"%s\" child %s %lu %p", self, name, GetCurrentProcessId(), sem);
	check(CreateProcessA(NULL, command, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi), "CreateProcess");
	Sleep(300);
	check(SetEvent(event), "SetEvent on the named event that the child opened");
	check(WaitForSingleObject(sem, 20000) == WAIT_OBJECT_0,
	      "the child released the semaphore it duplicated from this process");
	check(WaitForSingleObject(pi.hProcess, 20000) == WAIT_OBJECT_0, "the child's process handle is signaled");
	GetExitCodeProcess(pi.hProcess, &code);
	check(code == 0, "the child exited with 0");
	check(ReleaseSemaphore(sem, 1, &prev) && prev == 1, "one unit was left: 2 released, 1 taken");
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	CloseHandle(sem);
	CloseHandle(event);
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "child"))
		return child(argv[2], argv[3], argv[4]);
	setvbuf(stdout, NULL, _IONBF, 0);
	test_server_waits();
	test_alertable();
	test_suspend();
	test_processes(argv[0]);
	printf("%d passed, %d failed\n", passed, failed);
	return failed;
}
