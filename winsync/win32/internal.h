/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Win32-shaped layer over the core.  Shared parts:
 *   handle.c   the process-wide arena and the handle table
 *   objects.c  events, mutexes, semaphores, CloseHandle
 *   wait.c     WaitForSingleObject, WaitForMultipleObjects, SignalObjectAndWait
 *   thread.c   waitable thread handles, mutexes owned per thread, abandonment
 * One variant file supplies the host: native.c (Linux, pthreads) or
 * kernel32.c (winsync.dll under Wine, kernel32's threads and last error).
 */
#ifndef WINSYNC_WIN32_INTERNAL_H
#define WINSYNC_WIN32_INTERNAL_H

#define WINSYNC_WIN32_BUILDING 1

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "winsync.h"
#include "winsync/win32.h"

/* --- handle.c ------------------------------------------------------------ */

enum ws32_kind {
	WS32_FREE = 0,
	WS32_EVENT,
	WS32_MUTEX,
	WS32_SEMAPHORE,
	WS32_THREAD,
};

struct ws32_thread;

struct ws32_object {
	enum ws32_kind kind;
	ws_handle object;           /* the event of a thread */
	struct ws32_thread *thread; /* WS32_THREAD only */
};

/* The process-wide private arena, created on first use; NULL with *error set. */
ws_arena *ws32_arena(DWORD *error);
/* The arena if it exists already (every valid handle implies it does). */
ws_arena *ws32_arena_if_created(void);

/* Is this value in winsync's handle range (valid or not)? */
bool ws32_handle_is_ours(HANDLE handle);
/* A new handle for `object`, or NULL with *error set. */
HANDLE ws32_handle_new(const struct ws32_object *object, DWORD *error);
/* false if `handle` is not a live winsync handle. */
bool ws32_handle_get(HANDLE handle, struct ws32_object *object);
/* Frees a live handle and reports what it named; false if it was not live. */
bool ws32_handle_free(HANDLE handle, struct ws32_object *object);

/* The Win32 error for a negative errno from the core. */
DWORD ws32_error_of(int err);
/* Sets the last error and returns `value`, for one-line failure returns. */
#define ws32_fail(error, value) (ws32_set_last_error(error), (value))

/* --- thread.c ------------------------------------------------------------ */

/* What winsync keeps per thread, any thread (created by winsync or not). */
struct ws32_tls {
	DWORD id;                   /* the mutex owner id: GetCurrentThreadId() */
	struct ws32_thread *thread; /* set in threads that winsync's CreateThread made */
	ws_handle *owned;           /* mutexes acquired and not yet fully released */
	uint32_t owned_count;
	uint32_t owned_capacity;
};

struct ws32_thread {
	ws_handle exit_event;       /* manual reset, set when the thread ends */
	_Atomic uint32_t refs;      /* the handle, and the running thread */
	LPTHREAD_START_ROUTINE start;
	LPVOID parameter;
	_Atomic DWORD exit_code;
	/*
	 * Set by ws32_start_thread before the thread runs when the OS reports
	 * the thread's real end and the variant then calls ws32_thread_ended
	 * (kernel32.c); the thread itself does not signal its handle then.
	 */
	bool ended_by_os;
	void *os_handle;            /* the variant's: kernel32.c's thread handle */
	void *os_wait;              /* the variant's: kernel32.c's wait on it */
};

/* A thread object with its exit event, holding two references. */
struct ws32_thread *ws32_thread_new(LPTHREAD_START_ROUTINE start, LPVOID parameter,
				    DWORD *error);
/* Drops one reference; the last one closes the event. */
void ws32_thread_put(struct ws32_thread *thread);
/* Runs the start routine in the new thread, then ws32_thread_exit(). */
DWORD ws32_thread_run(struct ws32_thread *thread);
/*
 * The thread is ending: abandons the mutexes it owns, then signals its handle
 * (ws32_thread_ended) unless the OS reports its end.  Safe to call twice;
 * `tls` may be NULL.
 */
void ws32_thread_exit(struct ws32_tls *tls);
/* The thread has ended with `exit_code`: signals its handle, drops the thread's reference. */
void ws32_thread_ended(struct ws32_thread *thread, DWORD exit_code);

/* Records that the calling thread acquired (or fully released) a mutex. */
void ws32_mutex_acquired(ws_handle mutex);
void ws32_mutex_released(ws_handle mutex);

/* --- the variant file: native.c or kernel32.c ---------------------------- */

/* The calling thread's state, created on first use (NULL only without memory). */
struct ws32_tls *ws32_tls(void);
void ws32_set_last_error(DWORD error);
/* Now on the clock the core's deadlines use (CLOCK_MONOTONIC). */
void ws32_clock_now(struct timespec *now);
/* Gives the processor to another thread, inside a short spin. */
void ws32_yield(void);
/*
 * Starts an OS thread running ws32_thread_run(thread); may set
 * thread->ended_by_os (see struct ws32_thread).
 */
bool ws32_start_thread(struct ws32_thread *thread, SIZE_T stack_size, DWORD *thread_id,
		       DWORD *error);
/* The thread object is freed: releases what ws32_start_thread kept of the OS thread. */
void ws32_release_os_thread(struct ws32_thread *thread);

/*
 * Handles winsync did not make: the DLL hands them to kernel32; natively
 * they are invalid.  Each returns true if it took the call.
 */
bool ws32_foreign_close(HANDLE handle, BOOL *result);
bool ws32_foreign_wait(DWORD count, const HANDLE *handles, BOOL wait_all, DWORD milliseconds,
		       DWORD *result);

#endif
