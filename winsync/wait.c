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
#include <string.h>

#include "futex.h"
#include "locked.h"
#include "os/os.h"
#include "queue.h"
#include "reap.h"
#include "thread.h"

/* How often a waiter on someone else's mutex looks for dead owners. */
#define OWNER_CHECK_NS 50000000L

struct wait_plan {
	const struct ws_wait *wait;
	ws_handle handles[WS_ENTRIES_PER_WAIT]; /* the objects, then the alert */
	uint32_t entries;                        /* count, plus one with an alert */
	int clock;
};

static int plan_wait(ws_arena *arena, const struct ws_wait *wait, uint32_t *index,
		     struct wait_plan *plan)
{
	if (!arena || !wait || !index || wait->count > WS_MAX_WAIT_OBJECTS || wait->owner == 0 ||
	    (wait->count && !wait->objects) || (wait->flags & ~WS_WAIT_REALTIME))
		return -EINVAL;
	if (wait->deadline && (wait->deadline->tv_nsec < 0 || wait->deadline->tv_nsec >= 1000000000))
		return -EINVAL;
	plan->wait = wait;
	if (wait->count)
		memcpy(plan->handles, wait->objects, wait->count * sizeof(ws_handle));
	plan->entries = wait->count;
	if (wait->alert)
		plan->handles[plan->entries++] = wait->alert;
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

static int result_of(uint32_t state, uint32_t *index)
{
	if (state & WS_WAIT_GOT) {
		*index = state & WS_WAIT_INDEX;
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

/*
 * The uncontended path of wait_any: every handle is checked, then the
 * lowest-index ready object is taken with one compare-exchange.  *done is
 * false when the locked path must decide (nothing ready, an object being
 * edited, a recursive mutex acquisition), or after a lost race (*retry).
 */
static int try_any(ws_arena *arena, const struct wait_plan *plan, uint32_t *index, bool *done,
		   bool *retry)
{
	const uint32_t owner = plan->wait->owner;
	uint32_t slots[WS_ENTRIES_PER_WAIT], first = UINT32_MAX, i;
	uint64_t heads[WS_ENTRIES_PER_WAIT];
	bool unsure = false;
	int ret;

	*done = false;
	*retry = false;
	for (i = 0; i < plan->entries; i++) {
		ret = ws_handle_lookup(arena, plan->handles[i], entry_type(plan, i), &slots[i],
				       &heads[i]);
		if (ret)
			return ret;
		if (first != UINT32_MAX || unsure)
			continue;
		if (ws_head_tag(heads[i]) & WS_HEAD_LOCKED)
			unsure = true; /* it might be ready: only the lock holder knows */
		else if (ws_head_ready(heads[i], owner))
			first = i;
	}
	if (first == UINT32_MAX)
		return 0;

	struct ws_object *obj = &arena->objects[slots[first]];
	uint64_t head = heads[first];
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
			if (ws_handle_slot(arena, plan->handles[i]) !=
			    ws_handle_slot(arena, plan->handles[j]))
				continue;
			if (plan->handles[i] != plan->handles[j])
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
static int give_up(ws_arena *arena, struct ws_record *rec, uint32_t *index)
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
	return ret ? ret : result_of(state, index);
}

static int block(ws_arena *arena, const struct wait_plan *plan, struct ws_record *rec,
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
			return result_of(state, index);
		if (rec->mutexes) {
			ws_os_clock_now(WS_CLOCK_MONOTONIC, &slice);
			slice.tv_nsec += OWNER_CHECK_NS;
			if (slice.tv_nsec >= 1000000000L) {
				slice.tv_nsec -= 1000000000L;
				slice.tv_sec++;
			}
			if (!until || clock != WS_CLOCK_MONOTONIC || until->tv_sec > slice.tv_sec ||
			    (until->tv_sec == slice.tv_sec && until->tv_nsec > slice.tv_nsec)) {
				until = &slice;
				clock = WS_CLOCK_MONOTONIC;
			}
		}
		ws_futex_wait(&word, 1, until, clock);
		state = atomic_load_explicit(&rec->state, memory_order_acquire);
		if (state != WS_WAIT_PENDING)
			return result_of(state, index);
		if (deadline_passed(plan))
			return give_up(arena, rec, index);
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
		ret = ws_obj_lock_handle(&c, plan->handles[i], entry_type(plan, i), &slots[i]);
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
	return block(arena, plan, c.rec, index);
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

		ret = ws_handle_lookup(arena, plan.handles[i], entry_type(&plan, i), &slot, &head);
		if (ret)
			return ret;
	}
	return wait_locked(arena, &plan, true, index);
}
