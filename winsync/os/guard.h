/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The SIGBUS guard of shared arenas (Linux).  A process that can write an
 * arena's file can also truncate it, and every access to the mapping past
 * the new end would raise SIGBUS.  While a shared arena is mapped, a SIGBUS
 * handler puts a private page of zeros where such an access faulted and
 * lets it go on: the arena reads as corrupted (-EUCLEAN), as any other
 * scribble, and no call crashes.  A SIGBUS anywhere else goes to the
 * handler that was there before (or kills the process, as it would have).
 */
#ifndef WINSYNC_OS_GUARD_H
#define WINSYNC_OS_GUARD_H

#include <stddef.h>

/* Guards [base, base + size): 0, or -ENOMEM when too many arenas are mapped. */
int ws_guard_mapping(void *base, size_t size);
void ws_unguard_mapping(void *base);

#endif
