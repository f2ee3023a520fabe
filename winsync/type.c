/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "type.h"

#include <stdint.h>

#include "txn.h"

static bool none_head_ready(uint64_t head, uint32_t owner)
{
	(void)head, (void)owner;
	return false;
}

static bool none_ready(const struct ws_object *obj, uint32_t owner)
{
	(void)obj, (void)owner;
	return false;
}

static bool none_take(struct ws_object *obj, uint32_t owner)
{
	(void)obj, (void)owner;
	return false;
}

/* Semaphores and events: ready while the value is nonzero, for anybody. */
static bool valued_ready(const struct ws_object *obj, uint32_t owner)
{
	return ws_valued_head_ready(atomic_load_explicit(&obj->head, memory_order_relaxed), owner);
}

static bool sem_take(struct ws_object *obj, uint32_t owner)
{
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);

	(void)owner;
	ws_head_write(obj, ws_head_tag(head), ws_head_value(head) - 1);
	return false;
}

static bool event_take(struct ws_object *obj, uint32_t owner)
{
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);

	(void)owner;
	if (!ws_get(&obj->aux))
		ws_head_write(obj, ws_head_tag(head), 0);
	return false;
}

static bool mutex_ready(const struct ws_object *obj, uint32_t owner)
{
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);

	/* The recursion count must not overflow. */
	if (ws_head_value(head) == owner && ws_get(&obj->aux) >= UINT32_MAX - 1)
		return false;
	return ws_mutex_head_ready(head, owner);
}

static bool mutex_take(struct ws_object *obj, uint32_t owner)
{
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);
	uint32_t tag = ws_head_tag(head);

	if (ws_head_value(head) == owner) {
		ws_put(&obj->aux, ws_get(&obj->aux) + 1);
		return false;
	}
	ws_head_write(obj, tag & ~WS_HEAD_ABANDONED, owner);
	ws_put(&obj->aux, 0);
	return tag & WS_HEAD_ABANDONED;
}

const struct ws_type_rules ws_type_rules[4] = {
	[WS_TYPE_NONE] = { none_head_ready, none_ready, none_take },
	[WS_TYPE_SEM] = { ws_valued_head_ready, valued_ready, sem_take },
	[WS_TYPE_MUTEX] = { ws_mutex_head_ready, mutex_ready, mutex_take },
	[WS_TYPE_EVENT] = { ws_valued_head_ready, valued_ready, event_take },
};
