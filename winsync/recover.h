/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Finishing a dead lock holder's work, holding the arena lock: replay its
 * log (txn.h), which frees the objects it held, finish the operation it was
 * in, and reap it.
 */
#ifndef WINSYNC_RECOVER_H
#define WINSYNC_RECOVER_H

#include "txn.h"

/* Finishes the work of record `holder` (dead, or a stale lock word's). */
void ws_recover(struct ws_crit *c, uint32_t holder);
/*
 * The dead holder an operation of ours met on an object's lock
 * (c->dead_holder, ws_obj_lock's -EOWNERDEAD): its work finished, the word
 * freed.  False if there was none.
 */
bool ws_recover_met(struct ws_crit *c);

#endif
