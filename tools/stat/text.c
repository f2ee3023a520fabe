/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tables: the arena, its threads and waits, its objects, what could not be read. */
#include "stat.h"

#include <inttypes.h>

static void object_state(const struct ws_snapshot *s, const struct ws_snapshot_object *o, char *buf,
			 size_t size)
{
	char who[64];

	switch (o->type) {
	case WS_SNAPSHOT_SEM:
		snprintf(buf, size, "count %u of %u", o->count, o->max);
		break;
	case WS_SNAPSHOT_MUTEX:
		if (!o->owner) {
			snprintf(buf, size, "%s", o->flags & WS_SNAPSHOT_ABANDONED ? "abandoned" : "free");
		} else {
			if (o->owner_thread != WS_SNAPSHOT_NONE)
				stat_thread_name(s, o->owner_thread, who, sizeof(who));
			else
				snprintf(who, sizeof(who), "owner %#x (no thread of the arena)", o->owner);
			snprintf(buf, size, "held %ux by %s%s", o->recursion, who,
				 o->owner_thread != WS_SNAPSHOT_NONE &&
						 s->threads[o->owner_thread].state == WS_SNAPSHOT_DEAD
					 ? ", dead"
					 : "");
		}
		break;
	default:
		snprintf(buf, size, "%s, %s", o->manual_reset ? "manual" : "auto",
			 o->signaled ? "signaled" : "not signaled");
		break;
	}
}

static void print_wait(FILE *out, const struct ws_snapshot *s, const struct ws_snapshot_thread *th)
{
	if (th->flags & WS_SNAPSHOT_TORN) {
		fprintf(out, "(wait changing too fast to read)");
		return;
	}
	if (th->wait == WS_SNAPSHOT_NO_WAIT) {
		fprintf(out, "-");
		return;
	}
	fprintf(out, "%s [", th->wait == WS_SNAPSHOT_WAIT_ALL ? "all" : "any");
	for (uint32_t i = 0; i < th->count; i++) {
		const struct ws_snapshot_object *o = stat_object(s, th->objects[i]);

		fprintf(out, "%s%s%s %#x", i ? ", " : "",
			o && (o->flags & WS_SNAPSHOT_CLOSED) ? "closed " : "",
			o ? stat_type_name(o->type) : "closed", th->objects[i]);
	}
	fprintf(out, "]");
	if (th->alert)
		fprintf(out, " alert %#x", th->alert);
	fprintf(out, " for %.1f s", th->waited_ns / 1e9);
	if (th->flags & WS_SNAPSHOT_FOREVER)
		fprintf(out, ", no deadline");
	else
		fprintf(out, ", %.1f s left%s", th->deadline_ns / 1e9,
			th->flags & WS_SNAPSHOT_REALTIME ? " (realtime)" : "");
	if (th->flags & WS_SNAPSHOT_DEADLOCKED)
		fprintf(out, "  DEADLOCKED");
}

void stat_print_text(FILE *out, const char *name, const struct ws_snapshot *s)
{
	uint32_t dead = 0, waiting = 0;
	char who[64], state[96];

	for (uint32_t t = 0; t < s->thread_count; t++) {
		dead += s->threads[t].state == WS_SNAPSHOT_DEAD;
		waiting += s->threads[t].wait != WS_SNAPSHOT_NO_WAIT;
	}
	fprintf(out, "arena %s: %u objects of %u, %u threads (%u waiting, %u dead, not reaped)\n",
		name, s->live, s->capacity, s->thread_count, waiting, dead);
	if (s->lock_holder != WS_SNAPSHOT_NONE) {
		stat_thread_name(s, s->lock_holder, who, sizeof(who));
		fprintf(out, "arena lock: held by %s\n", who);
	} else {
		fprintf(out, "arena lock: free\n");
	}
	fprintf(out, "read in %.3f ms, %u reads repeated, %u given up, %u problems, %u deadlocked\n",
		s->took_ns / 1e6, s->retries, s->gave_up, s->problems, s->deadlocked);

	fprintf(out, "\nTHREADS\n  %-6s %-8s %-8s %-10s %-5s %s\n", "record", "tid", "pid", "owner",
		"state", "wait");
	for (uint32_t t = 0; t < s->thread_count; t++) {
		const struct ws_snapshot_thread *th = &s->threads[t];

		fprintf(out, "  %-6u %-8u %-8u %#-10x %-5s ", th->record, th->tid, th->pid, th->owner,
			th->state == WS_SNAPSHOT_LIVE ? "live" : "dead");
		print_wait(out, s, th);
		if (th->flags & WS_SNAPSHOT_LOCK_HOLDER)
			fprintf(out, "  (holds a lock)");
		fputc('\n', out);
	}

	fprintf(out, "\nOBJECTS\n  %-10s %-9s %-40s %s\n", "handle", "type", "state", "queue");
	for (uint32_t i = 0; i < s->object_count; i++) {
		const struct ws_snapshot_object *o = &s->objects[i];

		object_state(s, o, state, sizeof(state));
		fprintf(out, "  %#-10x %-9s %-40s", o->handle, stat_type_name(o->type), state);
		for (uint32_t q = 0; q < o->queued; q++)
			fprintf(out, " %u", s->threads[o->queue[q]].tid);
		if (o->flags & WS_SNAPSHOT_BUSY)
			fprintf(out, "  (being changed: as last seen)");
		if (o->flags & WS_SNAPSHOT_CORRUPT)
			fprintf(out, "  (queue corrupt)");
		if (o->flags & WS_SNAPSHOT_CLOSED)
			fprintf(out, "  (closed: held for the waits queued on it)");
		fputc('\n', out);
	}
	if (s->problems)
		fprintf(out, "\nPROBLEMS (%u)\n%s", s->problems, s->report);
	fprintf(out, "\nCHAINS\n");
	stat_print_chains(out, s);
}
