/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Events: the head's value is the signaled state, aux the manual-reset flag. */
#include "fault.h"
#include "locked.h"

int ws_event_create(ws_arena *arena, bool manual_reset, bool signaled, ws_handle *event)
{
	if (!arena || !event)
		return -EINVAL;
	return ws_object_create(arena, WS_TYPE_EVENT, signaled, manual_reset, event);
}

enum change { SET, RESET, PULSE };

struct event_change {
	enum change change;
	bool was;
};

static int change_locked(struct ws_object *obj, void *ctx)
{
	struct event_change *e = ctx;
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);

	e->was = ws_head_value(head);
	/* A pulse's release is the hand-off that follows; its reset comes last. */
	if (e->change == SET)
		ws_head_write(obj, ws_head_tag(head), 1);
	else if (e->change == RESET)
		ws_head_write(obj, ws_head_tag(head), 0);
	return 0;
}

/*
 * The uncontended path: a set, or a pulse, with nobody queued, and any
 * reset, is one compare-exchange of the head.
 */
static int change(ws_arena *arena, ws_handle event, bool *was_signaled, enum change change)
{
	static const enum ws_after after[] = { WS_AFTER_SETTLE, WS_AFTER_NOTHING, WS_AFTER_PULSE };
	struct event_change e = { change, false };
	uint32_t slot, busy = WS_HEAD_LOCKED | (change == RESET ? 0 : WS_HEAD_QUEUED);
	uint64_t head;
	int ret;

	if (!arena)
		return -EINVAL;
	for (int i = 0; i < WS_FAST_TRIES; i++) {
		ret = ws_handle_lookup(arena, event, WS_TYPE_EVENT, &slot, &head);
		if (ret)
			return ret;
		if (ws_head_tag(head) & busy)
			break;
		e.was = ws_head_value(head);
		/* Even with no change, a release RMW: what the caller wrote before is
		 * ordered before any wait that sees the event signaled. */
		if (atomic_compare_exchange_weak_explicit(&arena->objects[slot].head, &head,
							  ws_make_head(ws_head_tag(head),
								       change == SET),
							  memory_order_release,
							  memory_order_relaxed))
			goto done;
	}
	ret = ws_locked_call(arena, event, WS_TYPE_EVENT, after[change], change_locked, &e);
	if (ret)
		return ret;
done:
	WS_FAULT();
	if (was_signaled)
		*was_signaled = e.was;
	return 0;
}

int ws_event_set(ws_arena *arena, ws_handle event, bool *was_signaled)
{
	return change(arena, event, was_signaled, SET);
}

int ws_event_reset(ws_arena *arena, ws_handle event, bool *was_signaled)
{
	return change(arena, event, was_signaled, RESET);
}

/* Only waiters already queued are released; the event ends unsignaled. */
int ws_event_pulse(ws_arena *arena, ws_handle event, bool *was_signaled)
{
	return change(arena, event, was_signaled, PULSE);
}

struct event_state {
	bool signaled;
	bool manual;
};

static int read_locked(struct ws_object *obj, void *ctx)
{
	struct event_state *s = ctx;

	s->signaled = ws_head_value(atomic_load_explicit(&obj->head, memory_order_relaxed));
	s->manual = ws_get(&obj->aux);
	return 0;
}

int ws_event_read(ws_arena *arena, ws_handle event, bool *signaled, bool *manual_reset)
{
	struct event_state s;
	uint32_t slot;
	uint64_t head;
	int ret;

	if (!arena || !signaled || !manual_reset)
		return -EINVAL;
	ret = ws_handle_lookup(arena, event, WS_TYPE_EVENT, &slot, &head);
	if (ret)
		return ret;
	if (ws_head_tag(head) & WS_HEAD_LOCKED) {
		ret = ws_locked_call(arena, event, WS_TYPE_EVENT, WS_AFTER_NOTHING, read_locked, &s);
		if (ret)
			return ret;
	} else {
		s.signaled = ws_head_value(head);
		s.manual = ws_get(&arena->objects[slot].aux);
	}
	*signaled = s.signaled;
	*manual_reset = s.manual;
	return 0;
}
