/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A thread's wait as its record holds it: the only file that changes
 * record.state.  The transitions:
 *   IDLE/any -> PENDING      ws_wait_arm: the waiter itself, holding the lock,
 *                            once its entries are queued
 *   PENDING -> GOT|i, CANCELED
 *                            ws_wait_deliver: a lock holder handing it
 *                            something; the compare-exchange is the commit
 *                            of the holder's transaction (txn.c)
 *   PENDING -> GAVE_UP       ws_wait_give_up: the waiter at its deadline,
 *                            without the lock
 *   any -> IDLE              ws_wait_clear: the reaper of a dead record, or
 *                            the waiter when its queueing failed
 * Because the waiter and a giver each move the state with one
 * compare-exchange from PENDING, exactly one of them wins: a wait that
 * timed out was handed nothing, and a wait that was handed something did
 * not time out, with no lock on the waiter's side.
 */
#ifndef WINSYNC_WAITER_H
#define WINSYNC_WAITER_H

#include "arena.h"
#include "clock.h"

/* record.wake once the wait has been handed something (0 while it sleeps). */
#define WS_WAKE_DONE WS_FUTEX_OWNER_DIED

struct ws_wait_shape {
	uint32_t owner;       /* the id mutexes are acquired for */
	uint32_t count;       /* objects */
	uint32_t entries;     /* count, plus one with an alert */
	bool all;
	const struct ws_deadline *deadline; /* NULL: forever (recorded for inspectors) */
};

static inline uint32_t ws_wait_state(const struct ws_record *rec)
{
	return atomic_load_explicit(&rec->state, memory_order_acquire);
}

void ws_wait_arm(struct ws_record *rec, const struct ws_wait_shape *shape);
bool ws_wait_deliver(struct ws_record *rec, uint32_t state);
uint32_t ws_wait_give_up(struct ws_record *rec);
void ws_wait_clear(struct ws_record *rec);

/*
 * What a finished wait returns, from a state read in shared memory: an
 * index it could not have been handed (past its entries, or an object of a
 * wait_all other than the first) is corruption, not a success.
 */
int ws_wait_result(uint32_t state, const struct ws_wait_shape *shape, uint32_t *index);

#endif
