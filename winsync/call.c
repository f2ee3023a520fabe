/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "call.h"

#include "crit.h"
#include "fault.h"
#include "queue.h"
#include "reap.h"
#include "slot.h"

/* The call's own change, in a transaction on the locked object: 0 or an error, undone. */
static int change(struct ws_crit *c, ws_handle handle, const struct ws_object_call *call,
		  void *ctx, enum ws_op op, uint32_t *slot)
{
	int ret;

	ws_op_begin(c, op, *slot);
	ret = ws_obj_lock_handle(c, handle, call->type, slot);
	if (ret >= 0) {
		ret = call->locked(&c->arena->objects[*slot], ctx);
		if (ret)
			c->error = ret;
		else
			ret = ws_commit(c);
	}
	return ret;
}

/* Hands the changed object to its waiters (a new operation after a recovery). */
static int settle(struct ws_crit *c, const struct ws_object_call *call, enum ws_op op,
		  uint32_t slot, bool restart, bool *dead)
{
	int ret = 0;

	if (restart) {
		ws_op_begin(c, op, slot);
		ret = ws_obj_lock(c, slot);
		if (ret < 0)
			return ret;
	}
	if (call->after == WS_AFTER_SETTLE)
		return ws_settle(c, slot, WS_SETTLE_SIGNAL, dead);
	ret = ws_settle(c, slot, op == WS_OP_PULSE_ALL ? WS_SETTLE_PULSE_ALL : WS_SETTLE_PULSE_ONE,
			dead);
	ws_end_pulse(c, slot);
	return ret;
}

/*
 * The locked path: an object section on the call's object, or an arena
 * section when the object has wait_all waiters (handing it to one needs
 * their other objects too, crit.h).
 */
static int locked_call(ws_arena *arena, ws_handle handle, const struct ws_object_call *call,
		       void *ctx)
{
	uint32_t slot = ws_handle_slot(arena, handle);
	bool whole = false, dead = false, changed = false;
	struct ws_crit c;
	enum ws_op op = WS_OP_PLAIN;
	int ret;

	if (handle == 0 || slot >= arena->slots)
		return -EBADF;
	for (;;) {
		ret = whole ? ws_crit_enter(arena, &c) : ws_crit_enter_object(arena, slot, &c);
		if (ret)
			return ret;
		if (call->after != WS_AFTER_NOTHING) {
			struct ws_object *obj = &arena->objects[slot];

			/* Read under its lock: no wait_all waiter can come while we hold it. */
			if (!whole && obj->all_waiters) {
				ws_crit_leave(&c);
				whole = true;
				continue;
			}
			op = call->after == WS_AFTER_SETTLE ? WS_OP_SIGNAL
			     : ws_get(&obj->aux)	    ? WS_OP_PULSE_ALL
							    : WS_OP_PULSE_ONE;
			/* Before the operation is logged: from then on it owes its waiters. */
			ws_guard_queue(&c, slot);
		}
		break;
	}
	for (bool again = false;; again = true) {
		bool fresh = !changed;

		if (!changed) {
			ret = change(&c, handle, call, ctx, op, &slot);
			changed = ret == 0;
		}
		/* A settle started again after a recovery is an operation of its own. */
		if (changed && call->after != WS_AFTER_NOTHING)
			ret = settle(&c, call, op, slot, again && !fresh, &dead);
		ws_op_end(&c);
		/* A dead holder met on another object's lock: finish its work, go on. */
		if (ret != -EOWNERDEAD || !ws_crit_recovered(&c))
			break;
	}
	/* Waiters of dead threads were skipped: reclaim what they left now (the arena's). */
	if (dead && whole)
		ws_reap_dead(&c);
	ws_crit_leave(&c);
	if (dead && !whole && ws_crit_try(arena, &c) == 0) {
		ws_reap_dead(&c);
		ws_crit_leave(&c);
	}
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
		if (atomic_load_explicit(&arena->objects[slot].head, memory_order_acquire) == r.head) {
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
