/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Handle aliasing, default build: a closed handle is -EBADF for every call
 * even after its slot has been reused through all its 65,535 generations
 * (the head's 16-bit field: layout.h), each reuse gets a new handle value,
 * the slot then retires, and free slots are reused oldest first only after every
 * never-used slot has had its turn.  (fault/test_handles_tinygen.c shows the
 * same rules at the end of a 3-bit generation counter.)
 */
#include "robust.h"

#include <stdlib.h>

#include "../winsync/arena.h" /* index_bits: which slot a handle names */

#define SLOT_MASK(a) ((1u << (a)->index_bits) - 1)

/* Every call that takes a handle refuses `h` with -EBADF. */
static void all_ebadf(ws_arena *a, ws_handle h)
{
	bool b1, b2;
	uint32_t u1, u2, idx;
	struct timespec past = deadline_past();
	struct ws_wait w = { .objects = &h, .count = 1, .owner = 9, .deadline = &past };

	CK_RC(ws_event_set(a, h, NULL), -EBADF);
	CK_RC(ws_event_reset(a, h, NULL), -EBADF);
	CK_RC(ws_event_pulse(a, h, NULL), -EBADF);
	CK_RC(ws_event_read(a, h, &b1, &b2), -EBADF);
	CK_RC(ws_sem_release(a, h, 1, NULL), -EBADF);
	CK_RC(ws_sem_read(a, h, &u1, &u2), -EBADF);
	CK_RC(ws_mutex_unlock(a, h, 9, NULL), -EBADF);
	CK_RC(ws_mutex_kill(a, h, 9), -EBADF);
	CK_RC(ws_mutex_read(a, h, &u1, &u2), -EBADF);
	CK_RC(ws_wait_any(a, &w, &idx), -EBADF);
	CK_RC(ws_wait_all(a, &w, &idx), -EBADF);
	CK_RC(ws_close(a, h), -EBADF);
}

static ws_handle create_any(ws_arena *a, int kind)
{
	switch (kind % 3) {
	case 0:
		return mk_event(a, kind & 4, false);
	case 1:
		return mk_sem(a, 1, 3);
	default:
		return mk_mutex(a, 0, 0);
	}
}

START_TEST(closed_handle_stays_dead_through_every_reuse)
{
	/* Generations 1 .. 65,535: the first object and then every reuse. */
	const long reuses = (long)WS_HEAD_GEN_MASK - 1;
	ws_arena *a = test_arena_cap(32);
	ws_handle first, prev, h;
	ws_handle sample[64];
	int nsample = 0;
	uint32_t slot;

	/* 31 live objects pin every other slot: all reuse goes to one slot. */
	for (int i = 0; i < 31; i++)
		mk_sem(a, 0, 1);
	first = prev = mk_event(a, false, false);
	slot = first & SLOT_MASK(a);
	CK_OK(ws_close(a, first));
	for (long i = 0; i < reuses; i++) {
		h = create_any(a, (int)i);
		ck_assert_msg((h & SLOT_MASK(a)) == slot, "reuse %ld went to slot %u, not %u", i,
			      h & SLOT_MASK(a), slot);
		/* A new generation each time: never a value seen before. */
		ck_assert_msg(h >> a->index_bits == (prev >> a->index_bits) + 1,
			      "reuse %ld: handle %#x after %#x", i, h, prev);
		ck_assert_int_eq(ws_event_set(a, first, NULL), -EBADF);
		if (i % (reuses / 63 + 1) == 0 && nsample < 64)
			sample[nsample++] = h;
		CK_OK(ws_close(a, h));
		prev = h;
	}
	all_ebadf(a, first);
	for (int i = 0; i < nsample; i++)
		all_ebadf(a, sample[i]);
	/* Its last generation was given out: the slot retired, the arena is full. */
	ck_assert_uint_eq(prev >> a->index_bits, WS_HEAD_GEN_MASK);
	CK_RC(ws_event_create(a, false, true, &h), -ENOSPC);
	printf("slot %u reused %ld times, then retired: the first handle %#x is still -EBADF\n",
	       slot, reuses, first);
	ws_arena_close(a);
}
END_TEST

/* Never-used slots first, in order; then the freed ones, oldest first. */
START_TEST(fresh_slots_first_then_fifo)
{
	ws_arena *a = test_arena_cap(64);
	ws_handle h[64], x;
	static const int order[] = { 5, 40, 3, 63, 17, 0 };
	const int n = (int)(sizeof order / sizeof order[0]);

	for (int i = 0; i < 10; i++) {
		h[i] = mk_event(a, false, false);
		ck_assert_uint_eq(h[i] & SLOT_MASK(a), (uint32_t)i);
	}
	/* A freed slot waits while never-used ones remain. */
	CK_OK(ws_close(a, h[2]));
	for (int i = 10; i < 64; i++) {
		h[i] = mk_event(a, false, false);
		ck_assert_msg((h[i] & SLOT_MASK(a)) == (uint32_t)i, "create %d took slot %u", i,
			      h[i] & SLOT_MASK(a));
	}
	/* Now the freed ones, in the order they were freed. */
	x = mk_event(a, false, false);
	ck_assert_uint_eq(x & SLOT_MASK(a), 2);
	for (int i = 0; i < n; i++)
		CK_OK(ws_close(a, h[order[i]]));
	for (int i = 0; i < n; i++) {
		x = mk_event(a, false, false);
		ck_assert_msg((x & SLOT_MASK(a)) == (uint32_t)order[i], "reuse %d took slot %u, not %d",
			      i, x & SLOT_MASK(a), order[i]);
		ck_assert_uint_ne(x, h[order[i]]);
		all_ebadf(a, h[order[i]]);
	}
	ck_assert_int_eq(ws_event_create(a, false, false, &x), -ENOSPC);
	ws_arena_close(a);
}
END_TEST

/* Values that name no object: 0, a slot out of range, generation 0, a future generation. */
START_TEST(invented_handles)
{
	ws_arena *a = test_arena_cap(32);
	ws_handle e = mk_event(a, false, false);
	uint32_t bits = a->index_bits;

	all_ebadf(a, 0);
	all_ebadf(a, e & SLOT_MASK(a));                      /* generation 0 */
	all_ebadf(a, e + (1u << bits));                      /* the next generation */
	all_ebadf(a, (e & ~SLOT_MASK(a)) | 31);              /* a slot never used */
	all_ebadf(a, 0xffffffffu);
	ck_assert(!ev_signaled(a, e));
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("handles");
	TCase *tc = tcase_create("handles");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, closed_handle_stays_dead_through_every_reuse);
	tcase_add_test(tc, fresh_slots_first_then_fifo);
	tcase_add_test(tc, invented_handles);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
