/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync: Windows NT synchronization objects (events, mutexes, semaphores)
 * and WaitForMultipleObjects-style waits, in a shared-memory arena, blocking
 * in futex_waitv.
 *
 * Every function returns 0 or a negative errno value.  A call that fails
 * changes nothing.  Output pointers that only report a previous state may
 * be NULL.
 *
 *   -EINVAL   NULL arena or required pointer, bad argument, wrong object type
 *   -EBADF    handle never created, or already closed
 *   -ENOSPC   the arena holds `capacity` live objects already
 *   -EOVERFLOW semaphore release past its maximum
 *   -EPERM    mutex unlock or kill by a thread that does not own it
 *   -EOWNERDEAD the mutex was abandoned (the call still succeeded)
 *   -ETIMEDOUT the deadline passed and nothing was acquired
 *
 * Thread safety: every call may be made from any thread of any process that
 * has the arena mapped.
 */
#ifndef WINSYNC_H
#define WINSYNC_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(WINSYNC_BUILDING_DLL)
#define WS_API __declspec(dllexport)
#elif defined(_WIN32) && !defined(WINSYNC_STATIC)
#define WS_API __declspec(dllimport)
#else
#define WS_API __attribute__((visibility("default")))
#endif

#define WS_MAX_WAIT_OBJECTS 64
#define WS_WAIT_REALTIME    0x1u  /* deadline on CLOCK_REALTIME instead of CLOCK_MONOTONIC */

typedef struct ws_arena ws_arena;
typedef uint32_t ws_handle;       /* 0 is never a valid handle */

/*
 * Arenas.  name == NULL makes a private arena for this process; a name of 1
 * to 64 characters from [A-Za-z0-9._-] makes a shared one that other
 * processes open by the same name and use with the same handle values.
 * capacity is the most live objects (0 picks WS_DEFAULT_CAPACITY, at most
 * WS_MAX_CAPACITY).
 */
#define WS_DEFAULT_CAPACITY 65536u
#define WS_MAX_CAPACITY     4194303u

WS_API int  ws_arena_create(const char *name, uint32_t capacity, ws_arena **arena);
WS_API int  ws_arena_open(const char *name, ws_arena **arena);
WS_API void ws_arena_close(ws_arena *arena);
WS_API int  ws_arena_unlink(const char *name);

/* Semaphores: a wait that acquires one takes one unit. */
WS_API int ws_sem_create(ws_arena *arena, uint32_t count, uint32_t max, ws_handle *sem);
WS_API int ws_sem_release(ws_arena *arena, ws_handle sem, uint32_t count, uint32_t *prev_count);
WS_API int ws_sem_read(ws_arena *arena, ws_handle sem, uint32_t *count, uint32_t *max);

/*
 * Mutexes: recursive, owned by a nonzero owner id (normally the thread id).
 * ws_mutex_kill abandons it: the next acquirer gets -EOWNERDEAD and owns it.
 */
WS_API int ws_mutex_create(ws_arena *arena, uint32_t owner, uint32_t count, ws_handle *mutex);
WS_API int ws_mutex_unlock(ws_arena *arena, ws_handle mutex, uint32_t owner, uint32_t *prev_count);
WS_API int ws_mutex_kill(ws_arena *arena, ws_handle mutex, uint32_t owner);
WS_API int ws_mutex_read(ws_arena *arena, ws_handle mutex, uint32_t *count, uint32_t *owner);

/*
 * Events.  Pulse releases only the threads already blocked on the event
 * (all of them for manual reset, one for auto reset) and leaves it unsignaled.
 */
WS_API int ws_event_create(ws_arena *arena, bool manual_reset, bool signaled, ws_handle *event);
WS_API int ws_event_set(ws_arena *arena, ws_handle event, bool *was_signaled);
WS_API int ws_event_reset(ws_arena *arena, ws_handle event, bool *was_signaled);
WS_API int ws_event_pulse(ws_arena *arena, ws_handle event, bool *was_signaled);
WS_API int ws_event_read(ws_arena *arena, ws_handle event, bool *signaled, bool *manual_reset);

/* Destroys the object; threads already waiting on it go on waiting. */
WS_API int ws_close(ws_arena *arena, ws_handle object);

struct ws_wait {
	const ws_handle *objects;
	uint32_t count;                  /* 0 .. WS_MAX_WAIT_OBJECTS */
	uint32_t owner;                  /* nonzero id that acquires mutexes, normally the thread id */
	ws_handle alert;                 /* 0, or an event that also ends the wait */
	uint32_t flags;                  /* WS_WAIT_REALTIME */
	const struct timespec *deadline; /* absolute; NULL waits forever; a past deadline only polls */
};

/*
 * Acquires the lowest-index signaled object and sets *index to it, or to
 * `count` when the alert ended the wait.
 */
WS_API int ws_wait_any(ws_arena *arena, const struct ws_wait *wait, uint32_t *index);

/*
 * Acquires every object at once, atomically (*index = 0), or the alert alone
 * (*index = count).  The same object twice is -EINVAL.
 */
WS_API int ws_wait_all(ws_arena *arena, const struct ws_wait *wait, uint32_t *index);

/*
 * The futex backend in use: "futex_waitv" (syscall 449) or
 * "futex_wait_multiple" (futex op 31, the fallback for kernels without
 * futex_waitv).  WINSYNC_BACKEND=waitv|multiple in the environment forces
 * one; ws_arena_create then fails with -ENOSYS if the kernel lacks it.
 */
WS_API const char *ws_futex_backend(void);

#ifdef __cplusplus
}
#endif

#endif /* WINSYNC_H */
