/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "lock.h"

#include <errno.h>

#include "fault.h"
#include "futex.h"
#include "os/os.h"
#include "reap.h"
#include "recover.h"
#include "stats.h"
#include "thread.h"
#include "txn.h"

/* Critical sections are a few hundred instructions: spin briefly first. */
#define LOCK_SPINS    100
/* How often a sleeper looks at the holder again, whatever wakes it. */
#define LOCK_CHECK_NS 100000000L

static void (*_Atomic suspend_hook)(void);

/* Follows a sleeper's view of one holder across its sleeps. */
struct holder_watch {
	uint32_t word;     /* the lock word when the suspicion started */
	uint32_t holding;  /* the holder's counter then */
	bool suspect;
};

/*
 * Is the holder named by the lock word `seen` gone?  Dead, its record
 * reused, out of range, or (the suspicion rule) not holding anything across
 * two looks with nothing changed in between.
 */
static bool holder_gone(ws_arena *arena, uint32_t seen, struct holder_watch *watch)
{
	uint32_t ref = seen & ~WS_LOCK_CONTENDED;
	struct ws_record *rec = ws_ref_record(arena, ref);
	uint32_t holding;

	if (!rec || (ws_get(&rec->generation) & WS_REF_GEN_MASK) != ref >> WS_REF_INDEX_BITS ||
	    ws_record_liveness(rec) != WS_LIVE)
		return true;
	holding = atomic_load_explicit(&rec->holding, memory_order_seq_cst);
	if (holding & 1) {
		watch->suspect = false;
		return false;
	}
	if (watch->suspect && watch->word == seen && watch->holding == holding)
		return true;
	watch->suspect = true;
	watch->word = seen;
	watch->holding = holding;
	return false;
}

bool ws_lock_holder_dead(ws_arena *arena)
{
	uint32_t seen = atomic_load_explicit(&arena->header->lock, memory_order_acquire);
	uint32_t ref = seen & ~WS_LOCK_CONTENDED;
	struct ws_record *rec;

	if (!seen)
		return false;
	rec = ws_ref_record(arena, ref);
	return !rec || (ws_get(&rec->generation) & WS_REF_GEN_MASK) != ref >> WS_REF_INDEX_BITS ||
	       ws_record_liveness(rec) != WS_LIVE;
}

/*
 * Sleeps until the lock word changes, the holder dies or 100 ms pass.  The
 * holder's `alive` word gets FUTEX_WAITERS so that the kernel wakes us when
 * it marks the death.
 */
static void sleep_on_holder(ws_arena *arena, uint32_t seen)
{
	struct ws_futex_word words[2] = {
		{ &arena->header->lock, seen, arena->shared },
	};
	unsigned int count = 1;
	struct ws_record *rec = ws_ref_record(arena, seen & ~WS_LOCK_CONTENDED);
	struct timespec slice = ws_os_monotonic_after(LOCK_CHECK_NS);

	if (rec && (arena->shared || ws_futex_mixed_flags())) {
		uint32_t alive = atomic_load_explicit(&rec->alive, memory_order_relaxed);

		if (ws_liveness_of(alive) == WS_LIVE &&
		    ((alive & WS_FUTEX_WAITERS) ||
		     atomic_compare_exchange_strong_explicit(&rec->alive, &alive,
							     alive | WS_FUTEX_WAITERS,
							     memory_order_relaxed,
							     memory_order_relaxed))) {
			/* The kernel wakes robust words as shared futexes. */
			words[count++] = (struct ws_futex_word){ &rec->alive,
								 alive | WS_FUTEX_WAITERS, true };
		}
	}
	ws_stat_add(WS_STAT_LOCK_SLEEPS);
	ws_futex_wait(words, count, &slice, WS_CLOCK_MONOTONIC);
}

/* Takes the lock for `c`; *took_over when the holder was gone. */
static int lock_arena(struct ws_crit *c, bool block, bool *took_over)
{
	ws_arena *arena = c->arena;
	_Atomic uint32_t *word = &arena->header->lock;
	struct holder_watch watch = { 0, 0, false };
	uint32_t seen = 0;

	*took_over = false;
	/* Odd while acquiring or holding: see holder_gone(). */
	atomic_fetch_add_explicit(&c->rec->holding, 1, memory_order_seq_cst);
	if (atomic_compare_exchange_strong_explicit(word, &seen, c->ref, memory_order_acquire,
						    memory_order_relaxed))
		return 0;
	for (int i = 0; i < LOCK_SPINS; i++) {
		ws_os_relax();
		seen = atomic_load_explicit(word, memory_order_relaxed);
		if (!seen && atomic_compare_exchange_weak_explicit(word, &seen, c->ref,
								   memory_order_acquire,
								   memory_order_relaxed))
			return 0;
	}
	for (;;) {
		seen = atomic_load_explicit(word, memory_order_relaxed);
		if (!seen) {
			/* Others may sleep too: keep the flag so that our unlock wakes one. */
			if (atomic_compare_exchange_weak_explicit(word, &seen,
								  c->ref | WS_LOCK_CONTENDED,
								  memory_order_acquire,
								  memory_order_relaxed))
				return 0;
			continue;
		}
		/* Our own name while we do not hold it: a predecessor of an adopted record. */
		if ((seen & ~WS_LOCK_CONTENDED) == c->ref || holder_gone(arena, seen, &watch)) {
			if (atomic_compare_exchange_strong_explicit(word, &seen,
								    c->ref | WS_LOCK_CONTENDED,
								    memory_order_acquire,
								    memory_order_relaxed)) {
				*took_over = true;
				return 0;
			}
			continue;
		}
		if (!block) {
			atomic_fetch_add_explicit(&c->rec->holding, 1, memory_order_seq_cst);
			return -EAGAIN;
		}
		if (!(seen & WS_LOCK_CONTENDED)) {
			if (!atomic_compare_exchange_weak_explicit(word, &seen,
								   seen | WS_LOCK_CONTENDED,
								   memory_order_relaxed,
								   memory_order_relaxed))
				continue;
			seen |= WS_LOCK_CONTENDED;
		}
		sleep_on_holder(arena, seen);
	}
}

static void unlock_arena(struct ws_crit *c)
{
	_Atomic uint32_t *word = &c->arena->header->lock;

	WS_FAULT();
	if (atomic_exchange_explicit(word, 0, memory_order_release) & WS_LOCK_CONTENDED)
		ws_futex_wake(word, 1, c->arena->shared);
	WS_FAULT();
	atomic_fetch_add_explicit(&c->rec->holding, 1, memory_order_seq_cst);
}

static int enter(ws_arena *arena, bool block, struct ws_crit *c)
{
	struct ws_thread *t = ws_os_thread();
	bool adopted, took_over;
	int ret;

	ret = ws_self(arena, &c->self, &adopted);
	if (ret)
		return ret;
	c->arena = arena;
	c->log = arena->log;
	c->rec = &arena->records[c->self];
	c->ref = ws_record_ref(arena, c->self);
	c->robust_head = ws_robust_head();
	c->deferred_wake = NULL;
	c->guarding = false;
	c->error = 0;
	/* In a critical section from the first attempt: a suspension waits for the way out. */
	t->critical++;
	atomic_signal_fence(memory_order_seq_cst);
	ret = lock_arena(c, block, &took_over);
	if (ret) {
		ws_crit_leave_unlocked(c);
		return ret;
	}
	ws_stat_add(WS_STAT_LOCKED_CALLS);
	WS_FAULT();
	if (took_over || atomic_load_explicit(&c->log->state, memory_order_acquire) != 0)
		ws_recover(c);
	if (adopted)
		ws_reap_adopted(c);
	return 0;
}

int ws_crit_enter(ws_arena *arena, struct ws_crit *c)
{
	return enter(arena, !(arena->flags & WS_ARENA_NONBLOCK), c);
}

int ws_crit_enter_blocking(ws_arena *arena, struct ws_crit *c)
{
	return enter(arena, true, c);
}

void ws_crit_leave_unlocked(struct ws_crit *c)
{
	struct ws_thread *t = ws_os_thread_peek();
	void (*hook)(void);

	(void)c;
	atomic_signal_fence(memory_order_seq_cst);
	if (--t->critical == 0 && t->deferred) {
		t->deferred = 0;
		hook = atomic_load_explicit(&suspend_hook, memory_order_acquire);
		if (hook)
			hook();
	}
}

void ws_crit_leave(struct ws_crit *c)
{
	unlock_arena(c);
	ws_guard_release(c);
	ws_crit_leave_unlocked(c);
}

bool ws_defer_suspend(void)
{
	struct ws_thread *t = ws_os_thread_peek();

	if (!t || !t->critical)
		return false;
	t->deferred = 1;
	return true;
}

void ws_set_suspend_hook(void (*hook)(void))
{
	atomic_store_explicit(&suspend_hook, hook, memory_order_release);
}

bool ws_in_critical_section(void)
{
	struct ws_thread *t = ws_os_thread_peek();

	return t && t->critical;
}
