/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* How every view names threads and objects. */
#include "stat.h"

const char *stat_type_name(uint32_t type)
{
	switch (type) {
	case WS_SNAPSHOT_SEM:
		return "semaphore";
	case WS_SNAPSHOT_MUTEX:
		return "mutex";
	case WS_SNAPSHOT_EVENT:
		return "event";
	default:
		return "object";
	}
}

const struct ws_snapshot_object *stat_object(const struct ws_snapshot *s, ws_handle h)
{
	for (uint32_t i = 0; h && i < s->object_count; i++)
		if (s->objects[i].handle == h)
			return &s->objects[i];
	return NULL;
}

void stat_thread_name(const struct ws_snapshot *s, uint32_t t, char *buf, size_t size)
{
	const struct ws_snapshot_thread *th = &s->threads[t];
	uint32_t id = th->wait != WS_SNAPSHOT_NO_WAIT ? th->wait_owner : th->owner;

	if (id)
		snprintf(buf, size, "thread %#x (tid %u)", id, th->tid);
	else
		snprintf(buf, size, "thread (tid %u)", th->tid);
}

void stat_object_name(const struct ws_snapshot *s, ws_handle h, char *buf, size_t size)
{
	const struct ws_snapshot_object *o = stat_object(s, h);

	if (o)
		snprintf(buf, size, "%s %#x", stat_type_name(o->type), h);
	else
		snprintf(buf, size, "a closed object");
}
