/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A 64-bit and a 32-bit process of one prefix share a named event, a
 * mutex and a semaphore.  Built twice (mixed64.exe, mixed32.exe): the
 * 64-bit parent creates the objects and starts the 32-bit build as its
 * child (argv[1]), which opens them by name; then, step by step, each
 * side's wait must be released by the other side's signal:
 *
 *   1. the child waits on the auto-reset event, the parent sets it; the
 *      event is reset by that wait (a second wait times out);
 *   2. the child waits for the mutex and the semaphore together (wait-all)
 *      while the parent owns the mutex: a semaphore release alone leaves it
 *      blocked (the count stays 1), the mutex's release completes it;
 *   3. the parent waits for the semaphore, which the child releases by 2:
 *      one wait takes one, the count left is 1;
 *   4. the child ends holding the mutex: the parent's wait on it returns
 *      WAIT_ABANDONED (a 32-bit owner's death seen by a 64-bit process).
 *
 * The child's bitness is checked (IsWow64Process in the parent, pointer
 * size in the child).  Each process prints "mixed: process P: W waits, S
 * signals on shared objects" (its own calls on them that must be served in
 * process): wine/run-tests.sh --claims checks them against the backend's
 * counters of process P (WINEWINSYNC_STATS) with the backend on.
 * Prints "N passed, N failed"; exits with the failures.
 */
#include <windows.h>
#include <stdio.h>
#include <string.h>

#define EVENT_NAME "winsync-mixed-event"
#define MUTEX_NAME "winsync-mixed-mutex"
#define SEM_NAME   "winsync-mixed-semaphore"
#define STEP_NAME  "winsync-mixed-step"   /* child -> parent: "I am at the next step" */
#define GO_NAME    "winsync-mixed-go"     /* parent -> child, for step 3 */

static int passed, failed;
static unsigned int waits, signals;

static void check(int ok, const char *what)
{
	printf("%s: %d-bit: %s\n", ok ? "ok" : "FAILED", (int)sizeof(void *) * 8, what);
	fflush(stdout);
	if (ok)
		passed++;
	else
		failed++;
}

static DWORD wait1(HANDLE h, DWORD ms)
{
	waits++;
	return WaitForSingleObject(h, ms);
}

static void claims(void)
{
	printf("mixed: process %04lx: %u waits, %u signals on shared objects\n",
	       (unsigned long)GetCurrentProcessId(), waits, signals);
}

static int child(void)
{
	HANDLE event = OpenEventA(SYNCHRONIZE | EVENT_MODIFY_STATE, FALSE, EVENT_NAME);
	HANDLE mutex = OpenMutexA(SYNCHRONIZE | MUTEX_MODIFY_STATE, FALSE, MUTEX_NAME);
	HANDLE sem = OpenSemaphoreA(SYNCHRONIZE | SEMAPHORE_MODIFY_STATE, FALSE, SEM_NAME);
	HANDLE step = OpenEventA(EVENT_MODIFY_STATE, FALSE, STEP_NAME);
	HANDLE go = OpenEventA(SYNCHRONIZE, FALSE, GO_NAME);
	HANDLE both[2];
	LONG prev = -1;
	DWORD ret;

	check(sizeof(void *) == 4, "the child is a 32-bit program");
	check(event && mutex && sem && step && go, "the child opens the objects by name");
	if (!event || !mutex || !sem || !step || !go)
		return 1;

	/* 1 */
	SetEvent(step);
	check(wait1(event, 10000) == WAIT_OBJECT_0, "1: the parent's SetEvent releases the child's wait");
	check(wait1(event, 0) == WAIT_TIMEOUT, "1: the auto-reset event was reset by that wait");

	/* 2 */
	both[0] = mutex;
	both[1] = sem;
	SetEvent(step);
	waits++;
	ret = WaitForMultipleObjects(2, both, TRUE, 10000);
	check(ret == WAIT_OBJECT_0, "2: the wait-all on the parent's mutex and semaphore completes");

	/* 3 */
	check(wait1(go, 10000) == WAIT_OBJECT_0, "3: the parent waits on the semaphore");
	signals++;
	check(ReleaseSemaphore(sem, 2, &prev) && prev == 0, "3: the child releases the semaphore by 2");

	/* 4: the mutex is still ours: ending abandons it */
	claims();
	return failed;
}

int main(int argc, char **argv)
{
	STARTUPINFOA si;
	PROCESS_INFORMATION pi;
	char cmd[2 * MAX_PATH];
	HANDLE event, mutex, sem, step, go;
	BOOL wow = FALSE;
	LONG prev = -1;
	DWORD code = 1;

	if (argc > 1 && !strcmp(argv[1], "child"))
		return child();
	if (argc < 2) {
		printf("usage: mixed64.exe MIXED32.EXE\n");
		return 2;
	}
	check(sizeof(void *) == 8, "the parent is a 64-bit program");
	event = CreateEventA(NULL, FALSE, FALSE, EVENT_NAME);
	mutex = CreateMutexA(NULL, TRUE, MUTEX_NAME);   /* owned: step 2 */
	sem = CreateSemaphoreA(NULL, 0, 3, SEM_NAME);
	step = CreateEventA(NULL, FALSE, FALSE, STEP_NAME);
	go = CreateEventA(NULL, TRUE, FALSE, GO_NAME);
	check(event && mutex && sem && step && go, "the parent creates the named objects");

	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	/* a Unix path (CTest passes one) is Z:, Wine's drive for / */
	snprintf(cmd, sizeof(cmd), "\"%s%s\" child", argv[1][0] == '/' ? "Z:" : "", argv[1]);
	for (char *c = cmd; *c; c++)
		if (*c == '/')
			*c = '\\';
	if (!CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) {
		check(0, "CreateProcess of the 32-bit child");
		printf("%d passed, %d failed\n", passed, failed);
		return 1;
	}
	check(IsWow64Process(pi.hProcess, &wow) && wow, "the child runs as a 32-bit (WoW64) process");

	/* 1: the child is about to wait on the event */
	check(wait1(step, 10000) == WAIT_OBJECT_0, "1: the child reached step 1");
	Sleep(200);
	signals++;
	check(SetEvent(event), "1: the parent sets the event");

	/* 2: the child is about to wait for the mutex and the semaphore */
	check(wait1(step, 10000) == WAIT_OBJECT_0, "2: the child reached step 2");
	Sleep(200);
	signals++;
	check(ReleaseSemaphore(sem, 1, &prev) && prev == 0, "2: the parent releases the semaphore by 1");
	Sleep(200);
	/* the child's wait-all must not have taken the semaphore alone */
	signals++;
	check(ReleaseSemaphore(sem, 1, &prev) && prev == 1,
	      "2: the semaphore's count is still 1 while the parent owns the mutex");
	waits++;   /* take the extra one back */
	check(WaitForSingleObject(sem, 0) == WAIT_OBJECT_0, "2: the parent takes its extra count back");
	signals++;
	check(ReleaseMutex(mutex), "2: the parent releases the mutex");

	/* 3: the parent waits on the semaphore, which the child releases */
	Sleep(200);
	signals++;
	SetEvent(go);
	check(wait1(sem, 10000) == WAIT_OBJECT_0, "3: the child's release wakes the parent's wait");
	signals++;
	check(ReleaseSemaphore(sem, 1, &prev) && prev == 1, "3: one count was left");

	/* 4 */
	check(WaitForSingleObject(pi.hProcess, 10000) == WAIT_OBJECT_0 &&
		      GetExitCodeProcess(pi.hProcess, &code) && code == 0,
	      "the child passed its checks and ended");
	check(wait1(mutex, 10000) == WAIT_ABANDONED_0,
	      "4: the mutex the 32-bit child held when it ended is abandoned");
	signals++;
	check(ReleaseMutex(mutex), "4: the parent owns it after the abandoned wait");
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	claims();
	printf("%d passed, %d failed\n", passed, failed);
	return failed;
}
