/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Clock, yield and busy-wait for the recorder: POSIX or Windows. */
#ifndef WINSYNC_VERIFY_PLATFORM_H
#define WINSYNC_VERIFY_PLATFORM_H

#include <stdint.h>

/* A monotonic clock in nanoseconds, comparable across the threads of one process. */
uint64_t vp_now_ns(void);
/* Processor time this process has used, in nanoseconds. */
uint64_t vp_cpu_ns(void);
void vp_yield(void);
void vp_spin(uint32_t iterations);

#endif /* WINSYNC_VERIFY_PLATFORM_H */
