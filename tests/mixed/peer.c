/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The other process of test_mixed: a program of the other ABI (built -m32
 * next to the 64-bit suite) that opens the test's arena by name and runs the
 * calls it reads from stdin, one per line, answering each with one line:
 *     <rc> [<value> [<value>]]
 * It is single-threaded, so a command that blocks (a wait) shows the test a
 * process asleep in the kernel; the answer comes when the wait ends.
 *
 *   open NAME                    ws_arena_open
 *   tid                          its thread id (the owner id it uses)
 *   abi                          its pointer size in bits
 *   event_set|event_reset|event_pulse H     -> rc was_signaled
 *   event_read H                 -> rc signaled manual
 *   sem_release H N              -> rc previous
 *   sem_read H                   -> rc count max
 *   mutex_unlock H               -> rc previous (owner: its thread id)
 *   mutex_read H                 -> rc count owner
 *   create_event MANUAL SIGNALED | create_sem COUNT MAX | create_mutex COUNT  -> rc handle
 *   wait_any|wait_all MS H...    -> rc index (owner: its thread id; MS < 0: forever)
 *   check                        ws_arena_check -> rc
 *   exit                         _exit(0) at once: holding what it holds
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <winsync.h>

static ws_arena *arena;

static uint32_t arg_u32(char **save)
{
	char *tok = strtok_r(NULL, " \n", save);

	if (!tok) {
		fprintf(stderr, "peer: missing argument\n");
		exit(2);
	}
	return (uint32_t)strtoul(tok, NULL, 0);
}

static void answer(int rc, long long a, long long b)
{
	printf("%d %lld %lld\n", rc, a, b);
	fflush(stdout);
}

static void do_wait(bool all, char **save)
{
	long ms = (long)(int32_t)arg_u32(save);
	ws_handle objects[WS_MAX_WAIT_OBJECTS];
	uint32_t count = 0, index = 0;
	struct timespec deadline;
	char *tok;

	while ((tok = strtok_r(NULL, " \n", save)) && count < WS_MAX_WAIT_OBJECTS)
		objects[count++] = (ws_handle)strtoul(tok, NULL, 0);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += ms / 1000;
	deadline.tv_nsec += (ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	struct ws_wait w = {
		.objects = objects, .count = count, .owner = (uint32_t)gettid(),
		.deadline = ms < 0 ? NULL : &deadline,
	};
	int rc = all ? ws_wait_all(arena, &w, &index) : ws_wait_any(arena, &w, &index);
	answer(rc, index, 0);
}

static void run(char *line)
{
	char *save = NULL;
	char *cmd = strtok_r(line, " \n", &save);
	uint32_t u = 0, v = 0;
	bool b1 = false, b2 = false;
	ws_handle h = 0;
	int rc;

	if (!cmd)
		return;
	if (!strcmp(cmd, "open")) {
		char *name = strtok_r(NULL, " \n", &save);
		answer(name ? ws_arena_open(name, &arena) : -EINVAL, 0, 0);
	} else if (!strcmp(cmd, "tid")) {
		answer(0, gettid(), 0);
	} else if (!strcmp(cmd, "abi")) {
		answer(0, (long long)sizeof(void *) * 8, 0);
	} else if (!strcmp(cmd, "event_set")) {
		rc = ws_event_set(arena, arg_u32(&save), &b1);
		answer(rc, b1, 0);
	} else if (!strcmp(cmd, "event_reset")) {
		rc = ws_event_reset(arena, arg_u32(&save), &b1);
		answer(rc, b1, 0);
	} else if (!strcmp(cmd, "event_pulse")) {
		rc = ws_event_pulse(arena, arg_u32(&save), &b1);
		answer(rc, b1, 0);
	} else if (!strcmp(cmd, "event_read")) {
		rc = ws_event_read(arena, arg_u32(&save), &b1, &b2);
		answer(rc, b1, b2);
	} else if (!strcmp(cmd, "sem_release")) {
		h = arg_u32(&save);
		rc = ws_sem_release(arena, h, arg_u32(&save), &u);
		answer(rc, u, 0);
	} else if (!strcmp(cmd, "sem_read")) {
		rc = ws_sem_read(arena, arg_u32(&save), &u, &v);
		answer(rc, u, v);
	} else if (!strcmp(cmd, "mutex_unlock")) {
		rc = ws_mutex_unlock(arena, arg_u32(&save), (uint32_t)gettid(), &u);
		answer(rc, u, 0);
	} else if (!strcmp(cmd, "mutex_read")) {
		rc = ws_mutex_read(arena, arg_u32(&save), &u, &v);
		answer(rc, u, v);
	} else if (!strcmp(cmd, "create_event")) {
		b1 = arg_u32(&save);
		b2 = arg_u32(&save);
		rc = ws_event_create(arena, b1, b2, &h);
		answer(rc, h, 0);
	} else if (!strcmp(cmd, "create_sem")) {
		u = arg_u32(&save);
		rc = ws_sem_create(arena, u, arg_u32(&save), &h);
		answer(rc, h, 0);
	} else if (!strcmp(cmd, "create_mutex")) {
		u = arg_u32(&save);
		rc = ws_mutex_create(arena, u ? (uint32_t)gettid() : 0, u, &h);
		answer(rc, h, 0);
	} else if (!strcmp(cmd, "wait_any") || !strcmp(cmd, "wait_all")) {
		do_wait(!strcmp(cmd, "wait_all"), &save);
	} else if (!strcmp(cmd, "check")) {
		char report[256] = "";

		rc = ws_arena_check(arena, report, sizeof report);
		if (rc)
			fprintf(stderr, "peer: ws_arena_check: %s\n", report);
		answer(rc, 0, 0);
	} else if (!strcmp(cmd, "exit")) {
		_exit(0);
	} else {
		fprintf(stderr, "peer: unknown command '%s'\n", cmd);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	char line[4096];

	if (argc > 1) {
		/* The usage is the comment at the top of this file, in short. */
		printf("usage: %s < COMMANDS\n"
		       "The 32-bit peer of test_mixed: opens an arena by name and runs the winsync\n"
		       "calls read from stdin, one per line (open NAME, event_set H, wait_all MS H...,\n"
		       "check, exit, ...; see tests/mixed/peer.c), answering \"rc [value [value]]\".\n",
		       argv[0]);
		return strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? 2 : 0;
	}

	while (fgets(line, sizeof line, stdin))
		run(line);
	if (arena)
		ws_arena_close(arena);
	return 0;
}
