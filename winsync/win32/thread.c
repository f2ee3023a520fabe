/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Waitable threads and abandonment.
 *
 * A thread handle stands for a manual-reset event that is set when the
 * thread ends.  Each thread keeps the list of mutexes it has acquired and
 * not yet fully released; when it ends still owning one, it abandons all
 * its owner id holds in one critical section (ws_owner_died), as NT's
 * thread end abandons them in one step (one ws_mutex_kill each let another
 * thread take the first abandoned and find the next still owned), before
 * its handle is signaled, so whoever waited for the thread finds the
 * mutexes abandoned already.
 *
 * Under Wine the handle is signaled when the OS thread has really ended
 * (kernel32.c), as a Windows thread handle is, not when the start routine
 * returns: a program that waits for its threads and then exits would
 * otherwise end the process while they still run their exit (DLL detach,
 * Wine's thread exit), and Wine kills such threads with SIGQUIT.
 */
#include <stdlib.h>

#include "internal.h"

struct ws32_thread *ws32_thread_new(LPTHREAD_START_ROUTINE start, LPVOID parameter,
				    DWORD *error)
{
	struct ws32_thread *thread;
	ws_arena *arena = ws32_arena(error);
	int ret;

	if (!arena)
		return NULL;
	thread = calloc(1, sizeof(*thread));
	if (!thread) {
		*error = ERROR_NOT_ENOUGH_MEMORY;
		return NULL;
	}
	ret = ws_event_create(arena, true, false, &thread->exit_event);
	if (ret) {
		free(thread);
		*error = ws32_error_of(ret);
		return NULL;
	}
	atomic_init(&thread->refs, 2);
	atomic_init(&thread->exit_code, STILL_ACTIVE);
	thread->start = start;
	thread->parameter = parameter;
	return thread;
}

void ws32_thread_put(struct ws32_thread *thread)
{
	if (atomic_fetch_sub_explicit(&thread->refs, 1, memory_order_acq_rel) != 1)
		return;
	ws_close(ws32_arena_if_created(), thread->exit_event);
	ws32_release_os_thread(thread);
	free(thread);
}

void ws32_thread_ended(struct ws32_thread *thread, DWORD exit_code)
{
	atomic_store_explicit(&thread->exit_code, exit_code, memory_order_relaxed);
	ws_event_set(ws32_arena_if_created(), thread->exit_event, NULL);
	ws32_thread_put(thread);
}

DWORD ws32_thread_run(struct ws32_thread *thread)
{
	struct ws32_tls *tls = ws32_tls();
	DWORD code;

	if (tls)
		tls->thread = thread;
	code = thread->start(thread->parameter);
	if (!tls) {
		/* No per-thread state, so no mutexes to abandon: only the handle. */
		if (!thread->ended_by_os)
			ws32_thread_ended(thread, code);
		return code;
	}
	if (!thread->ended_by_os)
		atomic_store_explicit(&thread->exit_code, code, memory_order_relaxed);
	ws32_thread_exit(tls);
	return code;
}

void ws32_thread_exit(struct ws32_tls *tls)
{
	ws_arena *arena = ws32_arena_if_created();
	struct ws32_thread *thread;

	if (!tls || !arena)
		return;
	if (tls->owned_count)
		ws_owner_died(arena, tls->id);
	free(tls->owned);
	tls->owned = NULL;
	tls->owned_count = tls->owned_capacity = 0;
	thread = tls->thread;
	tls->thread = NULL;
	if (thread && !thread->ended_by_os)
		ws32_thread_ended(thread, atomic_load_explicit(&thread->exit_code,
							       memory_order_relaxed));
}

void ws32_mutex_acquired(ws_handle mutex)
{
	struct ws32_tls *tls = ws32_tls();
	ws_handle *grown;

	if (!tls)
		return;
	for (uint32_t i = 0; i < tls->owned_count; i++)
		if (tls->owned[i] == mutex)
			return;
	if (tls->owned_count == tls->owned_capacity) {
		uint32_t capacity = tls->owned_capacity ? 2 * tls->owned_capacity : 8;

		grown = realloc(tls->owned, capacity * sizeof(*grown));
		if (!grown)
			return;
		tls->owned = grown;
		tls->owned_capacity = capacity;
	}
	tls->owned[tls->owned_count++] = mutex;
}

void ws32_mutex_released(ws_handle mutex)
{
	struct ws32_tls *tls = ws32_tls();

	if (!tls)
		return;
	for (uint32_t i = 0; i < tls->owned_count; i++) {
		if (tls->owned[i] == mutex) {
			tls->owned[i] = tls->owned[--tls->owned_count];
			return;
		}
	}
}

BOOL WINAPI winsync_GetExitCodeThread(HANDLE handle, LPDWORD exit_code)
{
	struct ws32_object o;

	if (!ws32_handle_get(handle, &o) || o.kind != WS32_THREAD)
		return ws32_fail(ERROR_INVALID_HANDLE, FALSE);
	if (!exit_code)
		return ws32_fail(ERROR_INVALID_PARAMETER, FALSE);
	*exit_code = atomic_load_explicit(&o.thread->exit_code, memory_order_relaxed);
	return TRUE;
}

HANDLE WINAPI winsync_CreateThread(LPSECURITY_ATTRIBUTES attributes, SIZE_T stack_size,
				   LPTHREAD_START_ROUTINE start, LPVOID parameter, DWORD flags,
				   LPDWORD thread_id)
{
	struct ws32_object o = { WS32_THREAD, 0, NULL };
	struct ws32_thread *thread;
	DWORD error, id;
	HANDLE handle;

	(void)attributes;
	if (!start || (flags & ~(DWORD)STACK_SIZE_PARAM_IS_A_RESERVATION))
		return ws32_fail(ERROR_INVALID_PARAMETER, NULL);
	if (!(thread = ws32_thread_new(start, parameter, &error)))
		return ws32_fail(error, NULL);
	o.object = thread->exit_event;
	o.thread = thread;
	/* The handle exists before the thread can end and drop its reference. */
	if (!(handle = ws32_handle_new(&o, &error))) {
		ws_close(ws32_arena_if_created(), thread->exit_event);
		free(thread);
		return ws32_fail(error, NULL);
	}
	if (!ws32_start_thread(thread, stack_size, &id, &error)) {
		struct ws32_object freed;

		ws32_handle_free(handle, &freed);
		ws_close(ws32_arena_if_created(), thread->exit_event);
		free(thread);
		return ws32_fail(error, NULL);
	}
	if (thread_id)
		*thread_id = id;
	return handle;
}
