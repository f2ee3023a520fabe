/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program on the installed <winsync/win32.h>: an auto-reset event with
 * the Win32 names.  Exits 1 on any unexpected result.
 */
#include <stdio.h>

#include <winsync/win32.h>

int main(void)
{
	HANDLE event = CreateEventA(NULL, FALSE, FALSE, NULL);
	DWORD before, after, again;

	if (event == NULL) {
		fprintf(stderr, "consumer-win32: CreateEventA failed, error %u\n",
			(unsigned)GetLastError());
		return 1;
	}
	before = WaitForSingleObject(event, 0);
	SetEvent(event);
	after = WaitForSingleObject(event, 0);
	again = WaitForSingleObject(event, 0);
	printf("before SetEvent: %s\n", before == WAIT_TIMEOUT ? "WAIT_TIMEOUT" : "unexpected");
	printf("after SetEvent: %s\n", after == WAIT_OBJECT_0 ? "WAIT_OBJECT_0" : "unexpected");
	printf("again: %s\n", again == WAIT_TIMEOUT ? "WAIT_TIMEOUT" : "unexpected");
	CloseHandle(event);
	return before == WAIT_TIMEOUT && after == WAIT_OBJECT_0 && again == WAIT_TIMEOUT ? 0 : 1;
}
