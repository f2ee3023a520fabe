/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The locked path of the object calls: what set, release, unlock, pulse,
 * reset and read do when their uncontended path cannot (the object has
 * queued waiters, or the lock holder is editing it).  The call's own change
 * runs in a transaction on the locked object; a change that may make the
 * object signaled then hands it to its waiters.
 */
#ifndef WINSYNC_LOCKED_H
#define WINSYNC_LOCKED_H

#include "object.h"

/*
 * Checks and changes the locked object; returns 0 or an error (nothing
 * changed).  `ctx` carries the call's arguments and results.
 */
typedef int (*ws_change)(struct ws_object *obj, void *ctx);

enum ws_after {
	WS_AFTER_NOTHING,   /* a read or a reset: nobody to hand anything to */
	WS_AFTER_SETTLE,    /* the object may be signaled: hand it out */
	WS_AFTER_PULSE,     /* release the waiters already queued, then unsignaled */
};

int ws_locked_call(ws_arena *arena, ws_handle handle, enum ws_type type, enum ws_after after,
		   ws_change change, void *ctx);

/* Retries of an uncontended compare-exchange before taking the locked path. */
#define WS_FAST_TRIES 8

#endif
