/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Linux kernel's ABI as winsync uses it, written out once: the futex
 * operations and flags, the entries of futex_waitv and FUTEX_WAIT_MULTIPLE,
 * the robust futex list and the bits the kernel writes into a robust word.
 * The kernel's own headers are not used, so that the Windows DLL build
 * (which has none) compiles the same definitions.
 */
#ifndef WINSYNC_ABI_H
#define WINSYNC_ABI_H

#include <stdint.h>

#include "arch/syscall.h"

/* futex(2) operations. */
#define WS_FUTEX_WAKE           1
#define WS_FUTEX_WAIT_MULTIPLE  31   /* the kernel series' op (kernel/patches) */
#define WS_FUTEX_PRIVATE_FLAG   128
#define WS_FUTEX_BITSET_ANY     0xffffffffu

/* futex_waitv flags. */
#define WS_FUTEX2_SIZE_U32      0x02
#define WS_FUTEX2_PRIVATE       WS_FUTEX_PRIVATE_FLAG
/* Most words one futex_waitv (or FUTEX_WAIT_MULTIPLE) call sleeps on. */
#define WS_FUTEX_WAITV_MAX      128

/* Clock ids, as clock_gettime and futex_waitv take them. */
#define WS_CLOCK_REALTIME       0
#define WS_CLOCK_MONOTONIC      1

/* struct futex_waitv (linux/futex.h). */
struct ws_kernel_waitv {
	uint64_t val;
	uint64_t uaddr;
	uint32_t flags;
	uint32_t reserved;
};
_Static_assert(sizeof(struct ws_kernel_waitv) == 24, "struct futex_waitv");

/* An entry of FUTEX_WAIT_MULTIPLE: 16 bytes on every ABI (kernel/patches/0006). */
struct ws_kernel_wait_multiple {
	uint64_t uaddr;
	uint32_t val;
	uint32_t bitset;
};
_Static_assert(sizeof(struct ws_kernel_wait_multiple) == 16, "kernel/patches/0006");

/* struct __kernel_timespec: 64-bit fields on every ABI. */
struct ws_kernel_timespec {
	long long tv_sec;
	long long tv_nsec;
};
_Static_assert(sizeof(struct ws_kernel_timespec) == 16, "struct __kernel_timespec");

/*
 * The robust futex list (struct robust_list_head): registered per thread
 * with set_robust_list, walked by the kernel when the thread exits.  Each
 * entry points at the next; the futex word of an entry is futex_offset
 * bytes from it, and list_op_pending names an entry being added or removed.
 */
struct ws_robust_head {
	void *next;
	intptr_t futex_offset;  /* a Linux `long`: pointer-sized (Windows' long is not) */
	void *list_op_pending;
};
_Static_assert(sizeof(struct ws_robust_head) == 3 * sizeof(void *),
	       "the kernel's robust_list_head (compat_robust_list_head for 32-bit tasks)");

/*
 * glibc's robust mutexes (and so every thread's list head, futex_offset)
 * put the list entry after the lock word: 32 bytes on x86_64, where the
 * list is doubly linked (the back link at 24, also in front of the head),
 * and 20 bytes on i386, where it is singly linked (the entry shares a union
 * with __spins).  Measured with get_robust_list of a pthread: -32 and -20.
 * A winsync thread record mirrors both shapes in its first line
 * (layout.h); a thread uses the one of its own ABI.
 */
#define WS_ROBUST_OFFSET_X86_64 32
#define WS_ROBUST_OFFSET_I386   20
#if defined(__x86_64__)
#define WS_ROBUST_FUTEX_OFFSET  WS_ROBUST_OFFSET_X86_64
#define WS_ROBUST_DOUBLY_LINKED 1
#elif defined(__i386__)
#define WS_ROBUST_FUTEX_OFFSET  WS_ROBUST_OFFSET_I386
#define WS_ROBUST_DOUBLY_LINKED 0
#else
#error "winsync: glibc's robust list layout is known for x86_64 and i386 only"
#endif

/* What the kernel reads and writes in a robust futex word. */
#define WS_FUTEX_WAITERS        0x80000000u  /* set by sleepers: the kernel wakes one at death */
#define WS_FUTEX_OWNER_DIED     0x40000000u  /* set by the kernel when the owner exits */
#define WS_FUTEX_TID_MASK       0x3fffffffu

#endif
