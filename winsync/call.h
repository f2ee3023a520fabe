/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The calls on one object (set, reset, pulse, release, unlock, kill, read),
 * written once for the three types: an uncontended path of one
 * compare-exchange of the head, and a locked path for everything else.
 *
 * The uncontended path reads the head and then `aux` (maximum, manual
 * flag, recursion), asks the type whether it can act from them, and
 * commits with a compare-exchange of the head, which fails if the object
 * changed meanwhile.  An error found on the way is returned only if the
 * head still holds what was read (else it was a torn read: try again), so
 * an answer is always about one real state of the object.
 *
 * The locked path runs the call's change in a transaction on the locked
 * object; a change that may make the object signaled then hands it to its
 * waiters (queue.h).
 */
#ifndef WINSYNC_CALL_H
#define WINSYNC_CALL_H

#include "fault.h"
#include "slot.h"
#include "txn.h"

/* Retries of an uncontended compare-exchange before taking the locked path. */
#define WS_FAST_TRIES 8

enum ws_after {
	WS_AFTER_NOTHING,   /* a read or a reset: nobody to hand anything to */
	WS_AFTER_SETTLE,    /* the object may be signaled: hand it out */
	WS_AFTER_PULSE,     /* release the waiters already queued, then unsignaled */
};

/* The uncontended path's verdict, besides 0 (write *next) and -errno. */
#define WS_FAST_LOCKED 1

struct ws_object_call {
	enum ws_type type;
	enum ws_after after;
	uint32_t busy;      /* head flags, besides LOCKED, that need the locked path */
	/* From the head and aux: 0 with *next to write, WS_FAST_LOCKED, or -errno. */
	int (*fast)(uint64_t head, uint32_t aux, uint64_t *next, void *ctx);
	/* The same change on the locked object: 0 or -errno, nothing changed. */
	int (*locked)(struct ws_object *obj, void *ctx);
};

/* The locked path of ws_object_call (call.c). */
int ws_object_call_locked(ws_arena *arena, ws_handle handle, const struct ws_object_call *call,
			  void *ctx);

/*
 * One call on one object.  Inline, so that each type's `fast` (a constant
 * of a static const struct) compiles into its caller: the uncontended path
 * is the head's load, the type's decision and one compare-exchange.
 */
static inline int ws_object_call(ws_arena *arena, ws_handle handle,
				 const struct ws_object_call *call, void *ctx)
{
	for (int i = 0; i < WS_FAST_TRIES; i++) {
		struct ws_object *obj;
		uint64_t head, next;
		uint32_t slot;
		int ret;

		ret = ws_handle_lookup(arena, handle, call->type, &slot, &head);
		if (__builtin_expect(ret, 0))
			return ret;
		if (ws_head_tag(head) & (WS_HEAD_LOCKED | call->busy))
			break;
		obj = &arena->objects[slot];
		ret = call->fast(head, ws_get(&obj->aux), &next, ctx);
		if (ret == WS_FAST_LOCKED)
			break;
		/* A refusal is an observation too: it moves the stamp on (wait.c). */
		if (__builtin_expect(ret < 0, 0)) {
			if (atomic_compare_exchange_weak_explicit(&obj->head, &head,
								  ws_head_next(head, head),
								  memory_order_acq_rel,
								  memory_order_relaxed))
				return ret;
			continue; /* aux may have been another object's */
		}
		/* A release RMW even when nothing changes: what the caller wrote before
		 * is ordered before any wait that sees the object signaled.  It
		 * moves the stamp on: a scan that read the head before sees it. */
		next = ws_head_next(head, next);
		if (atomic_compare_exchange_weak_explicit(&obj->head, &head, next,
							  memory_order_release,
							  memory_order_relaxed)) {
			WS_FAULT();
			return 0;
		}
	}
	return ws_object_call_locked(arena, handle, call, ctx);
}

/*
 * A consistent head and aux of a live object of `type`: the head, aux, and
 * a compare-exchange that finds the head unchanged and moves its stamp on
 * (a read is an observation: wait.c), or the locked path while it is being
 * edited.
 */
int ws_object_read(ws_arena *arena, ws_handle handle, enum ws_type type, uint64_t *head,
		   uint32_t *aux);

#endif
