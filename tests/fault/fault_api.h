/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The test-only controls of a WINSYNC_FAULT_INJECTION build of the core
 * (libwinsync-fault.a): see winsync/fault.h.
 */
#ifndef WINSYNC_TESTS_FAULT_API_H
#define WINSYNC_TESTS_FAULT_API_H

/* The calling process dies (SIGKILL) at the `points`-th fault point from now; 0 disarms. */
void ws_fault_arm(long points);
/* The same with another signal, raised in the thread at the point (SIGSTOP, SIGUSR1...). */
void ws_fault_arm_signal(long points, int signo);
/* Fault points passed so far in this process. */
long ws_fault_passed(void);

#endif
