/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Events: the head's value is the signaled state, aux the manual-reset flag. */
#include "object.h"
#include "call.h"

int ws_event_create(ws_arena *arena, bool manual_reset, bool signaled, ws_handle *event)
{
	if (!arena || !event)
		return -EINVAL;
	return ws_object_create(arena, WS_TYPE_EVENT, signaled, manual_reset, event);
}

struct event_change {
	uint32_t value;   /* what set (1) or reset and pulse (0) leave */
	bool was;
};

/* A set, or a pulse, with nobody queued, and any reset: one compare-exchange. */
static int change_fast(uint64_t head, uint32_t aux, uint64_t *next, void *ctx)
{
	struct event_change *e = ctx;

	(void)aux;
	e->was = ws_head_value(head);
	*next = ws_make_head(ws_head_tag(head), e->value);
	return 0;
}

static int set_locked(struct ws_object *obj, void *ctx)
{
	struct event_change *e = ctx;
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);

	e->was = ws_head_value(head);
	ws_head_write(obj, ws_head_tag(head), e->value);
	return 0;
}

/* A pulse's release is the hand-off that follows; its reset comes last (ws_end_pulse). */
static int pulse_locked(struct ws_object *obj, void *ctx)
{
	struct event_change *e = ctx;

	e->was = ws_head_value(atomic_load_explicit(&obj->head, memory_order_relaxed));
	return 0;
}

static const struct ws_object_call set_call = {
	WS_TYPE_EVENT, WS_AFTER_SETTLE, WS_HEAD_QUEUED, change_fast, set_locked
};
static const struct ws_object_call reset_call = {
	WS_TYPE_EVENT, WS_AFTER_NOTHING, 0, change_fast, set_locked
};
/* Only waiters already queued are released; the event ends unsignaled. */
static const struct ws_object_call pulse_call = {
	WS_TYPE_EVENT, WS_AFTER_PULSE, WS_HEAD_QUEUED, change_fast, pulse_locked
};

static int change(ws_arena *arena, ws_handle event, bool *was_signaled,
		  const struct ws_object_call *call, uint32_t value)
{
	struct event_change e = { value, false };
	int ret;

	if (!arena)
		return -EINVAL;
	ret = ws_object_call(arena, event, call, &e);
	if (!ret && was_signaled)
		*was_signaled = e.was;
	return ret;
}

int ws_event_set(ws_arena *arena, ws_handle event, bool *was_signaled)
{
	return change(arena, event, was_signaled, &set_call, 1);
}

int ws_event_reset(ws_arena *arena, ws_handle event, bool *was_signaled)
{
	return change(arena, event, was_signaled, &reset_call, 0);
}

int ws_event_pulse(ws_arena *arena, ws_handle event, bool *was_signaled)
{
	return change(arena, event, was_signaled, &pulse_call, 0);
}

int ws_event_read(ws_arena *arena, ws_handle event, bool *signaled, bool *manual_reset)
{
	uint64_t head;
	uint32_t aux;
	int ret;

	if (!arena || !signaled || !manual_reset)
		return -EINVAL;
	ret = ws_object_read(arena, event, WS_TYPE_EVENT, &head, &aux);
	if (ret)
		return ret;
	*signaled = ws_head_value(head);
	*manual_reset = aux;
	return 0;
}
