/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync.dll's Wine check.  Before its first raw Linux system call the DLL
 * makes sure it runs under Wine on Linux; elsewhere (real Windows), or when
 * WINSYNC_WINE_CHECK=fail forces the check to fail, it refuses cleanly: the
 * core's calls fail with -ENOSYS and the Win32 ones with ERROR_NOT_SUPPORTED.
 * This program checks whichever of the two the environment asks for and
 * exits with 0 if the DLL behaved so.
 */
#include <errno.h>
#include <stdlib.h>

#include <winsync.h>

#include "demo.h"

static int failures;

static void expect(int ok, const char *what)
{
	printf("%s: %s\n", what, ok ? "as expected" : "WRONG");
	failures += !ok;
}

static DWORD WINAPI nothing(LPVOID parameter)
{
	(void)parameter;
	return 0;
}

int main(void)
{
	const char *forced = getenv("WINSYNC_WINE_CHECK");
	int refuse = forced && !strcmp(forced, "fail");
	const char *backend;
	ws_arena *arena = NULL;
	HANDLE h;
	int ret;

	demo_init();
	printf("Wine check %s\n", refuse ? "forced to fail (WINSYNC_WINE_CHECK=fail)" : "enabled");

	ret = ws_arena_create(NULL, 0, &arena);
	if (ret == -ENOSYS)
		printf("ws_arena_create: -ENOSYS\n");
	else
		printf("ws_arena_create: %d\n", ret);
	expect(refuse ? ret == -ENOSYS && !arena : ret == 0 && arena, "ws_arena_create");
	if (arena)
		ws_arena_close(arena);
	backend = ws_futex_backend();
	printf("ws_futex_backend: %s\n", backend ? backend : "(null)");
	/* "none" when no backend can be used (never NULL). */
	expect(backend && (refuse ? !strcmp(backend, "none") : strcmp(backend, "none") != 0),
	       "ws_futex_backend");

	SetLastError(ERROR_SUCCESS);
	h = CreateEventA(NULL, TRUE, FALSE, NULL);
	printf("CreateEventA: %s, last error %u\n", h ? "a handle" : "NULL", (unsigned)GetLastError());
	expect(refuse ? !h && GetLastError() == ERROR_NOT_SUPPORTED : h != NULL, "CreateEventA");
	if (h) {
		expect(SetEvent(h) && WaitForSingleObject(h, 0) == WAIT_OBJECT_0, "SetEvent + wait");
		CloseHandle(h);
	}

	SetLastError(ERROR_SUCCESS);
	h = CreateMutexA(NULL, TRUE, NULL);
	expect(refuse ? !h && GetLastError() == ERROR_NOT_SUPPORTED : h != NULL, "CreateMutexA");
	if (h)
		CloseHandle(h);

	SetLastError(ERROR_SUCCESS);
	h = CreateSemaphoreA(NULL, 0, 1, NULL);
	expect(refuse ? !h && GetLastError() == ERROR_NOT_SUPPORTED : h != NULL, "CreateSemaphoreA");
	if (h)
		CloseHandle(h);

	SetLastError(ERROR_SUCCESS);
	h = CreateThread(NULL, 0, nothing, NULL, 0, NULL);
	expect(refuse ? !h && GetLastError() == ERROR_NOT_SUPPORTED : h != NULL, "CreateThread");
	if (h) {
		expect(WaitForSingleObject(h, INFINITE) == WAIT_OBJECT_0, "wait for the thread");
		CloseHandle(h);
	}

	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
