/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "locked.h"

#include "queue.h"
#include "reap.h"

int ws_locked_call(ws_arena *arena, ws_handle handle, enum ws_type type, enum ws_after after,
		   ws_change change, void *ctx)
{
	struct ws_crit c;
	struct ws_object *obj;
	bool dead = false;
	uint32_t slot;
	enum ws_op op = WS_OP_PLAIN;
	int ret;

	ret = ws_crit_enter(arena, &c);
	if (ret)
		return ret;
	if (after != WS_AFTER_NOTHING) {
		uint32_t s = ws_handle_slot(arena, handle);
		bool manual = s < arena->slots && ws_get(&arena->objects[s].aux);

		op = after == WS_AFTER_SETTLE ? WS_OP_SIGNAL
		     : manual		      ? WS_OP_PULSE_ALL
					      : WS_OP_PULSE_ONE;
		slot = s;
		/* Before the operation is logged: from then on it owes its waiters. */
		if (s < arena->slots)
			ws_guard_queue(&c, s);
	}
	ws_op_begin(&c, op, after == WS_AFTER_NOTHING ? 0 : slot);
	ret = ws_obj_lock_handle(&c, handle, type, &slot);
	if (ret >= 0) {
		obj = &arena->objects[slot];
		ret = change(obj, ctx);
		if (ret)
			c.error = ret;
		else
			ret = ws_commit(&c);
	}
	if (!ret && after == WS_AFTER_SETTLE)
		ret = ws_settle(&c, slot, WS_SETTLE_SIGNAL, &dead);
	if (!ret && after == WS_AFTER_PULSE) {
		ret = ws_settle(&c, slot, ws_get(&obj->aux) ? WS_SETTLE_PULSE_ALL : WS_SETTLE_PULSE_ONE,
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
