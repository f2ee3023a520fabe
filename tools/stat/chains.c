/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Wait chains, as Windows' Wait Chain Traversal reads them: a thread waits
 * on an object; a mutex is owned by a thread, which waits on ... until the
 * chain ends (a thread that runs, an object nobody owns) or comes back to a
 * thread already in it: a cycle.  The links are the snapshot's (blocker,
 * blocked_on, from the library's wait-for graph).
 */
#include "stat.h"

#include <stdbool.h>
#include <stdlib.h>

/* How a chain that no mutex continues ends: what is known about the wait. */
static void print_end(FILE *out, const struct ws_snapshot *s, const struct ws_snapshot_thread *th)
{
	char name[64];

	if (th->flags & WS_SNAPSHOT_TORN) {
		fprintf(out, ", whose wait changed too fast to read");
		return;
	}
	if (th->wait == WS_SNAPSHOT_NO_WAIT) {
		fprintf(out, th->state == WS_SNAPSHOT_DEAD
				     ? ", which is dead: its mutexes are abandoned once it is reaped"
				     : ", which is running (not waiting in the arena)");
		return;
	}
	fprintf(out, " waits%s on", th->wait == WS_SNAPSHOT_WAIT_ALL ? " for all" : "");
	for (uint32_t i = 0; i < th->count; i++) {
		const struct ws_snapshot_object *o = stat_object(s, th->objects[i]);

		fprintf(out, "%s", i ? (i + 1 == th->count ? " and" : ",") : "");
		if (!o) {
			fprintf(out, " a closed object (never signaled)");
			continue;
		}
		stat_object_name(s, o->handle, name, sizeof(name));
		/* Held for the waits queued on it: no handle can signal it now. */
		if (o->flags & WS_SNAPSHOT_CLOSED)
			fprintf(out, " the closed");
		switch (o->type) {
		case WS_SNAPSHOT_EVENT:
			fprintf(out, " %s (%s, %s: no owner, whoever sets it is unknown)", name,
				o->manual_reset ? "manual" : "auto",
				o->signaled ? "signaled" : "not signaled");
			break;
		case WS_SNAPSHOT_SEM:
			fprintf(out, " %s (count %u of %u: no owner, whoever releases it is unknown)",
				name, o->count, o->max);
			break;
		default:
			if (!o->owner) {
				fprintf(out, " %s (%s)", name,
					o->flags & WS_SNAPSHOT_ABANDONED ? "abandoned" : "free");
			} else if (o->owner_thread == WS_SNAPSHOT_NONE) {
				fprintf(out, " %s owned by %#x, no thread of the arena (the host's?)",
					name, o->owner);
			} else if (s->threads[o->owner_thread].state == WS_SNAPSHOT_DEAD) {
				char who[64];

				stat_thread_name(s, o->owner_thread, who, sizeof(who));
				fprintf(out, " %s owned by %s, which is dead: abandoned once it is reaped",
					name, who);
			} else {
				fprintf(out, " %s (its own)", name);
			}
		}
	}
	if (th->alert)
		fprintf(out, ", or its alert %#x", th->alert);
	fprintf(out, ", for %.1f s", th->waited_ns / 1e9);
	if (th->flags & WS_SNAPSHOT_FOREVER)
		fprintf(out, ", no deadline");
	else
		fprintf(out, ", %.1f s to its deadline", th->deadline_ns / 1e9);
}

/* Prints t's chain; true if it is a cycle through t with t its lowest thread. */
static bool print_chain(FILE *out, const struct ws_snapshot *s, uint32_t t, uint32_t *seen_at,
			uint32_t stamp)
{
	uint32_t cur = t, lowest = t;
	char name[64];

	stat_thread_name(s, t, name, sizeof(name));
	fprintf(out, "%s", name);
	for (;;) {
		const struct ws_snapshot_thread *th = &s->threads[cur];
		uint32_t next = th->blocker;

		seen_at[cur] = stamp;
		if (next == WS_SNAPSHOT_NONE) {
			print_end(out, s, th);
			fprintf(out, "\n");
			return false;
		}
		stat_object_name(s, th->blocked_on, name, sizeof(name));
		fprintf(out, " waits on %s owned by ", name);
		stat_thread_name(s, next, name, sizeof(name));
		fprintf(out, "%s", name);
		if (seen_at[next] == stamp) {
			bool through_t = next == t;

			fprintf(out, through_t ? ": cycle%s\n" : ", in a cycle%s\n",
				th->flags & WS_SNAPSHOT_DEADLOCKED ? " (deadlock)" : "");
			return through_t && lowest == t;
		}
		if (next < lowest)
			lowest = next;
		if (s->threads[next].wait != WS_SNAPSHOT_NO_WAIT &&
		    !(s->threads[next].flags & WS_SNAPSHOT_TORN))
			fprintf(out, ", which");
		cur = next;
	}
}

unsigned stat_print_chains(FILE *out, const struct ws_snapshot *s)
{
	uint32_t *seen_at = calloc(s->thread_count + 1, sizeof(*seen_at));
	unsigned cycles = 0, chains = 0;

	if (!seen_at)
		return 0;
	for (uint32_t t = 0; t < s->thread_count; t++) {
		if (s->threads[t].wait == WS_SNAPSHOT_NO_WAIT)
			continue;
		fprintf(out, "  ");
		cycles += print_chain(out, s, t, seen_at, t + 1);
		chains++;
	}
	if (!chains)
		fprintf(out, "  no thread is waiting\n");
	fprintf(out, "  %u cycle%s\n", cycles, cycles == 1 ? "" : "s");
	free(seen_at);
	return cycles;
}
