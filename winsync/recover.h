/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Taking over from a dead lock holder: replay its log (txn.h), finish the
 * operation it was in, and reap it.
 */
#ifndef WINSYNC_RECOVER_H
#define WINSYNC_RECOVER_H

#include "txn.h"

/*
 * Finishes the work of record `holder`, whose lock the caller (holding the
 * arena lock) has taken over, and lets go an object's lock word it still
 * names.  A live thread's log is its own: left alone.
 */
void ws_recover(struct ws_crit *c, uint32_t holder);
/*
 * Finishes the work of every other dead record whose log is still busy or
 * that still names an object lock: a holder that died while recovering
 * another took the lock's name from it, so only its log says that the
 * other's work is not done; a section on one object that died is found
 * here as well as by the next taker of its object.  A live record's busy
 * log is a section on one object under way: not ours.
 */
void ws_recover_orphans(struct ws_crit *c);
/* Recovers the orphans, then reaps the dead (reap.h skips what is not recovered yet). */
void ws_recover_and_reap(struct ws_crit *c);

#endif
