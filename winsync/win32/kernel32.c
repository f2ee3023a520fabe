/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The winsync.dll variant of the Win32 layer: threads are kernel32's
 * threads (the start routine is wrapped so that its end signals the winsync
 * handle and abandons mutexes), thread ids are GetCurrentThreadId(), the
 * last error is kernel32's own, and handles winsync did not create go to
 * kernel32.  Deadlines use the Linux CLOCK_MONOTONIC that futex_waitv reads.
 */
#include <stdlib.h>

#include "internal.h"
#include "os/os.h"
#include "os/wine-tls.h"

static DWORD tls_index = TLS_OUT_OF_INDEXES;

struct ws32_tls *ws32_tls(void)
{
	/* Read from the TEB: TlsGetValue would clear the caller's last error. */
	struct ws32_tls *tls = ws_wine_tls_get(tls_index);

	if (tls || tls_index == TLS_OUT_OF_INDEXES)
		return tls;
	tls = calloc(1, sizeof(*tls));
	if (!tls)
		return NULL;
	tls->id = GetCurrentThreadId();
	ws_wine_tls_set(tls_index, tls);
	return tls;
}

/* Any thread that ends, ExitThread included, abandons the mutexes it owns. */
static void thread_detach(void)
{
	struct ws32_tls *tls;

	if (!(tls = ws_wine_tls_get(tls_index)))
		return;
	ws32_thread_exit(tls);
	ws_wine_tls_set(tls_index, NULL);
	free(tls);
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
	(void)instance, (void)reserved;
	switch (reason) {
	case DLL_PROCESS_ATTACH:
		tls_index = TlsAlloc();
		break;
	case DLL_THREAD_DETACH:
		thread_detach();
		break;
	default:
		break;
	}
	return TRUE;
}

void ws32_set_last_error(DWORD error)
{
	SetLastError(error);
}

DWORD WINAPI winsync_GetLastError(void)
{
	return GetLastError();
}

void WINAPI winsync_SetLastError(DWORD error)
{
	SetLastError(error);
}

void ws32_clock_now(struct timespec *now)
{
	ws_os_clock_now(WS_CLOCK_MONOTONIC, now);
}

void ws32_yield(void)
{
	SwitchToThread();
}

DWORD WINAPI winsync_GetCurrentThreadId(void)
{
	return GetCurrentThreadId();
}

void WINAPI winsync_Sleep(DWORD milliseconds)
{
	Sleep(milliseconds);
}

static DWORD WINAPI thread_main(LPVOID data)
{
	return ws32_thread_run(data);
}

bool ws32_start_thread(struct ws32_thread *thread, SIZE_T stack_size, DWORD *thread_id,
		       DWORD *error)
{
	HANDLE handle = CreateThread(NULL, stack_size, thread_main, thread, 0, thread_id);

	if (!handle) {
		*error = GetLastError();
		return false;
	}
	/* The winsync handle is the one that waits; kernel32's is not needed. */
	CloseHandle(handle);
	return true;
}

bool ws32_foreign_close(HANDLE handle, BOOL *result)
{
	*result = CloseHandle(handle);
	return true;
}

bool ws32_foreign_wait(DWORD count, const HANDLE *handles, BOOL wait_all, DWORD milliseconds,
		       DWORD *result)
{
	*result = WaitForMultipleObjects(count, handles, wait_all, milliseconds);
	return true;
}
