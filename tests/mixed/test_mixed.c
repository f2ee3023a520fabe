/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A 32-bit and a 64-bit process on one shared arena.  This test is a 64-bit
 * program; its peer (peer.c) is the same library built -m32, driven one call
 * at a time through a pipe.  Each waits on and signals the other's events,
 * mutexes and semaphores, a wait-all spans objects signaled from both ABIs,
 * a 32-bit owner dies holding a mutex and a 32-bit waiter dies blocked, and
 * ws_arena_check, run from both, sees the same arena: whole after each test,
 * and the same broken word when the test breaks one under a 32-bit waiter.
 */
#define _GNU_SOURCE
#include "robust.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../winsync/arena.h"

#ifndef WINSYNC_MIXED_PEER
#error "WINSYNC_MIXED_PEER: the path of the 32-bit peer program"
#endif

struct peer {
	pid_t pid;
	FILE *to, *from;
	uint32_t tid;
};

static char name[80];

static void peer_send(struct peer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void peer_send(struct peer *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(p->to, fmt, ap);
	va_end(ap);
	fputc('\n', p->to);
	fflush(p->to);
}

/* The answer to the oldest command not yet answered: rc, and its values. */
static int peer_reply(struct peer *p, long long *a, long long *b)
{
	char line[256];
	long long x = 0, y = 0;
	int rc = 0;

	ck_assert_msg(fgets(line, sizeof line, p->from), "the 32-bit peer ended without answering");
	ck_assert_int_eq(sscanf(line, "%d %lld %lld", &rc, &x, &y), 3);
	if (a)
		*a = x;
	if (b)
		*b = y;
	return rc;
}

/* Has the peer answered (a blocking command ended)? */
static bool peer_answered(struct peer *p)
{
	struct pollfd fd = { .fd = fileno(p->from), .events = POLLIN };

	return poll(&fd, 1, 0) == 1;
}

#define PEER(p, a, b, ...) (peer_send((p), __VA_ARGS__), peer_reply((p), (a), (b)))

static void peer_start(struct peer *p)
{
	int to[2], from[2];
	long long v = 0;

	ck_assert_int_eq(pipe2(to, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(from, O_CLOEXEC), 0);
	fflush(NULL);
	p->pid = fork();
	ck_assert_int_ge(p->pid, 0);
	if (p->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		execl(WINSYNC_MIXED_PEER, WINSYNC_MIXED_PEER, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	p->to = fdopen(to[1], "w");
	p->from = fdopen(from[0], "r");
	ck_assert(p->to && p->from);
	CK_OK(PEER(p, &v, NULL, "abi"));
	ck_assert_int_eq(v, 32);
	CK_OK(PEER(p, NULL, NULL, "open %s", name));
	CK_OK(PEER(p, &v, NULL, "tid"));
	p->tid = (uint32_t)v;
}

/* Ends the peer: it leaves the arena and exits 0. */
static void peer_end(struct peer *p)
{
	int status = 0;

	fclose(p->to);
	fclose(p->from);
	ck_assert_int_eq(waitpid(p->pid, &status, 0), p->pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the 32-bit peer: %s",
		      status_str(status, (char[64]){ 0 }, 64));
}

/* The arena is whole as both ABIs see it. */
static void check_both(ws_arena *a, struct peer *p)
{
	char report[256] = "";

	ck_assert_msg(ws_arena_check(a, report, sizeof report) == 0, "64-bit check: %s", report);
	CK_OK(PEER(p, NULL, NULL, "check"));
}

/* A 64-bit waiter that must stay blocked for now. */
static void still_blocked(struct waiter *w)
{
	sleep_ms(50);
	ck_assert_msg(!waiter_done(w), "the 64-bit wait ended early: %d", w->rc);
}

START_TEST(events)
{
	struct peer p;
	ws_arena *a = named_arena(name, sizeof name, "mixed", 64);
	ws_handle ev = mk_event(a, false, false), manual = mk_event(a, true, false);
	struct waiter w;
	long long x, y;

	peer_start(&p);
	/* 32-bit waits, 64-bit sets: the auto-reset event is consumed. */
	peer_send(&p, "wait_any %ld %u", LONG_MS, ev);
	wait_proc_blocked(p.pid);
	CK_OK(ws_event_set(a, ev, NULL));
	CK_OK(peer_reply(&p, &x, NULL));
	ck_assert_int_eq(x, 0);
	ck_assert(!ev_signaled(a, ev));
	/* 64-bit waits, 32-bit sets. */
	waiter_init(&w, a, new_owner(), false, &ev, 1);
	waiter_start(&w);
	waiter_asleep(&w);
	CK_OK(PEER(&p, &x, NULL, "event_set %u", ev));
	ck_assert_int_eq(x, 0);
	CK_OK(waiter_join(&w));
	ck_assert(!ev_signaled(a, ev));
	/* A pulse from 64 bits releases the blocked 32-bit waiter and leaves it unsignaled. */
	peer_send(&p, "wait_any %ld %u", LONG_MS, manual);
	wait_proc_blocked(p.pid);
	CK_OK(ws_event_pulse(a, manual, NULL));
	CK_OK(peer_reply(&p, &x, NULL));
	CK_OK(PEER(&p, &x, &y, "event_read %u", manual));
	ck_assert(x == 0 && y == 1);
	/* An event the 32-bit process creates, set and read from 64 bits. */
	CK_OK(PEER(&p, &x, NULL, "create_event 1 0"));
	CK_OK(ws_event_set(a, (ws_handle)x, NULL));
	ck_assert(ev_signaled(a, (ws_handle)x));
	check_both(a, &p);
	peer_end(&p);
	drop_arena(a, name);
}
END_TEST

START_TEST(mutexes)
{
	struct peer p;
	ws_arena *a = named_arena(name, sizeof name, "mixed", 64);
	ws_handle m = mk_mutex(a, 0, 0);
	uint32_t count = 0, owner = 0, me = new_owner();
	struct waiter w;
	long long x;

	peer_start(&p);
	/* The 32-bit owner, recursively; seen from 64 bits, which cannot take it. */
	CK_OK(PEER(&p, NULL, NULL, "wait_any %ld %u", LONG_MS, m));
	CK_OK(PEER(&p, NULL, NULL, "wait_any %ld %u", LONG_MS, m));
	CK_OK(mtx_state(a, m, &count, &owner));
	ck_assert(count == 2 && owner == p.tid);
	CK_RC(poll_one(a, m, me), -ETIMEDOUT);
	/* A 64-bit waiter gets it when the 32-bit owner's last unlock. */
	waiter_init(&w, a, me, false, &m, 1);
	waiter_start(&w);
	waiter_asleep(&w);
	CK_OK(PEER(&p, &x, NULL, "mutex_unlock %u", m));
	ck_assert_int_eq(x, 2);
	still_blocked(&w);
	CK_OK(PEER(&p, &x, NULL, "mutex_unlock %u", m));
	ck_assert_int_eq(x, 1);
	ck_assert(waiter_wait_done(&w, LONG_MS));
	CK_OK(w.rc);
	CK_OK(mtx_state(a, m, &count, &owner));
	ck_assert(count == 1 && owner == me);
	/* And back: the 32-bit waiter blocks until the 64-bit owner unlocks. */
	peer_send(&p, "wait_any %ld %u", LONG_MS, m);
	wait_proc_blocked(p.pid);
	CK_OK(ws_mutex_unlock(a, m, me, NULL));
	waiter_join(&w);
	CK_OK(peer_reply(&p, NULL, NULL));
	CK_OK(mtx_state(a, m, &count, &owner));
	ck_assert(count == 1 && owner == p.tid);
	CK_RC(PEER(&p, NULL, NULL, "mutex_unlock %u", m), 0);
	CK_RC(ws_mutex_unlock(a, m, p.tid, NULL), -EPERM);
	check_both(a, &p);
	peer_end(&p);
	drop_arena(a, name);
}
END_TEST

START_TEST(semaphores)
{
	struct peer p;
	ws_arena *a = named_arena(name, sizeof name, "mixed", 64);
	ws_handle s = mk_sem(a, 0, 10);
	struct waiter w;
	long long x, y;

	peer_start(&p);
	peer_send(&p, "wait_any %ld %u", LONG_MS, s);
	wait_proc_blocked(p.pid);
	CK_OK(ws_sem_release(a, s, 3, NULL));
	CK_OK(peer_reply(&p, NULL, NULL));
	CK_OK(PEER(&p, &x, &y, "sem_read %u", s));
	ck_assert(x == 2 && y == 10);
	CK_OK(PEER(&p, &x, NULL, "sem_release %u 5", s));
	ck_assert_int_eq(x, 2);
	ck_assert_int_eq(sem_count(a, s), 7);
	CK_RC(PEER(&p, NULL, NULL, "sem_release %u 4", s), -EOVERFLOW);
	ck_assert_int_eq(sem_count(a, s), 7);
	/* Drained from 64 bits, then a 64-bit waiter released from 32 bits. */
	for (int i = 0; i < 7; i++)
		CK_OK(poll_one(a, s, 1));
	waiter_init(&w, a, new_owner(), false, &s, 1);
	waiter_start(&w);
	waiter_asleep(&w);
	CK_OK(PEER(&p, &x, NULL, "sem_release %u 1", s));
	ck_assert_int_eq(x, 0);
	CK_OK(waiter_join(&w));
	ck_assert_int_eq(sem_count(a, s), 0);
	check_both(a, &p);
	peer_end(&p);
	drop_arena(a, name);
}
END_TEST

/* A 64-bit wait-all on an event, a semaphore and a mutex the 32-bit side signals one by one. */
START_TEST(wait_all_64_on_32)
{
	struct peer p;
	ws_arena *a = named_arena(name, sizeof name, "mixed", 64);
	ws_handle objs[3];
	uint32_t count = 0, owner = 0, me = new_owner();
	struct waiter w;
	long long x;

	peer_start(&p);
	objs[0] = mk_event(a, false, false);
	objs[1] = mk_sem(a, 0, 5);
	CK_OK(PEER(&p, &x, NULL, "create_mutex 1"));
	objs[2] = (ws_handle)x;
	waiter_init(&w, a, me, true, objs, 3);
	waiter_start(&w);
	waiter_asleep(&w);
	CK_OK(PEER(&p, NULL, NULL, "event_set %u", objs[0]));
	still_blocked(&w);
	CK_OK(PEER(&p, NULL, NULL, "sem_release %u 1", objs[1]));
	still_blocked(&w);
	/* Nothing taken yet: the event is still signaled, the unit still there. */
	ck_assert(ev_signaled(a, objs[0]));
	ck_assert_int_eq(sem_count(a, objs[1]), 1);
	CK_OK(PEER(&p, NULL, NULL, "mutex_unlock %u", objs[2]));
	ck_assert(waiter_wait_done(&w, LONG_MS));
	CK_OK(w.rc);
	ck_assert_int_eq(w.index, 0);
	ck_assert(!ev_signaled(a, objs[0]));
	ck_assert_int_eq(sem_count(a, objs[1]), 0);
	CK_OK(mtx_state(a, objs[2], &count, &owner));
	ck_assert(count == 1 && owner == me);
	CK_OK(ws_mutex_unlock(a, objs[2], me, NULL));
	waiter_join(&w);
	check_both(a, &p);
	peer_end(&p);
	drop_arena(a, name);
}
END_TEST

/* A 32-bit wait-all on objects the 64-bit side signals one by one. */
START_TEST(wait_all_32_on_64)
{
	struct peer p;
	ws_arena *a = named_arena(name, sizeof name, "mixed", 64);
	uint32_t count = 0, owner = 0, me = new_owner();
	ws_handle objs[3] = { mk_event(a, false, false), mk_sem(a, 0, 5), mk_mutex(a, me, 1) };
	long long x, y;

	peer_start(&p);
	peer_send(&p, "wait_all %ld %u %u %u", LONG_MS, objs[0], objs[1], objs[2]);
	wait_proc_blocked(p.pid);
	CK_OK(ws_event_set(a, objs[0], NULL));
	CK_OK(ws_sem_release(a, objs[1], 1, NULL));
	sleep_ms(50);
	ck_assert_msg(!peer_answered(&p), "the 32-bit wait-all ended early");
	ck_assert_int_eq(thread_asleep_now(p.pid, p.pid), 1);
	ck_assert(ev_signaled(a, objs[0]));
	ck_assert_int_eq(sem_count(a, objs[1]), 1);
	CK_OK(ws_mutex_unlock(a, objs[2], me, NULL));
	CK_OK(peer_reply(&p, &x, NULL));
	ck_assert_int_eq(x, 0);
	ck_assert(!ev_signaled(a, objs[0]));
	ck_assert_int_eq(sem_count(a, objs[1]), 0);
	CK_OK(mtx_state(a, objs[2], &count, &owner));
	ck_assert(count == 1 && owner == p.tid);
	CK_OK(PEER(&p, &x, &y, "mutex_read %u", objs[2]));
	ck_assert(x == 1 && y == p.tid);
	check_both(a, &p);
	peer_end(&p);
	drop_arena(a, name);
}
END_TEST

/* A 32-bit owner dies holding a mutex: the blocked 64-bit waiter gets it abandoned. */
START_TEST(owner_death_32)
{
	struct peer p, q;
	ws_arena *a = named_arena(name, sizeof name, "mixed", 64);
	ws_handle m = mk_mutex(a, 0, 0), m2 = mk_mutex(a, 0, 0);
	uint32_t count = 0, owner = 0, me = new_owner();
	struct waiter w;
	struct timespec died;
	int status;

	peer_start(&p);
	CK_OK(PEER(&p, NULL, NULL, "wait_any %ld %u", LONG_MS, m));
	CK_OK(PEER(&p, NULL, NULL, "wait_any %ld %u", LONG_MS, m2));
	waiter_init(&w, a, me, false, &m, 1);
	waiter_start(&w);
	waiter_asleep(&w);
	peer_send(&p, "exit");
	ck_assert_int_eq(waitpid(p.pid, &status, 0), p.pid);
	died = ts_now(CLOCK_MONOTONIC);
	fclose(p.to);
	fclose(p.from);
	ck_assert(waiter_wait_done(&w, LONG_MS));
	CK_RC(w.rc, -EOWNERDEAD);
	printf("mixed: a 64-bit waiter got the dead 32-bit owner's mutex %ld ms after the death\n",
	       ts_diff_ms(w.returned, died));
	CK_OK(mtx_state(a, m, &count, &owner));
	ck_assert(count == 1 && owner == me);
	CK_OK(ws_mutex_unlock(a, m, me, NULL));
	waiter_join(&w);
	/* Its other mutex, taken later by another 32-bit process: abandoned too. */
	peer_start(&q);
	CK_RC(PEER(&q, NULL, NULL, "wait_any %ld %u", LONG_MS, m2), -EOWNERDEAD);
	CK_OK(PEER(&q, NULL, NULL, "mutex_unlock %u", m2));
	check_both(a, &q);
	peer_end(&q);
	drop_arena(a, name);
}
END_TEST

/* A 32-bit waiter killed while blocked: the 64-bit signal goes to a live waiter. */
START_TEST(dead_waiter_32)
{
	struct peer p, q;
	ws_arena *a = named_arena(name, sizeof name, "mixed", 64);
	ws_handle ev = mk_event(a, false, false);
	struct waiter w;

	peer_start(&p);
	peer_send(&p, "wait_any -1 %u", ev);
	wait_proc_blocked(p.pid);
	waiter_init(&w, a, new_owner(), false, &ev, 1);
	waiter_start(&w);
	waiter_asleep(&w);
	kill_reap(p.pid);
	fclose(p.to);
	fclose(p.from);
	CK_OK(ws_event_set(a, ev, NULL));
	CK_OK(waiter_join(&w));
	ck_assert(!ev_signaled(a, ev));
	peer_start(&q);
	check_both(a, &q);
	peer_end(&q);
	drop_arena(a, name);
}
END_TEST

/* Breaks the count of an event a 32-bit waiter is queued on: both ABIs' checks see it. */
START_TEST(corruption_seen_by_both)
{
	struct peer p, q;
	ws_arena *a = named_arena(name, sizeof name, "mixed", 64);
	ws_handle ev = mk_event(a, false, false);
	struct ws_object *o = &a->objects[ev & ((1u << a->index_bits) - 1)];
	uint32_t *words[] = { &o->queued, &o->queue_head };
	char report[256];

	peer_start(&p);
	peer_start(&q);
	peer_send(&p, "wait_any %ld %u", LONG_MS, ev);
	wait_proc_blocked(p.pid);
	ck_assert_int_eq(o->queued, 1);
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		uint32_t old = *words[i];

		*words[i] = old + 7;
		CK_RC(ws_arena_check(a, report, sizeof report), -EUCLEAN);
		printf("mixed: 64-bit check: %s\n", report);
		CK_RC(PEER(&q, NULL, NULL, "check"), -EUCLEAN);
		*words[i] = old;
		check_both(a, &q);
	}
	CK_OK(ws_event_set(a, ev, NULL));
	CK_OK(peer_reply(&p, NULL, NULL));
	check_both(a, &p);
	peer_end(&p);
	peer_end(&q);
	drop_arena(a, name);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("mixed");
	TCase *tc = tcase_create("32 and 64 bits");

	tcase_add_test(tc, events);
	tcase_add_test(tc, mutexes);
	tcase_add_test(tc, semaphores);
	tcase_add_test(tc, wait_all_64_on_32);
	tcase_add_test(tc, wait_all_32_on_64);
	tcase_add_test(tc, owner_death_32);
	tcase_add_test(tc, dead_waiter_32);
	tcase_add_test(tc, corruption_seen_by_both);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * Skips (77) where this kernel cannot execute the peer at all (an x86_64
 * kernel without IA32 emulation): the QEMU guest's kernel can, and its
 * guest-native-* tests run this test there.
 */
static void skip_without_i386(void)
{
	pid_t pid;
	int status = 0;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execl(WINSYNC_MIXED_PEER, WINSYNC_MIXED_PEER, "--help", (char *)NULL);
		_exit(errno == ENOEXEC ? 126 : 127);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 126) {
		printf("SKIP: this kernel cannot execute i386 programs (no IA32 emulation): "
		       "the 32-bit peer does not start; the QEMU guest runs this test\n");
		exit(77);
	}
}

int main(void)
{
	skip_without_i386();
	return harness_run(make_suite());
}
