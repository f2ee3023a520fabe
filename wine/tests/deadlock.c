/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Deadlocks two threads on two mutexes on purpose, for winsync-stat: each
 * thread takes its mutex, then waits forever for the other's.  Prints the
 * two threads' Windows ids once both wait, then waits for them for at most
 * the seconds given (default 60) and exits: the deadlock never ends by
 * itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

static HANDLE mutex[2];
static HANDLE holding[2];

static DWORD WINAPI side(void *arg)
{
	int me = (int)(INT_PTR)arg;

	WaitForSingleObject(mutex[me], INFINITE);
	SetEvent(holding[me]);
	WaitForSingleObject(holding[!me], INFINITE);
	WaitForSingleObject(mutex[!me], INFINITE); /* never returns */
	return 0;
}

int main(int argc, char **argv)
{
	DWORD id[2], seconds = argc > 1 ? (DWORD)atoi(argv[1]) : 60;
	HANDLE thread[2];

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: deadlock.exe [SECONDS]\n"
		       "Two threads deadlock on two mutexes; exits after SECONDS (60).\n");
		return 0;
	}
	for (int i = 0; i < 2; i++) {
		mutex[i] = CreateMutexA(NULL, FALSE, NULL);
		holding[i] = CreateEventA(NULL, TRUE, FALSE, NULL);
	}
	for (int i = 0; i < 2; i++)
		thread[i] = CreateThread(NULL, 0, side, (void *)(INT_PTR)i, 0, &id[i]);
	WaitForMultipleObjects(2, holding, TRUE, INFINITE);
	Sleep(200); /* both are in their second wait by now */
	printf("deadlocked: thread %#lx holds mutex 1, thread %#lx holds mutex 2\n",
	       (unsigned long)id[0], (unsigned long)id[1]);
	fflush(stdout);
	if (WaitForMultipleObjects(2, thread, TRUE, seconds * 1000) == WAIT_TIMEOUT)
		printf("still deadlocked after %lu s\n", (unsigned long)seconds);
	fflush(stdout);
	ExitProcess(0);
}
