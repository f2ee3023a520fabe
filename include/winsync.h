/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync: Windows NT synchronization objects (events, mutexes, semaphores)
 * and WaitForMultipleObjects-style waits, in a shared-memory arena, blocking
 * in futex_waitv.
 *
 * Every function that returns int returns 0 or a negative errno value (the
 * others: ws_arena_close and ws_stats_read return nothing, ws_futex_backend
 * a name, ws_defer_suspend and ws_in_critical_section a bool).  A call that
 * fails changes nothing.  Output pointers that only report a previous state may
 * be NULL.
 *
 *   -EINVAL    NULL arena or required pointer, bad argument, wrong object type
 *   -EBADF     handle never created, or already closed
 *   -ENOSPC    the arena holds `capacity` live objects already
 *   -EOVERFLOW semaphore release past its maximum
 *   -EPERM     mutex unlock or kill by an owner that does not own it
 *   -EOWNERDEAD the mutex was abandoned (the call still succeeded)
 *   -ETIMEDOUT the deadline passed and nothing was acquired
 *   -EAGAIN    non-blocking arena (WS_ARENA_NONBLOCK): the call would have had
 *              to wait for another thread's critical section (a wait that has
 *              blocked already never needs one to time out)
 *   -EUSERS    WS_MAX_THREADS threads of all processes use the arena already
 *   -ECANCELED the wait was dropped by ws_owner_died() for its owner
 *   -EUCLEAN   the arena's shared memory is inconsistent: a process that can
 *              write it has corrupted it.  Nothing outside the arena is
 *              touched, and no call crashes or hangs because of it.
 *
 * Thread safety: every call may be made from any thread of any process that
 * has the arena mapped.
 *
 * Death: a thread or process may be killed at any instruction, inside any
 * call or blocked in one.  The others are never blocked past their deadline
 * because of it, lose no signal given after the death, and find every object
 * consistent: a critical section the dead thread left is rolled back, or
 * finished if it had committed.  A waiter that dies leaves its queues; the
 * mutexes its owner id holds are abandoned (see ws_owner_died).
 */
#ifndef WINSYNC_H
#define WINSYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Windows C runtimes lack two of the errno values above: winsync.dll's own numbers. */
#ifdef _WIN32
#include <errno.h>
#endif
#if defined(_WIN32) && !defined(EUSERS)
#define EUSERS  201
#endif
#if defined(_WIN32) && !defined(EUCLEAN)
#define EUCLEAN 202
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
 *
 * A shared arena is /dev/shm/winsync-NAME, mode 0600: ws_arena_open refuses
 * (-EACCES) a file that is not a regular file owned by the caller with mode
 * 0600, so another user cannot plant or resize it.
 *
 * Handles: a closed handle is -EBADF forever.  Free slots are reused oldest
 * first, and a slot retires instead of reusing a generation, so a handle
 * value never names a second object.
 */
#define WS_DEFAULT_CAPACITY 65536u
#define WS_MAX_CAPACITY     4194303u
/* Threads (of all processes) that may use one arena at once. */
#define WS_MAX_THREADS      4095u

WS_API int  ws_arena_create(const char *name, uint32_t capacity, ws_arena **arena);
WS_API int  ws_arena_open(const char *name, ws_arena **arena);
/*
 * Unmaps the arena in this process.  The calling thread leaves it; while
 * another thread of this process that used the arena is still running, the
 * mapping stays (the kernel must be able to mark that thread dead when it
 * ends) and is released with the process.
 */
WS_API void ws_arena_close(ws_arena *arena);
WS_API int  ws_arena_unlink(const char *name);

/*
 * WS_ARENA_NONBLOCK: no call through this arena pointer ever sleeps on
 * another thread's critical section; it fails with -EAGAIN instead, having
 * changed nothing, and the caller retries later.  Waits still sleep until
 * their deadline for the objects themselves.  For a single-threaded server
 * that must never block (a thread stopped with SIGSTOP inside a call would
 * otherwise stall it).  The flags belong to this process's arena pointer.
 */
#define WS_ARENA_NONBLOCK 0x1u
/*
 * WS_ARENA_SPIN: a wait about to sleep first polls for a hand-off for a
 * few microseconds, a budget each thread adapts to what its polls caught
 * and bounds by what its own wake-ups cost; never on a thread allowed one
 * CPU only.  A hand-off caught that way saves the waiter a wake-up across
 * CPUs, at the price of CPU time while it polls (winsync-bench group 2
 * shows both, with and without).  Off by default; WINSYNC_SPIN=1 in the
 * environment sets it on every arena pointer the process opens (Wine's
 * too).
 */
#define WS_ARENA_SPIN 0x2u
WS_API int ws_arena_set_flags(ws_arena *arena, uint32_t flags);

/* Semaphores: a wait that acquires one takes one unit. */
WS_API int ws_sem_create(ws_arena *arena, uint32_t count, uint32_t max, ws_handle *sem);
WS_API int ws_sem_release(ws_arena *arena, ws_handle sem, uint32_t count, uint32_t *prev_count);
WS_API int ws_sem_read(ws_arena *arena, ws_handle sem, uint32_t *count, uint32_t *max);

/*
 * Mutexes: recursive, owned by a nonzero owner id (normally the thread id;
 * one owner id must not be used by two threads at once).
 * ws_mutex_kill abandons it: the next acquirer gets -EOWNERDEAD and owns it.
 * ws_mutex_read returns -EOWNERDEAD (with count and owner filled in) while
 * the mutex is abandoned and nobody has acquired it since.
 */
WS_API int ws_mutex_create(ws_arena *arena, uint32_t owner, uint32_t count, ws_handle *mutex);
WS_API int ws_mutex_unlock(ws_arena *arena, ws_handle mutex, uint32_t owner, uint32_t *prev_count);
WS_API int ws_mutex_kill(ws_arena *arena, ws_handle mutex, uint32_t owner);
WS_API int ws_mutex_read(ws_arena *arena, ws_handle mutex, uint32_t *count, uint32_t *owner);

/*
 * Owner death.  Abandons every mutex `owner` holds (each one's next acquirer
 * gets -EOWNERDEAD) and ends every wait made with that owner id (-ECANCELED),
 * in one call: for a server that is told of thread deaths.  Calling it again
 * for the same owner finds nothing more to do.
 *
 * Without the call, the death of a thread is found by the kernel (each
 * thread that enters an arena has a record on its robust futex list): the
 * mutexes held under the owner id that thread used last (to acquire a mutex,
 * or to create one owned; a wait that acquires nothing does not count) are
 * abandoned when no live thread uses that id any more, and a waiter blocked
 * on such a mutex gets it with -EOWNERDEAD within 100 ms of the death.
 */
WS_API int ws_owner_died(ws_arena *arena, uint32_t owner);

/*
 * Events.  Pulse releases only the threads already blocked on the event
 * (all of them for manual reset, one for auto reset) and leaves it unsignaled.
 */
WS_API int ws_event_create(ws_arena *arena, bool manual_reset, bool signaled, ws_handle *event);
WS_API int ws_event_set(ws_arena *arena, ws_handle event, bool *was_signaled);
WS_API int ws_event_reset(ws_arena *arena, ws_handle event, bool *was_signaled);
WS_API int ws_event_pulse(ws_arena *arena, ws_handle event, bool *was_signaled);
WS_API int ws_event_read(ws_arena *arena, ws_handle event, bool *signaled, bool *manual_reset);

/*
 * Destroys the object: its handle is -EBADF at once.  Threads already
 * waiting on it go on waiting, and the object lives on for them as in NT
 * (a wait_all may still take it with the rest; a dead owner's mutex is
 * still abandoned to them); its slot is freed once their waits end.
 */
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
 * The deadline bounds the wait for the objects; a wait sleeps to it on its
 * own clock, so a CLOCK_REALTIME deadline follows changes of the wall clock.
 * A blocked wait is woken only by what it waits for, its deadline, or the
 * death of a thread it depends on.  Any call may also wait for another
 * thread's critical section (a few microseconds while that thread runs,
 * never past a thread that died: its work is taken over), unless the arena
 * is WS_ARENA_NONBLOCK.
 */

/*
 * Acquires the lowest-index signaled object and sets *index to it, or to
 * `count` when the alert ended the wait (an object signaled together with
 * the alert wins).  The alert must be an event: -EINVAL otherwise, before
 * anything is acquired.
 */
WS_API int ws_wait_any(ws_arena *arena, const struct ws_wait *wait, uint32_t *index);

/*
 * Acquires every object at once, atomically (*index = 0), or the alert alone
 * (*index = count).  The same object twice is -EINVAL, once every handle
 * is found valid (-EBADF first, as NT).
 */
WS_API int ws_wait_all(ws_arena *arena, const struct ws_wait *wait, uint32_t *index);

/*
 * Suspension.  A host that suspends threads from a signal handler (Wine's
 * SuspendThread does) must not park a thread inside a critical section:
 * every other thread of every process that touches the arena would wait for
 * it.  The handler calls ws_defer_suspend() first.  It returns false when
 * the thread may be suspended now.  It returns true when the thread is inside
 * a critical section: the handler must return without suspending, and the
 * thread calls the hook set with ws_set_suspend_hook() as soon as it leaves
 * the critical section (the hook then suspends it, e.g. by raising the
 * signal again).  Both are async-signal-safe and make no system call.
 * Outside critical sections (the uncontended paths, and while blocked in a
 * wait) a thread holds nothing and may be suspended at any point.
 */
WS_API bool ws_defer_suspend(void);
WS_API void ws_set_suspend_hook(void (*hook)(void));
/* Is the calling thread inside a critical section now? */
WS_API bool ws_in_critical_section(void);

/*
 * Checks every invariant of the arena (for tests and debugging): queues,
 * counts, owners, free lists, and that no live waiter is still blocked on
 * an object that is ready for it (a lost signal).  Takes the arena lock,
 * finishing a dead holder's work first, and every object's own lock.  0,
 * or -EUCLEAN with the first broken invariant described in `report` (when
 * not NULL); -EAGAIN through a WS_ARENA_NONBLOCK pointer while another
 * thread holds one of those locks.
 */
WS_API int ws_arena_check(ws_arena *arena, char *report, size_t size);

/*
 * Snapshots: what an arena holds right now, for inspectors (winsync-stat)
 * and tests.  Taking one never writes the arena, never takes or waits for
 * a lock, and never crashes or hangs on a corrupted or truncated arena: it
 * reads each object and each wait again when a writer raced the read
 * (retries), marks what was still changing after its last try (BUSY,
 * TORN) and lists what it found inconsistent (problems, report).  Each
 * object and each wait is read whole; the snapshot as a whole is not one
 * instant.
 *
 * ws_arena_snapshot reads an arena this process has open (private ones
 * too).  ws_snapshot_open maps the shared arena `name` read-only, with the
 * checks of ws_arena_open (-EACCES for a file that is not the caller's,
 * mode 0600), reads it and unmaps it: -EPROTO if it is a winsync arena of
 * another layout version, -EINVAL if it is no arena at all.  Free with
 * ws_snapshot_free.  flags: 0.
 */
#define WS_SNAPSHOT_NONE  0xffffffffu   /* no thread (an index into threads) */

/* ws_snapshot_object.type */
#define WS_SNAPSHOT_SEM   1u
#define WS_SNAPSHOT_MUTEX 2u
#define WS_SNAPSHOT_EVENT 3u
/* ws_snapshot_object.flags */
#define WS_SNAPSHOT_ABANDONED 0x1u  /* mutex abandoned, not acquired since */
#define WS_SNAPSHOT_BUSY      0x2u  /* a critical section was changing it: values as last seen */
#define WS_SNAPSHOT_CORRUPT   0x4u  /* its fields or queue disagree at every read (see the report) */
#define WS_SNAPSHOT_CLOSED    0x8u  /* closed, held for the waits queued on it (ws_close(3)) */

struct ws_snapshot_object {
	ws_handle handle;
	uint32_t type;
	uint32_t flags;
	uint32_t count, max;            /* semaphore */
	uint32_t owner;                 /* mutex: owner id, 0 when free */
	uint32_t recursion;             /* mutex: acquisitions held (0 when free) */
	uint32_t owner_thread;          /* mutex: the thread using `owner`, or WS_SNAPSHOT_NONE */
	bool signaled, manual_reset;    /* event */
	uint32_t queued;                /* waits queued on it, in arrival order ... */
	const uint32_t *queue;          /* ... as indices into threads */
};

/* ws_snapshot_thread.state */
#define WS_SNAPSHOT_LIVE    1u
#define WS_SNAPSHOT_DEAD    2u      /* died (or left); its record not yet reaped */
/* ws_snapshot_thread.wait */
#define WS_SNAPSHOT_NO_WAIT  0u
#define WS_SNAPSHOT_WAIT_ANY 1u
#define WS_SNAPSHOT_WAIT_ALL 2u
/* ws_snapshot_thread.flags */
#define WS_SNAPSHOT_LOCK_HOLDER 0x1u /* holds (or is taking) a lock of the arena */
#define WS_SNAPSHOT_TORN        0x2u /* its wait kept changing while read: not shown */
#define WS_SNAPSHOT_DEADLOCKED  0x4u /* waits, without deadline, on mutexes whose owners
				      * all wait the same way: a cycle */
#define WS_SNAPSHOT_FOREVER     0x8u /* its wait has no deadline */
#define WS_SNAPSHOT_REALTIME    0x10u /* its deadline is on CLOCK_REALTIME */

/* A thread record: a thread that entered the arena (one of any process). */
struct ws_snapshot_thread {
	uint32_t record;                /* its record's index in the arena */
	uint32_t state;
	uint32_t flags;
	uint32_t tid, pid;              /* Linux ids (pid 0: unknown) */
	uint32_t owner;                 /* the owner id it last acquired a mutex with, or 0 */
	/* Its wait, unless wait == WS_SNAPSHOT_NO_WAIT. */
	uint32_t wait;
	uint32_t wait_owner;            /* the owner id of the wait */
	uint32_t count;                 /* objects ... */
	const ws_handle *objects;       /* ... their handles; 0 for one closed since */
	ws_handle alert;                /* 0: none */
	uint64_t waited_ns;             /* how long it has been blocked */
	int64_t deadline_ns;            /* time left to its deadline (negative: passed) */
	/*
	 * The next link of its wait chain: a thread that owns a mutex it waits
	 * on (a deadlocked one first), and that mutex; else WS_SNAPSHOT_NONE, 0.
	 */
	uint32_t blocker;
	ws_handle blocked_on;
};

struct ws_snapshot {
	uint32_t capacity;              /* live objects allowed */
	uint32_t live;                  /* live objects found */
	uint64_t taken_ns;              /* CLOCK_MONOTONIC when it began */
	uint64_t took_ns;               /* how long it took */
	uint32_t lock_holder;           /* the thread holding the arena lock, or WS_SNAPSHOT_NONE */
	uint32_t retries;               /* reads repeated because a writer raced them */
	uint32_t gave_up;               /* objects BUSY and waits TORN after the last retry */
	uint32_t problems;              /* inconsistencies found: corruption */
	uint32_t deadlocked;            /* threads flagged WS_SNAPSHOT_DEADLOCKED */
	const char *report;             /* the first problems, one line each ("" if none) */
	uint32_t object_count;
	const struct ws_snapshot_object *objects;
	uint32_t thread_count;
	const struct ws_snapshot_thread *threads;
};

WS_API int ws_arena_snapshot(ws_arena *arena, uint32_t flags, struct ws_snapshot **snapshot);
WS_API int ws_snapshot_open(const char *name, uint32_t flags, struct ws_snapshot **snapshot);
WS_API void ws_snapshot_free(struct ws_snapshot *snapshot);

/*
 * Counters of this process's slow paths, over all its arenas (the fast
 * paths count nothing, so they stay free of shared writes).
 */
struct ws_stats {
	uint64_t futex_waits;   /* sleeps in the kernel: blocked waits, and lock_sleeps */
	uint64_t futex_wakes;   /* FUTEX_WAKE calls: one per waiter handed an object, one per
				 * critical section that had sleepers */
	uint64_t lock_sleeps;   /* sleeps on another thread's critical section */
	uint64_t locked_calls;  /* calls that entered a critical section */
	uint64_t recoveries;    /* critical sections of dead threads finished or undone */
	uint64_t reaped;        /* records of dead threads reclaimed */
};
WS_API void ws_stats_read(struct ws_stats *stats);

/*
 * How this process's critical sections used their lock (the arena's), over
 * all its arenas: measured only when the environment had
 * WINSYNC_LOCK_STATS=1 at the first section (each section then reads the
 * clock twice), else -ENODATA.  Hold times are from a histogram of 8 steps
 * per power of two.  -EINVAL for a NULL stats.
 */
struct ws_lock_stats {
	uint64_t acquisitions;   /* critical sections entered */
	uint64_t found_held;     /* of those, how many found the lock held by another thread */
	uint64_t held_samples;   /* sections whose hold time was measured */
	uint64_t held_ns_median; /* how long a section held the lock */
	uint64_t held_ns_p99;
	uint64_t held_ns_max;
};
WS_API int ws_lock_stats_read(struct ws_lock_stats *stats);

/*
 * The futex backend in use: "futex_waitv" (syscall 449) or
 * "futex_wait_multiple" (futex op 31, the fallback for kernels without
 * futex_waitv), or "none" when there is none: the kernel has neither, or
 * WINSYNC_BACKEND names one it lacks (ws_arena_create and ws_arena_open fail
 * with -ENOSYS) or no backend at all (-EINVAL).  WINSYNC_BACKEND=waitv or
 * futex_waitv, multiple or futex_wait_multiple, forces one.  Never NULL.
 */
WS_API const char *ws_futex_backend(void);

#ifdef __cplusplus
}
#endif

#endif /* WINSYNC_H */
