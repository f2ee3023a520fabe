/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "call.h"

#include "crit.h"
#include "fault.h"
#include "queue.h"
#include "reap.h"
#include "slot.h"

static int locked_call(ws_arena *arena, ws_handle handle, const struct ws_object_call *call,
		       void *ctx)
{
	struct ws_crit c;
	bool dead = false;
	uint32_t slot = ws_handle_slot(arena, handle);
	enum ws_op op = WS_OP_PLAIN;
	int ret;

	ret = ws_crit_enter(arena, ws_arena_lock(arena), &c);
	if (ret)
		return ret;
	if (call->after != WS_AFTER_NOTHING && slot < arena->slots) {
		bool manual = ws_get(&arena->objects[slot].aux);

		op = call->after == WS_AFTER_SETTLE ? WS_OP_SIGNAL
		     : manual			    ? WS_OP_PULSE_ALL
						    : WS_OP_PULSE_ONE;
		/* Before the operation is logged: from then on it owes its waiters. */
		ws_guard_queue(&c, slot);
	}
	ws_op_begin(&c, op, slot);
	ret = ws_obj_lock_handle(&c, handle, call->type, &slot);
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
	if (dead)
		ws_reap_dead(&c);
	ws_crit_leave(&c);
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
