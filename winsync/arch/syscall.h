/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Raw Linux system calls for the architecture being built: the one place
 * that chooses.  Each arch/<arch>/syscall.h defines the WS_NR_* numbers and
 * ws_syscall1..6, which take and return `long long` (the Windows x64 ABI's
 * `long` is 32 bits) and give Linux errno values as negative results.
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

#endif
