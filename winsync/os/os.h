/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OS layer: the few host services the core needs besides the futex
 * calls.  One implementation per host: os/linux.c (libc) and, for the
 * Windows DLL under Wine, os/wine.c (raw system calls).
 */
#ifndef WINSYNC_OS_H
#define WINSYNC_OS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "abi.h"

/*
 * Checked once before the first raw system call: 0 if this host serves
 * Linux system calls, else -ENOSYS (the Windows DLL on real Windows).
 */
int ws_os_init(void);

/* Anonymous memory for a private arena: no file descriptor. */
int ws_os_map_private(size_t size, void **base);
/*
 * A new named shared mapping, mode 0600; -EEXIST if the name is taken.
 * init() fills it before other processes can open it: the file is made
 * unnamed (O_TMPFILE) and linked into place only once it is complete.
 */
int ws_os_map_create(const char *name, size_t size, void **base,
		     void (*init)(void *base, void *ctx), void *ctx);
/*
 * An existing named shared mapping; -ENOENT if the name is missing, -EACCES
 * unless it is a regular file of the caller's with mode 0600.
 */
int ws_os_map_open(const char *name, void **base, size_t *size);
/* The same mapped read-only, for inspectors (snapshot.c): it can never write the arena. */
int ws_os_map_inspect(const char *name, void **base, size_t *size);
void ws_os_unmap(void *base, size_t size);
int ws_os_unlink(const char *name);

/* The calling thread's kernel thread id, without a system call once known. */
uint32_t ws_os_thread_id(void);
uint32_t ws_os_process_id(void);

/*
 * The calling thread's robust futex list head (struct robust_list_head), its
 * futex_offset checked to be -32; NULL if it cannot be used.  Registers a
 * head of winsync's own when the thread has none.
 */
void *ws_os_robust_head(void);

/*
 * Copies n bytes from addr in this process, or fails with -EFAULT instead of
 * faulting: for checking list links read from shared memory before use.
 */
int ws_os_peek(const void *addr, void *out, size_t n);

/*
 * How many CPUs this thread may run on, or its process could when winsync
 * started, whichever is more (1 if neither can be read): a thread pinned to
 * one CPU may still be signaled from another, a process started on one
 * (taskset -c 0) may not.
 */
int ws_os_cpus_allowed(void);

/* Now on WS_CLOCK_REALTIME or WS_CLOCK_MONOTONIC (clock.c reads the clocks through it). */
int ws_os_clock_now(int clock, struct timespec *now);
const char *ws_os_getenv(const char *name);

/* What winsync keeps per thread (os layers allocate it on first use). */
#define WS_THREAD_CACHE 4
struct ws_thread_cache {
	uint64_t serial;          /* arena serial; 0 = empty */
	uint32_t tid;             /* the thread that filled it (fork changes it) */
	uint32_t record;
};

struct ws_thread {
	volatile sig_atomic_t critical;  /* depth of critical sections */
	volatile sig_atomic_t deferred;  /* a suspension waits for the way out */
	struct ws_thread_cache cache[WS_THREAD_CACHE];
	uint32_t cache_next;
	uint32_t robust_tid;             /* the thread robust_head was looked up for */
	void *robust_head;
	struct ws_spin_state {           /* spin.c */
		uint32_t budget_ns;      /* how long the next wait polls; 0: none for now */
		uint32_t wake_ns;        /* what a sleep ended by a hand-off costs, at least */
		uint32_t skipped;        /* waits that slept without polling since budget_ns fell to 0 */
		uint32_t cpus_age;       /* waits since cpus_many was read */
		bool cpus_many;          /* this thread may run on more than one CPU */
	} spin;
	void *memo;                      /* memo.h's; NULL until ws_os_memo_reserve */
};

/* This thread's state, or NULL if it cannot be had (out of memory). */
struct ws_thread *ws_os_thread(void);
/* The same if it exists already: async-signal-safe, never allocates. */
#ifdef _WIN32
struct ws_thread *ws_os_thread_peek(void);
#else
/* linux.c's, read inline: a poll of a list the memo knows starts here. */
extern _Thread_local struct ws_thread ws_os_thread_state __attribute__((tls_model("initial-exec")));
static inline struct ws_thread *ws_os_thread_peek(void)
{
	return &ws_os_thread_state;
}
#endif
/*
 * Gives the thread its memo (memo.h: WS_OS_MEMO_BYTES zeroed bytes aligned
 * to WS_OS_MEMO_ALIGN, freed at its exit) if it has none; called where
 * system calls are expected (a thread's registration).  Without one (this
 * host keeps none, or no memory) nothing is remembered.
 */
#define WS_OS_MEMO_BYTES 320
#define WS_OS_MEMO_ALIGN 64
void ws_os_memo_reserve(struct ws_thread *thread);

/* Hints the CPU that this is a spin-wait loop. */
static inline void ws_os_relax(void)
{
	__builtin_ia32_pause();
}

#endif
