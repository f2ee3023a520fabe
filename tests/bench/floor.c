/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The floor rows: the least an exact set + wait can do, on plain words.
 *
 * Each object is one 64-bit head per cache line, in the arena's format as
 * far as these rows need it: a value, a 16-bit generation, an 11-bit stamp
 * that every write moves on (so that two equal reads mean no change) and a
 * type.  A set or take reads the head, checks generation and type in one
 * compare, and writes it with one compare-exchange; nothing else (no
 * arguments checked, no busy flags, no mutexes, no alert, no locked path,
 * no fault points).  The set and the take are separate functions kept out
 * of line, as a library's are (without its PLT jump, so the floor is, if
 * anything, low).  A target below a floor row's ratio asks for less work
 * than the rules leave.
 */
#include "floor.h"
#include "bench.h"
#include "json.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define GEN_BITS 16
#define GEN_MASK ((1u << GEN_BITS) - 1)
#define STAMP_ONE (1u << GEN_BITS)
#define STAMP_MASK (((1u << 27) - 1) & ~GEN_MASK)
#define TYPE_EVENT (3u << 27)
#define IDENTITY_MASK (GEN_MASK | TYPE_EVENT)

struct floor_object {
	_Alignas(64) _Atomic uint64_t head;
};

static struct floor_object objects[FLOOR_OBJECTS];
static uint32_t handles[FLOOR_OBJECTS];
static uint32_t kept[FLOOR_OBJECTS]; /* the list last found valid */

static inline uint32_t tag_of(uint64_t head)
{
	return (uint32_t)(head >> 32);
}

/* The head with `value` and the next stamp. */
static inline uint64_t restamped(uint64_t head, uint32_t value)
{
	uint32_t tag = tag_of(head);

	tag = (tag & ~STAMP_MASK) | ((tag + STAMP_ONE) & STAMP_MASK);
	return (uint64_t)tag << 32 | value;
}

/* The handle names a live event of its generation. */
static inline bool valid(uint32_t handle, uint64_t head)
{
	return (tag_of(head) & IDENTITY_MASK) == ((handle >> 16) | TYPE_EVENT);
}

/* 0, or -1 for a handle that names no live event. */
static __attribute__((noinline)) int floor_set(uint32_t handle)
{
	_Atomic uint64_t *word = &objects[handle & 0xffff].head;
	uint64_t head = atomic_load_explicit(word, memory_order_relaxed);

	do {
		if (!valid(handle, head))
			return -1;
	} while (!atomic_compare_exchange_weak_explicit(word, &head, restamped(head, 1),
						       memory_order_release, memory_order_relaxed));
	return 0;
}

static inline bool take(_Atomic uint64_t *word, uint64_t head)
{
	return atomic_compare_exchange_strong_explicit(word, &head, restamped(head, 0),
						       memory_order_acquire, memory_order_relaxed);
}

/* Takes one event: 0, 1 (not signaled) or -1 (invalid). */
static __attribute__((noinline)) int floor_take(uint32_t handle)
{
	_Atomic uint64_t *word = &objects[handle & 0xffff].head;

	for (;;) {
		uint64_t head = atomic_load_explicit(word, memory_order_relaxed);

		if (!valid(handle, head))
			return -1;
		if (!(uint32_t)head)
			return 1;
		if (take(word, head))
			return 0;
	}
}

/* The first of list[0, count) not idle: one masked compare per object, heads kept. */
static inline uint32_t first_not_idle(const uint32_t *list, uint32_t count, uint64_t *seen)
{
	for (uint32_t i = 0; i < count; i++) {
		uint64_t idle = (uint64_t)((list[i] >> 16) | TYPE_EVENT) << 32;

		seen[i] = atomic_load_explicit(&objects[list[i] & 0xffff].head, memory_order_relaxed);
		if ((seen[i] & ((uint64_t)IDENTITY_MASK << 32 | 0xffffffffu)) != idle)
			return i;
	}
	return count;
}

/*
 * A wait on many: the first signaled object taken, at one instant (the
 * heads before it read again, unchanged) when `exact`.  Index, or -1.
 */
static __attribute__((noinline)) int floor_take_any(const uint32_t *list, uint32_t count,
						     bool exact)
{
	uint64_t seen[FLOOR_OBJECTS];

	for (;;) {
		uint32_t first = first_not_idle(list, count, seen), i;

		if (first == count || !valid(list[first], seen[first]))
			return -1;
		if (exact) {
			atomic_thread_fence(memory_order_acquire);
			for (i = 0; i < first; i++)
				if (atomic_load_explicit(&objects[list[i] & 0xffff].head,
							 memory_order_relaxed) != seen[i])
					break;
			if (i < first)
				continue;
		}
		if (take(&objects[list[first] & 0xffff].head, seen[first]))
			return (int)first;
	}
}

/* A wait on many whose list is known valid (equal to the kept one): the first handle taken. */
static __attribute__((noinline)) int floor_take_first_known(const uint32_t *list, uint32_t count)
{
	if (memcmp(list, kept, count * sizeof(*list)) != 0)
		return -1;
	return floor_take(list[0]) == 0 ? 0 : -1;
}

/* Fresh events, unsignaled, generation 1 + slot. */
static void floor_reset(void)
{
	for (uint32_t s = 0; s < FLOOR_OBJECTS; s++) {
		handles[s] = (s + 1) << 16 | s;
		kept[s] = handles[s];
		atomic_store(&objects[s].head, (uint64_t)((s + 1) | TYPE_EVENT) << 32);
	}
}

/* Sets handles[want] and waits on `count` of them with `wait`, n times. */
static bool run(uint64_t n, uint64_t *ns, uint32_t want, int (*wait)(void))
{
	struct check c = { 0 };
	uint64_t t0;

	floor_reset();
	t0 = row_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		int rs = floor_set(handles[want]);
		int rw = wait();

		if (unlikely(rs != 0 || rw != (int)want))
			check_fail(&c, "iteration %" PRIu64 ": set %d, wait %d (want 0, %" PRIu32 ")",
				   i, rs, rw, want);
	}
	*ns = row_now_ns() - t0;
	return check_report(&c, current_row) && floor_take(handles[want]) == 1;
}

static int wait_one(void) { return floor_take(handles[0]); }
static int wait_exact(void) { return floor_take_any(handles, FLOOR_OBJECTS, true); }
static int wait_once(void) { return floor_take_any(handles, FLOOR_OBJECTS, false); }
static int wait_known(void) { return floor_take_first_known(handles, FLOOR_OBJECTS); }

bool floor_run_one(uint64_t n, uint64_t *ns) { return run(n, ns, 0, wait_one); }
bool floor_run_scan_exact(uint64_t n, uint64_t *ns) { return run(n, ns, FLOOR_OBJECTS - 1, wait_exact); }
bool floor_run_scan_once(uint64_t n, uint64_t *ns) { return run(n, ns, FLOOR_OBJECTS - 1, wait_once); }
bool floor_run_first_known(uint64_t n, uint64_t *ns) { return run(n, ns, 0, wait_known); }

void floor_footer(int group, const char *what, double a_ns, double b_ns, double target)
{
	double ratio = a_ns / b_ns;

	printf("    floor: %s %.2fx (target %.2fx)%s\n", what, ratio, target,
	       ratio > target ? ": the target is below the floor here" : "");
	json_row_begin(group, "floor", what);
	json_str("unit", "ratio");
	json_num("value", ratio);
	json_num("target", target);
	json_row_end();
}
