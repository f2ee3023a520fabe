/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OS layer: the few host services the core needs besides the futex
 * calls.  One implementation per host: os/linux.c (libc) and, for the
 * Windows DLL under Wine, raw system calls.
 */
#ifndef WINSYNC_OS_H
#define WINSYNC_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define WS_CLOCK_REALTIME  0
#define WS_CLOCK_MONOTONIC 1

/*
 * Checked once before the first raw system call: 0 if this host serves
 * Linux system calls, else -ENOSYS (the Windows DLL on real Windows).
 */
int ws_os_init(void);

/* Anonymous memory for a private arena: no file descriptor. */
int ws_os_map_private(size_t size, void **base);
/*
 * A new named shared mapping, mode 0600; -EEXIST if the name is taken.
 * init() fills it before other processes can open it: the mapping is built
 * under a temporary name and renamed into place without replacing.
 */
int ws_os_map_create(const char *name, size_t size, void **base,
		     void (*init)(void *base, void *ctx), void *ctx);
/* An existing named shared mapping; -ENOENT if the name is missing. */
int ws_os_map_open(const char *name, void **base, size_t *size);
void ws_os_unmap(void *base, size_t size);
int ws_os_unlink(const char *name);

/* The calling thread's kernel thread id, without a system call once known. */
uint32_t ws_os_thread_id(void);
/* False only when the thread certainly no longer exists. */
bool ws_os_thread_alive(uint32_t tid);

int ws_os_clock_now(int clock, struct timespec *now);
const char *ws_os_getenv(const char *name);
/* Hints the CPU that this is a spin-wait loop. */
static inline void ws_os_relax(void)
{
	__builtin_ia32_pause();
}

#endif
