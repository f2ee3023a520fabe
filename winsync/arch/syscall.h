/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Raw Linux system calls for the architecture being built: the one place
 * that chooses.  Each arch/<arch>/syscall.h defines the WS_NR_* numbers and
 * ws_syscall6; ws_syscall1..5 below call it.  They take and return `long
 * long` (the Windows x64 ABI's `long` is 32 bits) and give Linux errno
 * values as negative results.
 */
#ifndef WINSYNC_ARCH_SYSCALL_H
#define WINSYNC_ARCH_SYSCALL_H

/*
 * The kernel answers with Linux errno values.  Built for Windows (the DLL
 * under Wine), the C runtime numbers some errno values differently (ENOSYS
 * is 40, ETIMEDOUT 138): translate the ones the callers compare against.
 * Values 1 to 34 are the same in both.
 */
#ifdef _WIN32
#include <errno.h>
static inline long long ws_syscall_result(long long ret)
{
	switch (ret) {
	case -35: return -EDEADLK;
	case -36: return -ENAMETOOLONG;
	case -38: return -ENOSYS;
	case -39: return -ENOTEMPTY;
	case -75: return -EOVERFLOW;
	case -95: return -ENOTSUP;
	case -110: return -ETIMEDOUT;
	case -130: return -EOWNERDEAD;
	default: return ret;
	}
}
#else
#define ws_syscall_result(ret) (ret)
#endif

#if defined(__x86_64__)
#include "x86_64/syscall.h"
#elif defined(__i386__)
#include "i386/syscall.h"
#else
#error "winsync: no system call layer for this architecture (winsync/arch/)"
#endif

/* Fewer arguments: the arch's six-argument call with the rest zero. */
static inline long long ws_syscall5(long long nr, long long a1, long long a2,
				    long long a3, long long a4, long long a5)
{
	return ws_syscall6(nr, a1, a2, a3, a4, a5, 0);
}

static inline long long ws_syscall4(long long nr, long long a1, long long a2,
				    long long a3, long long a4)
{
	return ws_syscall6(nr, a1, a2, a3, a4, 0, 0);
}

static inline long long ws_syscall3(long long nr, long long a1, long long a2, long long a3)
{
	return ws_syscall6(nr, a1, a2, a3, 0, 0, 0);
}

static inline long long ws_syscall2(long long nr, long long a1, long long a2)
{
	return ws_syscall6(nr, a1, a2, 0, 0, 0, 0);
}

static inline long long ws_syscall1(long long nr, long long a1)
{
	return ws_syscall6(nr, a1, 0, 0, 0, 0, 0);
}

#endif
