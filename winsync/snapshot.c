/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Snapshots: an inspector's read of a live arena.  Nothing here writes the
 * arena or takes a lock; every field may be changing as it is read, so:
 *   - an object is read between two reads of its head: equal heads with no
 *     critical section marked on them (view.h) mean its fields and queue
 *     were read whole, else it is read again, and after the last try it is
 *     shown as last seen (BUSY);
 *   - a wait is read between two reads of its record's wait serial and
 *     state (waiter.c moves the serial before it rewrites the wait), else
 *     again, and after the last try not shown (TORN);
 *   - every index, count and link is checked before use and every walk is
 *     bounded, as in the core: a corrupted arena gives problems, not a
 *     crash or a loop.  A truncated shared file reads as zeros (os/guard.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "map.h"
#include "os/os.h"
#include "view.h"
#include "waiter.h"
#include "waitfor.h"

/* Reads of one object or wait before giving up, and pauses between them. */
#define TRIES  64
#define PAUSES 32
#define REPORT_SIZE 4096

struct block {
	struct ws_snapshot pub;     /* first: ws_snapshot_free finds the block from it */
	struct ws_snapshot_object *objects;
	struct ws_snapshot_thread *threads;
	ws_handle *handles;         /* WS_MAX_WAIT_OBJECTS per thread */
	uint32_t *queue;            /* thread indices, every object's queue in turn */
	uint32_t queue_used, queue_size;
	uint32_t *queue_start;      /* per object: its first in `queue` (pointers are set last) */
	char report[REPORT_SIZE];
	size_t report_used;
};

struct reader {
	ws_arena *arena;
	struct block *b;
	uint32_t *thread_of_record;
	uint32_t *object_of_slot;
	uint32_t slots;             /* slots ever used, as far as the header can be trusted */
	uint64_t now, now_real;
};

static void problem(struct reader *rd, const char *fmt, ...)
{
	struct block *b = rd->b;
	va_list ap;
	int n;

	b->pub.problems++;
	if (b->report_used + 2 >= sizeof(b->report))
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->report + b->report_used, sizeof(b->report) - b->report_used - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	b->report_used += (size_t)n;
	if (b->report_used > sizeof(b->report) - 2)
		b->report_used = sizeof(b->report) - 2;
	b->report[b->report_used++] = '\n';
	b->report[b->report_used] = 0;
}

static void pause_briefly(void)
{
	for (int i = 0; i < PAUSES; i++)
		ws_os_relax();
}

static int64_t ns_between(uint64_t from, uint64_t to)
{
	return to >= from ? (int64_t)(to - from) : -(int64_t)(from - to);
}

/* ---- threads ---- */

struct wait_read {
	uint32_t owner, count, all, used, clock;
	uint64_t since, deadline;
	uint32_t slot[WS_ENTRIES_PER_WAIT], gen[WS_ENTRIES_PER_WAIT];
};

/* One read of a pending wait: true if the serial and state held around it. */
WS_VIEW_RACY static bool read_wait_once(struct ws_record *rec, struct wait_read *w)
{
	uint32_t serial = atomic_load_explicit(&rec->wait_serial, memory_order_acquire), used;

	w->owner = WS_VIEW_READ(rec->wait_owner);
	w->count = WS_VIEW_READ(rec->count);
	w->all = WS_VIEW_READ(rec->wait_all);
	w->used = used = WS_VIEW_READ(rec->entries_used);
	w->clock = WS_VIEW_READ(rec->wait_clock);
	w->since = WS_VIEW_READ(rec->wait_since);
	w->deadline = WS_VIEW_READ(rec->wait_deadline);
	if (used > WS_ENTRIES_PER_WAIT)
		used = WS_ENTRIES_PER_WAIT;
	for (uint32_t e = 0; e < used; e++) {
		w->slot[e] = WS_VIEW_READ(rec->entries[e].object);
		w->gen[e] = ws_view_entry_gen(WS_VIEW_READ(rec->entries[e].linked));
	}
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&rec->wait_serial, memory_order_relaxed) != serial ||
	    ws_wait_state(rec) != WS_WAIT_PENDING)
		return false;
	/* An entry not linked yet: the waiter is still queueing (read again). */
	for (uint32_t e = 0; e < used; e++)
		if (!w->gen[e])
			return false;
	return true;
}

static void fill_wait(struct reader *rd, uint32_t r, const struct wait_read *w,
		      struct ws_snapshot_thread *th, ws_handle *handles)
{
	ws_arena *arena = rd->arena;

	if (w->used > WS_ENTRIES_PER_WAIT || w->count > w->used || w->used - w->count > 1 ||
	    w->clock > WS_WAIT_CLOCK_REALTIME) {
		problem(rd, "record %u: a wait of %u entries for %u objects, clock %u", r, w->used,
			w->count, w->clock);
		return;
	}
	th->wait = w->all ? WS_SNAPSHOT_WAIT_ALL : WS_SNAPSHOT_WAIT_ANY;
	th->wait_owner = w->owner;
	th->count = w->count;
	th->objects = handles;
	for (uint32_t e = 0; e < w->used; e++) {
		ws_handle h = 0;

		/* Queued on the object's current generation (or the one it is held for):
		 * that object, else freed since. */
		if (w->slot[e] < arena->slots && w->gen[e] &&
		    w->gen[e] == ws_queue_gen(&arena->objects[w->slot[e]],
					      ws_view_head(arena, w->slot[e])))
			h = ws_make_handle(arena, w->slot[e], w->gen[e]);
		else if (w->slot[e] >= arena->slots && w->gen[e])
			problem(rd, "record %u: entry %u names slot %u of %u", r, e, w->slot[e],
				arena->slots);
		if (e < w->count)
			handles[e] = h;
		else
			th->alert = h;
	}
	th->waited_ns = w->since && w->since <= rd->now ? rd->now - w->since : 0;
	if (w->clock == WS_WAIT_CLOCK_FOREVER)
		th->flags |= WS_SNAPSHOT_FOREVER;
	else if (w->clock == WS_WAIT_CLOCK_REALTIME)
		th->flags |= WS_SNAPSHOT_REALTIME;
	if (w->clock != WS_WAIT_CLOCK_FOREVER)
		th->deadline_ns = ns_between(w->clock == WS_WAIT_CLOCK_REALTIME ? rd->now_real
										 : rd->now,
					     w->deadline);
}

WS_VIEW_RACY static void read_thread(struct reader *rd, uint32_t r, uint32_t alive)
{
	ws_arena *arena = rd->arena;
	struct block *b = rd->b;
	struct ws_record *rec = &arena->records[r];
	uint32_t t = b->pub.thread_count++;
	struct ws_snapshot_thread *th = &b->threads[t];
	struct wait_read w;
	int tries;

	rd->thread_of_record[r] = t;
	memset(th, 0, sizeof(*th));
	th->record = r;
	th->state = ws_liveness_of(alive) == WS_LIVE ? WS_SNAPSHOT_LIVE : WS_SNAPSHOT_DEAD;
	th->tid = th->state == WS_SNAPSHOT_LIVE ? alive & WS_FUTEX_TID_MASK : WS_VIEW_READ(rec->tid);
	th->pid = WS_VIEW_READ(rec->pid);
	th->owner = atomic_load_explicit(&rec->owner, memory_order_relaxed);
	th->blocker = WS_SNAPSHOT_NONE;
	if (ws_wait_state(rec) != WS_WAIT_PENDING)
		return;
	for (tries = 0; tries < TRIES; tries++) {
		if (read_wait_once(rec, &w))
			break;
		if (ws_wait_state(rec) != WS_WAIT_PENDING)
			return; /* it ended while we read: not waiting */
		b->pub.retries++;
		pause_briefly();
	}
	if (tries == TRIES) {
		th->flags |= WS_SNAPSHOT_TORN;
		b->pub.gave_up++;
		return;
	}
	fill_wait(rd, r, &w, th, &b->handles[(size_t)t * WS_MAX_WAIT_OBJECTS]);
}

static void read_threads(struct reader *rd)
{
	ws_arena *arena = rd->arena;
	uint32_t n = atomic_load_explicit(&arena->header->fresh_records, memory_order_relaxed);

	if (n > arena->records_count) {
		problem(rd, "header: %u records handed out of %u", n, arena->records_count);
		n = arena->records_count;
	}
	for (uint32_t r = 0; r < n; r++) {
		uint32_t alive = atomic_load_explicit(&arena->records[r].alive, memory_order_acquire);

		if (ws_liveness_of(alive) != WS_FREE)
			read_thread(rd, r, alive);
	}
}

/* Who holds the lock words: a ref naming a record of its current generation. */
static void read_locks(struct reader *rd)
{
	ws_arena *arena = rd->arena;
	struct ws_snapshot *pub = &rd->b->pub;

	pub->lock_holder = WS_SNAPSHOT_NONE;
	for (uint32_t i = 0; i < ws_view_lock_words(arena); i++) {
		uint32_t ref = ws_view_lock_ref(arena, i), r = ws_ref_index(arena, ref), t;

		if (!ref || r == UINT32_MAX || rd->thread_of_record[r] == WS_SNAPSHOT_NONE)
			continue;
		if ((ws_get(&arena->records[r].generation) & WS_REF_GEN_MASK) !=
		    ref >> WS_REF_INDEX_BITS)
			continue; /* a lock word naming a reaped holder: taken over soon */
		t = rd->thread_of_record[r];
		rd->b->threads[t].flags |= WS_SNAPSHOT_LOCK_HOLDER;
		if (i == 0)
			pub->lock_holder = t;
	}
}

/* ---- objects ---- */

static int queue_push(struct block *b, uint32_t thread)
{
	if (b->queue_used == b->queue_size) {
		uint32_t size = b->queue_size ? b->queue_size * 2 : 256;
		uint32_t *grown = realloc(b->queue, size * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		b->queue = grown;
		b->queue_size = size;
	}
	b->queue[b->queue_used++] = thread;
	return 0;
}

struct object_read {
	uint64_t head;
	uint32_t aux;
	uint32_t held_gen;          /* closed, held for its waits: the closed handle's generation */
	bool broken;                /* its fields or queue disagree: why says how */
	char why[128];
};

/* The fields of a head and aux that no writer leaves behind: "" if none. */
static void check_fields(uint64_t head, uint32_t aux, char *why, size_t size)
{
	uint32_t tag = ws_head_tag(head), value = ws_head_value(head);

	why[0] = 0;
	switch (ws_head_type(head)) {
	case WS_TYPE_SEM:
		if (aux == 0 || value > aux)
			snprintf(why, size, "semaphore count %u, maximum %u", value, aux);
		break;
	case WS_TYPE_MUTEX:
		if ((value == 0 && aux) || (value && (tag & WS_HEAD_ABANDONED)))
			snprintf(why, size, "mutex owner %u, recursion %u, abandoned %d", value, aux,
				 !!(tag & WS_HEAD_ABANDONED));
		break;
	case WS_TYPE_EVENT:
		if (value > 1 || aux > 1)
			snprintf(why, size, "event state %u, manual %u", value, aux);
		break;
	default:
		break;
	}
}

/*
 * One read of an object's fields and queue, appending its waiters to the
 * queue table from `mark`: true if its head held, unmarked, around the read.
 */
WS_VIEW_RACY static bool read_object_once(struct reader *rd, uint32_t slot, struct object_read *o,
					  uint32_t mark, int *error)
{
	ws_arena *arena = rd->arena;
	struct ws_object *obj = &arena->objects[slot];
	uint32_t bound = arena->records_count * WS_ENTRIES_PER_WAIT;
	uint32_t id, tail, queued, prev = 0, n = 0, r, e, gen;

	const char *broken = NULL;
	uint32_t broken_at = UINT32_MAX;

	rd->b->queue_used = mark;
	o->head = ws_view_head(arena, slot);
	o->held_gen = atomic_load_explicit(&obj->held_gen, memory_order_relaxed);
	gen = ws_queue_gen(obj, o->head);
	o->aux = atomic_load_explicit(&obj->aux, memory_order_relaxed);
	id = WS_VIEW_READ(obj->queue_head);
	tail = WS_VIEW_READ(obj->queue_tail);
	queued = WS_VIEW_READ(obj->queued);
	while (id && !broken) {
		struct ws_entry *entry = ws_entry_at(arena, id, &r, &e);
		uint32_t thread;

		if (!entry || n >= queued || n >= bound) {
			broken = "its queue runs past its entries";
			break;
		}
		if (ws_view_entry_gen(WS_VIEW_READ(entry->linked)) != gen ||
		    WS_VIEW_READ(entry->object) != slot || WS_VIEW_READ(entry->prev) != prev) {
			broken = "an entry of its queue is badly linked";
			broken_at = r;
			break;
		}
		thread = rd->thread_of_record[r];
		/* A stale entry of a wait that has ended stays queued until a walk prunes it. */
		if (thread != WS_SNAPSHOT_NONE && rd->b->threads[thread].wait != WS_SNAPSHOT_NO_WAIT &&
		    queue_push(rd->b, thread)) {
			*error = -ENOMEM;
			return true;
		}
		prev = id;
		id = WS_VIEW_READ(entry->next);
		n++;
	}
	if (!broken && (n != queued || tail != prev))
		broken = "its queue's count or tail disagrees with its links";
	check_fields(o->head, o->aux, o->why, sizeof(o->why));
	if (broken && broken_at != UINT32_MAX)
		snprintf(o->why, sizeof(o->why), "%s (record %u)", broken, broken_at);
	else if (broken)
		snprintf(o->why, sizeof(o->why), "%s", broken);
	o->broken = o->why[0] != 0;
	atomic_thread_fence(memory_order_acquire);
	return ws_view_head(arena, slot) == o->head && !ws_view_object_busy(arena, slot, o->head);
}

static void fill_object(struct reader *rd, uint32_t slot, const struct object_read *o,
			struct ws_snapshot_object *out)
{
	uint32_t tag = ws_head_tag(o->head), value = ws_head_value(o->head);

	/* Held after its close: named by the handle its waits were given. */
	out->handle = ws_make_handle(rd->arena, slot, o->held_gen ? o->held_gen : ws_head_gen(o->head));
	out->owner_thread = WS_SNAPSHOT_NONE;
	if (o->held_gen)
		out->flags |= WS_SNAPSHOT_CLOSED;
	switch (ws_head_type(o->head)) {
	case WS_TYPE_SEM:
		out->type = WS_SNAPSHOT_SEM;
		out->count = value;
		out->max = o->aux;
		break;
	case WS_TYPE_MUTEX:
		out->type = WS_SNAPSHOT_MUTEX;
		out->owner = value;
		out->recursion = value ? o->aux + 1 : 0;
		if (tag & WS_HEAD_ABANDONED)
			out->flags |= WS_SNAPSHOT_ABANDONED;
		break;
	default:
		out->type = WS_SNAPSHOT_EVENT;
		out->signaled = value != 0;
		out->manual_reset = o->aux != 0;
		break;
	}
}

/*
 * An object read whole (its head unchanged and unmarked around the read)
 * may still have been edited in between, its head put back as it was: a
 * queue or fields that disagree are read again, and are corruption only if
 * they disagree at every try.
 */
static int read_object(struct reader *rd, uint32_t slot)
{
	struct block *b = rd->b;
	uint32_t mark = b->queue_used, i;
	struct ws_snapshot_object *out;
	struct object_read o;
	int tries, error = 0;
	bool whole = false;

	for (tries = 0; tries < TRIES; tries++) {
		whole = read_object_once(rd, slot, &o, mark, &error);
		if (error)
			return error;
		if (ws_head_type(o.head) == WS_TYPE_NONE && whole) {
			b->queue_used = mark;
			return 0; /* a free slot */
		}
		if (whole && !o.broken)
			break;
		b->pub.retries++;
		pause_briefly();
	}
	if (ws_head_type(o.head) == WS_TYPE_NONE) {
		b->queue_used = mark;
		return 0;
	}
	i = b->pub.object_count++;
	out = &b->objects[i];
	memset(out, 0, sizeof(*out));
	rd->object_of_slot[slot] = i;
	b->queue_start[i] = mark;
	fill_object(rd, slot, &o, out);
	if (!whole) {
		/* Mid-edit at every try (a holder stopped or busy): values as last seen. */
		out->flags |= WS_SNAPSHOT_BUSY;
		b->pub.gave_up++;
		if (o.broken)
			b->queue_used = mark;
	} else if (o.broken) {
		out->flags |= WS_SNAPSHOT_CORRUPT;
		b->queue_used = mark;
		problem(rd, "slot %u: %s", slot, o.why);
	}
	out->queued = b->queue_used - mark;
	return 0;
}

static int read_objects(struct reader *rd)
{
	for (uint32_t s = 0; s < rd->slots; s++) {
		int ret = read_object(rd, s);

		if (ret)
			return ret;
	}
	rd->b->pub.live = rd->b->pub.object_count;
	return 0;
}

/* ---- the whole ---- */

static uint32_t object_of(void *ctx, ws_handle handle)
{
	struct reader *rd = ctx;
	uint32_t slot = ws_handle_slot(rd->arena, handle), o;

	if (slot >= rd->slots)
		return WS_SNAPSHOT_NONE;
	o = rd->object_of_slot[slot];
	return o != WS_SNAPSHOT_NONE && rd->b->objects[o].handle == handle ? o : WS_SNAPSHOT_NONE;
}

static void block_free(struct block *b)
{
	if (!b)
		return;
	free(b->objects);
	free(b->threads);
	free(b->handles);
	free(b->queue);
	free(b->queue_start);
	free(b);
}

static int take(ws_arena *arena, struct block *b)
{
	struct ws_arena_header *h = arena->header;
	uint32_t records = arena->records_count;
	struct reader rd = { .arena = arena, .b = b };
	struct ws_waitfor g;
	int ret;

	rd.now = ws_clock_ns(WS_CLOCK_MONOTONIC);
	rd.now_real = ws_clock_ns(WS_CLOCK_REALTIME);
	b->pub.taken_ns = rd.now;
	b->pub.capacity = arena->capacity;
	b->pub.report = b->report;
	if (WS_VIEW_READ(h->magic) != WS_ARENA_MAGIC || WS_VIEW_READ(h->version) != WS_ARENA_VERSION)
		problem(&rd, "header: magic %#x, version %u overwritten", WS_VIEW_READ(h->magic),
			WS_VIEW_READ(h->version));
	rd.slots = WS_VIEW_READ(h->fresh_slots);
	if (rd.slots > arena->slots) {
		problem(&rd, "header: %u slots used of %u", rd.slots, arena->slots);
		rd.slots = arena->slots;
	}
	b->threads = calloc(records, sizeof(*b->threads));
	b->handles = calloc((size_t)records * WS_MAX_WAIT_OBJECTS, sizeof(*b->handles));
	b->objects = calloc(rd.slots + 1, sizeof(*b->objects));
	b->queue_start = calloc(rd.slots + 1, sizeof(*b->queue_start));
	rd.thread_of_record = malloc(records * sizeof(*rd.thread_of_record));
	rd.object_of_slot = malloc((rd.slots + 1) * sizeof(*rd.object_of_slot));
	ret = -ENOMEM;
	if (!b->threads || !b->handles || !b->objects || !b->queue_start || !rd.thread_of_record ||
	    !rd.object_of_slot)
		goto out;
	memset(rd.thread_of_record, 0xff, records * sizeof(*rd.thread_of_record));
	memset(rd.object_of_slot, 0xff, (rd.slots + 1) * sizeof(*rd.object_of_slot));
	/* Waits first: an object's queue names its waiters by their threads. */
	read_threads(&rd);
	read_locks(&rd);
	ret = read_objects(&rd);
	if (ret)
		goto out;
	for (uint32_t o = 0; o < b->pub.object_count; o++)
		b->objects[o].queue = b->queue ? b->queue + b->queue_start[o] : NULL;
	b->pub.objects = b->objects;
	b->pub.threads = b->threads;
	g = (struct ws_waitfor){ b->objects, b->pub.object_count, b->threads, b->pub.thread_count,
				 object_of, &rd };
	ret = ws_waitfor_analyze(&g);
	if (ret < 0)
		goto out;
	b->pub.deadlocked = (uint32_t)ret;
	b->pub.took_ns = ws_clock_ns(WS_CLOCK_MONOTONIC) - rd.now;
	ret = 0;
out:
	free(rd.thread_of_record);
	free(rd.object_of_slot);
	return ret;
}

int ws_arena_snapshot(ws_arena *arena, uint32_t flags, struct ws_snapshot **snapshot)
{
	struct block *b;
	int ret;

	if (!arena || !snapshot || flags)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	ret = take(arena, b);
	if (ret) {
		block_free(b);
		return ret;
	}
	*snapshot = &b->pub;
	return 0;
}

int ws_snapshot_open(const char *name, uint32_t flags, struct ws_snapshot **snapshot)
{
	const struct ws_arena_header *h;
	ws_arena *arena;
	void *base;
	size_t size;
	int ret;

	if (!name || !snapshot || flags || !ws_arena_name_valid(name))
		return -EINVAL;
	ret = ws_os_map_inspect(name, &base, &size);
	if (ret)
		return ret;
	h = base;
	if (size < sizeof(*h) || h->magic != WS_ARENA_MAGIC)
		ret = -EINVAL;
	else if (h->version != WS_ARENA_VERSION)
		ret = -EPROTO;
	else
		ret = ws_layout_attach(base, size, true, &arena);
	if (!ret) {
		ret = ws_arena_snapshot(arena, 0, snapshot);
		free(arena);
	}
	ws_os_unmap(base, size);
	return ret;
}

void ws_snapshot_free(struct ws_snapshot *snapshot)
{
	/* pub is the block's first member. */
	block_free((struct block *)snapshot);
}
