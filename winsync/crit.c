/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "crit.h"

#include <errno.h>

#include "fault.h"
#include "futex.h"
#include "lock.h"
#include "os/os.h"
#include "reap.h"
#include "record.h"
#include "recover.h"
#include "stats.h"

static void (*_Atomic suspend_hook)(void);

/* Registers the thread and starts the section's bookkeeping; no lock yet. */
static int begin(ws_arena *arena, struct ws_crit *c, bool block, bool *adopted)
{
	struct ws_thread *t = ws_os_thread();
	int ret;

	ret = ws_self(arena, &c->self, adopted);
	if (ret)
		return ret;
	c->arena = arena;
	c->arena_held = false;
	c->block = block;
	c->object = WS_NO_SLOT;
	c->dead_holder = 0;
	c->dead_word = NULL;
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
	/* Odd while taking or holding a lock (lock.c: a word naming us names a holder). */
	atomic_fetch_add_explicit(&c->rec->holding, 1, memory_order_seq_cst);
	return 0;
}

/* After the last lock: the wakes the section owes, then a deferred suspension. */
static void end(struct ws_crit *c)
{
	struct ws_thread *t = ws_os_thread_peek();
	void (*hook)(void);

	atomic_fetch_add_explicit(&c->rec->holding, 1, memory_order_seq_cst);
	ws_guard_release(c);
	/* Waiters of mutexes that changed owner: they watch the new owner from now on. */
	for (uint32_t i = 0; i < c->rearm_count; i++)
		ws_futex_wake(&c->arena->records[c->rearm[i]].wake, 1, true);
	c->rearm_count = 0;
	atomic_signal_fence(memory_order_seq_cst);
	if (--t->critical == 0 && t->deferred) {
		t->deferred = 0;
		hook = atomic_load_explicit(&suspend_hook, memory_order_acquire);
		if (hook)
			hook();
	}
}

/* Takes the arena lock, finishing the work of a dead holder it is taken from. */
static int take_arena(struct ws_crit *c, bool block)
{
	ws_arena *arena = c->arena;
	uint32_t gone;
	int ret;

	ret = ws_lock_take(arena, ws_arena_lock(arena), c->ref, block, true, &gone);
	if (ret)
		return ret;
	c->arena_held = true;
	ws_stat_add(WS_STAT_LOCKED_CALLS);
	WS_FAULT();
	if (gone && ws_ref_index(arena, gone) != UINT32_MAX)
		ws_recover(c, ws_ref_index(arena, gone));
	/* Our own log left busy: the dead thread whose record we adopted. */
	if (atomic_load_explicit(&c->log->state, memory_order_acquire) != WS_LOG_IDLE ||
	    c->log->object)
		ws_recover(c, c->self);
	return 0;
}

static void release_arena(struct ws_crit *c)
{
	ws_lock_release(c->arena, ws_arena_lock(c->arena));
	c->arena_held = false;
}

/*
 * The dead (or vanished) holder `gone` of lock word `word`: its work is
 * finished under the arena lock (its log lists the objects it held), and
 * the word, if it still names it, freed.
 */
static int recover_holder(struct ws_crit *c, uint32_t gone, _Atomic uint32_t *word)
{
	bool held = c->arena_held;
	uint32_t r = ws_ref_index(c->arena, gone);
	int ret;

	if (!held) {
		ret = take_arena(c, c->block);
		if (ret)
			return ret;
	}
	if (r != UINT32_MAX)
		ws_recover(c, r);
	ws_lock_release_from(c->arena, word, gone);
	if (!held)
		release_arena(c);
	return 0;
}

/* The reaper's duties for a dead thread's record we adopted, before anything else. */
static int adopt(struct ws_crit *c)
{
	/* Its old wait may still look pending to signalers: not optional, so never -EAGAIN. */
	int ret = take_arena(c, true);

	if (ret)
		return ret;
	ws_reap_adopted(c);
	release_arena(c);
	return 0;
}

static int enter(ws_arena *arena, struct ws_crit *c, bool block)
{
	bool adopted;
	int ret = begin(arena, c, block, &adopted);

	if (ret)
		return ret;
	ret = take_arena(c, block);
	if (!ret && adopted)
		ws_reap_adopted(c);
	if (ret)
		end(c);
	return ret;
}

int ws_crit_enter(ws_arena *arena, struct ws_crit *c)
{
	return enter(arena, c, !(arena->flags & WS_ARENA_NONBLOCK));
}

int ws_crit_try(ws_arena *arena, struct ws_crit *c)
{
	return enter(arena, c, false);
}

int ws_crit_enter_object(ws_arena *arena, uint32_t slot, struct ws_crit *c)
{
	bool adopted;
	uint32_t gone;
	int ret;

	if (slot >= arena->slots)
		return -EUCLEAN;
	ret = begin(arena, c, !(arena->flags & WS_ARENA_NONBLOCK), &adopted);
	if (ret)
		return ret;
	ret = adopted ? adopt(c) : 0;
	while (!ret) {
		_Atomic uint32_t *word = &arena->objects[slot].lock;

		ret = ws_lock_take(arena, word, c->ref, c->block, false, &gone);
		if (ret != -EOWNERDEAD)
			break;
		ret = recover_holder(c, gone, word);
	}
	if (ret) {
		end(c);
		return ret;
	}
	/* Named in the log, for whoever finishes our work if we die here. */
	c->object = slot;
	c->log->object = slot + 1;
	ws_stat_add(WS_STAT_LOCKED_CALLS);
	WS_FAULT();
	return 0;
}

void ws_crit_release_objects(struct ws_crit *c, uint32_t count)
{
	for (uint32_t s = 0; s < count; s++)
		ws_lock_release_from(c->arena, &c->arena->objects[s].lock, c->ref);
}

int ws_crit_hold_objects(struct ws_crit *c, uint32_t count)
{
	ws_arena *arena = c->arena;

	for (uint32_t s = 0; s < count; s++) {
		_Atomic uint32_t *word = &arena->objects[s].lock;
		uint32_t gone;
		int ret = ws_lock_take(arena, word, c->ref, c->block, false, &gone);

		if (ret == 0)
			continue;
		/* Let go of all we hold: a dead holder's recovery may lock any of them. */
		ws_crit_release_objects(c, s);
		if (ret != -EOWNERDEAD)
			return ret;
		recover_holder(c, gone, word);
		s = UINT32_MAX; /* from the start */
	}
	return 0;
}

int ws_crit_register(ws_arena *arena, uint32_t *self)
{
	struct ws_crit c;
	bool adopted;
	int ret = begin(arena, &c, !(arena->flags & WS_ARENA_NONBLOCK), &adopted);

	if (ret)
		return ret;
	if (adopted)
		ret = adopt(&c);
	end(&c);
	*self = c.self;
	return ret;
}

bool ws_crit_recovered(struct ws_crit *c)
{
	return ws_recover_met(c);
}

void ws_crit_leave(struct ws_crit *c)
{
	if (c->object != WS_NO_SLOT) {
		c->log->object = 0;
		atomic_signal_fence(memory_order_seq_cst);
		ws_lock_release(c->arena, &c->arena->objects[c->object].lock);
		c->object = WS_NO_SLOT;
	}
	if (c->arena_held)
		release_arena(c);
	end(c);
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
