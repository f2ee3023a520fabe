/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --json: the whole snapshot, one object (the schema is in winsync-stat(1)). */
#include "stat.h"

#include <stdbool.h>
#include <stdlib.h>

static void string(FILE *out, const char *s, size_t n)
{
	fputc('"', out);
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void index_or_null(FILE *out, uint32_t i)
{
	if (i == WS_SNAPSHOT_NONE)
		fprintf(out, "null");
	else
		fprintf(out, "%u", i);
}

static void report(FILE *out, const char *r)
{
	bool first = true;

	fprintf(out, "[");
	while (*r) {
		const char *end = r;

		while (*end && *end != '\n')
			end++;
		fprintf(out, "%s", first ? "" : ", ");
		string(out, r, (size_t)(end - r));
		first = false;
		r = *end ? end + 1 : end;
	}
	fprintf(out, "]");
}

static void wait(FILE *out, const struct ws_snapshot_thread *th)
{
	if (th->wait == WS_SNAPSHOT_NO_WAIT) {
		fprintf(out, "null");
		return;
	}
	fprintf(out, "{\"kind\": \"%s\", \"owner\": %u, \"objects\": [",
		th->wait == WS_SNAPSHOT_WAIT_ALL ? "all" : "any", th->wait_owner);
	for (uint32_t i = 0; i < th->count; i++)
		fprintf(out, "%s%u", i ? ", " : "", th->objects[i]);
	fprintf(out, "], \"alert\": ");
	if (th->alert)
		fprintf(out, "%u", th->alert);
	else
		fprintf(out, "null");
	fprintf(out, ", \"waited_ns\": %llu, \"deadline_ns\": ", (unsigned long long)th->waited_ns);
	if (th->flags & WS_SNAPSHOT_FOREVER)
		fprintf(out, "null");
	else
		fprintf(out, "%lld", (long long)th->deadline_ns);
	fprintf(out, ", \"realtime\": %s, \"blocker\": ",
		th->flags & WS_SNAPSHOT_REALTIME ? "true" : "false");
	index_or_null(out, th->blocker);
	fprintf(out, ", \"blocked_on\": ");
	if (th->blocked_on)
		fprintf(out, "%u", th->blocked_on);
	else
		fprintf(out, "null");
	fprintf(out, "}");
}

static void threads(FILE *out, const struct ws_snapshot *s)
{
	fprintf(out, "  \"threads\": [");
	for (uint32_t t = 0; t < s->thread_count; t++) {
		const struct ws_snapshot_thread *th = &s->threads[t];

		fprintf(out, "%s\n    {\"index\": %u, \"record\": %u, \"state\": \"%s\", \"tid\": %u, "
			     "\"pid\": %u, \"owner\": %u, \"lock_holder\": %s, \"torn\": %s, "
			     "\"deadlocked\": %s, \"wait\": ",
			t ? "," : "", t, th->record, th->state == WS_SNAPSHOT_LIVE ? "live" : "dead",
			th->tid, th->pid, th->owner,
			th->flags & WS_SNAPSHOT_LOCK_HOLDER ? "true" : "false",
			th->flags & WS_SNAPSHOT_TORN ? "true" : "false",
			th->flags & WS_SNAPSHOT_DEADLOCKED ? "true" : "false");
		wait(out, th);
		fprintf(out, "}");
	}
	fprintf(out, "\n  ],\n");
}

static void objects(FILE *out, const struct ws_snapshot *s)
{
	fprintf(out, "  \"objects\": [");
	for (uint32_t i = 0; i < s->object_count; i++) {
		const struct ws_snapshot_object *o = &s->objects[i];

		fprintf(out,
			"%s\n    {\"handle\": %u, \"type\": \"%s\", \"busy\": %s, \"corrupt\": %s, "
			"\"closed\": %s, ",
			i ? "," : "", o->handle, stat_type_name(o->type),
			o->flags & WS_SNAPSHOT_BUSY ? "true" : "false",
			o->flags & WS_SNAPSHOT_CORRUPT ? "true" : "false",
			o->flags & WS_SNAPSHOT_CLOSED ? "true" : "false");
		switch (o->type) {
		case WS_SNAPSHOT_SEM:
			fprintf(out, "\"count\": %u, \"max\": %u, ", o->count, o->max);
			break;
		case WS_SNAPSHOT_MUTEX:
			fprintf(out, "\"owner\": %u, \"recursion\": %u, \"abandoned\": %s, \"owner_thread\": ",
				o->owner, o->recursion,
				o->flags & WS_SNAPSHOT_ABANDONED ? "true" : "false");
			index_or_null(out, o->owner_thread);
			fprintf(out, ", ");
			break;
		default:
			fprintf(out, "\"signaled\": %s, \"manual_reset\": %s, ",
				o->signaled ? "true" : "false", o->manual_reset ? "true" : "false");
		}
		fprintf(out, "\"queue\": [");
		for (uint32_t q = 0; q < o->queued; q++)
			fprintf(out, "%s%u", q ? ", " : "", o->queue[q]);
		fprintf(out, "]}");
	}
	fprintf(out, "\n  ],\n");
}

/* Each cycle of blocker links once, from its lowest thread, as thread indices. */
static void cycles(FILE *out, const struct ws_snapshot *s)
{
	uint32_t *seen_at = calloc(s->thread_count + 1, sizeof(*seen_at));
	bool first = true;

	fprintf(out, "  \"cycles\": [");
	for (uint32_t t = 0; seen_at && t < s->thread_count; t++) {
		uint32_t cur = t, lowest = t;

		while (cur != WS_SNAPSHOT_NONE && seen_at[cur] != t + 1) {
			seen_at[cur] = t + 1;
			lowest = cur < lowest ? cur : lowest;
			cur = s->threads[cur].blocker;
		}
		if (cur != t || lowest != t)
			continue; /* no cycle, one not through t, or printed from a lower thread */
		fprintf(out, "%s[%u", first ? "" : ", ", t);
		for (cur = s->threads[t].blocker; cur != t; cur = s->threads[cur].blocker)
			fprintf(out, ", %u", cur);
		fprintf(out, "]");
		first = false;
	}
	fprintf(out, "]\n");
	free(seen_at);
}

void stat_print_json(FILE *out, const char *name, const struct ws_snapshot *s)
{
	fprintf(out, "{\n  \"schema\": 1,\n  \"arena\": ");
	string(out, name, SIZE_MAX);
	fprintf(out, ",\n  \"capacity\": %u, \"live\": %u, \"taken_ns\": %llu, \"took_ns\": %llu,\n",
		s->capacity, s->live, (unsigned long long)s->taken_ns,
		(unsigned long long)s->took_ns);
	fprintf(out, "  \"lock_holder\": ");
	index_or_null(out, s->lock_holder);
	fprintf(out, ", \"retries\": %u, \"gave_up\": %u, \"deadlocked\": %u, \"problems\": %u,\n",
		s->retries, s->gave_up, s->deadlocked, s->problems);
	fprintf(out, "  \"report\": ");
	report(out, s->report);
	fprintf(out, ",\n");
	threads(out, s);
	objects(out, s);
	cycles(out, s);
	fprintf(out, "}\n");
}
