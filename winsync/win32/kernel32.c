/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The winsync.dll variant of the Win32 layer: threads are kernel32's
 * threads (the start routine is wrapped so that its end abandons mutexes,
 * and a thread pool wait on the kernel32 handle signals the winsync handle
 * once the thread has ended), thread ids are GetCurrentThreadId(), the
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

/* The thread pool's wait thread, once the kernel32 thread handle is signaled. */
static VOID CALLBACK thread_ended(PVOID data, BOOLEAN timed_out)
{
	struct ws32_thread *thread = data;
	DWORD code = STILL_ACTIVE;

	(void)timed_out;
	/* Non-blocking, as a callback may: the pool frees the wait after this returns. */
	UnregisterWait(thread->os_wait);
	/* ExitThread's code too, not only the start routine's. */
	GetExitCodeThread(thread->os_handle, &code);
	ws32_thread_ended(thread, code);
}

bool ws32_start_thread(struct ws32_thread *thread, SIZE_T stack_size, DWORD *thread_id,
		       DWORD *error)
{
	/* Suspended until the wait for its end is in place: it cannot end before. */
	HANDLE handle = CreateThread(NULL, stack_size, thread_main, thread, CREATE_SUSPENDED,
				     thread_id);
	HANDLE wait;

	if (!handle) {
		*error = GetLastError();
		return false;
	}
	thread->os_handle = handle;
	/*
	 * The kernel32 handle is signaled when Wine's server has ended the
	 * thread: after its DLL detach, and past the point where ExitProcess
	 * would kill it.  Without the wait the thread signals its own handle.
	 */
	if (RegisterWaitForSingleObject(&wait, handle, thread_ended, thread, INFINITE,
					WT_EXECUTEONLYONCE | WT_EXECUTEINWAITTHREAD)) {
		thread->os_wait = wait;
		thread->ended_by_os = true;
	}
	if (ResumeThread(handle) == (DWORD)-1) {
		*error = GetLastError();
		if (thread->ended_by_os)
			UnregisterWaitEx(thread->os_wait, INVALID_HANDLE_VALUE);
		TerminateThread(handle, 0);
		CloseHandle(handle);
		thread->os_handle = thread->os_wait = NULL;
		thread->ended_by_os = false;
		return false;
	}
	return true;
}

void ws32_release_os_thread(struct ws32_thread *thread)
{
	if (thread->os_handle)
		CloseHandle(thread->os_handle);
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
