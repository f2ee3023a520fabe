/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "lock.h"

#include <errno.h>

#include "clock.h"
#include "fault.h"
#include "futex.h"
#include "os/os.h"
#include "record.h"
#include "stats.h"

/* Critical sections are a few hundred instructions: spin briefly first. */
#define LOCK_SPINS    100
/* How often a sleeper looks at the holder again, whatever wakes it. */
#define LOCK_CHECK_NS 100000000L

/*
 * Does the log of record `rec` (whose ref is `ref`) name the word: the
 * arena's (object 0), or object `object` - 1's, which the arena lock's
 * holder may hold too?
 */
static bool log_names_word(ws_arena *arena, struct ws_record *rec, uint32_t ref, uint32_t object)
{
	bool arena_lock = ws_get(&rec->log.arena_lock);

	if (!object)
		return arena_lock;
	return ws_get(&rec->log.object_lock) == object ||
	       (arena_lock && (atomic_load_explicit(&arena->header->lock, memory_order_acquire) &
			       ~WS_LOCK_CONTENDED) == ref);
}

/*
 * Is the holder named by the lock word `seen` gone?  Dead, its record
 * reused, out of range, or (the suspicion rule) not holding anything across
 * two looks with nothing changed in between.  A live holder's generation
 * cannot change under it (record.h), so a mismatch is a death.
 */
static bool holder_gone(ws_arena *arena, uint32_t seen, struct ws_holder_watch *watch)
{
	uint32_t ref = seen & ~WS_LOCK_CONTENDED;
	struct ws_record *rec;
	uint32_t holding;

	if (!ws_ref_live(arena, ref))
		return true;
	rec = &arena->records[ws_ref_index(arena, ref)];
	/* Read before the look at what it holds: see below. */
	holding = atomic_load_explicit(&rec->holding, memory_order_seq_cst);
	/*
	 * A holder says so three ways: its counter is odd, its stamp is the
	 * counter's (both set before the take moves the counter, cleared
	 * after the release moved it again: take()), and its log names the
	 * word (an object's while it is in a section on that object; the
	 * arena's while it takes or holds that one, which may hold objects'
	 * words too).  Any one or two alone, scribbled, would keep a parked
	 * thread "holding" for ever.
	 *
	 * A live thread that does not say so, at two looks between which its
	 * counter did not move, is named by a stale (scribbled) word: it names
	 * the word before it takes it and moves the counter in between, and
	 * unnames it only after the release has moved the counter again, so
	 * it held the word at neither look nor in between.  The same look
	 * twice without the counter could be two holds of one thread that
	 * released and took the word again in between (the same word): taken
	 * over, that live holder's word would be given to another.  Nothing
	 * in this depends on the time between the looks, so the second comes
	 * at once (`fresh`): a scribbled word costs no sleep, and a busy live
	 * thread named by one has little time to move its counter.  Sleepers'
	 * flag apart: it says who sleeps, not who holds.
	 */
	if ((holding & 1) &&
	    atomic_load_explicit(&rec->holding_stamp, memory_order_relaxed) ==
		    ws_lock_stamp(holding) &&
	    log_names_word(arena, rec, ref, watch->object)) {
		watch->suspect = false;
		return false;
	}
	if (watch->suspect && !((watch->word ^ seen) & ~WS_LOCK_CONTENDED) &&
	    watch->holding == holding)
		return true;
	watch->suspect = true;
	watch->fresh = true;
	watch->word = seen;
	watch->holding = holding;
	return false;
}

/* A suspicion that began at the last look is looked at again at once. */
static bool look_again(struct ws_holder_watch *watch)
{
	bool fresh = watch->suspect && watch->fresh;

	watch->fresh = false;
	return fresh;
}

bool ws_lock_holder_dead(ws_arena *arena, _Atomic uint32_t *word)
{
	uint32_t seen = atomic_load_explicit(word, memory_order_acquire);

	return seen && !ws_ref_live(arena, seen & ~WS_LOCK_CONTENDED);
}

/*
 * Sleeps until the lock word changes, the holder dies or 100 ms pass.  The
 * holder's `alive` word gets FUTEX_WAITERS so that the kernel wakes us when
 * it marks the death.
 */
static int sleep_on_holder(ws_arena *arena, _Atomic uint32_t *word, uint32_t seen)
{
	struct ws_futex_word words[2] = {
		{ word, seen, arena->shared },
	};
	unsigned int count = 1;
	uint32_t r = ws_ref_index(arena, seen & ~WS_LOCK_CONTENDED);
	struct ws_deadline slice = ws_deadline_after(WS_CLOCK_MONOTONIC, LOCK_CHECK_NS);
	int ret;

	if (r != UINT32_MAX && (arena->shared || ws_futex_mixed_flags())) {
		struct ws_record *rec = &arena->records[r];
		uint32_t alive = atomic_load_explicit(&rec->alive, memory_order_relaxed);

		/* Gone already: the caller's next look takes the lock over, no sleep. */
		if (!ws_record_watch(&rec->alive, &alive))
			return -EAGAIN;
		/* The kernel wakes robust words as shared futexes. */
		words[count++] = (struct ws_futex_word){ &rec->alive, alive, true };
	}
	ws_stat_add(WS_STAT_LOCK_SLEEPS);
	ret = ws_futex_wait(words, count, &slice);
	if (ret == -ETIMEDOUT)
		ws_stat_add(WS_STAT_LOCK_SLICES);
	return ret;
}

/* Even again (holding nothing), then unstamped: the reverse of the take's order. */
static void let_go(struct ws_record *rec)
{
	atomic_fetch_add_explicit(&rec->holding, 1, memory_order_seq_cst);
	atomic_store_explicit(&rec->holding_stamp, 0, memory_order_relaxed);
}

/* Takes `word`; one whose holder is gone is taken over, or with !takeover left alone (-EOWNERDEAD). */
static int take(ws_arena *arena, _Atomic uint32_t *word, uint32_t self, uint32_t ref, bool block,
		struct ws_holder_watch watch, uint32_t *taken_from)
{
	struct ws_record *rec = &arena->records[self];
	_Atomic uint32_t *holding = &rec->holding;
	bool takeover = !watch.object, relooked = false, inherited;
	uint32_t seen = 0, counter;

	*taken_from = 0;
	/*
	 * Odd while taking or holding: see holder_gone().  Odd already only in
	 * a record just adopted from a thread that died taking or holding a
	 * lock (record.c): what it held is ours, and stays held, even if this
	 * take fails, until the record is given back or its holds recovered.
	 * The stamp first: whoever reads the counter's new value reads it too
	 * (the seq_cst add publishes it).
	 */
	counter = atomic_load_explicit(holding, memory_order_relaxed);
	inherited = counter & 1;
	atomic_store_explicit(&rec->holding_stamp, ws_lock_stamp(counter | 1),
			      memory_order_relaxed);
	if (!inherited)
		atomic_fetch_add_explicit(holding, 1, memory_order_seq_cst);
	if (atomic_compare_exchange_strong_explicit(word, &seen, ref, memory_order_acquire,
						    memory_order_relaxed))
		return 0;
	for (int i = 0; i < LOCK_SPINS; i++) {
		ws_os_relax();
		seen = atomic_load_explicit(word, memory_order_relaxed);
		if (!seen && atomic_compare_exchange_weak_explicit(word, &seen, ref,
								   memory_order_acquire,
								   memory_order_relaxed))
			return 0;
	}
	for (;;) {
		seen = atomic_load_explicit(word, memory_order_relaxed);
		if (!seen) {
			/* Others may sleep too: keep the flag so that our release wakes one. */
			if (atomic_compare_exchange_weak_explicit(word, &seen,
								  ref | WS_LOCK_CONTENDED,
								  memory_order_acquire,
								  memory_order_relaxed))
				return 0;
			continue;
		}
		/* Our own name while we do not hold it: a predecessor of an adopted record. */
		if ((seen & ~WS_LOCK_CONTENDED) == ref || holder_gone(arena, seen, &watch)) {
			if (!takeover) {
				if (!inherited)
					let_go(rec);
				*taken_from = seen;
				return -EOWNERDEAD;
			}
			if (atomic_compare_exchange_strong_explicit(word, &seen,
								    ref | WS_LOCK_CONTENDED,
								    memory_order_acquire,
								    memory_order_relaxed)) {
				*taken_from = seen & ~WS_LOCK_CONTENDED;
				return 0;
			}
			continue;
		}
		/* Once between sleeps: a busy holder's counter may move at every look. */
		if (!relooked && look_again(&watch)) {
			relooked = true;
			continue;
		}
		if (!block) {
			if (!inherited)
				let_go(rec);
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
		sleep_on_holder(arena, word, seen);
		relooked = false;
	}
}

int ws_lock_take(ws_arena *arena, _Atomic uint32_t *word, uint32_t self, uint32_t ref, bool block,
		 uint32_t *taken_from)
{
	return take(arena, word, self, ref, block, WS_HOLDER_WATCH(0), taken_from);
}

int ws_lock_take_object(ws_arena *arena, uint32_t slot, uint32_t self, uint32_t ref, bool block,
			uint32_t *gone)
{
	return take(arena, &arena->objects[slot].lock, self, ref, block, WS_HOLDER_WATCH(slot + 1),
		    gone);
}

bool ws_lock_seize(_Atomic uint32_t *word, uint32_t seen, uint32_t ref)
{
	return atomic_compare_exchange_strong_explicit(word, &seen, ref | WS_LOCK_CONTENDED,
						       memory_order_acquire, memory_order_relaxed);
}

void ws_lock_release_seized(ws_arena *arena, _Atomic uint32_t *word, uint32_t ref)
{
	uint32_t seen = atomic_load_explicit(word, memory_order_relaxed);

	WS_FAULT();
	if ((seen & ~WS_LOCK_CONTENDED) != ref ||
	    !atomic_compare_exchange_strong_explicit(word, &seen, 0, memory_order_release,
						     memory_order_relaxed))
		return;
	/* Sleepers may have come while the dead holder had it: wake one. */
	ws_futex_wake(word, 1, arena->shared);
}

bool ws_lock_wait_holder(ws_arena *arena, _Atomic uint32_t *word, uint32_t seen,
			 struct ws_holder_watch *watch)
{
	if (holder_gone(arena, seen, watch))
		return true;
	if (look_again(watch)) {
		if (atomic_load_explicit(word, memory_order_acquire) != seen)
			return false;
		if (holder_gone(arena, seen, watch))
			return true;
	}
	for (int i = 0; i < LOCK_SPINS; i++) {
		ws_os_relax();
		if (atomic_load_explicit(word, memory_order_relaxed) != seen)
			return false;
	}
	if (!(seen & WS_LOCK_CONTENDED)) {
		if (!atomic_compare_exchange_strong_explicit(word, &seen, seen | WS_LOCK_CONTENDED,
							     memory_order_relaxed,
							     memory_order_relaxed))
			return false;
		seen |= WS_LOCK_CONTENDED;
	}
	/* 0: woken by a wake (a release's, or the holder's death). */
	if (sleep_on_holder(arena, word, seen) == 0)
		watch->woken = true;
	return false;
}

void ws_lock_pass_wake(ws_arena *arena, _Atomic uint32_t *word, struct ws_holder_watch *watch)
{
	if (!watch->woken)
		return;
	watch->woken = false;
	ws_futex_wake(word, 1, arena->shared);
}

void ws_lock_release(ws_arena *arena, _Atomic uint32_t *word, uint32_t self)
{
	WS_FAULT();
	if (atomic_exchange_explicit(word, 0, memory_order_release) & WS_LOCK_CONTENDED)
		ws_futex_wake(word, 1, arena->shared);
	WS_FAULT();
	let_go(&arena->records[self]);
}
