/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "crit.h"

#include <errno.h>

#include "fault.h"
#include "futex.h"
#include "lock.h"
#include "lockstats.h"
#include "os/os.h"
#include "reap.h"
#include "record.h"
#include "recover.h"
#include "slot.h"
#include "stats.h"

static void (*_Atomic suspend_hook)(void);

/* Leaves the section's bookkeeping; runs a suspension deferred meanwhile. */
static void leave_unlocked(void)
{
	struct ws_thread *t = ws_os_thread_peek();
	void (*hook)(void);

	atomic_signal_fence(memory_order_seq_cst);
	if (--t->critical == 0 && t->deferred) {
		t->deferred = 0;
		hook = atomic_load_explicit(&suspend_hook, memory_order_acquire);
		if (hook)
			hook();
	}
}

static int enter(ws_arena *arena, _Atomic uint32_t *lock, bool block, struct ws_crit *c)
{
	struct ws_thread *t = ws_os_thread();
	uint32_t taken_from, dead_holder;
	bool adopted, own_busy;
	int ret;

	ret = ws_self(arena, &c->self, &adopted);
	if (ret)
		return ret;
	c->arena = arena;
	c->lock = lock;
	c->object_slot = WS_CRIT_ARENA;
	c->committed = false;
	c->rolled_back = false;
	c->rec = &arena->records[c->self];
	c->log = &c->rec->log;
	c->ref = ws_record_ref(arena, c->self);
	c->robust_head = ws_robust_head();
	c->deferred_wake = NULL;
	c->guarding = false;
	c->rearm_count = 0;
	c->error = 0;
	/* In a critical section from the first attempt: a suspension waits for the way out. */
	t->critical++;
	atomic_signal_fence(memory_order_seq_cst);
	c->held_since = 0;
	/* Said before it is taken, unsaid after the release: see lock.c's holder_gone. */
	ws_put(&c->log->arena_lock, 1);
	if (ws_lock_stats_enabled())
		ws_lock_stats_taking(atomic_load_explicit(lock, memory_order_relaxed) != 0);
	ret = ws_lock_take(arena, lock, c->self, c->ref, block, &taken_from);
	if (ret) {
		ws_put(&c->log->arena_lock, 0);
		if (adopted)
			ws_self_give_back(arena, c->self);
		leave_unlocked();
		return ret;
	}
	if (ws_lock_stats_enabled())
		c->held_since = ws_clock_ns(WS_CLOCK_MONOTONIC);
	ws_stat_add(WS_STAT_LOCKED_CALLS);
	/* Numbered: a waiter handed its result here returns only once it is over. */
	atomic_fetch_add_explicit(&arena->header->sections, 1, memory_order_relaxed);
	WS_FAULT();
	/*
	 * Our own log left busy (the dead thread whose record we adopted) goes
	 * first: its sections bear our own name, which another's recovery that
	 * met one would take for a stale mark (txn.c's wait_object_section).
	 */
	own_busy = atomic_load_explicit(&c->log->state, memory_order_acquire) != WS_LOG_IDLE;
	if (own_busy)
		ws_recover(c, c->self);
	dead_holder = taken_from ? ws_ref_index(arena, taken_from) : UINT32_MAX;
	if (dead_holder != UINT32_MAX) {
		if (dead_holder != c->self || !own_busy)
			ws_recover(c, dead_holder);
		/* It may have died recovering another: that one's log is still busy. */
		ws_recover_orphans(c);
	}
	if (adopted)
		ws_reap_adopted(c);
	return 0;
}

/*
 * Puts right the lock word of object `slot`, which its taker found naming
 * `gone` (a dead holder, or a stale word): under the arena lock, so that one
 * thread at a time replays a dead holder's log.
 */
static int recover_object_lock(ws_arena *arena, uint32_t slot, uint32_t gone, bool block)
{
	_Atomic uint32_t *word = &arena->objects[slot].lock;
	struct ws_crit c;
	uint32_t seen, holder;
	int ret;

	ret = enter(arena, ws_arena_lock(arena), block, &c);
	if (ret)
		return ret;
	seen = atomic_load_explicit(word, memory_order_acquire);
	/* Unchanged: nobody took it since, so its holder is the one found gone. */
	if ((seen & ~WS_LOCK_CONTENDED) == (gone & ~WS_LOCK_CONTENDED) &&
	    ws_lock_seize(word, seen, c.ref)) {
		holder = ws_ref_index(arena, seen & ~WS_LOCK_CONTENDED);
		if (holder != UINT32_MAX && holder != c.self)
			ws_recover(&c, holder);
		ws_lock_release_seized(arena, word, c.ref);
	}
	ws_crit_leave(&c);
	return 0;
}

int ws_crit_enter_object(ws_arena *arena, uint32_t slot, struct ws_crit *c)
{
	bool block = !(arena->flags & WS_ARENA_NONBLOCK);

	for (;;) {
		struct ws_thread *t = ws_os_thread();
		uint32_t gone;
		bool adopted;
		int ret;

		ret = ws_self(arena, &c->self, &adopted);
		if (ret)
			return ret;
		/* A dead thread's duties are the arena lock's business. */
		if (adopted) {
			ws_self_give_back(arena, c->self);
			return WS_NEED_ARENA;
		}
		c->arena = arena;
		c->lock = &arena->objects[slot].lock;
		c->object_slot = slot;
		c->committed = false;
		c->rolled_back = false;
		c->rec = &arena->records[c->self];
		c->log = &c->rec->log;
		c->ref = ws_record_ref(arena, c->self);
		c->robust_head = ws_robust_head();
		c->deferred_wake = NULL;
		c->guarding = false;
		c->rearm_count = 0;
		c->error = 0;
		t->critical++;
		atomic_signal_fence(memory_order_seq_cst);
		c->held_since = 0;
		/* Named before it is taken: a recovery lets go a word that names the dead. */
		ws_put(&c->log->object_lock, slot + 1);
		atomic_signal_fence(memory_order_seq_cst);
		if (ws_lock_stats_enabled())
			ws_lock_stats_taking(atomic_load_explicit(c->lock, memory_order_relaxed) != 0);
		ret = ws_lock_take_object(arena, slot, c->self, c->ref, block, &gone);
		if (ret == 0) {
			if (ws_lock_stats_enabled())
				c->held_since = ws_clock_ns(WS_CLOCK_MONOTONIC);
			ws_stat_add(WS_STAT_LOCKED_CALLS);
			WS_FAULT();
			return 0;
		}
		ws_put(&c->log->object_lock, 0);
		leave_unlocked();
		if (ret != -EOWNERDEAD)
			return ret;
		ret = recover_object_lock(arena, slot, gone, block);
		if (ret)
			return ret;
	}
}

int ws_crit_enter(ws_arena *arena, _Atomic uint32_t *lock, struct ws_crit *c)
{
	return enter(arena, lock, !(arena->flags & WS_ARENA_NONBLOCK), c);
}

int ws_crit_try(ws_arena *arena, _Atomic uint32_t *lock, struct ws_crit *c)
{
	return enter(arena, lock, false, c);
}

void ws_crit_sweep_object(ws_arena *arena, uint32_t slot, bool try_only)
{
	uint32_t seen;

	if (slot >= arena->slots)
		return;
	seen = atomic_load_explicit(&arena->objects[slot].lock, memory_order_acquire);
	if (seen && !ws_ref_live(arena, seen & ~WS_LOCK_CONTENDED))
		recover_object_lock(arena, slot, seen, !try_only);
}

int ws_crit_reap(ws_arena *arena, bool try_only)
{
	struct ws_crit c;
	int ret;

	ret = enter(arena, ws_arena_lock(arena), !try_only && !(arena->flags & WS_ARENA_NONBLOCK),
		    &c);
	if (ret)
		return ret;
	ws_recover_and_reap(&c);
	ws_crit_leave(&c);
	return 0;
}

int ws_crit_hold_objects(struct ws_crit *c)
{
	uint32_t n = ws_slots_used(c->arena);

	for (uint32_t s = 0; s < n; s++) {
		uint32_t gone;
		int ret = ws_obj_take_word(c, s, &gone);

		if (ret)
			return ret;
		/* Whatever its holder left half done on the object, as the log says. */
		if (gone != UINT32_MAX)
			ws_recover(c, gone);
	}
	return 0;
}

void ws_crit_release_objects(struct ws_crit *c)
{
	uint32_t n = ws_slots_used(c->arena);

	for (uint32_t s = 0; s < n; s++)
		ws_obj_drop_word(c, s);
}

/* Waiters of ws_crit_wait_out learn the section is over. */
static void wake_section_waiters(ws_arena *arena)
{
	_Atomic uint32_t *sections = &arena->header->sections;

	/* After the lock's release (a full barrier): a waiter that set the flag
	 * before it is woken here, one that sets it after sees the lock free. */
	if (atomic_load_explicit(sections, memory_order_seq_cst) & WS_SECTIONS_WAITED) {
		atomic_fetch_and_explicit(sections, ~WS_SECTIONS_WAITED, memory_order_seq_cst);
		ws_futex_wake(sections, INT32_MAX, arena->shared);
	}
}

void ws_crit_leave(struct ws_crit *c)
{
	/* Sections on one object rolled back on our way: their operations finish now. */
	if (c->rolled_back) {
		c->rolled_back = false;
		ws_recover_orphans(c);
	}
	if (c->held_since)
		ws_lock_stats_released(c->held_since);
	ws_lock_release(c->arena, c->lock, c->self);
	if (c->object_slot != WS_CRIT_ARENA) {
		atomic_signal_fence(memory_order_seq_cst);
		ws_put(&c->log->object_lock, 0);
	} else {
		ws_put(&c->log->arena_lock, 0);
		wake_section_waiters(c->arena);
	}
	ws_guard_release(c);
	/* Waiters of mutexes that changed owner: they watch the new owner from now on. */
	for (uint32_t i = 0; i < c->rearm_count; i++)
		ws_futex_wake(&c->arena->records[c->rearm[i]].wake, 1, true);
	leave_unlocked();
}

/* A section's holder that died is noticed this soon (only while a section is waited out). */
#define WAIT_OUT_POLL_NS 100000000L

void ws_crit_wait_out(ws_arena *arena, uint32_t state)
{
	_Atomic uint32_t *sections = &arena->header->sections, *lock = ws_arena_lock(arena);
	const uint32_t bits = (1u << WS_WAIT_SECTION_BITS) - 1;
	uint32_t section = state >> WS_WAIT_SECTION_SHIFT;

	/* Handed by a section on one object: it handed nobody else. */
	if (!(state & WS_WAIT_IN_SECTION))
		return;
	for (;;) {
		uint32_t now = atomic_load_explicit(sections, memory_order_seq_cst);
		struct ws_futex_word word = { sections, now | WS_SECTIONS_WAITED, arena->shared };
		struct ws_deadline until;
		struct ws_crit c;

		if (((now ^ section) & bits) || !atomic_load_explicit(lock, memory_order_seq_cst))
			return;
		if (!(now & WS_SECTIONS_WAITED) &&
		    !atomic_compare_exchange_strong_explicit(sections, &now, now | WS_SECTIONS_WAITED,
							     memory_order_seq_cst,
							     memory_order_seq_cst))
			continue;
		/* Flagged before this look at the lock: its release will wake us. */
		if (!atomic_load_explicit(lock, memory_order_seq_cst))
			return;
		until = ws_deadline_after(WS_CLOCK_MONOTONIC, WAIT_OUT_POLL_NS);
		if (ws_futex_wait(&word, 1, &until) != -ETIMEDOUT || !ws_lock_holder_dead(arena, lock))
			continue;
		/* Its holder died in it: recovery, on the way in, finishes it. */
		if (ws_crit_enter(arena, lock, &c) == 0)
			ws_crit_leave(&c);
		return;
	}
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
