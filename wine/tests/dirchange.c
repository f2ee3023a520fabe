/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A change the server makes in a watched directory completes the watch
 * before the call that made it returns: ReadDirectoryChangesW without a
 * buffer completes with STATUS_NOTIFY_ENUM_DIR, and its event is set, when
 * CreateDirectoryW and RemoveDirectoryW return, as kernel32's change test
 * expects (change.c:688-703).  The event is polled first (its handle then
 * served in process with the backend on), so the poll after the change is
 * in process too: before patch 0009 it found the event unset in 8 of 20
 * rounds, the server handling inotify's report after its reply.  The
 * removal is checked with the backend on only: stock Wine removes the
 * directory in the close request that ends RemoveDirectoryW, its last, and
 * handles the report after its reply too (17 of 40 checks failed in one
 * run with the backend off, 0 in the next); patch 0009 covers that too.
 * Prints "N passed, N failed"; exits with the failures.
 */
#include <windows.h>
#include <stdio.h>
#include <string.h>
#include "verdict.h"

#ifndef STATUS_NOTIFY_ENUM_DIR
#define STATUS_NOTIFY_ENUM_DIR ((DWORD)0x0000010c)
#endif

/* Only a failure is printed: 20 rounds of several checks each. */
static void check_round(int ok, int round, const char *what)
{
	char line[200];

	snprintf(line, sizeof(line), "round %d: %s", round, what);
	verdict(ok, 1, line);
}

/* One watch, one change made by `change`, then a poll of the event. */
static void watch_and_change(const WCHAR *dir, const WCHAR *sub, int round, BOOL create, BOOL judged)
{
	HANDLE d = CreateFileW(dir, GENERIC_READ | SYNCHRONIZE | FILE_LIST_DIRECTORY,
			       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
			       FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OVERLAPPED, NULL);
	OVERLAPPED ov = { 0 };

	ov.hEvent = CreateEventW(NULL, TRUE, FALSE, NULL);
	check_round(d != INVALID_HANDLE_VALUE && ov.hEvent, round, "open the directory, create the event");
	check_round(ReadDirectoryChangesW(d, NULL, 0, FALSE, FILE_NOTIFY_CHANGE_DIR_NAME, NULL, &ov, NULL),
	      round, "ReadDirectoryChangesW");
	check_round(WaitForSingleObject(ov.hEvent, 0) == WAIT_TIMEOUT, round, "no change yet: the event is unset");
	check_round(create ? CreateDirectoryW(sub, NULL) : RemoveDirectoryW(sub), round,
	      create ? "CreateDirectoryW" : "RemoveDirectoryW");
	if (judged) {
		check_round(WaitForSingleObject(ov.hEvent, 0) == WAIT_OBJECT_0, round,
		      create ? "the event is set when CreateDirectoryW returns"
			     : "the event is set when RemoveDirectoryW returns");
		check_round(ov.Internal == STATUS_NOTIFY_ENUM_DIR, round,
		      "the watch completed with STATUS_NOTIFY_ENUM_DIR");
	}
	/* Whatever happened, the next round starts clean. */
	WaitForSingleObject(ov.hEvent, 2000);
	CloseHandle(ov.hEvent);
	CloseHandle(d);
}

int main(void)
{
	WCHAR dir[MAX_PATH], sub[MAX_PATH];
	BOOL backend = backend_on();

	GetTempPathW(MAX_PATH, dir);
	lstrcatW(dir, L"winsync-dirchange");
	lstrcpyW(sub, dir);
	lstrcatW(sub, L"\\sub");
	RemoveDirectoryW(sub);
	RemoveDirectoryW(dir);
	check_round(CreateDirectoryW(dir, NULL), 0, "create the watched directory");
	for (int round = 1; round <= 20; round++) {
		watch_and_change(dir, sub, round, TRUE, TRUE);
		watch_and_change(dir, sub, round, FALSE, backend);
	}
	RemoveDirectoryW(dir);
	printf("%d passed, %d failed\n", passed, failed);
	return failed;
}
