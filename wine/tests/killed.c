/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A process that uses the backend and is terminated by another one
 * (TerminateProcess, as winedbg ends a crashed program) still exits
 * cleanly: its last Unix thread runs the exit handlers without a TEB, and
 * with WINEWINSYNC_STATS=1 the backend's counters are printed there (they
 * read the TEB, and crashed with SIGSEGV, before patch 0004 kept the
 * process id).  The parent starts itself as a child that waits on an event
 * in process, terminates it, and checks its exit code.  (wine/run-tests.sh
 * --counters 2, that both processes printed their counters, fails since
 * 0004 gives every process the backend: the terminated child prints none,
 * its exit handlers do not run; not checked in CTest.)
 * Prints "N passed, N failed"; exits with the failures.
 */
#include <windows.h>
#include <stdio.h>
#include <string.h>
#include "verdict.h"


int main(int argc, char **argv)
{
	STARTUPINFOA si;
	PROCESS_INFORMATION pi;
	char cmd[MAX_PATH + 16];
	DWORD code = 0;
	HANDLE ready;

	if (argc > 1 && !strcmp(argv[1], "child")) {
		HANDLE never = CreateEventA(NULL, TRUE, FALSE, NULL);

		/* the backend loads at the first call it serves: before "ready",
		 * or the parent's TerminateProcess can come while it loads */
		WaitForSingleObject(never, 0);
		ready = OpenEventA(EVENT_MODIFY_STATE, FALSE, "winsync-killed-ready");
		SetEvent(ready);
		WaitForSingleObject(never, INFINITE);
		return 1;
	}
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	ready = CreateEventA(NULL, TRUE, FALSE, "winsync-killed-ready");
	snprintf(cmd, sizeof(cmd), "\"%s\" child", argv[0]);
	if (!ready || !CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) {
		check(0, "CreateProcess of the child");
	} else {
		check(WaitForSingleObject(ready, 10000) == WAIT_OBJECT_0, "the child waits on an event");
		Sleep(100);  /* in its wait, most likely */
		check(TerminateProcess(pi.hProcess, 42), "TerminateProcess");
		check(WaitForSingleObject(pi.hProcess, 10000) == WAIT_OBJECT_0 &&
			      GetExitCodeProcess(pi.hProcess, &code) && code == 42,
		      "the child ended with the exit code TerminateProcess gave it");
		CloseHandle(pi.hThread);
		CloseHandle(pi.hProcess);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed;
}
