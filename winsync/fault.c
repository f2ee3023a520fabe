/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fault points of a WINSYNC_FAULT_INJECTION build (fault.h, tests/fault.h). */
#include "fault.h"

#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "fault_api.h"

/* Points left before the signal; 0 = disarmed. */
static _Atomic long countdown;
static _Atomic long passed;
static _Atomic int fault_signal = SIGKILL;

void ws_fault_point(void)
{
	long left;

	atomic_fetch_add_explicit(&passed, 1, memory_order_relaxed);
	left = atomic_load_explicit(&countdown, memory_order_relaxed);
	/* To the thread at the point: SIGSTOP or SIGKILL stop or end the process anyway. */
	if (left > 0 && atomic_fetch_sub_explicit(&countdown, 1, memory_order_relaxed) == 1)
		raise(atomic_load(&fault_signal));
}

void ws_fault_arm(long points)
{
	ws_fault_arm_signal(points, SIGKILL);
}

void ws_fault_arm_signal(long points, int signo)
{
	atomic_store(&fault_signal, signo);
	atomic_store(&countdown, points);
}

long ws_fault_passed(void)
{
	return atomic_load(&passed);
}
