/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ws_wait_any and ws_wait_all.  A wait first tries to acquire without
 * queueing (the uncontended path: no system call).  Otherwise it takes a
 * waiter record, queues an entry on each object, and sleeps in one futex
 * wait over the objects' seq words until a signaler has handed it an object
 * (see queue.h) or its deadline passes.
 */
#include <errno.h>
#include <string.h>

#include "futex.h"
#include "lock.h"
#include "os/os.h"
#include "queue.h"

struct wait_plan {
	const struct ws_wait *wait;
	uint32_t handles[WS_ENTRIES_PER_WAITER]; /* the objects, then the alert */
	uint32_t entries;                         /* count, plus one with an alert */
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
	*index = (state & ~WS_WAITER_ABANDONED) - 1;
	return state & WS_WAITER_ABANDONED ? -EOWNERDEAD : 0;
}

/* Ends a pending wait; false if a signaler handed it something first. */
static bool give_up(struct ws_waiter *waiter)
{
	uint32_t pending = WS_WAITER_PENDING;

	return atomic_compare_exchange_strong_explicit(&waiter->state, &pending, WS_WAITER_GAVE_UP,
						       memory_order_acq_rel, memory_order_acquire);
}

/*
 * Sleeps while the wait is pending, until a signaler hands it something or
 * the deadline passes, then leaves every queue.  Returns the error that
 * ended an unsuccessful wait, 0 otherwise, and the final state.
 */
static int block(ws_arena *arena, const struct wait_plan *plan, uint32_t waiter_index,
		 uint32_t queued, uint32_t *state)
{
	struct ws_waiter *waiter = ws_waiter_at(arena, waiter_index);
	struct ws_futex_word words[WS_ENTRIES_PER_WAITER];
	int ret = 0;

	for (;;) {
		/* Read the seq words before the state: a hand-off bumps them after it. */
		for (uint32_t i = 0; i < queued; i++) {
			words[i].addr = &arena->objects[waiter->entries[i].object].seq;
			words[i].expected = atomic_load_explicit(words[i].addr, memory_order_acquire);
		}
		*state = atomic_load_explicit(&waiter->state, memory_order_acquire);
		if (*state != WS_WAITER_PENDING)
			break;
		ret = ws_futex_wait(words, queued, arena->shared, plan->wait->deadline, plan->clock);
		if (ret == -ETIMEDOUT && !deadline_passed(plan))
			ret = 0; /* the relative timeout of op 31 ran short of a REALTIME deadline */
		if (ret && ret != -EAGAIN && ret != -EINTR) {
			if (give_up(waiter)) {
				*state = WS_WAITER_GAVE_UP;
				break;
			}
			*state = atomic_load_explicit(&waiter->state, memory_order_acquire);
			ret = 0;
			break;
		}
		ret = 0;
	}
	for (uint32_t i = 0; i < queued; i++) {
		uint32_t object = waiter->entries[i].object;

		ws_queue_remove(arena, &arena->objects[object], object, ws_entry_id(waiter_index, i),
				waiter->wait_all && i < waiter->count);
	}
	return *state == WS_WAITER_GAVE_UP ? ret : 0;
}

/* Blocks if still pending, releases the record, and turns its state into the result. */
static int finish(ws_arena *arena, const struct wait_plan *plan, uint32_t waiter_index,
		  uint32_t queued, int ret, uint32_t *index)
{
	uint32_t state;
	int ended = block(arena, plan, waiter_index, queued, &state);

	ws_waiter_free(arena, waiter_index);
	if (ret)
		return ret;
	if (ended)
		return ended;
	return result_of(state, index);
}

static void init_waiter(struct ws_waiter *waiter, const struct wait_plan *plan, bool wait_all)
{
	atomic_store_explicit(&waiter->state, WS_WAITER_PENDING, memory_order_relaxed);
	waiter->owner = plan->wait->owner;
	waiter->count = plan->wait->count;
	waiter->wait_all = wait_all;
	waiter->has_alert = plan->wait->alert != 0;
	waiter->tid = ws_os_thread_id();
}

/*
 * Tries each object in order, then the alert; no queueing.  Objects that do
 * not look ready are not even locked: a poll of many objects stays cheap.
 */
static int try_any(ws_arena *arena, const struct wait_plan *plan, uint32_t *index, bool *taken)
{
	struct ws_object *objects[WS_ENTRIES_PER_WAITER];
	uint32_t i;
	int ret;

	*taken = false;
	/* Every handle is checked before anything is acquired. */
	for (i = 0; i < plan->entries; i++) {
		ret = ws_handle_peek(arena, plan->handles[i], entry_type(plan, i), &objects[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < plan->entries; i++) {
		struct ws_ref ref;

		if (!ws_object_ready(objects[i], plan->wait->owner))
			continue;
		ret = ws_ref_lock(arena, plan->handles[i], entry_type(plan, i), WS_LOCK_READ, &ref);
		if (ret)
			return ret;
		if (ws_object_ready(ref.obj, plan->wait->owner)) {
			bool abandoned = ws_object_take(ref.obj, plan->wait->owner);

			ws_ref_unlock(arena, &ref);
			*taken = true;
			*index = i;
			return abandoned ? -EOWNERDEAD : 0;
		}
		ws_ref_unlock(arena, &ref);
	}
	return 0;
}

int ws_wait_any(ws_arena *arena, const struct ws_wait *wait, uint32_t *index)
{
	struct wait_plan plan;
	struct ws_waiter *waiter;
	uint32_t waiter_index, queued = 0;
	bool taken;
	int ret;

	ret = plan_wait(arena, wait, index, &plan);
	if (ret)
		return ret;
	ret = try_any(arena, &plan, index, &taken);
	if (taken || ret)
		return ret;
	if (deadline_passed(&plan))
		return -ETIMEDOUT;

	ret = ws_waiter_alloc(arena, &waiter_index);
	if (ret)
		return ret;
	waiter = ws_waiter_at(arena, waiter_index);
	init_waiter(waiter, &plan, false);
	/*
	 * Queue on each object in turn, acquiring instead if it is ready by
	 * now; once queued somewhere, a signaler may already have chosen us.
	 */
	for (uint32_t i = 0; i < plan.entries; i++) {
		struct ws_ref ref;

		ret = ws_ref_lock(arena, plan.handles[i], entry_type(&plan, i), WS_LOCK_READ, &ref);
		if (ret)
			break;
		if (atomic_load_explicit(&waiter->state, memory_order_relaxed) != WS_WAITER_PENDING) {
			ws_ref_unlock(arena, &ref);
			break;
		}
		if (ws_object_ready(ref.obj, plan.wait->owner)) {
			uint32_t pending = WS_WAITER_PENDING;
			bool abandoned = ws_object_abandoned(ref.obj);

			if (atomic_compare_exchange_strong_explicit(
				    &waiter->state, &pending,
				    (i + 1) | (abandoned ? WS_WAITER_ABANDONED : 0),
				    memory_order_acq_rel, memory_order_relaxed))
				ws_object_take(ref.obj, plan.wait->owner);
			ws_ref_unlock(arena, &ref);
			break;
		}
		ws_queue_add(arena, &ref, ws_entry_id(waiter_index, i), false);
		queued++;
		ws_ref_unlock(arena, &ref);
	}
	/* A handle that went bad midway fails the wait, unless something was handed over. */
	if (ret && !give_up(waiter))
		ret = 0;
	return finish(arena, &plan, waiter_index, queued, ret, index);
}


/*
 * Two entries for one object would let a wait_all take it twice: -EINVAL.
 * Two different handles of one slot mean one is stale: -EBADF, found here
 * because locking the slot twice would deadlock.  The alert may be one of
 * the objects.
 */
static int check_distinct(const struct wait_plan *plan)
{
	for (uint32_t i = 0; i < plan->entries; i++) {
		for (uint32_t j = i + 1; j < plan->entries; j++) {
			if (ws_handle_index(plan->handles[i]) != ws_handle_index(plan->handles[j]))
				continue;
			if (plan->handles[i] != plan->handles[j])
				return -EBADF;
			if (j < plan->wait->count)
				return -EINVAL;
		}
	}
	return 0;
}

static void unlock_all(ws_arena *arena, struct ws_ref *refs, uint32_t locked,
		       const bool *alias)
{
	for (uint32_t i = 0; i < locked; i++)
		if (!alias[i])
			ws_ref_unlock(arena, &refs[i]);
	ws_unlock(&arena->header->all_lock, arena->shared);
}

int ws_wait_all(ws_arena *arena, const struct ws_wait *wait, uint32_t *index)
{
	struct ws_ref refs[WS_ENTRIES_PER_WAITER];
	bool alias[WS_ENTRIES_PER_WAITER] = { false };
	const uint32_t owner = wait ? wait->owner : 0;
	struct wait_plan plan;
	struct ws_waiter *waiter;
	uint32_t waiter_index, locked, count, i;
	bool ready = true, abandoned = false;
	int ret;

	ret = plan_wait(arena, wait, index, &plan);
	if (ret)
		return ret;
	ret = check_distinct(&plan);
	if (ret)
		return ret;
	count = wait->count;

	/* Holding the all_lock, this thread may lock several objects in any order. */
	ws_lock(&arena->header->all_lock, arena->shared);
	for (locked = 0; locked < plan.entries; locked++) {
		if (locked == count) {
			for (i = 0; i < count; i++)
				if (plan.handles[i] == wait->alert)
					break;
			if (i < count) {
				/* Locked already as an object; it must still be an event. */
				if (ws_object_type(refs[i].obj) != WS_TYPE_EVENT) {
					unlock_all(arena, refs, locked, alias);
					return -EINVAL;
				}
				refs[locked] = refs[i];
				alias[locked] = true;
				continue;
			}
		}
		ret = ws_ref_lock(arena, plan.handles[locked], entry_type(&plan, locked),
				  WS_LOCK_READ, &refs[locked]);
		if (ret) {
			unlock_all(arena, refs, locked, alias);
			return ret;
		}
	}
	for (i = 0; i < count && ready; i++)
		ready = ws_object_ready(refs[i].obj, owner);
	if (ready) {
		for (i = 0; i < count; i++)
			abandoned |= ws_object_take(refs[i].obj, owner);
		unlock_all(arena, refs, locked, alias);
		*index = 0;
		return abandoned ? -EOWNERDEAD : 0;
	}
	if (wait->alert && ws_object_ready(refs[count].obj, owner)) {
		ws_object_take(refs[count].obj, owner);
		unlock_all(arena, refs, locked, alias);
		*index = count;
		return 0;
	}
	ret = deadline_passed(&plan) ? -ETIMEDOUT : ws_waiter_alloc(arena, &waiter_index);
	if (ret) {
		unlock_all(arena, refs, locked, alias);
		return ret;
	}
	waiter = ws_waiter_at(arena, waiter_index);
	init_waiter(waiter, &plan, true);
	for (i = 0; i < plan.entries; i++)
		ws_queue_add(arena, &refs[i], ws_entry_id(waiter_index, i), i < count);
	unlock_all(arena, refs, locked, alias);
	return finish(arena, &plan, waiter_index, plan.entries, 0, index);
}
