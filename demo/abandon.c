/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Abandoned mutexes.  A thread that ends while it owns a mutex abandons it:
 * the next thread whose wait acquires the mutex gets WAIT_ABANDONED_0 + i
 * (and owns it), whether it was already waiting or came later; after that
 * the mutex is an ordinary one again.  Also: ReleaseMutex by a thread that
 * does not own it fails with ERROR_NOT_OWNER, and a closed handle fails a
 * wait with ERROR_INVALID_HANDLE.
 */
#include "demo.h"

static HANDLE mutex_a, mutex_b, mutex_c, holding, go;

static const char *wait_name(DWORD r, DWORD count)
{
	static char buf[32];

	return demo_wait_name(r, count, buf, sizeof(buf));
}

/* Takes `parameter` (a mutex) and ends without releasing it. */
static DWORD WINAPI take_and_exit(LPVOID parameter)
{
	DEMO_CHECK(WaitForSingleObject(parameter, INFINITE) == WAIT_OBJECT_0, "take the mutex");
	return 7;
}

/* Takes mutex_c, says so, and ends holding it once told to. */
static DWORD WINAPI hold_until_go(LPVOID parameter)
{
	(void)parameter;
	DEMO_CHECK(WaitForSingleObject(mutex_c, INFINITE) == WAIT_OBJECT_0, "take mutex c");
	DEMO_CHECK(SetEvent(holding), "SetEvent holding");
	DEMO_CHECK(WaitForSingleObject(go, INFINITE) == WAIT_OBJECT_0, "wait go");
	return 0;
}

static DWORD blocked_result;

/* Waits on mutex_c while its owner is still alive. */
static DWORD WINAPI blocked_waiter(LPVOID parameter)
{
	(void)parameter;
	blocked_result = WaitForSingleObject(mutex_c, 60000);
	if (blocked_result == WAIT_ABANDONED_0)
		ReleaseMutex(mutex_c);
	return 0;
}

/* Tries to release a mutex that main owns. */
static DWORD WINAPI release_foreign(LPVOID parameter)
{
	SetLastError(ERROR_SUCCESS);
	if (ReleaseMutex(parameter))
		return 0;
	return GetLastError();
}

static void run(LPTHREAD_START_ROUTINE start, LPVOID parameter, DWORD *exit_code)
{
	HANDLE thread = demo_thread(start, parameter);

	DEMO_CHECK(WaitForSingleObject(thread, 60000) == WAIT_OBJECT_0, "join");
	if (exit_code)
		DEMO_CHECK(GetExitCodeThread(thread, exit_code), "GetExitCodeThread");
	CloseHandle(thread);
}

int main(void)
{
	HANDLE pair[2], both[2], threads[2];
	HANDLE never = CreateEventA(NULL, TRUE, FALSE, NULL);
	DWORD r, code;
	BOOL ok;

	demo_init();
	printf("abandoned mutexes\n");
	mutex_a = CreateMutexA(NULL, FALSE, NULL);
	mutex_b = CreateMutexA(NULL, FALSE, NULL);
	mutex_c = CreateMutexA(NULL, FALSE, NULL);
	holding = CreateEventA(NULL, FALSE, FALSE, NULL);
	go = CreateEventA(NULL, FALSE, FALSE, NULL);
	DEMO_CHECK(never && mutex_a && mutex_b && mutex_c && holding && go, "creating the objects");

	/* 1. The owner has ended before anyone waits. */
	run(take_and_exit, mutex_a, &code);
	printf("1. a thread took mutex A and exited with code %u\n", (unsigned)code);
	r = WaitForSingleObject(mutex_a, 0);
	printf("   main waits on A: %s\n", wait_name(r, 1));
	printf("   main now owns A; ReleaseMutex: %s\n", ReleaseMutex(mutex_a) ? "TRUE" : "FALSE");
	r = WaitForSingleObject(mutex_a, 0);
	printf("   main waits on A again: %s\n", wait_name(r, 1));
	ReleaseMutex(mutex_a);

	/* 2. WaitForMultipleObjects (any) reports the index of the abandoned mutex. */
	run(take_and_exit, mutex_b, NULL);
	pair[0] = never;
	pair[1] = mutex_b;
	r = WaitForMultipleObjects(2, pair, FALSE, 0);
	printf("2. wait-any on {unsignaled event, abandoned mutex B}: %s\n", wait_name(r, 2));
	ReleaseMutex(mutex_b);

	/* 3. wait-all over a free and an abandoned mutex. */
	run(take_and_exit, mutex_b, NULL);
	both[0] = mutex_a;
	both[1] = mutex_b;
	r = WaitForMultipleObjects(2, both, TRUE, 0);
	printf("3. wait-all on {free mutex A, abandoned mutex B}: %s\n", wait_name(r, 2));
	ReleaseMutex(mutex_a);
	ReleaseMutex(mutex_b);

	/* 4. A waiter that is already blocked when the owner ends. */
	threads[0] = demo_thread(hold_until_go, NULL);
	DEMO_CHECK(WaitForSingleObject(holding, 60000) == WAIT_OBJECT_0, "wait holding");
	threads[1] = demo_thread(blocked_waiter, NULL);
	Sleep(50);
	DEMO_CHECK(SetEvent(go), "SetEvent go");
	demo_join(threads, 2);
	printf("4. a waiter blocked on C while its owner ended: %s\n", wait_name(blocked_result, 1));

	/* 5. Only the owner may release a mutex. */
	DEMO_CHECK(WaitForSingleObject(mutex_a, 0) == WAIT_OBJECT_0, "take A");
	run(release_foreign, mutex_a, &code);
	printf("5. another thread releases main's mutex: FALSE, %s\n", demo_error_name(code));
	printf("   main releases it: %s\n", ReleaseMutex(mutex_a) ? "TRUE" : "FALSE");
	SetLastError(ERROR_SUCCESS);
	ok = ReleaseMutex(mutex_a);
	printf("   main releases it again: %s, %s\n", ok ? "TRUE" : "FALSE",
	       demo_error_name(GetLastError()));

	/* 6. A closed handle is an invalid handle. */
	CloseHandle(mutex_b);
	SetLastError(ERROR_SUCCESS);
	r = WaitForSingleObject(mutex_b, 0);
	printf("6. wait on a closed mutex handle: %s, %s\n", wait_name(r, 1),
	       demo_error_name(GetLastError()));

	CloseHandle(mutex_a);
	CloseHandle(mutex_c);
	CloseHandle(holding);
	CloseHandle(go);
	CloseHandle(never);
	return 0;
}
