/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Taking over from a dead lock holder: replay its log (txn.h), finish the
 * operation it was in, and reap it.
 */
#ifndef WINSYNC_RECOVER_H
#define WINSYNC_RECOVER_H

#include "txn.h"

/* Finishes the work of record `holder`, whose lock the caller has taken over. */
void ws_recover(struct ws_crit *c, uint32_t holder);
/*
 * Finishes the work of every other record whose log is still busy: a holder
 * that died while recovering another took the lock's name from it, so only
 * its log says that the other's work is not done.  Under the lock only the
 * holder's log is ever busy, so any other busy log is a dead thread's.
 */
void ws_recover_orphans(struct ws_crit *c);

#endif
