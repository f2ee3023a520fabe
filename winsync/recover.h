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

#endif
