/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fault injection, for tests only: a build with WINSYNC_FAULT_INJECTION
 * defined (the libwinsync-fault test archive) counts every WS_FAULT point it
 * passes and kills its own process with SIGKILL at the one a test chose, so
 * that a death can be placed between any two steps of a critical section.
 * In the library itself the points compile to nothing.
 */
#ifndef WINSYNC_FAULT_H
#define WINSYNC_FAULT_H

#ifdef WINSYNC_FAULT_INJECTION
void ws_fault_point(void);
#define WS_FAULT() ws_fault_point()
#else
#define WS_FAULT() ((void)0)
#endif

#endif
