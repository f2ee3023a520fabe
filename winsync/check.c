/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ws_arena_check: every invariant the other files keep, checked at once
 * under the arena lock.  For tests (after killing threads at random points)
 * and for anyone who suspects an arena of being broken.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "crit.h"
#include "queue.h"
#include "record.h"
#include "type.h"
#include "waiter.h"

struct check {
	ws_arena *arena;
	char *report;
	size_t size;
	uint32_t linked_in_queues;
};

static int fail(struct check *k, const char *fmt, ...)
{
	va_list ap;

	if (k->report && k->size) {
		va_start(ap, fmt);
		vsnprintf(k->report, k->size, fmt, ap);
		va_end(ap);
	}
	return -EUCLEAN;
}

static int check_queue(struct check *k, uint32_t slot, struct ws_object *obj)
{
	ws_arena *arena = k->arena;
	uint32_t id = obj->queue_head, prev = 0, n = 0, r, e;
	/* Read once, and no more than every entry of every record: a scribbled
	 * count must not stretch a walk around a cycle. */
	uint32_t queued = obj->queued, bound = arena->records_count * WS_ENTRIES_PER_WAIT;

	while (id) {
		struct ws_entry *entry = ws_entry_at(arena, id, &r, &e);

		if (!entry || n >= queued || n >= bound)
			return fail(k, "slot %u: queue runs past its %u entries", slot, queued);
		if (ws_get(&entry->linked) !=
			    ws_queue_gen(obj, atomic_load_explicit(&obj->head, memory_order_relaxed)) ||
		    ws_get(&entry->object) != slot || ws_get(&entry->prev) != prev)
			return fail(k, "slot %u: entry %u of record %u badly linked", slot, e, r);
		prev = id;
		id = ws_get(&entry->next);
		n++;
	}
	if (n != queued || obj->queue_tail != prev)
		return fail(k, "slot %u: %u entries queued, %u counted, tail %u/%u", slot, queued, n,
			    obj->queue_tail, prev);
	k->linked_in_queues += n;
	return 0;
}

static int check_object(struct check *k, uint32_t slot, uint32_t *live)
{
	struct ws_object *obj = &k->arena->objects[slot];
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);
	uint32_t tag = ws_head_tag(head), value = ws_head_value(head), aux = ws_get(&obj->aux);
	uint32_t held = ws_get(&obj->held_gen);
	enum ws_type type = ws_head_type(head);

	if (tag & WS_HEAD_LOCKED)
		return fail(k, "slot %u: still LOCKED (type %u value %u, queued %u)", slot,
			    (unsigned)type, value, obj->queued);
	if (!(tag & WS_HEAD_QUEUED) != !obj->queued)
		return fail(k, "slot %u: QUEUED flag %d with %u entries", slot,
			    !!(tag & WS_HEAD_QUEUED), obj->queued);
	if (type == WS_TYPE_NONE && obj->queued)
		return fail(k, "slot %u: free with %u entries queued", slot, obj->queued);
	/* Held after its close: for a generation a handle had, with its type. */
	if (held && (type == WS_TYPE_NONE || held > ws_gen_mask(k->arena)))
		return fail(k, "slot %u: held for generation %u, type %u", slot, held,
			    (unsigned)type);
	switch (type) {
	case WS_TYPE_NONE:
		if (value)
			return fail(k, "slot %u: free with value %u", slot, value);
		break;
	case WS_TYPE_SEM:
		if (aux == 0 || value > aux)
			return fail(k, "slot %u: semaphore count %u, maximum %u", slot, value, aux);
		break;
	case WS_TYPE_EVENT:
		if (value > 1 || aux > 1)
			return fail(k, "slot %u: event state %u, manual %u", slot, value, aux);
		break;
	case WS_TYPE_MUTEX:
		if ((value == 0 && aux) || (value && (tag & WS_HEAD_ABANDONED)))
			return fail(k, "slot %u: mutex owner %u, recursion %u, abandoned %d", slot,
				    value, aux, !!(tag & WS_HEAD_ABANDONED));
		break;
	}
	if (type != WS_TYPE_NONE)
		(*live)++;
	return check_queue(k, slot, obj);
}

static int check_free_list(struct check *k)
{
	ws_arena *arena = k->arena;
	struct ws_arena_header *h = arena->header;
	uint32_t next = h->free_head, last = 0, n = 0;

	while (next) {
		struct ws_object *obj;

		if (next > arena->slots || n++ > arena->slots)
			return fail(k, "free list: slot %u out of range or a cycle", next);
		obj = &arena->objects[next - 1];
		if (ws_head_type(atomic_load_explicit(&obj->head, memory_order_relaxed)) !=
			    WS_TYPE_NONE ||
		    obj->queued)
			return fail(k, "free list: slot %u is in use", next - 1);
		last = next;
		next = obj->next_free;
	}
	if (h->free_tail != last)
		return fail(k, "free list: tail %u, last %u", h->free_tail, last);
	return 0;
}

/* The objects held after their close: each marked held, each once. */
static int check_held_list(struct check *k)
{
	ws_arena *arena = k->arena;
	struct ws_arena_header *h = arena->header;
	uint32_t next = h->held_head, last = 0, n = 0, marked = 0;

	while (next) {
		struct ws_object *obj;

		if (next > arena->slots || n++ > arena->slots)
			return fail(k, "held list: slot %u out of range or a cycle", next);
		obj = &arena->objects[next - 1];
		if (!ws_get(&obj->held_gen))
			return fail(k, "held list: slot %u is not held", next - 1);
		last = next;
		next = obj->next_free;
	}
	if (h->held_tail != last || h->held != n)
		return fail(k, "held list: tail %u, last %u, %u listed, header says %u", h->held_tail,
			    last, n, h->held);
	for (uint32_t s = 0; s < h->fresh_slots && s < arena->slots; s++)
		marked += ws_get(&arena->objects[s].held_gen) != 0;
	if (marked != n)
		return fail(k, "held list: %u listed, %u marked held", n, marked);
	return 0;
}

/* A live waiter still pending although one of its objects is ready for it: a lost signal. */
static int check_owed(struct check *k, uint32_t r, struct ws_record *rec)
{
	ws_arena *arena = k->arena;
	uint32_t owner = ws_get(&rec->wait_owner), count = rec->count, used = rec->entries_used;
	bool all_ready = true;

	if (used > WS_ENTRIES_PER_WAIT || count > used)
		return fail(k, "record %u: %u entries, %u objects", r, used, count);
	for (uint32_t e = 0; e < used; e++) {
		struct ws_entry *entry = &rec->entries[e];
		uint32_t object = ws_get(&entry->object);
		bool ready;

		if (!ws_get(&entry->linked) || object >= arena->slots)
			return fail(k, "record %u: pending, entry %u not queued", r, e);
		/* Its object was closed: it waits on, for the others. */
		ready = ws_entry_queued(arena, entry) &&
			ws_obj_ready(&arena->objects[object], owner);
		if (rec->wait_all && e < count) {
			all_ready &= ready;
			continue;
		}
		if (ready)
			return fail(k, "record %u: pending, but slot %u (entry %u) is ready for it", r,
				    object, e);
	}
	if (rec->wait_all && count && all_ready)
		return fail(k, "record %u: pending wait_all, but all %u objects are ready", r, count);
	return 0;
}

static int check_records(struct check *k)
{
	ws_arena *arena = k->arena;
	uint32_t n = atomic_load_explicit(&arena->header->fresh_records, memory_order_relaxed);
	uint32_t linked = 0;
	int ret;

	if (n > arena->records_count)
		return fail(k, "%u records handed out of %u", n, arena->records_count);
	for (uint32_t r = 0; r < n; r++) {
		struct ws_record *rec = &arena->records[r];
		uint32_t state = atomic_load_explicit(&rec->state, memory_order_relaxed);

		for (uint32_t e = 0; e < WS_ENTRIES_PER_WAIT; e++)
			linked += ws_entry_queued(arena, &rec->entries[e]);
		if (atomic_load_explicit(&rec->log.state, memory_order_relaxed) != WS_LOG_IDLE)
			return fail(k, "record %u: log not idle after recovery", r);
		if (state == WS_WAIT_PENDING && ws_record_liveness(rec) == WS_LIVE) {
			ret = check_owed(k, r, rec);
			if (ret)
				return ret;
		}
	}
	if (linked != k->linked_in_queues)
		return fail(k, "%u entries marked linked, %u found in queues", linked,
			    k->linked_in_queues);
	return 0;
}

int ws_arena_check(ws_arena *arena, char *report, size_t size)
{
	struct check k = { arena, report, size, 0 };
	struct ws_crit c;
	uint32_t live = 0, fresh;
	int ret;

	if (!arena)
		return -EINVAL;
	if (report && size)
		report[0] = 0;
	/* Entering finishes a dead holder's work: what is left must be whole. */
	ret = ws_crit_enter(arena, ws_arena_lock(arena), &c);
	if (ret)
		return ret;
	/* Sections on one object end first: every object at rest at once. */
	ret = ws_crit_hold_objects(&c);
	fresh = arena->header->fresh_slots;
	if (!ret && (fresh > arena->slots || arena->header->live > arena->capacity))
		ret = fail(&k, "%u slots used of %u, %u live of %u", fresh, arena->slots,
			   arena->header->live, arena->capacity);
	for (uint32_t s = 0; !ret && s < fresh; s++)
		ret = check_object(&k, s, &live);
	if (!ret && live != arena->header->live)
		ret = fail(&k, "%u live objects counted, header says %u", live, arena->header->live);
	if (!ret)
		ret = check_free_list(&k);
	if (!ret)
		ret = check_held_list(&k);
	if (!ret)
		ret = check_records(&k);
	ws_crit_release_objects(&c);
	ws_crit_leave(&c);
	return ret;
}
