/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Wine's own TerminateThread race, the cause of kernel32 debugger's hang at
 * its end (wine/units-results.md): a thread that creates and closes events
 * in a loop is terminated, again and again.  NtClose holds ntdll's
 * fd_cache_mutex across its close_handle request; a thread terminated in
 * there (the server kills it, its next request fails, it exits) never
 * unlocks it, and the next NtClose of the process, here the killer's
 * CloseHandle of the thread, waits for ever.  Stock Wine hangs too, with the
 * backend off; this program is a reproducer, not a pass/fail test (CTest
 * builds it and does not run it):
 *
 *   wine/run.sh --off -- terminate-close.exe 300   # prints "round N" until it hangs
 *
 * Ends with "N passed, 0 failed" only if it did not hang.
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>

static volatile LONG closed;

static DWORD WINAPI closer(void *arg)
{
	(void)arg;
	for (;;) {
		CloseHandle(CreateEventA(NULL, FALSE, FALSE, NULL));
		InterlockedIncrement(&closed);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	DWORD start = GetTickCount();

	for (int r = 0; r < rounds; r++) {
		HANDLE t = CreateThread(NULL, 0, closer, NULL, 0, NULL);

		/* 50 more closes each round: the thread is in its loop */
		while (closed < (r + 1) * 50)
			SwitchToThread();
		Sleep(r % 3);
		TerminateThread(t, 0);
		WaitForSingleObject(t, INFINITE);
		CloseHandle(t);
		printf("round %d\n", r);
		fflush(stdout);
	}
	printf("%d rounds in %lu ms\n", rounds, (unsigned long)(GetTickCount() - start));
	printf("%d passed, 0 failed\n", rounds);
	return 0;
}
