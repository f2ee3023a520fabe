/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bounded adaptive spinning before a wait sleeps (WS_ARENA_SPIN).
 *
 * A hand-off to a sleeping waiter costs a wake-up across CPUs, several
 * microseconds on virtual CPUs; a waiter that polls its record's state for
 * a moment before it sleeps often sees the hand-off arrive first.  A wait
 * cannot tell which thread will signal it, so instead of asking whether the
 * signaler runs, each thread learns from its own waits: a poll that saw the
 * hand-off keeps a budget of at least twice what it took, one that did not
 * halves it, and below a floor the thread stops polling (and tries again
 * after SPIN_REPROBE waits).  The budget never exceeds what the thread's
 * own wake-ups cost (the low end of its sleeps that a hand-off ended), so a
 * poll that fails costs at most one more wake-up: at most twice the best.
 * Never on a thread that may use one CPU only: the signaler cannot run
 * while it polls.
 */
#ifndef WINSYNC_SPIN_H
#define WINSYNC_SPIN_H

#include "arena.h"
#include "clock.h"

/*
 * Polls rec's wait state within the thread's budget and the deadline: true
 * once it left PENDING.  Counted in WS_STAT_SPIN_CAUGHT and _MISSED.
 */
bool ws_spin_for_hand_off(ws_arena *arena, const struct ws_record *rec,
			  const struct ws_deadline *deadline);
/* A sleep of the spinning thread ended after slept_ns, by a hand-off or not. */
void ws_spin_slept(int64_t slept_ns, bool handed);

#endif
