/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * WaitForSingleObject, WaitForMultipleObjects and SignalObjectAndWait over
 * ws_wait_any / ws_wait_all.  The timeout in milliseconds becomes an
 * absolute CLOCK_MONOTONIC deadline (INFINITE: none; 0: only a poll), the
 * owner of acquired mutexes is the calling thread's id, and a thread handle
 * stands for its exit event.
 */
#include <errno.h>

#include "internal.h"

static void deadline_after(DWORD milliseconds, struct timespec *deadline)
{
	ws32_clock_now(deadline);
	deadline->tv_sec += milliseconds / 1000;
	deadline->tv_nsec += (long)(milliseconds % 1000) * 1000000;
	if (deadline->tv_nsec >= 1000000000) {
		deadline->tv_nsec -= 1000000000;
		deadline->tv_sec++;
	}
}

/* Counts the winsync handles among `handles`. */
static DWORD count_ours(DWORD count, const HANDLE *handles)
{
	DWORD ours = 0;

	for (DWORD i = 0; i < count; i++)
		ours += ws32_handle_is_ours(handles[i]);
	return ours;
}

static DWORD wait_objects(DWORD count, const HANDLE *handles, BOOL wait_all, DWORD milliseconds)
{
	ws_handle objects[MAXIMUM_WAIT_OBJECTS];
	enum ws32_kind kinds[MAXIMUM_WAIT_OBJECTS];
	struct timespec deadline;
	struct ws32_tls *tls;
	struct ws_wait wait;
	ws_arena *arena;
	uint32_t index = 0;
	DWORD result;
	int ret;

	if (count == 0 || count > MAXIMUM_WAIT_OBJECTS || !handles)
		return ws32_fail(ERROR_INVALID_PARAMETER, WAIT_FAILED);
	if (count_ours(count, handles) == 0 &&
	    ws32_foreign_wait(count, handles, wait_all, milliseconds, &result))
		return result;
	for (DWORD i = 0; i < count; i++) {
		struct ws32_object o;

		if (!ws32_handle_get(handles[i], &o))
			return ws32_fail(ERROR_INVALID_HANDLE, WAIT_FAILED);
		objects[i] = o.kind == WS32_THREAD ? o.thread->exit_event : o.object;
		kinds[i] = o.kind;
	}
	if (!(arena = ws32_arena_if_created()))
		return ws32_fail(ERROR_INVALID_HANDLE, WAIT_FAILED);
	if (!(tls = ws32_tls()))
		return ws32_fail(ERROR_NOT_ENOUGH_MEMORY, WAIT_FAILED);
	/* 0 ms: a deadline long past, so a wait that succeeds reads no clock. */
	if (milliseconds == 0) {
		deadline.tv_sec = 0;
		deadline.tv_nsec = 0;
	} else if (milliseconds != INFINITE) {
		deadline_after(milliseconds, &deadline);
	}
	wait.objects = objects;
	wait.count = count;
	wait.owner = tls->id;
	wait.alert = 0;
	wait.flags = 0;
	wait.deadline = milliseconds == INFINITE ? NULL : &deadline;
	ret = wait_all ? ws_wait_all(arena, &wait, &index) : ws_wait_any(arena, &wait, &index);
	if (ret && ret != -EOWNERDEAD) {
		if (ret == -ETIMEDOUT)
			return WAIT_TIMEOUT;
		return ws32_fail(ret == -EBADF ? ERROR_INVALID_HANDLE : ws32_error_of(ret),
				 WAIT_FAILED);
	}
	/* Every mutex acquired now belongs to this thread until released or abandoned. */
	for (DWORD i = 0; i < count; i++)
		if (kinds[i] == WS32_MUTEX && (wait_all || i == index))
			ws32_mutex_acquired(objects[i]);
	return (ret == -EOWNERDEAD ? WAIT_ABANDONED_0 : WAIT_OBJECT_0) + index;
}

DWORD WINAPI winsync_WaitForMultipleObjects(DWORD count, const HANDLE *handles, BOOL wait_all,
					    DWORD milliseconds)
{
	return wait_objects(count, handles, wait_all, milliseconds);
}

DWORD WINAPI winsync_WaitForSingleObject(HANDLE handle, DWORD milliseconds)
{
	return wait_objects(1, &handle, FALSE, milliseconds);
}

/* No APCs are queued to winsync waits: bAlertable changes nothing. */
DWORD WINAPI winsync_WaitForMultipleObjectsEx(DWORD count, const HANDLE *handles, BOOL wait_all,
					      DWORD milliseconds, BOOL alertable)
{
	(void)alertable;
	return wait_objects(count, handles, wait_all, milliseconds);
}

DWORD WINAPI winsync_WaitForSingleObjectEx(HANDLE handle, DWORD milliseconds, BOOL alertable)
{
	(void)alertable;
	return wait_objects(1, &handle, FALSE, milliseconds);
}

/*
 * Signals one object and waits on another.  Unlike NT's, the signal and
 * the start of the wait are two steps, not one.
 */
DWORD WINAPI winsync_SignalObjectAndWait(HANDLE to_signal, HANDLE to_wait, DWORD milliseconds,
					 BOOL alertable)
{
	struct ws32_object o, waited;
	BOOL signaled;

	(void)alertable;
	/* Both handles are checked before anything is signaled. */
	if (!ws32_handle_get(to_signal, &o) || !ws32_handle_get(to_wait, &waited))
		return ws32_fail(ERROR_INVALID_HANDLE, WAIT_FAILED);
	switch (o.kind) {
	case WS32_EVENT:
		signaled = winsync_SetEvent(to_signal);
		break;
	case WS32_MUTEX:
		signaled = winsync_ReleaseMutex(to_signal);
		break;
	case WS32_SEMAPHORE:
		signaled = winsync_ReleaseSemaphore(to_signal, 1, NULL);
		break;
	default:
		return ws32_fail(ERROR_INVALID_HANDLE, WAIT_FAILED);
	}
	if (!signaled)
		return WAIT_FAILED;
	return wait_objects(1, &to_wait, FALSE, milliseconds);
}
