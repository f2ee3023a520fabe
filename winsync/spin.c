/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "spin.h"

#include "clock.h"
#include "os/os.h"
#include "stats.h"
#include "waiter.h"

#define SPIN_MIN_NS     500u      /* a budget below this is none */
#define SPIN_MAX_NS     50000u    /* whatever a thread's wake-ups cost */
#define SPIN_FIRST_NS   10000u    /* a thread's first guess of its wake-up's cost */
#define SPIN_REPROBE    64u       /* waits without polling before one polls again */
#define CPUS_REREAD     1024u     /* waits between two reads of the affinity */
#define POLLS_PER_CLOCK 64        /* state polls between two clock reads */

static uint32_t clamp(uint64_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : (uint32_t)v;
}

/* The thread's state, its CPUs read again now and then (a thread may be moved). */
static struct ws_spin_state *spin_state(void)
{
	struct ws_thread *t = ws_os_thread();
	struct ws_spin_state *s;

	if (!t)
		return NULL;
	s = &t->spin;
	if (!s->wake_ns) {
		s->wake_ns = SPIN_FIRST_NS;
		s->budget_ns = SPIN_FIRST_NS;
		s->cpus_age = CPUS_REREAD;
	}
	if (s->cpus_age++ >= CPUS_REREAD) {
		s->cpus_age = 0;
		s->cpus_many = ws_os_cpus_allowed() > 1;
	}
	return s;
}

bool ws_spin_for_hand_off(ws_arena *arena, const struct ws_record *rec,
			  const struct ws_deadline *deadline)
{
	struct ws_spin_state *s = (arena->flags & WS_ARENA_SPIN) ? spin_state() : NULL;
	uint32_t budget, until;
	struct timespec left;
	int64_t start, took;

	if (!s || !s->cpus_many)
		return false;
	budget = s->budget_ns;
	if (!budget) {
		if (++s->skipped < SPIN_REPROBE)
			return false;
		s->skipped = 0;
		budget = s->wake_ns;
	}
	/* Never past the wait's deadline. */
	until = budget;
	if (!deadline->forever) {
		if (ws_deadline_left(deadline, &left))
			return false;
		if (left.tv_sec == 0 && left.tv_nsec < (long)until)
			until = (uint32_t)left.tv_nsec;
	}
	start = ws_clock_ns(WS_CLOCK_MONOTONIC);
	for (;;) {
		for (int i = 0; i < POLLS_PER_CLOCK; i++) {
			if (ws_wait_state(rec) != WS_WAIT_PENDING)
				goto handed;
			ws_os_relax();
		}
		took = ws_clock_ns(WS_CLOCK_MONOTONIC) - start;
		if (took >= until)
			break;
	}
	ws_stat_add(WS_STAT_SPIN_MISSED);
	/* Cut short by the deadline, the poll says nothing of the budget. */
	if (until == budget)
		s->budget_ns = budget / 2 < SPIN_MIN_NS ? 0 : budget / 2;
	return false;
handed:
	ws_stat_add(WS_STAT_SPIN_CAUGHT);
	took = ws_clock_ns(WS_CLOCK_MONOTONIC) - start;
	/* Enough for what this one took, twice; never more than a wake-up costs. */
	if ((uint64_t)took * 2 > budget)
		budget = clamp((uint64_t)took * 2, SPIN_MIN_NS, s->wake_ns);
	s->budget_ns = budget;
	return true;
}

void ws_spin_slept(int64_t slept_ns, bool handed)
{
	struct ws_thread *t = ws_os_thread_peek();
	struct ws_spin_state *s;
	uint32_t ns;

	if (!t || !handed || slept_ns < 0)
		return;
	s = &t->spin;
	ns = clamp((uint64_t)slept_ns, SPIN_MIN_NS, SPIN_MAX_NS);
	/* The low end: quick to fall, slow to rise (most sleeps also wait for the signal). */
	if (ns < s->wake_ns)
		s->wake_ns = (s->wake_ns + ns) / 2;
	else
		s->wake_ns += (ns - s->wake_ns) / 64;
}
