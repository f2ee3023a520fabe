/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "waiter.h"

#include <errno.h>

#include "fault.h"

/*
 * What an inspector shows of the wait (snapshot.c), bracketed by the serial
 * it checks: the serial moves first, then the fields, then PENDING.
 */
static void describe(struct ws_record *rec, const struct ws_wait_shape *shape)
{
	const struct ws_deadline *d = shape->deadline;

	atomic_store_explicit(&rec->wait_serial, ws_get(&rec->wait_serial) + 1,
			      memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	rec->wait_clock = !d || d->forever		? WS_WAIT_CLOCK_FOREVER :
			  d->clock == WS_CLOCK_REALTIME ? WS_WAIT_CLOCK_REALTIME :
							  WS_WAIT_CLOCK_MONOTONIC;
	rec->wait_deadline = d ? ws_deadline_ns(d) : 0;
	rec->wait_since = ws_clock_ns(WS_CLOCK_MONOTONIC);
}

void ws_wait_arm(struct ws_record *rec, const struct ws_wait_shape *shape)
{
	describe(rec, shape);
	atomic_store_explicit(&rec->wake, 0, memory_order_relaxed);
	atomic_store_explicit(&rec->wait_owner, shape->owner, memory_order_relaxed);
	rec->count = shape->count;
	rec->wait_all = shape->all;
	rec->entries_used = shape->entries;
	/* Last: givers read the fields above once they see PENDING (under the lock). */
	atomic_store_explicit(&rec->state, WS_WAIT_PENDING, memory_order_release);
}

bool ws_wait_deliver(struct ws_record *rec, uint32_t state)
{
	uint32_t pending = WS_WAIT_PENDING;

	if (!atomic_compare_exchange_strong_explicit(&rec->state, &pending, state,
						     memory_order_acq_rel, memory_order_acquire) &&
	    pending != state)
		return false;
	WS_FAULT();
	atomic_store_explicit(&rec->wake, WS_WAKE_DONE, memory_order_release);
	return true;
}

uint32_t ws_wait_give_up(struct ws_record *rec)
{
	uint32_t state = WS_WAIT_PENDING;

	if (atomic_compare_exchange_strong_explicit(&rec->state, &state, WS_WAIT_GAVE_UP,
						    memory_order_acq_rel, memory_order_acquire))
		return WS_WAIT_GAVE_UP;
	return state;
}

void ws_wait_clear(struct ws_record *rec)
{
	if (atomic_load_explicit(&rec->state, memory_order_relaxed) != WS_WAIT_IDLE)
		atomic_store_explicit(&rec->state, WS_WAIT_IDLE, memory_order_release);
}

int ws_wait_result(uint32_t state, const struct ws_wait_shape *shape, uint32_t *index)
{
	/* Which section handed it is the waiter's business (crit.h), not the result. */
	if (state & WS_WAIT_IN_SECTION)
		state &= ~WS_WAIT_IN_SECTION & ((1u << WS_WAIT_SECTION_SHIFT) - 1);
	if (state & WS_WAIT_GOT) {
		uint32_t i = state & WS_WAIT_INDEX;

		if (i >= shape->entries || (shape->all && i != 0 && i != shape->count) ||
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
