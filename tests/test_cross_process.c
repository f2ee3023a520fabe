/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cross-process: fork; the child opens the named arena (mapped at another
 * address) and waits or signals; its exit status tells the result.  Handle
 * values are the same in every process.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* exit codes of the children: 0 = success, anything else says what failed */
#define CHECK(cond, code)                                                           \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "child: check failed (%d): %s\n", code, #cond); \
			_exit(code);                                                \
		}                                                                   \
	} while (0)

static char arena_name[80];

static ws_arena *create_named(void)
{
	test_arena_name(arena_name, sizeof arena_name, "xproc");
	ws_arena *a = NULL;
	CK_OK(ws_arena_create(arena_name, 0, &a));
	return a;
}

/* In the child: shift the address space, then open the arena by name. */
static ws_arena *child_open(void)
{
	void *junk = mmap(NULL, 64 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(junk != MAP_FAILED, 90);
	ws_arena *a = NULL;
	int rc = ws_arena_open(arena_name, &a);
	CHECK(rc == 0 && a, 91);
	return a;
}

static pid_t fork_child(int (*fn)(void *), void *arg)
{
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

static void expect_child_ok(pid_t pid)
{
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st), "child died: signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
	ck_assert_msg(WEXITSTATUS(st) == 0, "child failed with status %d", WEXITSTATUS(st));
}

static void finish(ws_arena *a)
{
	ws_arena_close(a);
	CK_OK(ws_arena_unlink(arena_name));
}

static ws_handle H[8];

static int child_waits_event(void *arg)
{
	(void)arg;
	ws_arena *a = child_open();
	struct timespec dl = deadline_ms(LONG_MS);
	struct ws_wait w = { .objects = &H[0], .count = 1, .owner = 2, .deadline = &dl };
	uint32_t idx = 99;
	int rc = ws_wait_any(a, &w, &idx);
	CHECK(rc == 0, 10);
	CHECK(idx == 0, 11);
	ws_arena_close(a);
	return 0;
}

START_TEST(child_waits_parent_sets)
{
	ws_arena *a = create_named();
	H[0] = mk_event(a, false, false);
	pid_t pid = fork_child(child_waits_event, NULL);
	wait_proc_blocked(pid);
	CK_OK(ws_event_set(a, H[0], NULL));
	/* handed to the waiting child: not left signaled */
	ck_assert(!ev_signaled(a, H[0]));
	expect_child_ok(pid);
	finish(a);
}
END_TEST

START_TEST(child_waits_parent_pulses)
{
	ws_arena *a = create_named();
	H[0] = mk_event(a, true, false);
	pid_t pid = fork_child(child_waits_event, NULL);
	wait_proc_blocked(pid);
	CK_OK(ws_event_pulse(a, H[0], NULL));
	ck_assert(!ev_signaled(a, H[0]));
	expect_child_ok(pid);
	finish(a);
}
END_TEST

static int child_releases(void *arg)
{
	(void)arg;
	ws_arena *a = child_open();
	uint32_t prev = 99;
	CHECK(ws_sem_release(a, H[0], 1, &prev) == 0, 20);
	CHECK(prev == 0, 21);
	CHECK(ws_event_set(a, H[1], NULL) == 0, 22);
	ws_arena_close(a);
	return 0;
}

START_TEST(parent_waits_child_signals)
{
	ws_arena *a = create_named();
	H[0] = mk_sem(a, 0, 5);
	H[1] = mk_event(a, true, false);
	struct waiter w;
	waiter_init(&w, a, 3, true, H, 2);
	waiter_start(&w);
	waiter_wait_blocked(&w);
	pid_t pid = fork_child(child_releases, NULL);
	expect_child_ok(pid);
	CK_OK(waiter_join(&w));
	ck_assert_uint_eq(w.index, 0);
	ck_assert_uint_eq(sem_count(a, H[0]), 0);
	ck_assert(ev_signaled(a, H[1]));
	finish(a);
}
END_TEST

static int pipefd[2];

static int child_creates(void *arg)
{
	(void)arg;
	ws_arena *a = child_open();
	ws_handle h[3];
	CHECK(ws_sem_create(a, 7, 9, &h[0]) == 0, 30);
	CHECK(ws_mutex_create(a, 4242, 2, &h[1]) == 0, 31);
	CHECK(ws_event_create(a, true, true, &h[2]) == 0, 32);
	/* and it sees the parent's object under the parent's handle */
	uint32_t c, m;
	CHECK(ws_sem_read(a, H[0], &c, &m) == 0, 33);
	CHECK(c == 3 && m == 4, 34);
	CHECK(write(pipefd[1], h, sizeof h) == (ssize_t)sizeof h, 35);
	ws_arena_close(a);
	return 0;
}

START_TEST(handles_identical_across_processes)
{
	ws_arena *a = create_named();
	H[0] = mk_sem(a, 3, 4);
	ck_assert_int_eq(pipe(pipefd), 0);
	pid_t pid = fork_child(child_creates, NULL);
	expect_child_ok(pid);
	ws_handle h[3];
	ck_assert_int_eq(read(pipefd[0], h, sizeof h), (ssize_t)sizeof h);
	close(pipefd[0]);
	close(pipefd[1]);
	uint32_t c, m;
	CK_OK(ws_sem_read(a, h[0], &c, &m));
	ck_assert_uint_eq(c, 7);
	ck_assert_uint_eq(m, 9);
	mtx_state(a, h[1], &c, &m);
	ck_assert_uint_eq(c, 2);
	ck_assert_uint_eq(m, 4242);
	bool s, man;
	CK_OK(ws_event_read(a, h[2], &s, &man));
	ck_assert(s && man);
	/* a second mapping in this process sees them too */
	ws_arena *b = NULL;
	CK_OK(ws_arena_open(arena_name, &b));
	ck_assert_uint_eq(sem_count(b, h[0]), 7);
	ws_arena_close(b);
	for (int i = 0; i < 3; i++)
		CK_OK(ws_close(a, h[i]));
	finish(a);
}
END_TEST

static int child_wait_all(void *arg)
{
	(void)arg;
	ws_arena *a = child_open();
	struct timespec dl = deadline_ms(LONG_MS);
	struct ws_wait w = { .objects = H, .count = 3, .owner = 2, .deadline = &dl };
	uint32_t idx = 99;
	int rc = ws_wait_all(a, &w, &idx);
	CHECK(rc == 0, 40);
	CHECK(idx == 0, 41);
	uint32_t c, o;
	CHECK(ws_mutex_read(a, H[0], &c, &o) == 0, 42);
	CHECK(c == 1 && o == 2, 43);
	CHECK(ws_mutex_unlock(a, H[0], 2, NULL) == 0, 44);
	ws_arena_close(a);
	return 0;
}

START_TEST(child_wait_all_parent_releases)
{
	ws_arena *a = create_named();
	H[0] = mk_mutex(a, 1, 1);
	H[1] = mk_event(a, true, false);
	H[2] = mk_sem(a, 0, 1);
	pid_t pid = fork_child(child_wait_all, NULL);
	wait_proc_blocked(pid);
	CK_OK(ws_event_set(a, H[1], NULL));
	CK_OK(ws_sem_release(a, H[2], 1, NULL));
	sleep_ms(50);
	ck_assert_uint_eq(sem_count(a, H[2]), 1);
	CK_OK(ws_mutex_unlock(a, H[0], 1, NULL));
	expect_child_ok(pid);
	ck_assert_uint_eq(sem_count(a, H[2]), 0);
	uint32_t c, o;
	mtx_state(a, H[0], &c, &o);
	ck_assert_uint_eq(o, 0);
	finish(a);
}
END_TEST

static int child_takes_and_kills(void *arg)
{
	(void)arg;
	ws_arena *a = child_open();
	uint32_t idx;
	struct timespec dl = deadline_ms(LONG_MS);
	struct ws_wait w = { .objects = H, .count = 1, .owner = 2, .deadline = &dl };
	CHECK(ws_wait_any(a, &w, &idx) == 0, 50);
	CHECK(ws_mutex_kill(a, H[0], 2) == 0, 51);
	ws_arena_close(a);
	return 0;
}

START_TEST(abandoned_across_processes)
{
	ws_arena *a = create_named();
	H[0] = mk_mutex(a, 0, 0);
	pid_t pid = fork_child(child_takes_and_kills, NULL);
	expect_child_ok(pid);
	uint32_t c, o;
	ck_assert_int_eq(mtx_state(a, H[0], &c, &o), -EOWNERDEAD);
	uint32_t idx = 99;
	CK_RC(wait_any_ms(a, H, 1, 1, 0, LONG_MS, &idx), -EOWNERDEAD);
	ck_assert_uint_eq(idx, 0);
	ck_assert_int_eq(mtx_state(a, H[0], &c, &o), 0);
	ck_assert_uint_eq(o, 1);
	finish(a);
}
END_TEST

enum { PINGS = 300 };

static int child_pong(void *arg)
{
	(void)arg;
	ws_arena *a = child_open();
	for (int i = 0; i < PINGS; i++) {
		struct timespec dl = deadline_ms(LONG_MS);
		struct ws_wait w = { .objects = &H[0], .count = 1, .owner = 2, .deadline = &dl };
		uint32_t idx;
		CHECK(ws_wait_any(a, &w, &idx) == 0, 60);
		CHECK(ws_event_set(a, H[1], NULL) == 0, 61);
	}
	ws_arena_close(a);
	return 0;
}

START_TEST(ping_pong)
{
	ws_arena *a = create_named();
	H[0] = mk_event(a, false, false);
	H[1] = mk_event(a, false, false);
	pid_t pid = fork_child(child_pong, NULL);
	for (int i = 0; i < PINGS; i++) {
		CK_OK(ws_event_set(a, H[0], NULL));
		uint32_t idx;
		int rc = wait_any_ms(a, &H[1], 1, 1, 0, LONG_MS, &idx);
		ck_assert_msg(rc == 0, "ping %d: %d (%s)", i, rc, errname(rc));
	}
	expect_child_ok(pid);
	finish(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("cross_process");
	TCase *tc = tcase_create("cross_process");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, child_waits_parent_sets);
	tcase_add_test(tc, child_waits_parent_pulses);
	tcase_add_test(tc, parent_waits_child_signals);
	tcase_add_test(tc, handles_identical_across_processes);
	tcase_add_test(tc, child_wait_all_parent_releases);
	tcase_add_test(tc, abandoned_across_processes);
	tcase_add_test(tc, ping_pong);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
