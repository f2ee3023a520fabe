/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Robust spin-then-sleep locks on 32-bit words in the arena.  The word holds
 * the holder's thread id, so a process killed while holding a lock does not
 * block the others forever: a waiter that has slept a while checks whether
 * the holder still exists and takes the lock over if it does not.
 */
#ifndef WINSYNC_LOCK_H
#define WINSYNC_LOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

void ws_lock(_Atomic uint32_t *word, bool shared);
void ws_unlock(_Atomic uint32_t *word, bool shared);

#endif
