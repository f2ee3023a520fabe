/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Raw i386 Linux system calls, for 32-bit programs (a Linux build with -m32,
 * and winsync.dll for 32-bit Windows programs under Wine, which are 32-bit
 * Linux processes).
 *
 * The calls enter the kernel through the vDSO's __kernel_vsyscall (sysenter
 * or syscall) once the OS layer has found it (ws_os_init: AT_SYSINFO of the
 * auxiliary vector), else with `int $0x80`.  The difference is large: on a
 * 6.18 x86_64 kernel in a VM, int 0x80 (do_int80_emulation) took about 10 us
 * a call, and made a blocking set + wait round trip 8 times slower than the
 * 64-bit one (23 us against 2.8 us; 2.9 us through the vDSO).
 *
 * Where the kernel has a 32-bit and a 64-bit time variant of a call, the
 * numbers below are the 64-bit ones, which take a struct __kernel_timespec
 * (abi.h's ws_kernel_timespec): futex_time64 serves every futex op, the
 * kernel series' FUTEX_WAIT_MULTIPLE included, and clock_gettime64 the
 * clocks.  futex_waitv takes a __kernel_timespec on every ABI.  Calls whose
 * i386 form differs from x86_64's (mmap2, fstat64, ...) are not defined here:
 * no caller may take one for the other.
 */
#ifndef WINSYNC_ARCH_I386_SYSCALL_H
#define WINSYNC_ARCH_I386_SYSCALL_H

#define WS_NR_read            3
#define WS_NR_close           6
#define WS_NR_getpid          20
#define WS_NR_gettid          224
#define WS_NR_set_robust_list 311
#define WS_NR_get_robust_list 312
#define WS_NR_openat          295
#define WS_NR_process_vm_readv 347
#define WS_NR_clock_gettime   403   /* clock_gettime64 */
#define WS_NR_futex           422   /* futex_time64 */
#define WS_NR_futex_waitv     449

/*
 * The kernel returns -4095..-1 for an error and anything else is a result:
 * a 32-bit result is widened as unsigned, so that an address above 2 GiB
 * stays positive, and an error as signed.
 */
static inline long long ws_i386_result(unsigned long eax)
{
	if (eax > -4096ul)
		return ws_syscall_result((long long)(long)eax);
	return (long long)eax;
}

/*
 * The vDSO's system call entry, or NULL before the OS layer has found it (or
 * where it has none): each OS layer defines it and sets it in ws_os_init().
 */
extern void *_Atomic ws_i386_vsyscall;

/*
 * The sixth argument goes in %ebp, which the compiler may be using as the
 * frame pointer, and every other register carries an argument: the fifth and
 * sixth arguments and the entry point are passed in memory through %edi,
 * with %ebp saved on the stack around the call.  `call *(%esp)` reads its
 * target before it pushes the return address.
 */
static inline long long ws_syscall6(long long nr, long long a1, long long a2,
				    long long a3, long long a4, long long a5,
				    long long a6)
{
	unsigned long ret;
	void *entry = __atomic_load_n(&ws_i386_vsyscall, __ATOMIC_RELAXED);
	unsigned long last[3] = { (unsigned long)a5, (unsigned long)a6, (unsigned long)entry };
	unsigned long *p = last;

	if (entry)
		__asm__ volatile("push %%ebp\n\t"
				 "mov 4(%%edi), %%ebp\n\t"
				 "push 8(%%edi)\n\t"
				 "mov (%%edi), %%edi\n\t"
				 "call *(%%esp)\n\t"
				 "add $4, %%esp\n\t"
				 "pop %%ebp"
				 : "=a"(ret), "+D"(p)
				 : "0"((unsigned long)nr), "b"((unsigned long)a1), "c"((unsigned long)a2),
				   "d"((unsigned long)a3), "S"((unsigned long)a4), "m"(last)
				 : "memory");
	else
		__asm__ volatile("push %%ebp\n\t"
				 "mov 4(%%edi), %%ebp\n\t"
				 "mov (%%edi), %%edi\n\t"
				 "int $0x80\n\t"
				 "pop %%ebp"
				 : "=a"(ret), "+D"(p)
				 : "0"((unsigned long)nr), "b"((unsigned long)a1), "c"((unsigned long)a2),
				   "d"((unsigned long)a3), "S"((unsigned long)a4), "m"(last)
				 : "memory");
	return ws_i386_result(ret);
}

#endif
