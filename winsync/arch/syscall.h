/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Raw Linux system calls for the architecture being built: the one place
 * that chooses.  Each arch/<arch>/syscall.h defines the WS_NR_* numbers and
 * ws_syscall0..6, which take and return `long long` (the Windows x64 ABI's
 * `long` is 32 bits) and give Linux errno values as negative results.
 */
#ifndef WINSYNC_ARCH_SYSCALL_H
#define WINSYNC_ARCH_SYSCALL_H

#if defined(__x86_64__)
#include "x86_64/syscall.h"
#else
#error "winsync: no system call layer for this architecture (winsync/arch/)"
#endif

#endif
