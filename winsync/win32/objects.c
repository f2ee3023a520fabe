/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Events, mutexes and semaphores, and CloseHandle. */
#include <errno.h>

#include "internal.h"

/* Wraps a new core object in a handle; closes it again if that fails. */
static HANDLE publish(ws_arena *arena, enum ws32_kind kind, ws_handle object)
{
	struct ws32_object o = { kind, object, NULL };
	DWORD error;
	HANDLE handle = ws32_handle_new(&o, &error);

	if (!handle) {
		ws_close(arena, object);
		return ws32_fail(error, NULL);
	}
	return handle;
}

/* Creates nothing for a named object: unnamed objects only, for now. */
static bool named(const void *name)
{
	if (!name)
		return false;
	ws32_set_last_error(ERROR_NOT_SUPPORTED);
	return true;
}

static HANDLE create_event(BOOL manual_reset, BOOL initial_state, const void *name)
{
	ws_arena *arena;
	ws_handle event;
	DWORD error;
	int ret;

	if (named(name))
		return NULL;
	if (!(arena = ws32_arena(&error)))
		return ws32_fail(error, NULL);
	ret = ws_event_create(arena, manual_reset != FALSE, initial_state != FALSE, &event);
	if (ret)
		return ws32_fail(ws32_error_of(ret), NULL);
	return publish(arena, WS32_EVENT, event);
}

HANDLE WINAPI winsync_CreateEventA(LPSECURITY_ATTRIBUTES attributes, BOOL manual_reset,
				   BOOL initial_state, LPCSTR name)
{
	(void)attributes;
	return create_event(manual_reset, initial_state, name);
}

HANDLE WINAPI winsync_CreateEventW(LPSECURITY_ATTRIBUTES attributes, BOOL manual_reset,
				   BOOL initial_state, LPCWSTR name)
{
	(void)attributes;
	return create_event(manual_reset, initial_state, name);
}

static HANDLE create_mutex(BOOL initial_owner, const void *name)
{
	struct ws32_tls *tls = NULL;
	ws_arena *arena;
	ws_handle mutex;
	DWORD error;
	HANDLE handle;
	int ret;

	if (named(name))
		return NULL;
	if (!(arena = ws32_arena(&error)))
		return ws32_fail(error, NULL);
	if (initial_owner && !(tls = ws32_tls()))
		return ws32_fail(ERROR_NOT_ENOUGH_MEMORY, NULL);
	ret = ws_mutex_create(arena, tls ? tls->id : 0, tls ? 1 : 0, &mutex);
	if (ret)
		return ws32_fail(ws32_error_of(ret), NULL);
	handle = publish(arena, WS32_MUTEX, mutex);
	if (handle && tls)
		ws32_mutex_acquired(mutex);
	return handle;
}

HANDLE WINAPI winsync_CreateMutexA(LPSECURITY_ATTRIBUTES attributes, BOOL initial_owner,
				   LPCSTR name)
{
	(void)attributes;
	return create_mutex(initial_owner, name);
}

HANDLE WINAPI winsync_CreateMutexW(LPSECURITY_ATTRIBUTES attributes, BOOL initial_owner,
				   LPCWSTR name)
{
	(void)attributes;
	return create_mutex(initial_owner, name);
}

static HANDLE create_semaphore(LONG initial_count, LONG maximum_count, const void *name)
{
	ws_arena *arena;
	ws_handle sem;
	DWORD error;
	int ret;

	if (initial_count < 0 || maximum_count <= 0 || initial_count > maximum_count)
		return ws32_fail(ERROR_INVALID_PARAMETER, NULL);
	if (named(name))
		return NULL;
	if (!(arena = ws32_arena(&error)))
		return ws32_fail(error, NULL);
	ret = ws_sem_create(arena, (uint32_t)initial_count, (uint32_t)maximum_count, &sem);
	if (ret)
		return ws32_fail(ws32_error_of(ret), NULL);
	return publish(arena, WS32_SEMAPHORE, sem);
}

HANDLE WINAPI winsync_CreateSemaphoreA(LPSECURITY_ATTRIBUTES attributes, LONG initial_count,
				       LONG maximum_count, LPCSTR name)
{
	(void)attributes;
	return create_semaphore(initial_count, maximum_count, name);
}

HANDLE WINAPI winsync_CreateSemaphoreW(LPSECURITY_ATTRIBUTES attributes, LONG initial_count,
				       LONG maximum_count, LPCWSTR name)
{
	(void)attributes;
	return create_semaphore(initial_count, maximum_count, name);
}

/*
 * The live object behind `handle` if it is of `kind`.  A handle of another
 * kind is ERROR_INVALID_HANDLE, as Win32 reports a type mismatch.
 */
static bool lookup(HANDLE handle, enum ws32_kind kind, struct ws32_object *object,
		   ws_arena **arena)
{
	if (!ws32_handle_get(handle, object) || object->kind != kind ||
	    !(*arena = ws32_arena_if_created())) {
		ws32_set_last_error(ERROR_INVALID_HANDLE);
		return false;
	}
	return true;
}

/* The result of a core call that either worked or failed on its handle. */
static BOOL result(int ret)
{
	if (!ret)
		return TRUE;
	return ws32_fail(ret == -EINVAL ? ERROR_INVALID_HANDLE : ws32_error_of(ret), FALSE);
}

/* SetEvent, ResetEvent and PulseEvent differ only in the core call. */
static BOOL change_event(HANDLE handle, int (*change)(ws_arena *, ws_handle, bool *))
{
	struct ws32_object o;
	ws_arena *arena;

	if (!lookup(handle, WS32_EVENT, &o, &arena))
		return FALSE;
	return result(change(arena, o.object, NULL));
}

BOOL WINAPI winsync_SetEvent(HANDLE handle)
{
	return change_event(handle, ws_event_set);
}

BOOL WINAPI winsync_ResetEvent(HANDLE handle)
{
	return change_event(handle, ws_event_reset);
}

BOOL WINAPI winsync_PulseEvent(HANDLE handle)
{
	return change_event(handle, ws_event_pulse);
}

BOOL WINAPI winsync_ReleaseMutex(HANDLE handle)
{
	struct ws32_object o;
	struct ws32_tls *tls;
	ws_arena *arena;
	uint32_t previous;
	int ret;

	if (!lookup(handle, WS32_MUTEX, &o, &arena))
		return FALSE;
	if (!(tls = ws32_tls()))
		return ws32_fail(ERROR_NOT_ENOUGH_MEMORY, FALSE);
	ret = ws_mutex_unlock(arena, o.object, tls->id, &previous);
	if (ret == -EPERM)
		return ws32_fail(ERROR_NOT_OWNER, FALSE);
	if (!ret && previous == 1)
		ws32_mutex_released(o.object);
	return result(ret);
}

BOOL WINAPI winsync_ReleaseSemaphore(HANDLE handle, LONG count, LPLONG previous_count)
{
	struct ws32_object o;
	ws_arena *arena;
	uint32_t previous;
	int ret;

	if (!lookup(handle, WS32_SEMAPHORE, &o, &arena))
		return FALSE;
	if (count <= 0)
		return ws32_fail(ERROR_INVALID_PARAMETER, FALSE);
	ret = ws_sem_release(arena, o.object, (uint32_t)count, &previous);
	if (ret == -EOVERFLOW)
		return ws32_fail(ERROR_TOO_MANY_POSTS, FALSE);
	if (!ret && previous_count)
		*previous_count = (LONG)previous;
	return result(ret);
}

BOOL WINAPI winsync_CloseHandle(HANDLE handle)
{
	struct ws32_object o;
	ws_arena *arena;
	BOOL foreign;

	if (!ws32_handle_is_ours(handle)) {
		if (ws32_foreign_close(handle, &foreign))
			return foreign;
		return ws32_fail(ERROR_INVALID_HANDLE, FALSE);
	}
	if (!ws32_handle_free(handle, &o) || !(arena = ws32_arena_if_created()))
		return ws32_fail(ERROR_INVALID_HANDLE, FALSE);
	if (o.kind == WS32_THREAD)
		ws32_thread_put(o.thread);
	else
		ws_close(arena, o.object);
	return TRUE;
}
