/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ws_arena_check against deliberately broken arenas: the test maps the
 * arena's /dev/shm file a second time (as another process could), breaks
 * one word (a queue link, a count, a flag, an object's value, a signal
 * that reached no waiter), and the check must say -EUCLEAN with a report;
 * with the word put back it must say 0 again.
 */
#define _GNU_SOURCE
#include "robust.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#include "../winsync/arena.h"

struct broken {
	char name[80];
	ws_arena *a;
	char *raw;            /* the second mapping */
	size_t size;
	ws_handle e, s, m, free_ev, free_m;
	struct waiter w[3];
};

static void setup(struct broken *b)
{
	char path[160];
	int fd;

	b->a = named_arena(b->name, sizeof b->name, "check", 64);
	snprintf(path, sizeof path, "/dev/shm/winsync-%s", b->name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	b->size = b->a->size;
	b->raw = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert(b->raw != MAP_FAILED);
	close(fd);
	b->e = mk_event(b->a, false, false);
	b->s = mk_sem(b->a, 1, 5);
	b->m = mk_mutex(b->a, 0x10, 1);
	b->free_ev = mk_event(b->a, true, true);
	b->free_m = mk_mutex(b->a, 0, 0);
	/* Two waiters queued on the event (one also on the mutex), one on the mutex. */
	ws_handle em[2] = { b->e, b->m };
	waiter_init(&b->w[0], b->a, 0x20, false, &b->e, 1);
	waiter_init(&b->w[1], b->a, 0x21, false, em, 2);
	waiter_init(&b->w[2], b->a, 0x22, false, &b->m, 1);
	for (int i = 0; i < 3; i++) {
		waiter_start(&b->w[i]);
		waiter_asleep(&b->w[i]);
	}
	/* Some free slots on the free list. */
	CK_OK(ws_close(b->a, mk_sem(b->a, 0, 1)));
	CK_OK(ws_close(b->a, mk_sem(b->a, 0, 1)));
}

static void teardown(struct broken *b)
{
	char report[256];

	ck_assert_msg(ws_arena_check(b->a, report, sizeof report) == 0, "at the end: %s", report);
	CK_OK(ws_event_set(b->a, b->e, NULL));
	CK_OK(ws_event_set(b->a, b->e, NULL));
	CK_OK(ws_mutex_unlock(b->a, b->m, 0x10, NULL));
	for (int i = 0; i < 3; i++) {
		ck_assert(waiter_wait_done(&b->w[i], LONG_MS));
		if (b->w[i].rc == 0 && i == 2)
			CK_OK(ws_mutex_unlock(b->a, b->m, 0x22, NULL));
		waiter_join(&b->w[i]);
	}
	munmap(b->raw, b->size);
	drop_arena(b->a, b->name);
}

/* The same word seen through the second mapping. */
static _Atomic uint32_t *raw_word(struct broken *b, const void *field)
{
	size_t off = (size_t)((const char *)field - b->a->base);

	ck_assert(off + 4 <= b->size && off % 4 == 0);
	return (_Atomic uint32_t *)(b->raw + off);
}

/* Breaks one word: the check must report it; put back, the arena is whole again. */
static void expect_detected(struct broken *b, const void *field, uint32_t value, const char *what)
{
	_Atomic uint32_t *w = raw_word(b, field);
	uint32_t old = atomic_exchange(w, value);
	char report[256] = "unchanged";
	int rc = ws_arena_check(b->a, report, sizeof report);

	atomic_store(w, old);
	ck_assert_msg(rc == -EUCLEAN, "%s: ws_arena_check returned %d (%s)", what, rc, errname(rc));
	ck_assert_msg(report[0] && strcmp(report, "unchanged") != 0, "%s: no report", what);
	printf("check: %s -> %s\n", what, report);
	rc = ws_arena_check(b->a, report, sizeof report);
	ck_assert_msg(rc == 0, "%s, put back: %d (%s) %s", what, rc, errname(rc), report);
}

static struct ws_object *obj_of(struct broken *b, ws_handle h)
{
	return &b->a->objects[h & ((1u << b->a->index_bits) - 1)];
}

/* The high half of an object's head. */
static const void *head_tag(struct ws_object *o)
{
	return (const char *)&o->head + 4;
}

static uint32_t tag_now(struct ws_object *o)
{
	return (uint32_t)(atomic_load(&o->head) >> 32);
}

START_TEST(whole_arena_passes)
{
	struct broken b;
	char report[256] = "x";

	setup(&b);
	CK_OK(ws_arena_check(b.a, report, sizeof report));
	ck_assert_str_eq(report, "");
	CK_RC(ws_arena_check(NULL, NULL, 0), -EINVAL);
	teardown(&b);
}
END_TEST

START_TEST(queue_links)
{
	struct broken b;
	struct ws_object *e;
	uint32_t r, k;
	struct ws_entry *first, *second;

	setup(&b);
	e = obj_of(&b, b.e);
	first = ws_entry_at(b.a, e->queue_head, &r, &k);
	ck_assert_ptr_nonnull(first);
	second = ws_entry_at(b.a, first->next, &r, &k);
	ck_assert_ptr_nonnull(second);
	expect_detected(&b, &second->prev, 0, "second entry's prev link cleared");
	expect_detected(&b, &first->next, 0, "first entry's next link cleared");
	expect_detected(&b, &first->object, (uint32_t)(b.s & 63), "entry names another object");
	expect_detected(&b, &e->queue_tail, e->queue_head, "queue tail at the head");
	expect_detected(&b, &first->linked, 0, "queued entry marked unlinked");
	teardown(&b);
}
END_TEST

START_TEST(counts_and_flags)
{
	struct broken b;
	struct ws_object *e, *s, *m, *f;

	setup(&b);
	e = obj_of(&b, b.e);
	s = obj_of(&b, b.s);
	m = obj_of(&b, b.m);
	f = obj_of(&b, b.free_ev);
	expect_detected(&b, &e->queued, e->queued + 1, "queued count one too many");
	expect_detected(&b, &m->queued, m->queued - 1, "queued count one too few");
	expect_detected(&b, head_tag(e), tag_now(e) & ~WS_HEAD_QUEUED, "QUEUED flag lost");
	expect_detected(&b, head_tag(f), tag_now(f) | WS_HEAD_QUEUED, "QUEUED flag with no queue");
	expect_detected(&b, head_tag(f), tag_now(f) | WS_HEAD_LOCKED, "LOCKED with no holder");
	expect_detected(&b, &s->head, 6, "semaphore count above its maximum");
	expect_detected(&b, &f->head, 2, "event value 2");
	expect_detected(&b, &obj_of(&b, b.free_m)->aux, 3, "recursion count on a free mutex");
	expect_detected(&b, &b.a->header->live, b.a->header->live + 1, "live count");
	expect_detected(&b, &b.a->header->free_tail, 0, "free list tail");
	teardown(&b);
}
END_TEST

/* A signal that reached no waiter: the check calls it a lost signal. */
START_TEST(lost_signal)
{
	struct broken b;
	struct ws_object *e, *m;

	setup(&b);
	e = obj_of(&b, b.e);
	m = obj_of(&b, b.m);
	expect_detected(&b, &e->head, 1, "event signaled under its waiters");
	expect_detected(&b, &m->head, 0, "mutex freed under its waiters");
	teardown(&b);
}
END_TEST

/*
 * The check runs while new threads register (records are claimed without
 * the arena lock): it must find the arena whole every time.  Under TSan
 * this also shows whether it reads the claim counter as the claimers write it.
 */
struct registering {
	ws_arena *a;
	_Atomic int stop;
	_Atomic long checks, failures;
	char report[256];
};

static void *first_call(void *arg)
{
	ws_arena *a = arg;
	ws_handle e;

	CK_OK(ws_event_create(a, false, false, &e));
	CK_OK(ws_close(a, e));
	return NULL;
}

static void *checker(void *arg)
{
	struct registering *g = arg;

	while (!atomic_load(&g->stop)) {
		char report[256];

		if (ws_arena_check(g->a, report, sizeof report) != 0 &&
		    atomic_fetch_add(&g->failures, 1) == 0)
			memcpy(g->report, report, sizeof report);
		atomic_fetch_add(&g->checks, 1);
	}
	return NULL;
}

START_TEST(check_while_threads_register)
{
	struct registering g = { .a = test_arena() };
	long threads = scaled(300, 20);
	pthread_t c = spawn(checker, &g);

	for (long i = 0; i < threads; i++)
		join(spawn(first_call, g.a));
	atomic_store(&g.stop, 1);
	join(c);
	ck_assert_msg(atomic_load(&g.failures) == 0, "%ld of %ld checks failed: %s",
		      atomic_load(&g.failures), atomic_load(&g.checks), g.report);
	ws_arena_close(g.a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("check");
	TCase *tc = tcase_create("check");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, whole_arena_passes);
	tcase_add_test(tc, queue_links);
	tcase_add_test(tc, counts_and_flags);
	tcase_add_test(tc, lost_signal);
	tcase_add_test(tc, check_while_threads_register);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
