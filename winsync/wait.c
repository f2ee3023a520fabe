/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ws_wait_any and ws_wait_all.
 *
 * A wait_any first scans its objects without the lock and takes the first
 * ready one with a compare-exchange of its head: the uncontended path, no
 * system call.  Otherwise (and for every wait_all) it enters the critical
 * section, locks its objects, and either acquires there or queues an entry
 * on each and sleeps on its record's own `wake` word until a signaler hands
 * it an object (queue.h) or its deadline passes.  A waiter on a mutex held
 * by someone else also wakes every 50 ms to look for dead threads, so that
 * a mutex whose owner died reaches it within 100 ms.
 */
#include "fault.h"
#include "futex.h"
#include "locked.h"
#include "os/os.h"
#include "queue.h"
#include "reap.h"
#include "thread.h"

/* How often a waiter on someone else's mutex looks for dead owners. */
#define OWNER_CHECK_NS 50000000L
/*
 * How often any blocked waiter looks for a dead lock holder that owed it
 * something: a backstop, for a dead-man wake (txn.h) that corruption lost.
 */
#define HOLDER_CHECK_NS 1000000000L

struct wait_plan {
	const struct ws_wait *wait;
	uint32_t entries;                        /* count, plus one with an alert */
	int clock;
};

/* Entry i: the objects, then the alert. */
static inline ws_handle plan_handle(const struct wait_plan *plan, uint32_t i)
{
	return i < plan->wait->count ? plan->wait->objects[i] : plan->wait->alert;
}

static int plan_wait(ws_arena *arena, const struct ws_wait *wait, uint32_t *index,
		     struct wait_plan *plan)
{
	if (!arena || !wait || !index || wait->count > WS_MAX_WAIT_OBJECTS || wait->owner == 0 ||
	    (wait->count && !wait->objects) || (wait->flags & ~WS_WAIT_REALTIME))
		return -EINVAL;
	if (wait->deadline && (wait->deadline->tv_nsec < 0 || wait->deadline->tv_nsec >= 1000000000))
		return -EINVAL;
	plan->wait = wait;
	plan->entries = wait->count + (wait->alert != 0);
	plan->clock = wait->flags & WS_WAIT_REALTIME ? WS_CLOCK_REALTIME : WS_CLOCK_MONOTONIC;
	return 0;
}

static enum ws_type entry_type(const struct wait_plan *plan, uint32_t i)
{
	return i == plan->wait->count ? WS_TYPE_EVENT : WS_TYPE_NONE;
}

static bool deadline_passed(const struct wait_plan *plan)
{
	const struct timespec *d = plan->wait->deadline;
	struct timespec now;

	if (!d)
		return false;
	ws_os_clock_now(plan->clock, &now);
	return now.tv_sec > d->tv_sec || (now.tv_sec == d->tv_sec && now.tv_nsec >= d->tv_nsec);
}

/*
 * The wait's outcome from its record's state, which is shared memory: an
 * index the wait could not have been handed (past its entries, or an object
 * of a wait_all other than the first) is corruption, not a success.
 */
static int result_of(const struct wait_plan *plan, bool all, uint32_t state, uint32_t *index)
{
	if (state & WS_WAIT_GOT) {
		uint32_t i = state & WS_WAIT_INDEX;

		if (i >= plan->entries || (all && i != 0 && i != plan->wait->count) ||
		    (state & ~(WS_WAIT_GOT | WS_WAIT_ABANDONED | WS_WAIT_INDEX)))
			return -EUCLEAN;
		*index = i;
		return state & WS_WAIT_ABANDONED ? -EOWNERDEAD : 0;
	}
	switch (state) {
	case WS_WAIT_GAVE_UP:
		return -ETIMEDOUT;
	case WS_WAIT_CANCELED:
		return -ECANCELED;
	default:
		return -EUCLEAN; /* somebody reset a wait that was ours */
	}
}

/* What the scan of try_any makes of one entry. */
enum scan {
	SCAN_NOT_READY,
	SCAN_READY,
	SCAN_LOCKED,   /* being edited: only the lock holder knows */
	SCAN_CHECK,    /* anything unusual: ws_handle_lookup says what */
};

/* What a scan needs of the arena, in registers rather than reloaded per object. */
struct scan_view {
	struct ws_object *objects;
	uint32_t slots;
	uint32_t index_bits;
	uint32_t index_mask;
};

/* Semaphores (01) and events (11) share the low type bit; mutexes (10) do not. */
#define TYPE_SEM_OR_EVENT (1u << WS_HEAD_TYPE_SHIFT)
_Static_assert((WS_TYPE_SEM & 1) && (WS_TYPE_EVENT & 1) && !(WS_TYPE_MUTEX & 1),
	       "the scan tells semaphores and events from the rest by one bit");
#define IDLE_KEY_MASK \
	((uint64_t)(WS_HEAD_GEN_MASK | WS_HEAD_LOCKED | TYPE_SEM_OR_EVENT) << 32 | 0xffffffffu)

/*
 * The first of handles[from, count) that is not plainly idle: a live
 * semaphore or event of the handle's generation, not being edited, with a
 * value of 0.  One masked compare per object: a wait on many objects, of
 * which few are ready, costs little more than a wait on one.
 */
static inline uint32_t skip_idle(struct scan_view v, const ws_handle *handles, uint32_t from,
				 uint32_t count)
{
	for (uint32_t i = from; i < count; i++) {
		ws_handle handle = handles[i];
		uint32_t s = handle & v.index_mask;
		uint64_t idle = (uint64_t)((handle >> v.index_bits) | TYPE_SEM_OR_EVENT) << 32;

		if (s >= v.slots ||
		    (atomic_load_explicit(&v.objects[s].head, memory_order_relaxed) &
		     IDLE_KEY_MASK) != idle)
			return i;
	}
	return count;
}

/*
 * Any entry, in full: a live object of the handle's generation, not being
 * edited, ready or not for `owner`.  The generation check also rules out
 * free and retired slots (a live slot's generation is never one a handle
 * of its past had).  The loads are relaxed: the scan only chooses, and the
 * compare-exchange that acts orders what follows.
 */
static inline enum scan scan_one(struct scan_view v, ws_handle handle, uint32_t owner,
				 uint32_t *slot, uint64_t *head)
{
	uint32_t s = handle & v.index_mask, tag, value;
	uint64_t h;

	if (s >= v.slots || handle == 0)
		return SCAN_CHECK;
	h = atomic_load_explicit(&v.objects[s].head, memory_order_relaxed);
	tag = ws_head_tag(h);
	value = ws_head_value(h);
	if ((tag & WS_HEAD_GEN_MASK) != handle >> v.index_bits || !(tag & WS_HEAD_TYPE_MASK))
		return SCAN_CHECK;
	*slot = s;
	*head = h;
	if (tag & WS_HEAD_LOCKED)
		return SCAN_LOCKED;
	if ((tag & WS_HEAD_TYPE_MASK) == (uint32_t)WS_TYPE_MUTEX << WS_HEAD_TYPE_SHIFT)
		return value == 0 || value == owner ? SCAN_READY : SCAN_NOT_READY;
	return value ? SCAN_READY : SCAN_NOT_READY;
}

/*
 * The uncontended path of wait_any: every handle is checked, then the
 * lowest-index ready object is taken with one compare-exchange.  *done is
 * false when the locked path must decide (nothing ready, an object being
 * edited, a recursive mutex acquisition), or after a lost race (*retry).
 */
static int try_any(ws_arena *arena, const struct wait_plan *plan, uint32_t *index, bool *done,
		   bool *retry)
{
	const uint32_t owner = plan->wait->owner, count = plan->wait->count;
	const ws_handle *handles = plan->wait->objects;
	const ws_handle alert = plan->wait->alert;
	const struct scan_view view = { arena->objects, arena->slots, arena->index_bits,
					(1u << arena->index_bits) - 1 };
	uint32_t first = UINT32_MAX, slot = 0, i;
	uint64_t head = 0;
	bool unsure = false;

	*done = false;
	*retry = false;
	for (i = skip_idle(view, handles, 0, count); i < plan->entries;
	     i = i + 1 < count ? skip_idle(view, handles, i + 1, count) : i + 1) {
		uint32_t s;
		uint64_t h;
		enum scan scan = scan_one(view, i < count ? handles[i] : alert, owner, &s, &h);

		if (scan == SCAN_NOT_READY)
			continue;
		if (scan == SCAN_CHECK || (i == plan->wait->count && ws_head_type(h) != WS_TYPE_EVENT)) {
			int ret = ws_handle_lookup(arena, plan_handle(plan, i), entry_type(plan, i),
						   &s, &h);

			if (ret)
				return ret;
			continue; /* a race with a close and create: the locked path decides */
		}
		if (first != UINT32_MAX || unsure)
			continue;
		if (scan == SCAN_LOCKED) {
			unsure = true;
		} else {
			first = i;
			slot = s;
			head = h;
		}
	}
	if (first == UINT32_MAX)
		return 0;

	struct ws_object *obj = &arena->objects[slot];
	enum ws_type type = ws_head_type(head);
	bool manual = type == WS_TYPE_EVENT && ws_get(&obj->aux);

	if (type == WS_TYPE_MUTEX) {
		uint32_t record;

		/* Recursion changes aux: locked path.  So does a thread with no record yet. */
		if (ws_head_value(head) != 0 || ws_self_cached(arena, &record))
			return 0;
		ws_self_owner(arena, record, owner);
	}
	if (!manual && !atomic_compare_exchange_strong_explicit(&obj->head, &head,
								ws_head_taken(head, owner, false),
								memory_order_acquire,
								memory_order_relaxed)) {
		*retry = true;
		return 0;
	}
	/* A manual event is not taken: an acquire load orders what follows the wait. */
	if (manual && atomic_load_explicit(&obj->head, memory_order_acquire) != head) {
		*retry = true;
		return 0;
	}
	WS_FAULT();
	*done = true;
	*index = first;
	return type == WS_TYPE_MUTEX && (ws_head_tag(head) & WS_HEAD_ABANDONED) ? -EOWNERDEAD : 0;
}

/*
 * Two entries for one object would let a wait_all take it twice: -EINVAL.
 * Two different handles of one slot mean one is stale: -EBADF.  The alert
 * may be one of the objects.
 */
static int check_distinct(ws_arena *arena, const struct wait_plan *plan)
{
	for (uint32_t i = 0; i < plan->entries; i++) {
		for (uint32_t j = i + 1; j < plan->entries; j++) {
			if (ws_handle_slot(arena, plan_handle(plan, i)) !=
			    ws_handle_slot(arena, plan_handle(plan, j)))
				continue;
			if (plan_handle(plan, i) != plan_handle(plan, j))
				return -EBADF;
			if (j < plan->wait->count)
				return -EINVAL;
		}
	}
	return 0;
}

/* With every object locked: acquire what the wait can have now, if anything. */
static int acquire_locked(ws_arena *arena, const struct wait_plan *plan, const uint32_t *slots,
			  bool all, uint32_t *index, bool *taken)
{
	const uint32_t owner = plan->wait->owner, count = plan->wait->count;
	bool abandoned = false, ready = true;
	uint32_t i;

	*taken = false;
	if (!all) {
		for (i = 0; i < plan->entries; i++) {
			if (ws_obj_ready(&arena->objects[slots[i]], owner)) {
				*taken = true;
				*index = i;
				return ws_obj_take(&arena->objects[slots[i]], owner) ? -EOWNERDEAD : 0;
			}
		}
		return 0;
	}
	for (i = 0; i < count && ready; i++)
		ready = ws_obj_ready(&arena->objects[slots[i]], owner);
	if (ready) {
		for (i = 0; i < count; i++)
			abandoned |= ws_obj_take(&arena->objects[slots[i]], owner);
		*taken = true;
		*index = 0;
		return abandoned ? -EOWNERDEAD : 0;
	}
	if (plan->entries > count && ws_obj_ready(&arena->objects[slots[count]], owner)) {
		ws_obj_take(&arena->objects[slots[count]], owner);
		*taken = true;
		*index = count;
	}
	return 0;
}

/* Queues an entry of our record on each object (all locked). */
static int enqueue(struct ws_crit *c, const struct wait_plan *plan, const uint32_t *slots,
		   bool all)
{
	ws_arena *arena = c->arena;
	struct ws_record *rec = c->rec;
	const uint32_t owner = plan->wait->owner;
	bool mutexes = false;
	int ret;

	for (uint32_t i = 0; i < plan->entries; i++) {
		uint64_t head = atomic_load_explicit(&arena->objects[slots[i]].head,
						     memory_order_relaxed);

		if (ws_head_type(head) == WS_TYPE_MUTEX && ws_head_value(head) != owner)
			mutexes = true;
	}
	ws_store(c, &rec->state, WS_WAIT_PENDING);
	ws_store(c, &rec->wake, 0);
	ws_store(c, &rec->wait_owner, owner);
	ws_store(c, &rec->count, plan->wait->count);
	ws_store(c, &rec->wait_all, all);
	ws_store(c, &rec->entries_used, plan->entries);
	ws_store(c, &rec->mutexes, mutexes);
	for (uint32_t i = 0; i < plan->entries; i++) {
		ret = ws_queue_link(c, slots[i], c->self, i);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Looks after dead threads a blocked waiter may be waiting for. */
static void sweep(ws_arena *arena, bool owners)
{
	struct ws_crit c;

	if (!ws_lock_holder_dead(arena) && !(owners && ws_dead_records(arena)))
		return;
	/* Entering recovers a dead holder's work. */
	if (ws_crit_enter_blocking(arena, &c))
		return;
	if (owners)
		ws_reap_dead(&c);
	ws_crit_leave(&c);
}

/* The deadline passed while pending: leave the queues, unless handed something first. */
static int give_up(ws_arena *arena, const struct wait_plan *plan, bool all, struct ws_record *rec,
		   uint32_t *index)
{
	struct ws_crit c;
	uint32_t state;
	int ret;

	ret = ws_crit_enter_blocking(arena, &c);
	if (ret)
		return ret;
	state = atomic_load_explicit(&rec->state, memory_order_acquire);
	if (state == WS_WAIT_PENDING) {
		ws_op_begin(&c, WS_OP_PLAIN, 0);
		ws_store(&c, &rec->state, WS_WAIT_GAVE_UP);
		ws_queue_unlink_all(&c, c.self);
		ret = ws_commit(&c);
		ws_op_end(&c);
		state = ret ? state : WS_WAIT_GAVE_UP;
	}
	ws_crit_leave(&c);
	return ret ? ret : result_of(plan, all, state, index);
}

static int block(ws_arena *arena, const struct wait_plan *plan, bool all, struct ws_record *rec,
		 uint32_t *index)
{
	for (;;) {
		uint32_t state = atomic_load_explicit(&rec->state, memory_order_acquire);
		/* Shared: the kernel's dead-man wake of a hand-off is a shared wake. */
		struct ws_futex_word word = { &rec->wake, 0, true };
		const struct timespec *until = plan->wait->deadline;
		int clock = plan->clock;
		struct timespec slice;

		if (state != WS_WAIT_PENDING)
			return result_of(plan, all, state, index);
		/* A slice ends early, on CLOCK_MONOTONIC; the deadline's clock may differ. */
		slice = ws_os_monotonic_after(rec->mutexes ? OWNER_CHECK_NS : HOLDER_CHECK_NS);
		if (!until || clock != WS_CLOCK_MONOTONIC || until->tv_sec > slice.tv_sec ||
		    (until->tv_sec == slice.tv_sec && until->tv_nsec > slice.tv_nsec)) {
			until = &slice;
			clock = WS_CLOCK_MONOTONIC;
		}
		WS_FAULT();
		ws_futex_wait(&word, 1, until, clock);
		WS_FAULT();
		state = atomic_load_explicit(&rec->state, memory_order_acquire);
		if (state != WS_WAIT_PENDING) {
			/* The kernel's wake for a giver that died after our hand-off: its
			 * operation may owe others too, so finish it (one load if not). */
			sweep(arena, false);
			return result_of(plan, all, state, index);
		}
		if (deadline_passed(plan))
			return give_up(arena, plan, all, rec, index);
		/* Spurious, a slice, or the kernel's wake for a hand-off whose giver died. */
		sweep(arena, rec->mutexes);
	}
}

static int wait_locked(ws_arena *arena, const struct wait_plan *plan, bool all, uint32_t *index)
{
	uint32_t slots[WS_ENTRIES_PER_WAIT];
	struct ws_crit c;
	bool taken = false, queued = false;
	int ret, result = 0;

	ret = ws_crit_enter(arena, &c);
	if (ret)
		return ret;
	ws_op_begin(&c, WS_OP_PLAIN, 0);
	/* What our last wait left queued goes first: the record is reused. */
	ret = ws_queue_unlink_all(&c, c.self);
	for (uint32_t i = 0; ret >= 0 && i < plan->entries; i++)
		ret = ws_obj_lock_handle(&c, plan_handle(plan, i), entry_type(plan, i), &slots[i]);
	if (ret >= 0) {
		ret = 0;
		/* An acquired mutex must find its owner id on a record, for its death. */
		ws_self_owner(arena, c.self, plan->wait->owner);
		result = acquire_locked(arena, plan, slots, all, index, &taken);
		if (!taken && deadline_passed(plan))
			result = -ETIMEDOUT;
		else if (!taken)
			ret = enqueue(&c, plan, slots, all);
		queued = !taken && result == 0 && ret == 0;
	}
	if (ret < 0)
		c.error = ret;
	else
		ret = ws_commit(&c);
	ws_op_end(&c);
	ws_crit_leave(&c);
	if (ret)
		return ret;
	if (!queued)
		return result;
	return block(arena, plan, all, c.rec, index);
}

int ws_wait_any(ws_arena *arena, const struct ws_wait *wait, uint32_t *index)
{
	struct wait_plan plan;
	bool done, retry = true;
	int ret;

	ret = plan_wait(arena, wait, index, &plan);
	if (ret)
		return ret;
	for (int i = 0; retry && i < WS_FAST_TRIES; i++) {
		ret = try_any(arena, &plan, index, &done, &retry);
		if (done || ret)
			return ret;
	}
	return wait_locked(arena, &plan, false, index);
}

int ws_wait_all(ws_arena *arena, const struct ws_wait *wait, uint32_t *index)
{
	struct wait_plan plan;
	int ret;

	ret = plan_wait(arena, wait, index, &plan);
	if (ret)
		return ret;
	ret = check_distinct(arena, &plan);
	if (ret)
		return ret;
	/* Handles first, as wait_any checks them: an invalid one fails before any wait. */
	for (uint32_t i = 0; i < plan.entries; i++) {
		uint32_t slot;
		uint64_t head;

		ret = ws_handle_lookup(arena, plan_handle(&plan, i), entry_type(&plan, i), &slot, &head);
		if (ret)
			return ret;
	}
	return wait_locked(arena, &plan, true, index);
}
