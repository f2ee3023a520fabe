/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Raw x86_64 Linux system calls.  The futex calls go through these rather
 * than libc so the same code serves a Linux build and a Windows DLL running
 * under Wine, where there is no Linux libc to call.  Every argument is a
 * 64-bit `long long`: under the Windows x64 ABI `long` is only 32 bits.
 */
#ifndef WINSYNC_ARCH_X86_64_SYSCALL_H
#define WINSYNC_ARCH_X86_64_SYSCALL_H

#define WS_NR_read            0
#define WS_NR_write           1
#define WS_NR_close           3
#define WS_NR_fstat           5
#define WS_NR_mmap            9
#define WS_NR_munmap          11
#define WS_NR_getpid          39
#define WS_NR_kill            62
#define WS_NR_ftruncate       77
#define WS_NR_fchmod          91
#define WS_NR_gettid          186
#define WS_NR_futex           202
#define WS_NR_clock_gettime   228
#define WS_NR_openat          257
#define WS_NR_unlinkat        263
#define WS_NR_set_robust_list 273
#define WS_NR_get_robust_list 274
#define WS_NR_process_vm_readv 310
#define WS_NR_renameat2       316
#define WS_NR_futex_waitv     449

static inline long long ws_syscall6(long long nr, long long a1, long long a2,
				    long long a3, long long a4, long long a5,
				    long long a6)
{
	long long ret;
	register long long r10 __asm__("r10") = a4;
	register long long r8 __asm__("r8") = a5;
	register long long r9 __asm__("r9") = a6;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ws_syscall_result(ret);
}

#endif
