/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A lock holder to order the others by: a forked process that sets an
 * event (handing it to a waiter queued on it, in a section on the event
 * alone) and is stopped at the chosen fault point of it.
 */
#ifndef WINSYNC_TESTS_STOPPED_SET_H
#define WINSYNC_TESTS_STOPPED_SET_H

#include "robust.h"

/*
 * Forks a process that opens arena `name`, checks it, and sets `ev`,
 * stopped (SIGSTOP) at the k-th fault point from there on; it exits 0 once
 * the set returns (after a SIGCONT, or before the k-th point came), 50 if
 * it could not open the arena, 52 if the set failed.
 */
pid_t fork_stopped_set(const char *name, ws_handle ev, long k);

#endif
