/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * No thundering herd: N blocked waiters and N single releases cost about N
 * futex wake-ups (each hand-off wakes only its waiter, on its own word),
 * not N per release.  Counted with ws_stats_read() over the whole process
 * (the waiters are threads of it): FUTEX_WAKE calls, and the sleeps taken
 * after the waiters were already asleep (a waiter woken for nothing sleeps
 * again).  Target: at most N + 2 of each.
 */
#include "robust.h"

#include <stdlib.h>
#include <string.h>

struct herd {
	ws_arena *a;
	struct waiter *w;
	int n;
	struct ws_stats before;
};

static void herd_start(struct herd *h, int n, ws_handle obj, void (*after)(struct waiter *))
{
	h->n = n;
	h->w = calloc((size_t)n, sizeof(*h->w));
	ck_assert_ptr_nonnull(h->w);
	for (int i = 0; i < n; i++) {
		waiter_init(&h->w[i], h->a, 100 + (uint32_t)i, false, &obj, 1);
		h->w[i].after = after;
		waiter_start(&h->w[i]);
		waiter_asleep(&h->w[i]);
	}
	ws_stats_read(&h->before);
}

/* Waits for all, checks the counts, prints them. */
static void herd_finish(struct herd *h, const char *what)
{
	struct ws_stats after;
	uint64_t wakes, sleeps;

	for (int i = 0; i < h->n; i++)
		ck_assert_msg(waiter_wait_done(&h->w[i], LONG_MS), "%s: waiter %d never woke", what, i);
	ws_stats_read(&after);
	wakes = after.futex_wakes - h->before.futex_wakes;
	sleeps = after.futex_waits - h->before.futex_waits;
	printf("herd: %s: N = %d waiters, %llu futex wake-ups, %llu further sleeps, "
	       "%llu lock sleeps\n",
	       what, h->n, (unsigned long long)wakes, (unsigned long long)sleeps,
	       (unsigned long long)(after.lock_sleeps - h->before.lock_sleeps));
	fflush(stdout);
	for (int i = 0; i < h->n; i++) {
		CK_OK(waiter_join(&h->w[i]));
		ck_assert_uint_eq(h->w[i].index, 0);
	}
	ck_assert_msg(wakes <= (uint64_t)h->n + 2, "%s: %llu futex wake-ups for %d waiters", what,
		      (unsigned long long)wakes, h->n);
	ck_assert_msg(sleeps <= (uint64_t)h->n + 2, "%s: %llu further sleeps for %d waiters", what,
		      (unsigned long long)sleeps, h->n);
	free(h->w);
}

static int herd_size(void)
{
	return in_guest() ? 8 : 32;
}

START_TEST(semaphore_single_releases)
{
	struct herd h = { .a = test_arena() };
	ws_handle s = mk_sem(h.a, 0, 1000);

	herd_start(&h, herd_size(), s, NULL);
	for (int i = 0; i < h.n; i++)
		CK_OK(ws_sem_release(h.a, s, 1, NULL));
	herd_finish(&h, "semaphore, N releases of 1");
	ck_assert_uint_eq(sem_count(h.a, s), 0);
	ws_arena_close(h.a);
}
END_TEST

START_TEST(semaphore_one_release_of_n)
{
	struct herd h = { .a = test_arena() };
	ws_handle s = mk_sem(h.a, 0, 1000);

	herd_start(&h, herd_size(), s, NULL);
	CK_OK(ws_sem_release(h.a, s, (uint32_t)h.n, NULL));
	herd_finish(&h, "semaphore, 1 release of N");
	ck_assert_uint_eq(sem_count(h.a, s), 0);
	ws_arena_close(h.a);
}
END_TEST

START_TEST(auto_event_sets)
{
	struct herd h = { .a = test_arena() };
	ws_handle e = mk_event(h.a, false, false);

	herd_start(&h, herd_size(), e, NULL);
	for (int i = 0; i < h.n; i++)
		CK_OK(ws_event_set(h.a, e, NULL));
	herd_finish(&h, "auto-reset event, N sets");
	ck_assert(!ev_signaled(h.a, e));
	ws_arena_close(h.a);
}
END_TEST

START_TEST(manual_event_one_set)
{
	struct herd h = { .a = test_arena() };
	ws_handle e = mk_event(h.a, true, false);

	herd_start(&h, herd_size(), e, NULL);
	CK_OK(ws_event_set(h.a, e, NULL));
	herd_finish(&h, "manual-reset event, 1 set");
	ws_arena_close(h.a);
}
END_TEST

START_TEST(auto_event_pulses)
{
	struct herd h = { .a = test_arena() };
	ws_handle e = mk_event(h.a, false, false);

	herd_start(&h, herd_size(), e, NULL);
	for (int i = 0; i < h.n; i++)
		CK_OK(ws_event_pulse(h.a, e, NULL));
	herd_finish(&h, "auto-reset event, N pulses");
	ck_assert(!ev_signaled(h.a, e));
	ws_arena_close(h.a);
}
END_TEST

/* N unlocks by one releaser, on behalf of each owner in turn (owner ids are not threads). */
START_TEST(mutex_unlocks)
{
	struct herd h = { .a = test_arena() };
	ws_handle m = mk_mutex(h.a, 1, 1);
	uint32_t count, owner = 1;

	herd_start(&h, herd_size(), m, NULL);
	for (int i = 0; i < h.n; i++) {
		CK_OK(ws_mutex_unlock(h.a, m, owner, NULL));
		/* Handed straight to one waiter: its owner id holds it now. */
		ck_assert_int_eq(mtx_state(h.a, m, &count, &owner), 0);
		ck_assert_uint_eq(count, 1);
		ck_assert_uint_ne(owner, 1);
	}
	herd_finish(&h, "mutex, N unlocks");
	CK_OK(ws_mutex_unlock(h.a, m, owner, NULL));
	ws_arena_close(h.a);
}
END_TEST

/*
 * The same with each waiter unlocking what it was handed, at once: it must
 * not find the arena lock still held by the hand-off that woke it (the wake
 * comes after the unlock), or each step costs a lock sleep and wake more.
 */
static void unlock_after(struct waiter *w)
{
	if (w->rc == 0)
		CK_OK(ws_mutex_unlock(w->arena, w->objects[0], w->owner, NULL));
}

START_TEST(mutex_chain)
{
	struct herd h = { .a = test_arena() };
	ws_handle m = mk_mutex(h.a, 1, 1);
	uint32_t count, owner;

	herd_start(&h, herd_size(), m, unlock_after);
	CK_OK(ws_mutex_unlock(h.a, m, 1, NULL));
	herd_finish(&h, "mutex, each waiter unlocking in turn");
	ck_assert_int_eq(mtx_state(h.a, m, &count, &owner), 0);
	ck_assert_uint_eq(owner, 0);
	ws_arena_close(h.a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("herd");
	TCase *tc = tcase_create("herd");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, semaphore_single_releases);
	tcase_add_test(tc, semaphore_one_release_of_n);
	tcase_add_test(tc, auto_event_sets);
	tcase_add_test(tc, manual_event_one_set);
	tcase_add_test(tc, auto_event_pulses);
	tcase_add_test(tc, mutex_unlocks);
	tcase_add_test(tc, mutex_chain);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
