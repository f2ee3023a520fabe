/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ws_wait_any and ws_wait_all.
 *
 * A wait_any first scans its objects without the lock and takes the first
 * ready one with a compare-exchange of its head: the uncontended path, no
 * system call.  (One object, or a list known valid whose first object is
 * ready, need no scan: try_single and try_first_known.)  The scan reads the
 * heads before the chosen one twice, the second time after all of the first
 * look: unchanged (their stamps say so: layout.h), they were all not ready
 * at the end of the first look, when the chosen one was ready, and the
 * compare-exchange succeeds only if that one has not changed since.  So the
 * wait takes effect at one instant, as NT's does.  Otherwise (and for every
 * wait_all) it enters the critical section, locks its objects, and either
 * acquires there or queues an entry on each and sleeps on its record's own
 * `wake` word until a signaler hands it an object (queue.h) or its deadline
 * passes, when it gives up without the lock (waiter.h).
 *
 * A blocked waiter is woken by nothing but its own business: a hand-off, its
 * deadline, or the death of a thread it depends on, which the kernel reports
 * by waking a word the waiter sleeps on: for a mutex held by someone else,
 * the `alive` word of each live record that uses the owner's id (the kernel
 * marks it at that thread's death); for a signaler that dies owing it, its
 * own `wake` word (txn.h's dead-man wake).  A mutex that changes owner while
 * it waits is followed by a re-arm wake (queue.h).  A backstop sweep once a
 * minute covers what corruption may have lost.
 */
#include "clock.h"
#include "crit.h"
#include "fault.h"
#include "futex.h"
#include "lock.h"
#include "memo.h"
#include "queue.h"
#include "reap.h"
#include "record.h"
#include "recover.h"
#include "call.h"
#include "slot.h"
#include "spin.h"
#include "type.h"
#include "waiter.h"

/* A blocked waiter looks for dead threads this often, whatever else happens. */
#define BACKSTOP_NS (60 * (int64_t)WS_NSEC_PER_SEC)
/* A dead owner found while the lock is busy (WS_ARENA_NONBLOCK): look again this soon. */
#define REAP_RETRY_NS 10000000L
/* More threads to watch than one futex_waitv takes: look for deaths this often. */
#define UNWATCHED_POLL_NS 50000000L

struct wait_plan {
	const struct ws_wait *wait;
	struct ws_wait_shape shape;
	struct ws_deadline deadline;
};

/* Entry i: the objects, then the alert. */
static inline ws_handle plan_handle(const struct wait_plan *plan, uint32_t i)
{
	return i < plan->wait->count ? plan->wait->objects[i] : plan->wait->alert;
}

static enum ws_type entry_type(const struct wait_plan *plan, uint32_t i)
{
	return i == plan->wait->count ? WS_TYPE_EVENT : WS_TYPE_NONE;
}

/* The arguments' checks, before anything is looked at: 0 or -EINVAL. */
static inline int check_wait(ws_arena *arena, const struct ws_wait *wait, uint32_t *index)
{
	if (!arena || !wait || !index || wait->count > WS_MAX_WAIT_OBJECTS || wait->owner == 0 ||
	    (wait->count && !wait->objects) || (wait->flags & ~WS_WAIT_REALTIME) ||
	    (wait->deadline && (wait->deadline->tv_nsec < 0 ||
				wait->deadline->tv_nsec >= WS_NSEC_PER_SEC)))
		return -EINVAL;
	return 0;
}

static int plan_wait(const struct ws_wait *wait, bool all, struct wait_plan *plan)
{
	plan->wait = wait;
	plan->shape.owner = wait->owner;
	plan->shape.count = wait->count;
	plan->shape.entries = wait->count + (wait->alert != 0);
	plan->shape.all = all;
	plan->shape.deadline = &plan->deadline;
	return ws_deadline_make(wait->deadline, wait->flags & WS_WAIT_REALTIME, &plan->deadline);
}

/* What a scan needs of the arena, in registers rather than reloaded per object. */
struct scan_view {
	struct ws_object *objects;
	uint32_t slots;
	uint32_t index_bits;
	uint32_t index_mask;
	bool all_slots;       /* every index the mask lets through is a slot: no bounds check */
};

/* Is the slot of index s out of range (never, when every index is a slot)? */
static inline bool out_of_range(struct scan_view v, uint32_t s)
{
	return !v.all_slots && s >= v.slots;
}

/* Semaphores (01) and events (11) share the low type bit; mutexes (10) do not. */
#define TYPE_SEM_OR_EVENT (1u << WS_HEAD_TYPE_SHIFT)
_Static_assert((WS_TYPE_SEM & 1) && (WS_TYPE_EVENT & 1) && !(WS_TYPE_MUTEX & 1),
	       "the scan tells semaphores and events from the rest by one bit");
#define IDLE_KEY_MASK \
	((uint64_t)(WS_HEAD_GEN_MASK | WS_HEAD_LOCKED | TYPE_SEM_OR_EVENT) << 32 | 0xffffffffu)

/* Relaxed: the scan only chooses; fences order its two looks (unchanged()). */
static inline uint64_t view_head(struct scan_view v, uint32_t slot)
{
	return atomic_load_explicit(&v.objects[slot].head, memory_order_relaxed);
}

/*
 * The first of handles[from, count) that is not plainly idle: a live
 * semaphore or event of the handle's generation, not being edited, with a
 * value of 0 (not ready for anybody, type.h).  One masked compare per
 * object: a wait on many objects, of which few are ready, costs little
 * more than a wait on one.  Each head read is kept in seen[] (0 for a slot
 * out of range) and its object in where[], for the second look.
 */
static inline uint32_t skip_idle(struct scan_view v, const ws_handle *handles, uint32_t from,
				 uint32_t count, uint64_t *seen, struct ws_object **where)
{
	for (uint32_t i = from; i < count; i++) {
		ws_handle handle = handles[i];
		uint32_t s = handle & v.index_mask;
		uint64_t idle = (uint64_t)((handle >> v.index_bits) | TYPE_SEM_OR_EVENT) << 32;

		if (out_of_range(v, s)) {
			seen[i] = 0;
			return i;
		}
		where[i] = &v.objects[s];
		seen[i] = view_head(v, s);
		if ((seen[i] & IDLE_KEY_MASK) != idle)
			return i;
	}
	return count;
}

/*
 * The second look: the objects where[0, n) still have the heads seen[]
 * holds.  Kept from the first look rather than found again from the
 * handles: about 10% of a wait on 64 objects.
 */
static inline bool unchanged(struct ws_object *const *where, const uint64_t *seen, uint32_t n)
{
	/* Every read of the first look (the chosen head's last) before any of this one. */
	atomic_thread_fence(memory_order_acquire);
	for (uint32_t i = 0; i < n; i++)
		if (atomic_load_explicit(&where[i]->head, memory_order_relaxed) != seen[i])
			return false;
	return true;
}

/*
 * The first of handles[from, count) that does not name a live object of its
 * generation (a free or retired slot has no type, or a generation no live
 * handle has): after the object to take is found, the rest are only checked.
 * *locked: one of them was being edited (perhaps closed: memo.h), so the
 * list is not to be kept.
 */
static inline uint32_t first_invalid(struct scan_view v, const ws_handle *handles, uint32_t from,
				     uint32_t count, bool *locked)
{
	uint32_t edited = 0;

	for (uint32_t i = from; i < count; i++) {
		ws_handle handle = handles[i];
		uint32_t s = handle & v.index_mask, tag;

		if (out_of_range(v, s))
			return i;
		tag = ws_head_tag(view_head(v, s));
		edited |= tag;
		/* The generation matches and the type is not NONE, in two tests. */
		if (((tag & WS_HEAD_GEN_MASK) ^ (handle >> v.index_bits)) | !(tag & WS_HEAD_TYPE_MASK))
			return i;
	}
	*locked = edited & WS_HEAD_LOCKED;
	return count;
}

/* The count of closes, read after every head this try read (memo.h). */
static inline uint64_t closes_after_heads(ws_arena *arena)
{
	atomic_thread_fence(memory_order_acquire);
	return ws_closes_now(arena);
}

/* What the uncontended path makes of one object that is not plainly idle. */
enum scan {
	SCAN_NOT_READY,
	SCAN_READY,
	SCAN_UNSURE,   /* being edited, or a mutex with waiters: only the lock holder decides */
	SCAN_CHECK,    /* not a live object of the handle's generation: ws_handle_lookup says */
};

/* h: the head read of the handle's slot (meaningless if the slot is out of range). */
static inline enum scan scan_one(struct scan_view v, ws_handle handle, uint32_t owner, uint64_t h)
{
	uint32_t s = handle & v.index_mask, tag;

	if (out_of_range(v, s) || handle == 0)
		return SCAN_CHECK;
	tag = ws_head_tag(h);
	if ((tag & WS_HEAD_GEN_MASK) != handle >> v.index_bits || !(tag & WS_HEAD_TYPE_MASK))
		return SCAN_CHECK;
	if (tag & WS_HEAD_LOCKED)
		return SCAN_UNSURE;
	if (!ws_head_ready(h, owner))
		return SCAN_NOT_READY;
	/* Its queued waiters must learn of a new owner (queue.h): the holder gives it. */
	if (ws_head_type(h) == WS_TYPE_MUTEX && (tag & WS_HEAD_QUEUED))
		return SCAN_UNSURE;
	return SCAN_READY;
}

/* Takes the object with this head for `owner` by one compare-exchange: 0, -EOWNERDEAD, or 1 (lost a race). */
static inline __attribute__((always_inline)) int
take_uncontended(ws_arena *arena, uint32_t slot, uint64_t head, uint32_t owner)
{
	struct ws_object *obj = &arena->objects[slot];
	enum ws_type type = ws_head_type(head);

	if (type == WS_TYPE_MUTEX) {
		uint32_t record;

		/* Recursion changes aux: locked path.  So does a thread with no record yet. */
		if (ws_head_value(head) != 0 || ws_self_cached(arena, &record))
			return 1;
		ws_record_note_owner(arena, record, owner);
	}
	if (type == WS_TYPE_EVENT && ws_get(&obj->aux)) {
		/* A manual event is not taken: an acquire load orders what follows the wait. */
		if (atomic_load_explicit(&obj->head, memory_order_acquire) != head)
			return 1;
	} else if (!atomic_compare_exchange_strong_explicit(&obj->head, &head,
							    ws_head_taken(head, owner),
							    memory_order_acquire,
							    memory_order_relaxed)) {
		return 1;
	}
	WS_FAULT();
	return type == WS_TYPE_MUTEX && (ws_head_tag(head) & WS_HEAD_ABANDONED) ? -EOWNERDEAD : 0;
}

/*
 * The uncontended path of wait_any: the lowest-index ready object is taken
 * with one compare-exchange, once every handle (the alert first, which must
 * be an event) is known valid and the objects before it are seen unchanged
 * a second time (the top of this file).  *done is false when the locked
 * path must decide: nothing ready, an object being edited, a recursive
 * mutex, or races lost WS_FAST_TRIES times.
 *
 * index_bits and all_slots are the arena's, passed as constants by
 * try_any_shaped so that each shape compiles into its own loops.
 */
static inline __attribute__((always_inline)) int
try_any(ws_arena *arena, const struct ws_wait *wait, const uint32_t index_bits,
	const bool all_slots, uint32_t *index, bool *done)
{
	const uint32_t owner = wait->owner, count = wait->count;
	const ws_handle *handles = wait->objects;
	const struct scan_view view = { arena->objects, arena->slots, index_bits,
					(1u << index_bits) - 1, all_slots };
	uint64_t seen[WS_MAX_WAIT_OBJECTS];
	struct ws_object *where[WS_MAX_WAIT_OBJECTS];
	/*
	 * The same list as last time, and no close since: the handles after the
	 * chosen one need no check.  The count is read before the heads (a list
	 * found valid is kept with it) and again after them (memo.h).
	 */
	const bool memo = count >= WS_MEMO_MIN_HANDLES;
	const uint64_t closes = memo ? ws_closes_now(arena) : 0;
	const bool kept = memo && ws_memo_holds(arena, handles, count, closes, false);

	*done = false;
	for (int tries = 0; tries < WS_FAST_TRIES; tries++) {
		uint32_t first = UINT32_MAX, i, bad, slot;
		uint64_t head = 0, alert_head = 0;
		bool unsure = false, known_valid = false, locked = false;
		enum scan alert = SCAN_NOT_READY;
		int ret;

		WS_FAULT();
		if (wait->alert) {
			uint32_t s = wait->alert & view.index_mask;

			alert_head = out_of_range(view, s) ? 0 : view_head(view, s);
			alert = scan_one(view, wait->alert, owner, alert_head);
			if (alert == SCAN_CHECK || ws_head_type(alert_head) != WS_TYPE_EVENT) {
				ret = ws_handle_lookup(arena, wait->alert, WS_TYPE_EVENT, &slot,
						       &alert_head);
				if (ret)
					return ret;
				return 0; /* it changed under us: the locked path decides */
			}
		}
		for (i = skip_idle(view, handles, 0, count, seen, where); i < count;
		     i = skip_idle(view, handles, i + 1, count, seen, where)) {
			enum scan scan = scan_one(view, handles[i], owner, seen[i]);

			if (scan == SCAN_NOT_READY)
				continue;
			if (scan == SCAN_READY)
				first = i;
			else if (scan == SCAN_UNSURE)
				unsure = true;
			else
				break;
			i++;
			break;
		}
		/* The rest need only be valid handles. */
		if (i < count && first == UINT32_MAX && !unsure) {
			bad = i;
		} else {
			/* A close seen before the chosen object was signaled has moved it. */
			known_valid = kept && closes_after_heads(arena) == closes;
			bad = known_valid ? count : first_invalid(view, handles, i, count, &locked);
		}
		if (bad < count) {
			ret = ws_handle_lookup(arena, handles[bad], WS_TYPE_NONE, &slot, &head);
			if (ret)
				return ret;
			return 0; /* a race with a close and create: the locked path decides */
		}
		/* Kept only if no head was being edited: the prefix's were idle or ready. */
		if (memo && !known_valid && !unsure && !locked)
			ws_memo_keep(arena, handles, count, closes, false);
		if (unsure)
			return 0;
		if (first == UINT32_MAX) {
			if (alert != SCAN_READY)
				return 0;
			first = count;
			head = alert_head;
		} else {
			head = seen[first];
		}
		/* Something before the chosen one changed meanwhile: look again. */
		if (first > 0 && !unchanged(where, seen, first))
			continue;
		slot = (first < count ? handles[first] : wait->alert) & view.index_mask;
		ret = take_uncontended(arena, slot, head, owner);
		if (ret > 0) {
			if (ws_head_type(head) == WS_TYPE_MUTEX)
				return 0; /* recursion, or no record yet: locked path */
			continue;
		}
		*done = true;
		*index = first;
		return ret;
	}
	return 0;
}

/* try_single's verdicts, besides 0 (taken) and -errno. */
#define TRY_LOCKED 1   /* the locked path decides */
#define TRY_MANY   2   /* a mutex: try_any's path, which knows the owner's record */

/*
 * The uncontended path of a wait on one semaphore or event and no alert (a
 * WaitForSingleObject, the commonest wait): the head is read once and taken
 * by one compare-exchange, with no second look to make, no scan to set up
 * and no call (so no registers to save).  The same verdicts as try_any's on
 * one object.
 */
static inline __attribute__((always_inline)) int try_single(ws_arena *arena,
							     const struct ws_wait *wait,
							     uint32_t *index)
{
	const ws_handle handle = wait->objects[0];

	for (int tries = 0; tries < WS_FAST_TRIES; tries++) {
		uint32_t slot;
		uint64_t head;
		int ret;

		ret = ws_handle_lookup(arena, handle, WS_TYPE_NONE, &slot, &head);
		if (ret)
			return ret;
		if (ws_head_type(head) == WS_TYPE_MUTEX)
			return TRY_MANY;
		if ((ws_head_tag(head) & WS_HEAD_LOCKED) || !ws_valued_head_ready(head, wait->owner))
			return TRY_LOCKED;
		/* Not a mutex: its branch, and the call in it, compile away. */
		if (take_uncontended(arena, slot, head, wait->owner))
			continue; /* lost a race */
		*index = 0;
		return 0;
	}
	return TRY_LOCKED;
}

/*
 * A wait on a list this thread found valid before (memo.h), whose first
 * object is a ready semaphore or event: there is nothing before it to look
 * at twice and nothing after it to check, so it is taken as try_single
 * takes one object.  TRY_MANY for anything else: try_any decides.
 * The count of closes is read before the head and again after it: equal,
 * no handle of the list was closed before the head was read.
 */
static inline __attribute__((always_inline)) int try_first_known(ws_arena *arena,
								  const struct ws_wait *wait,
								  uint32_t *index)
{
	const uint64_t closes = ws_closes_now(arena);
	uint32_t slot;
	uint64_t head;

	WS_FAULT();
	/* The memo first: its compare is a call, with nothing of the head yet to keep across it. */
	if (!ws_memo_holds(arena, wait->objects, wait->count, closes, false) ||
	    ws_handle_lookup(arena, wait->objects[0], WS_TYPE_NONE, &slot, &head) ||
	    ws_head_type(head) == WS_TYPE_MUTEX || (ws_head_tag(head) & WS_HEAD_LOCKED) ||
	    !ws_valued_head_ready(head, wait->owner) ||
	    closes_after_heads(arena) != closes ||
	    take_uncontended(arena, slot, head, wait->owner))
		return TRY_MANY;
	*index = 0;
	return 0;
}

/*
 * The scan costs a few instructions per object (perf: its loops are 80 to
 * 85% of a wait on 64 objects), so constants count: a shift by a constant
 * rather than by a register, and no bounds check where every index is a
 * slot.  The two common shapes compile apart: the default capacity (2^16
 * slots, all indices valid) and the largest, a Wine prefix's (22 bits).
 */
static int try_any_shaped(ws_arena *arena, const struct ws_wait *wait, uint32_t *index,
			  bool *done)
{
	if (arena->index_bits == 16 && arena->slots == 1u << 16)
		return try_any(arena, wait, 16, true, index, done);
	if (arena->index_bits == 22)
		return try_any(arena, wait, 22, false, index, done);
	return try_any(arena, wait, arena->index_bits, false, index, done);
}

/*
 * Two entries for one object would let a wait_all take it twice: -EINVAL.
 * The alert may be one of the objects.  The handles are valid by now, so
 * two different handles of one slot mean a close raced the checks: -EBADF.
 * One pass over a small table of slots rather than a compare of every pair
 * (64 objects made 2,016 pairs: half of a wait_all's time).
 */
#define DISTINCT_TABLE 256 /* a power of two, over twice WS_MAX_WAIT_OBJECTS + 1 */
_Static_assert(DISTINCT_TABLE >= 2 * (WS_MAX_WAIT_OBJECTS + 1) && WS_MAX_WAIT_OBJECTS < 255,
	       "the table of check_distinct holds every entry, numbered in a byte");

static int check_distinct(ws_arena *arena, const struct wait_plan *plan)
{
	uint8_t table[DISTINCT_TABLE] = { 0 }; /* entry + 1; 0: free */

	for (uint32_t i = 0; i < plan->shape.entries; i++) {
		ws_handle handle = plan_handle(plan, i);
		uint32_t slot = ws_handle_slot(arena, handle);
		uint32_t at = (slot * 0x9e3779b1u) >> 24; /* Fibonacci hashing: the top 8 bits */
		bool twin = false;

		for (; table[at] && !twin; at = (at + 1) & (DISTINCT_TABLE - 1)) {
			ws_handle other = plan_handle(plan, table[at] - 1u);

			if (ws_handle_slot(arena, other) != slot)
				continue;
			if (other != handle)
				return -EBADF;
			if (i < plan->wait->count)
				return -EINVAL;
			twin = true; /* the alert, among the objects */
		}
		if (!twin)
			table[at] = (uint8_t)(i + 1);
	}
	return 0;
}

/* Takes entry i for the wait; a mutex taken notes its owner id and re-arms its waiters. */
static bool take_entry(struct ws_crit *c, const struct wait_plan *plan, uint32_t slot)
{
	struct ws_object *obj = &c->arena->objects[slot];
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);
	bool abandoned = ws_obj_take(obj, plan->wait->owner);

	if (ws_head_type(head) == WS_TYPE_MUTEX) {
		ws_record_note_owner(c->arena, c->self, plan->wait->owner);
		if (ws_head_tag(head) & WS_HEAD_QUEUED)
			ws_queue_rearm(c, slot, c->self);
	}
	return abandoned;
}

/* With every object locked: acquire what the wait can have now, if anything. */
static int acquire_locked(struct ws_crit *c, const struct wait_plan *plan, const uint32_t *slots,
			  uint32_t *index, bool *taken)
{
	const uint32_t owner = plan->wait->owner, count = plan->wait->count;
	struct ws_object *objects = c->arena->objects;
	bool abandoned = false, ready = true;
	uint32_t i;

	*taken = false;
	if (!plan->shape.all) {
		for (i = 0; i < plan->shape.entries; i++) {
			if (ws_obj_ready(&objects[slots[i]], owner)) {
				*taken = true;
				*index = i;
				return take_entry(c, plan, slots[i]) ? -EOWNERDEAD : 0;
			}
		}
		return 0;
	}
	for (i = 0; i < count && ready; i++)
		ready = ws_obj_ready(&objects[slots[i]], owner);
	if (ready) {
		for (i = 0; i < count; i++)
			abandoned |= take_entry(c, plan, slots[i]);
		*taken = true;
		*index = 0;
		return abandoned ? -EOWNERDEAD : 0;
	}
	if (plan->shape.entries > count && ws_obj_ready(&objects[slots[count]], owner)) {
		take_entry(c, plan, slots[count]);
		*taken = true;
		*index = count;
	}
	return 0;
}

/* Queues an entry of our record on each object (all locked), then arms the wait. */
static int enqueue(struct ws_crit *c, const struct wait_plan *plan, const uint32_t *slots)
{
	for (uint32_t i = 0; i < plan->shape.entries; i++) {
		int ret = ws_queue_link(c, slots[i], c->self, i);

		if (ret < 0)
			return ret;
	}
	ws_wait_arm(c->rec, &plan->shape);
	return 0;
}

/*
 * Looks after dead threads a blocked waiter may depend on: a dead holder of
 * the arena lock or of one of its objects' own locks (entering takes its
 * work over) and, with `records`, dead records nobody reaped.  Never waits
 * for a live holder: that one will finish.
 */
static void sweep(ws_arena *arena, const struct ws_record *rec, bool records)
{
	struct ws_crit c;

	for (uint32_t i = 0; i < WS_ENTRIES_PER_WAIT && i < rec->entries_used; i++)
		ws_crit_sweep_object(arena, ws_get(&rec->entries[i].object), true);
	if (!ws_lock_holder_dead(arena, ws_arena_lock(arena)) &&
	    !(records && ws_dead_records(arena)))
		return;
	if (ws_crit_try(arena, ws_arena_lock(arena), &c))
		return;
	if (records)
		ws_recover_and_reap(&c);
	ws_crit_leave(&c);
}

/* Whom a blocked wait watches for deaths, besides its own wake word (queue.h). */
struct watch {
	unsigned int count;
	struct ws_futex_word words[WS_FUTEX_WAITV_MAX];
	uint32_t ahead_count;              /* waiters queued ahead on our mutexes, at arm time */
	uint32_t ahead[WS_FUTEX_WAITV_MAX - 1];
	uint32_t mutex_count;              /* our mutexes: slot and generation, at arm time */
	uint32_t mutex_slot[WS_MAX_WAIT_OBJECTS];
	uint32_t mutex_gen[WS_MAX_WAIT_OBJECTS];
	bool dead;                         /* one of them is dead already: reap */
	bool unwatched;                    /* more to watch than a sleep takes: poll */
};
/* The owners of the mutexes this wait wants (noted at arm time) held by somebody else. */
static uint32_t foreign_owners(ws_arena *arena, const struct watch *w, uint32_t owner,
			       uint32_t *owners)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < w->mutex_count; i++) {
		const struct ws_object *obj = &arena->objects[w->mutex_slot[i]];
		uint64_t head = atomic_load_explicit(&obj->head, memory_order_acquire);
		uint32_t holder = ws_head_value(head), j;

		/* Freed since (closed, no longer held for us): nothing to own. */
		if (ws_queue_gen(obj, head) != w->mutex_gen[i] || ws_head_type(head) != WS_TYPE_MUTEX ||
		    holder == 0 || holder == owner)
			continue;
		for (j = 0; j < n && owners[j] != holder; j++)
			;
		if (j == n)
			owners[n++] = holder;
	}
	return n;
}


/* Adds record r's `alive` word (ws_record_watch), or notes that it is dead. */
static void watch_record(struct watch *w, ws_arena *arena, uint32_t r)
{
	_Atomic uint32_t *word = &arena->records[r].alive;
	uint32_t alive = atomic_load_explicit(word, memory_order_acquire);

	for (unsigned int i = 1; i < w->count; i++)
		if (w->words[i].addr == word)
			return;
	if (w->count == WS_FUTEX_WAITV_MAX && ws_liveness_of(alive) == WS_LIVE)
		w->unwatched = true;
	else if (ws_record_watch(word, &alive))
		w->words[w->count++] = (struct ws_futex_word){ word, alive, true };
	else if (ws_liveness_of(alive) == WS_DEAD)
		w->dead = true;
}

/*
 * The words a blocked wait sleeps on: its own wake word, then the `alive`
 * words of the waiters queued ahead of it on its mutexes and of the live
 * records that use the id of a mutex's owner now.  A death among them wakes
 * us; one found already makes w->dead.
 */
static void watch_words(ws_arena *arena, struct ws_record *rec, uint32_t self, struct watch *w)
{
	uint32_t owners[WS_MAX_WAIT_OBJECTS];
	uint32_t n = foreign_owners(arena, w, ws_get(&rec->wait_owner), owners), used;

	/* Shared: the kernel's dead-man wake of a hand-off is a shared wake. */
	w->words[0] = (struct ws_futex_word){ &rec->wake, 0, true };
	w->count = 1;
	w->dead = false;
	w->unwatched = false;
	for (uint32_t i = 0; i < w->ahead_count; i++)
		watch_record(w, arena, w->ahead[i]);
	if (!n)
		return;
	used = ws_records_used(arena);
	for (uint32_t r = 0; r < used; r++) {
		uint32_t owner = atomic_load_explicit(&arena->records[r].owner, memory_order_relaxed);
		uint32_t j;

		if (r == self || owner == 0)
			continue;
		for (j = 0; j < n && owners[j] != owner; j++)
			;
		if (j < n)
			watch_record(w, arena, r);
	}
}

static int block(ws_arena *arena, const struct wait_plan *plan, struct ws_record *rec,
		 uint32_t self, struct watch *w, uint32_t *index)
{
	bool try_only = arena->flags & WS_ARENA_NONBLOCK, reaped = false;
	bool spin = arena->flags & WS_ARENA_SPIN;

	/* Caught by polling: the loop's first look returns what was handed. */
	if (spin)
		ws_spin_for_hand_off(arena, rec, &plan->deadline);
	for (;;) {
		uint32_t state = ws_wait_state(rec);
		struct ws_deadline until;
		int64_t slice;
		int ret;

		if (state != WS_WAIT_PENDING) {
			ws_crit_wait_out(arena, state);
			return ws_wait_result(state, &plan->shape, index);
		}
		if (ws_deadline_passed(&plan->deadline)) {
			state = ws_wait_give_up(rec);
			if (state != WS_WAIT_GAVE_UP) /* handed just now */
				ws_crit_wait_out(arena, state);
			return ws_wait_result(state, &plan->shape, index);
		}
		watch_words(arena, rec, self, w);
		/* An owner of ours died: its mutexes are abandoned by the reap (once a sleep). */
		if (w->dead && !reaped) {
			reaped = ws_crit_reap(arena, try_only) == 0;
			if (reaped)
				continue;
		}
		reaped = false;
		slice = w->dead ? REAP_RETRY_NS : w->unwatched ? UNWATCHED_POLL_NS : BACKSTOP_NS;
		until = ws_deadline_bound(&plan->deadline, slice);
		WS_FAULT();
		int64_t slept = spin ? (int64_t)ws_clock_ns(WS_CLOCK_MONOTONIC) : 0;
		ret = ws_futex_wait(w->words, w->count, &until);
		WS_FAULT();
		state = ws_wait_state(rec);
		if (spin)
			ws_spin_slept((int64_t)ws_clock_ns(WS_CLOCK_MONOTONIC) - slept,
				      state != WS_WAIT_PENDING);
		if (state != WS_WAIT_PENDING) {
			/* The kernel's wake for a giver that died after our hand-off: its
			 * operation may owe others too, so finish it (one load if not). */
			sweep(arena, rec, false);
			ws_crit_wait_out(arena, state);
			return ws_wait_result(state, &plan->shape, index);
		}
		/* The backstop (or the poll of the unwatched): a dead-man wake that
		 * corruption lost, a death nobody saw. */
		if (ret == -ETIMEDOUT && ws_deadline_passed(&until) &&
		    !ws_deadline_passed(&plan->deadline))
			sweep(arena, rec, true);
		/* A dead-man wake with nothing handed yet: its giver's work is ours. */
		else if (ret == 0)
			sweep(arena, rec, false);
	}
}

/* At arm time, under the lock: the waiters queued ahead of us on our mutexes. */
static void watch_ahead(struct ws_crit *c, const struct wait_plan *plan, const uint32_t *slots,
			struct watch *w)
{
	uint32_t max = sizeof(w->ahead) / sizeof(w->ahead[0]);

	w->ahead_count = 0;
	w->mutex_count = 0;
	for (uint32_t i = 0; i < plan->wait->count; i++) {
		uint64_t head = atomic_load_explicit(&c->arena->objects[slots[i]].head,
						     memory_order_relaxed);

		if (ws_head_type(head) != WS_TYPE_MUTEX)
			continue;
		w->mutex_slot[w->mutex_count] = slots[i];
		w->mutex_gen[w->mutex_count++] = ws_head_gen(head);
		if (w->ahead_count < max)
			w->ahead_count += ws_queue_ahead(c, slots[i], c->self,
							 w->ahead + w->ahead_count,
							 max - w->ahead_count);
	}
}

/*
 * May a wait on one object queue under that object's own lock?  Only if
 * every entry our last waits may have left linked was linked to that
 * object: unlinking them locks their objects (queue.c).  Each entry names
 * the object it was last linked to until a wait of ours finds it unlinked;
 * only we write that.
 */
static bool last_wait_alone(const struct ws_record *rec, uint32_t slot)
{
	for (uint32_t k = 0; k < WS_ENTRIES_PER_WAIT; k++) {
		uint32_t object = ws_get(&rec->entries[k].object);

		if (object != slot && object != WS_ENTRY_NOWHERE)
			return false;
	}
	return true;
}

/* Locks, acquires or queues, under the object's own lock (`alone`) or the arena's. */
static int wait_in_section(ws_arena *arena, const struct wait_plan *plan, uint32_t *index,
			   bool alone)
{
	uint32_t slots[WS_ENTRIES_PER_WAIT];
	struct watch w;
	struct ws_crit c;
	bool taken = false, queued = false;
	int ret, result = 0;

	ret = alone ? ws_crit_enter_object(arena, ws_handle_slot(arena, plan_handle(plan, 0)), &c)
		    : ws_crit_enter(arena, ws_arena_lock(arena), &c);
	if (ret)
		return ret;
	ws_op_begin(&c, WS_OP_PLAIN, 0);
	for (uint32_t i = 0; ret >= 0 && i < plan->shape.entries; i++)
		ret = ws_obj_lock_handle(&c, plan_handle(plan, i), entry_type(plan, i), &slots[i]);
	/* What our last wait left queued goes next: the record is reused. */
	if (ret >= 0 && alone && !last_wait_alone(c.rec, c.object_slot))
		ret = c.error = WS_NEED_ARENA;
	else if (ret >= 0)
		ret = ws_queue_unlink_all(&c, c.self);
	if (ret >= 0) {
		ret = 0;
		result = acquire_locked(&c, plan, slots, index, &taken);
		if (!taken && ws_deadline_passed(&plan->deadline))
			result = -ETIMEDOUT;
		else if (!taken)
			ret = enqueue(&c, plan, slots);
		queued = !taken && result == 0 && ret == 0;
		if (queued)
			watch_ahead(&c, plan, slots, &w);
	}
	if (ret < 0)
		c.error = ret;
	ret = ws_commit(&c);
	if (ret)
		ws_wait_clear(c.rec); /* undone: no wait armed */
	ws_op_end(&c);
	ws_crit_leave(&c);
	if (ret)
		return ret;
	if (!queued)
		return result;
	return block(arena, plan, c.rec, c.self, &w, index);
}

static int wait_locked(ws_arena *arena, const struct wait_plan *plan, uint32_t *index)
{
	int ret = WS_NEED_ARENA;

	/* One object, no alert: that object's lock is enough. */
	if (plan->shape.entries == 1 && !plan->shape.all &&
	    ws_handle_slot(arena, plan_handle(plan, 0)) < arena->slots)
		ret = wait_in_section(arena, plan, index, true);
	if (ret == WS_NEED_ARENA)
		ret = wait_in_section(arena, plan, index, false);
	return ret;
}

/* Out of line, so that the path of one uncontended object keeps a small frame. */
static __attribute__((noinline)) int wait_any_locked(ws_arena *arena, const struct ws_wait *wait,
						     uint32_t *index)
{
	struct wait_plan plan;
	int ret;

	ret = plan_wait(wait, false, &plan);
	if (ret)
		return ret;
	return wait_locked(arena, &plan, index);
}

static __attribute__((noinline)) int wait_any_many(ws_arena *arena, const struct ws_wait *wait,
						   uint32_t *index)
{
	bool done;
	int ret;

	if (!wait->alert && wait->count >= WS_MEMO_MIN_HANDLES &&
	    try_first_known(arena, wait, index) == 0)
		return 0;
	ret = try_any_shaped(arena, wait, index, &done);
	if (done || ret)
		return ret;
	return wait_any_locked(arena, wait, index);
}

int ws_wait_any(ws_arena *arena, const struct ws_wait *wait, uint32_t *index)
{
	int ret;

	ret = check_wait(arena, wait, index);
	if (ret)
		return ret;
	if (wait->count != 1 || wait->alert)
		return wait_any_many(arena, wait, index);
	ret = try_single(arena, wait, index);
	if (ret == TRY_MANY)
		return wait_any_many(arena, wait, index);
	if (ret == TRY_LOCKED)
		return wait_any_locked(arena, wait, index);
	return ret;
}

/*
 * A wait_all's handles, in NT's order: every one valid (-EBADF), the alert
 * an event (-EINVAL), then no object twice (-EINVAL); before any wait.  A
 * list this thread found so since the last close of the arena needs only
 * its alert looked at (memo.h).
 */
static int check_wait_all_handles(ws_arena *arena, const struct wait_plan *plan)
{
	const struct ws_wait *wait = plan->wait;
	const bool memo = wait->count >= WS_MEMO_MIN_HANDLES;
	const uint64_t closes = memo ? ws_closes_now(arena) : 0;
	const bool known = memo && ws_memo_holds(arena, wait->objects, wait->count, closes, true);
	uint32_t slot;
	uint64_t head;
	uint32_t edited = 0; /* every head's tag, or'ed: was one LOCKED? */
	int ret;

	/* Known: only the alert, the last entry, is left. */
	for (uint32_t i = known ? wait->count : 0; i < plan->shape.entries; i++) {
		ret = ws_handle_lookup(arena, plan_handle(plan, i), entry_type(plan, i), &slot, &head);
		if (ret)
			return ret;
		edited |= ws_head_tag(head);
	}
	if (known)
		return 0;
	ret = check_distinct(arena, plan);
	/* Not kept while an object is being edited: it may be being closed (memo.h). */
	if (!ret && memo && !(edited & WS_HEAD_LOCKED))
		ws_memo_keep(arena, wait->objects, wait->count, closes, true);
	return ret;
}

int ws_wait_all(ws_arena *arena, const struct ws_wait *wait, uint32_t *index)
{
	struct wait_plan plan;
	int ret;

	ret = check_wait(arena, wait, index);
	if (!ret)
		ret = plan_wait(wait, true, &plan);
	if (ret)
		return ret;
	ret = check_wait_all_handles(arena, &plan);
	if (ret)
		return ret;
	return wait_locked(arena, &plan, index);
}
