/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Handle aliasing at the end of the generation counter, against the core
 * built with 29 index bits (libwinsync-tinygen): 3 generation bits, so a
 * slot has generations 1..7 and then retires.  The exact sequence of
 * handles that create/close cycles give proves the reuse rule (never-used
 * slots first, then freed slots oldest first), and that no handle value
 * is ever given out twice: after 7 x 32 objects every slot has retired and
 * creating fails, though nothing is live.
 */
#include "robust.h"

#include "../../winsync/arena.h"

#define BITS 29u
#define SLOTS 32u
#define GENS 7u

static ws_handle handle_of(uint32_t slot, uint32_t gen)
{
	return gen << BITS | slot;
}

static void dead(ws_arena *a, ws_handle h)
{
	bool s, m;
	uint32_t c, o;

	CK_RC(ws_event_read(a, h, &s, &m), -EBADF);
	CK_RC(ws_sem_read(a, h, &c, &o), -EBADF);
	CK_RC(ws_mutex_read(a, h, &c, &o), -EBADF);
	CK_RC(ws_event_set(a, h, NULL), -EBADF);
	CK_RC(ws_close(a, h), -EBADF);
}

START_TEST(build_has_three_generation_bits)
{
	ws_arena *a = test_arena_cap(SLOTS);

	ck_assert_uint_eq(a->index_bits, BITS);
	ck_assert_uint_eq(a->slots, SLOTS);
	ws_arena_close(a);
}
END_TEST

/* Create and close, over and over: the handles come in the one predicted order. */
START_TEST(fifo_order_then_retirement)
{
	ws_arena *a = test_arena_cap(SLOTS);
	ws_handle seen[SLOTS * GENS], h;
	uint32_t n = 0;
	int rc;

	for (uint32_t gen = 1; gen <= GENS; gen++) {
		for (uint32_t slot = 0; slot < SLOTS; slot++) {
			h = mk_sem(a, 0, 1);
			/* LIFO reuse would give slot 0 again at once; FIFO goes round. */
			ck_assert_msg(h == handle_of(slot, gen), "create %u: handle %#x, expected %#x",
				      n, h, handle_of(slot, gen));
			for (uint32_t i = 0; i < n; i++)
				ck_assert_uint_ne(seen[i], h);
			seen[n++] = h;
			CK_OK(ws_close(a, h));
		}
	}
	/* Every slot has used its last generation: nothing is live, yet nothing can be made. */
	rc = ws_event_create(a, false, false, &h);
	ck_assert_msg(rc == -ENOSPC, "create after every slot retired: %d (%s) handle %#x", rc,
		      errname(rc), rc ? 0 : h);
	for (uint32_t i = 0; i < n; i++)
		dead(a, seen[i]);
	CK_OK(ws_arena_check(a, NULL, 0));
	ws_arena_close(a);
}
END_TEST

/* One slot cycled alone (31 others live) retires after generation 7; the others live on. */
START_TEST(single_slot_retires)
{
	ws_arena *a = test_arena_cap(SLOTS);
	ws_handle fill[SLOTS - 1], h, gens[GENS];

	for (uint32_t i = 0; i < SLOTS - 1; i++)
		fill[i] = mk_mutex(a, 0, 0);
	for (uint32_t gen = 1; gen <= GENS; gen++) {
		h = mk_event(a, true, true);
		ck_assert_uint_eq(h, handle_of(SLOTS - 1, gen));
		gens[gen - 1] = h;
		CK_OK(ws_close(a, h));
	}
	CK_RC(ws_event_create(a, false, false, &h), -ENOSPC);
	for (uint32_t gen = 0; gen < GENS; gen++)
		dead(a, gens[gen]);
	/* A freed slot among the others is reused, at its next generation. */
	CK_OK(ws_close(a, fill[4]));
	h = mk_event(a, false, false);
	ck_assert_uint_eq(h, handle_of(4, 2));
	dead(a, fill[4]);
	CK_OK(ws_arena_check(a, NULL, 0));
	ws_arena_close(a);
}
END_TEST

/* Freed in a scrambled order, reused in that same order. */
START_TEST(reuse_order_is_free_order)
{
	static const uint32_t order[] = { 7, 3, 29, 0, 31, 12 };
	const uint32_t n = sizeof order / sizeof order[0];
	ws_arena *a = test_arena_cap(SLOTS);
	ws_handle h[SLOTS], x;

	for (uint32_t i = 0; i < SLOTS; i++)
		h[i] = mk_sem(a, 0, 1);
	for (uint32_t i = 0; i < n; i++)
		CK_OK(ws_close(a, h[order[i]]));
	for (uint32_t i = 0; i < n; i++) {
		x = mk_sem(a, 0, 1);
		ck_assert_msg(x == handle_of(order[i], 2), "reuse %u: %#x, expected %#x", i, x,
			      handle_of(order[i], 2));
	}
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("handles_tinygen");
	TCase *tc = tcase_create("handles_tinygen");

	tcase_add_test(tc, build_has_three_generation_bits);
	tcase_add_test(tc, fifo_order_then_retirement);
	tcase_add_test(tc, single_slot_retires);
	tcase_add_test(tc, reuse_order_is_free_order);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
