/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The futex backend: the one place that knows whether waits go through
 * futex_waitv (449) or through futex(FUTEX_WAIT_MULTIPLE = 31), the op that
 * the kernel series adds to Linux 6.1 for kernels without futex_waitv.
 */
#ifndef WINSYNC_FUTEX_H
#define WINSYNC_FUTEX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "clock.h"

struct ws_futex_word {
	_Atomic uint32_t *addr;
	uint32_t expected;
	bool shared;       /* a shared futex (needed for words the kernel wakes itself) */
};

/* Chooses the backend once (WINSYNC_BACKEND may force one): 0 or -ENOSYS/-EINVAL. */
int ws_futex_init(void);
const char *ws_futex_backend_name(void);

/*
 * Sleeps while every word (at most WS_FUTEX_WAITV_MAX) still holds its
 * expected value, until one is woken, a signal arrives, or `until` passes
 * (NULL: no end).  Returns 0 (woken), -EAGAIN (a word had changed), -EINTR
 * or -ETIMEDOUT.  futex_waitv sleeps to `until` on its own clock;
 * FUTEX_WAIT_MULTIPLE takes a relative timeout, so on that backend a
 * realtime `until` is slept toward a second at a time (-ETIMEDOUT early:
 * callers look at their deadline again).
 */
int ws_futex_wait(const struct ws_futex_word *words, unsigned int count,
		  const struct ws_deadline *until);

/*
 * Can one wait mix shared and private words?  futex_waitv can;
 * FUTEX_WAIT_MULTIPLE has one flag for all of them.
 */
bool ws_futex_mixed_flags(void);

/* Wakes up to `count` threads sleeping on `addr`. */
void ws_futex_wake(_Atomic uint32_t *addr, int count, bool shared);

#endif
