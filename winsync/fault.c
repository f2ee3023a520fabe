/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fault points of a WINSYNC_FAULT_INJECTION build (fault.h, tests/fault.h). */
#include "fault.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "fault_api.h"

/*
 * The signal (high half) and the points left before it (low half; 0 =
 * disarmed) in one word: a thread that takes the last point must raise the
 * signal it was armed with, even when a test re-arms or disarms at that
 * moment (a disarm that stored SIGKILL first killed a test whose waiter had
 * just reached its SIGUSR1 point).
 */
static _Atomic uint64_t armed;
static _Atomic long passed;

#define ARMED(signo, points) ((uint64_t)(uint32_t)(signo) << 32 | (uint32_t)(points))

void ws_fault_point(void)
{
	uint64_t cur;

	atomic_fetch_add_explicit(&passed, 1, memory_order_relaxed);
	cur = atomic_load_explicit(&armed, memory_order_relaxed);
	while ((uint32_t)cur != 0) {
		if (atomic_compare_exchange_weak_explicit(&armed, &cur, cur - 1,
							  memory_order_relaxed,
							  memory_order_relaxed)) {
			/* To the thread at the point: SIGSTOP or SIGKILL stop or end the process anyway. */
			if ((uint32_t)cur == 1)
				raise((int)(cur >> 32));
			return;
		}
	}
}

void ws_fault_arm(long points)
{
	ws_fault_arm_signal(points, SIGKILL);
}

void ws_fault_arm_signal(long points, int signo)
{
	atomic_store(&armed, points > 0 ? ARMED(signo, points) : 0);
}

long ws_fault_passed(void)
{
	return atomic_load(&passed);
}
