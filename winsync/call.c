/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "call.h"

#include "crit.h"
#include "fault.h"
#include "queue.h"
#include "reap.h"
#include "recover.h"
#include "slot.h"

/* What a signal on the object may owe its queue (ws_queue_alone): more than one unit to hand out? */
static bool many_units(struct ws_object *obj, enum ws_after after)
{
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);

	if (ws_head_type(head) == WS_TYPE_SEM)
		return true;
	/* A manual-reset event's set or pulse releases every waiter. */
	return ws_head_type(head) == WS_TYPE_EVENT && ws_get(&obj->aux) &&
	       (after == WS_AFTER_SETTLE || after == WS_AFTER_PULSE);
}

/*
 * The call under a lock: the object's own (`alone`), or the arena's.  On
 * its own object's lock it first makes sure the object alone is concerned
 * (ws_queue_alone) and else is undone with WS_NEED_ARENA.
 */
static int call_in_section(ws_arena *arena, ws_handle handle, const struct ws_object_call *call,
			   void *ctx, bool alone)
{
	struct ws_crit c;
	bool dead = false;
	uint32_t slot = ws_handle_slot(arena, handle);
	enum ws_op op = WS_OP_PLAIN;
	int ret;

	ret = alone ? ws_crit_enter_object(arena, slot, &c)
		    : ws_crit_enter(arena, ws_arena_lock(arena), &c);
	if (ret)
		return ret;
	/*
	 * What the operation owes is logged once its waiters are guarded, and
	 * its queue is read only with the object locked (another section may
	 * be editing it until then): begun plain, it becomes a signal or a
	 * pulse there.  Alone, it first makes sure the object alone is concerned.
	 */
	ws_op_begin(&c, WS_OP_PLAIN, slot);
	ret = ws_obj_lock_handle(&c, handle, call->type, &slot);
	if (ret >= 0 && call->after != WS_AFTER_NOTHING) {
		struct ws_object *obj = &arena->objects[slot];

		op = call->after == WS_AFTER_SETTLE ? WS_OP_SIGNAL
		     : ws_get(&obj->aux)	    ? WS_OP_PULSE_ALL
						    : WS_OP_PULSE_ONE;
		if (alone && !ws_queue_alone(&c, slot, many_units(obj, call->after))) {
			ret = c.error = WS_NEED_ARENA;
		} else {
			ws_guard_queue(&c, slot);
			ws_op_become(&c, op);
		}
	}
	if (ret >= 0) {
		ret = call->locked(&arena->objects[slot], ctx);
		if (ret)
			c.error = ret;
		else
			ret = ws_commit(&c);
	}
	if (!ret && call->after == WS_AFTER_SETTLE)
		ret = ws_settle(&c, slot, WS_SETTLE_SIGNAL, &dead);
	if (!ret && call->after == WS_AFTER_PULSE) {
		ret = ws_settle(&c, slot,
				op == WS_OP_PULSE_ALL ? WS_SETTLE_PULSE_ALL : WS_SETTLE_PULSE_ONE,
				&dead);
		ws_end_pulse(&c, slot);
	}
	ws_op_end(&c);
	/* Waiters of dead threads were skipped: reclaim what they left now. */
	if (dead && !alone)
		ws_recover_and_reap(&c);
	ws_crit_leave(&c);
	/* Without waiting for the arena lock: the reap is anybody's next chance. */
	if (dead && alone)
		ws_crit_reap(arena, true);
	return ret;
}

static int locked_call(ws_arena *arena, ws_handle handle, const struct ws_object_call *call,
		       void *ctx)
{
	int ret = WS_NEED_ARENA;

	if (ws_handle_slot(arena, handle) < arena->slots)
		ret = call_in_section(arena, handle, call, ctx, true);
	if (ret == WS_NEED_ARENA)
		ret = call_in_section(arena, handle, call, ctx, false);
	return ret;
}

int ws_object_call_locked(ws_arena *arena, ws_handle handle, const struct ws_object_call *call,
			  void *ctx)
{
	return locked_call(arena, handle, call, ctx);
}

struct read_result {
	uint64_t head;
	uint32_t aux;
};

static int read_locked(struct ws_object *obj, void *ctx)
{
	struct read_result *r = ctx;

	r->head = atomic_load_explicit(&obj->head, memory_order_relaxed) &
		  ~((uint64_t)WS_HEAD_LOCKED << 32);
	r->aux = ws_get(&obj->aux);
	return 0;
}

static int read_never_fast(uint64_t head, uint32_t aux, uint64_t *next, void *ctx)
{
	(void)head, (void)aux, (void)next, (void)ctx;
	return WS_FAST_LOCKED;
}

int ws_object_read(ws_arena *arena, ws_handle handle, enum ws_type type, uint64_t *head,
		   uint32_t *aux)
{
	const struct ws_object_call call = { type, WS_AFTER_NOTHING, 0, read_never_fast,
					     read_locked };
	struct read_result r;
	uint32_t slot;
	int ret;

	for (int i = 0; i < WS_FAST_TRIES; i++) {
		ret = ws_handle_lookup(arena, handle, type, &slot, &r.head);
		if (ret)
			return ret;
		if (ws_head_tag(r.head) & WS_HEAD_LOCKED)
			break;
		r.aux = ws_get(&arena->objects[slot].aux);
		if (atomic_compare_exchange_weak_explicit(&arena->objects[slot].head, &r.head,
							  ws_head_next(r.head, r.head),
							  memory_order_acq_rel,
							  memory_order_relaxed)) {
			*head = r.head;
			*aux = r.aux;
			return 0;
		}
	}
	ret = locked_call(arena, handle, &call, &r);
	if (ret)
		return ret;
	*head = r.head;
	*aux = r.aux;
	return 0;
}
