/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A wait on a list its thread found valid before (memo.h) never takes an
 * object set after one of its handles was seen closed (libwinsync-fault).
 * NT checks every handle of the list at the instant the wait is satisfied,
 * so such a wait must fail with -EBADF.  Two windows, each held open by a
 * process that stops itself (SIGSTOP) at every fault point in turn:
 *
 *   - the waiter stopped inside its wait, while this process closes #5 of
 *     its list and then sets #0: the wait read the arena's count of closes
 *     before the heads, so the memo held and #0 was taken;
 *   - the closer stopped inside ws_close, after the closed handle already
 *     read as closed (a set of it returned -EBADF) but before the count
 *     moved: this process sets #0 and its own memo'd wait took it.
 *
 * This process acts through a WS_ARENA_NONBLOCK pointer where the stopped
 * process may hold a lock, and counts the stops it could act at.
 */
#define _GNU_SOURCE
#include "robust.h"

#include <signal.h>
#include <sys/wait.h>

#include "fault_api.h"

#define LIST 8
#define CLOSED 5 /* the entry closed; #0 is the one set */

static char name[80];
static ws_handle list[LIST];

/* Exit statuses of the children. */
enum { CHILD_OK = 0, CHILD_TOOK = 20, CHILD_ODD = 21 };

static struct ws_wait poll_of(uint32_t owner, const struct timespec *past)
{
	return (struct ws_wait){ .objects = list, .count = LIST, .owner = owner, .deadline = past };
}

/* The waiter: keeps the list (a wait that takes #0), then waits again, stopping at point k. */
static int stopping_waiter(void *arg)
{
	const struct timespec past = deadline_past();
	const struct ws_wait w = poll_of(0x51, &past);
	ws_arena *a = NULL;
	uint32_t idx = UINT32_MAX;
	int rc;

	CHILD_CHECK(ws_arena_open(name, &a) == 0, 10);
	CHILD_CHECK(ws_wait_any(a, &w, &idx) == 0 && idx == 0, 11);
	ws_fault_arm_signal((long)(intptr_t)arg, SIGSTOP);
	rc = ws_wait_any(a, &w, &idx);
	ws_fault_arm(0);
	if (rc == 0)
		return CHILD_TOOK;
	return rc == -EBADF || rc == -ETIMEDOUT ? CHILD_OK : CHILD_ODD;
}

/* The closer: closes #5, stopping at point k. */
static int stopping_closer(void *arg)
{
	ws_arena *a = NULL;

	CHILD_CHECK(ws_arena_open(name, &a) == 0, 10);
	ws_fault_arm_signal((long)(intptr_t)arg, SIGSTOP);
	CHILD_CHECK(ws_close(a, list[CLOSED]) == 0, 12);
	ws_fault_arm(0);
	return CHILD_OK;
}

static void expect_child(pid_t pid, long k, const char *who)
{
	char buf[64];
	int status;

	ck_assert(reap_child(pid, LONG_MS, &status));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == CHILD_OK,
		      "point %ld: the %s ended with %s%s", k, who, status_str(status, buf, sizeof buf),
		      WIFEXITED(status) && WEXITSTATUS(status) == CHILD_TOOK ?
		      ": its wait took #0, set after #5 was closed" : "");
}

/* #CLOSED live again and #0 unsignaled, for the next point. */
static void renew(ws_arena *a, bool closed)
{
	if (closed)
		list[CLOSED] = mk_event(a, false, false);
	CK_OK(ws_event_reset(a, list[0], NULL));
}

/* A named arena with the list's events, and *nb: a WS_ARENA_NONBLOCK pointer to it. */
static ws_arena *list_arena(const char *tag, ws_arena **nb)
{
	ws_arena *a = named_arena(name, sizeof name, tag, 64);

	for (int i = 0; i < LIST; i++)
		list[i] = mk_event(a, false, false);
	*nb = NULL;
	CK_OK(ws_arena_open(name, nb));
	CK_OK(ws_arena_set_flags(*nb, WS_ARENA_NONBLOCK));
	return a;
}

START_TEST(waiter_stopped_in_its_wait_sees_the_close)
{
	ws_arena *nb, *a = list_arena("memowin", &nb);
	long k;
	int acted = 0, status;

	for (k = 1; k < 400; k++) {
		bool closed = false;
		pid_t pid;
		int rc;

		CK_OK(ws_event_set(a, list[0], NULL)); /* for the child's first wait */
		pid = fork_child_fn(stopping_waiter, (void *)(intptr_t)k);
		if (!stopped_or_ended(pid, LONG_MS, &status)) {
			ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == CHILD_OK,
				      "point %ld: the waiter ended with status %#x", k, status);
			break; /* k is past its wait's last point */
		}
		rc = ws_close(nb, list[CLOSED]);
		ck_assert_msg(rc == 0 || rc == -EAGAIN, "point %ld: ws_close: %s", k, errname(rc));
		if (rc == 0) {
			closed = true;
			rc = ws_event_set(nb, list[0], NULL);
			ck_assert_msg(rc == 0 || rc == -EAGAIN, "point %ld: ws_event_set: %s", k,
				      errname(rc));
			acted += rc == 0;
		}
		kill(pid, SIGCONT);
		expect_child(pid, k, "waiter");
		renew(a, closed);
	}
	printf("memo window, waiter stopped: %ld points, a close and a set at %d of them\n", k - 1,
	       acted);
	ck_assert_msg(acted > 0, "no stop of the waiter let this process close and set");
	ws_arena_close(nb);
	drop_arena(a, name);
}
END_TEST

START_TEST(closer_stopped_in_its_close_is_seen_by_a_memo)
{
	ws_arena *nb, *a = list_arena("memocls", &nb);
	const struct timespec past = deadline_past();
	const struct ws_wait w = poll_of(self_owner(), &past);
	long k;
	int acted = 0, status;

	for (k = 1; k < 400; k++) {
		uint32_t idx = UINT32_MAX;
		pid_t pid;
		int rc;

		/* This thread keeps the list: a wait that takes #0. */
		CK_OK(ws_event_set(a, list[0], NULL));
		CK_OK(ws_wait_any(a, &w, &idx));
		ck_assert_uint_eq(idx, 0);
		pid = fork_child_fn(stopping_closer, (void *)(intptr_t)k);
		if (!stopped_or_ended(pid, LONG_MS, &status)) {
			ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == CHILD_OK,
				      "point %ld: the closer ended with status %#x", k, status);
			renew(a, true);
			break; /* k is past the close's last point */
		}
		/* Seen closed: from now on no wait on the list may succeed. */
		if (ws_event_set(nb, list[CLOSED], NULL) == -EBADF &&
		    ws_event_set(nb, list[0], NULL) == 0) {
			acted++;
			rc = ws_wait_any(a, &w, &idx);
			ck_assert_msg(rc == -EBADF, "point %ld: a wait on the list returned %s "
				      "(index %u) after #5 was seen closed and then #0 set", k,
				      errname(rc), idx);
		}
		kill(pid, SIGCONT);
		expect_child(pid, k, "closer");
		renew(a, true);
	}
	printf("memo window, closer stopped: %ld points, #5 seen closed at %d of them\n", k - 1,
	       acted);
	ck_assert_msg(acted > 0, "no stop of the closer showed #5 closed");
	ws_arena_close(nb);
	drop_arena(a, name);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("memo_window");
	TCase *tc = tcase_create("memo_window");

	tcase_set_timeout(tc, 280);
	tcase_add_test(tc, waiter_stopped_in_its_wait_sees_the_close);
	tcase_add_test(tc, closer_stopped_in_its_close_is_seen_by_a_memo);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
