/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-stat on a deliberate deadlock across two processes: each takes
 * its mutex, then waits forever for the other's.  The tool, a third
 * process reading the arena read-only, prints the cycle (--chains), lists
 * it in --json, and shows both threads DEADLOCKED in the full view; once
 * one side is killed, the cycle is gone.
 */
#define _GNU_SOURCE
#include "robust.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#ifndef WINSYNC_STAT
#error "WINSYNC_STAT: the path of winsync-stat"
#endif

struct shared {
	ws_handle m[2];
	_Atomic int holding[2];
	_Atomic int go;
};

static char name[96];
static struct shared *sh;

static int side(void *arg)
{
	int me = (int)(intptr_t)arg;
	uint32_t owner = 0x2c + 4 * (uint32_t)me, idx;
	ws_arena *a = NULL;
	struct ws_wait wait = { .objects = &sh->m[!me], .count = 1, .owner = owner };

	if (ws_arena_open(name, &a) || poll_any(a, &sh->m[me], 1, owner, &idx))
		return 1;
	atomic_store(&sh->holding[me], 1);
	while (!atomic_load(&sh->go))
		sleep_ms(1);
	ws_wait_any(a, &wait, &idx);
	return 2; /* never: the other never lets go */
}

/* Runs the tool; its whole output in `out`, its exit status returned. */
static int run_tool(const char *args, char *out, size_t size)
{
	char cmd[512];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", WINSYNC_STAT, args);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (n + 1 < size && !feof(p)) {
		size_t got = fread(out + n, 1, size - n - 1, p);

		if (!got)
			break;
		n += got;
	}
	out[n] = 0;
	return pclose(p);
}

START_TEST(cycle_across_two_processes)
{
	static char out[65536];
	char args[256];
	ws_arena *a;
	pid_t pid[2];
	int status;

	sh = shared_alloc(sizeof(*sh));
	a = named_arena(name, sizeof name, "stat", 64);
	sh->m[0] = mk_mutex(a, 0, 0);
	sh->m[1] = mk_mutex(a, 0, 0);
	for (int i = 0; i < 2; i++) {
		pid[i] = fork_child_fn(side, (void *)(intptr_t)i);
		while (!atomic_load(&sh->holding[i]))
			sleep_ms(1);
	}
	atomic_store(&sh->go, 1);
	wait_proc_blocked(pid[0]);
	wait_proc_blocked(pid[1]);

	snprintf(args, sizeof(args), "--chains %s", name);
	status = run_tool(args, out, sizeof(out));
	printf("%s", out);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x: %s", status, out);
	ck_assert_msg(strstr(out, "thread 0x2c (tid ") && strstr(out, "waits on mutex ") &&
			      strstr(out, "owned by thread 0x30 (tid "),
		      "no chain 0x2c -> 0x30: %s", out);
	ck_assert_msg(strstr(out, ": cycle (deadlock)"), "no cycle: %s", out);
	ck_assert_msg(strstr(out, "  1 cycle\n"), "not one cycle: %s", out);
	ck_assert_msg(strstr(out, "2 deadlocked"), "%s", out);

	/* Thread 0 is this process (it created the objects); 1 and 2 are the sides. */
	snprintf(args, sizeof(args), "--json %s", name);
	status = run_tool(args, out, sizeof(out));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", out);
	ck_assert_msg(strstr(out, "\"deadlocked\": 2") && strstr(out, "\"cycles\": [[1, 2]]"),
		      "json: %s", out);
	ck_assert_msg(strstr(out, "\"schema\": 1"), "%s", out);

	snprintf(args, sizeof(args), "%s", name);
	status = run_tool(args, out, sizeof(out));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", out);
	ck_assert_msg(strstr(out, "DEADLOCKED") && strstr(out, "arena lock: free") &&
			      strstr(out, "0 problems"),
		      "full view: %s", out);

	/* One side dies: its mutex goes to the other, abandoned, and the cycle is gone. */
	kill_reap(pid[0]);
	sleep_ms(200);
	snprintf(args, sizeof(args), "--chains %s", name);
	status = run_tool(args, out, sizeof(out));
	ck_assert_msg(strstr(out, "  0 cycles\n") && !strstr(out, ": cycle"), "after: %s", out);
	kill_reap(pid[1]);
	drop_arena(a, name);
	shared_free(sh, sizeof(*sh));
}
END_TEST

/*
 * --wine-prefix finds the arena the way a patched wineserver names it, in
 * Debian's layout: PREFIX/wineserver names a directory under $TMPDIR that
 * holds server-DEV-INO (the prefix's), whose own device and inode name the
 * arena.  Built here by hand, with no Wine.
 */
START_TEST(wine_prefix_lookup)
{
	char tmp[] = "/tmp/wstest-stat-XXXXXX", prefix[160], server[256], arena[96], cmd[512];
	static char out[65536];
	struct stat st;
	ws_arena *a;
	ws_handle e;
	FILE *f;
	int status;

	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(prefix, sizeof prefix, "%s/prefix", tmp);
	ck_assert_int_eq(mkdir(prefix, 0700), 0);
	ck_assert_int_eq(stat(prefix, &st), 0);
	f = fopen(strcat(strcpy(server, prefix), "/wineserver"), "w");
	ck_assert_ptr_nonnull(f);
	fputs("wine-root\n", f);
	fclose(f);
	snprintf(server, sizeof server, "%s/wine-root", tmp);
	ck_assert_int_eq(mkdir(server, 0700), 0);
	snprintf(server, sizeof server, "%s/wine-root/server-%llx-%llx", tmp,
		 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	ck_assert_int_eq(mkdir(server, 0700), 0);
	ck_assert_int_eq(stat(server, &st), 0);
	snprintf(arena, sizeof arena, "wine-%llx-%llx", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	ws_arena_unlink(arena);
	CK_OK(ws_arena_create(arena, 64, &a));
	CK_OK(ws_event_create(a, true, true, &e));

	snprintf(cmd, sizeof cmd, "env TMPDIR=%s %s --json --wine-prefix %s 2>&1", tmp, WINSYNC_STAT,
		 prefix);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	out[fread(out, 1, sizeof out - 1, f)] = 0;
	status = pclose(f);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", out);
	ck_assert_msg(strstr(out, arena) && strstr(out, "\"signaled\": true"), "%s", out);
	ws_arena_close(a);
	ws_arena_unlink(arena);
	rmdir(server);
	snprintf(server, sizeof server, "%s/wine-root", tmp);
	rmdir(server);
	snprintf(server, sizeof server, "%s/wineserver", prefix);
	unlink(server);
	rmdir(prefix);
	rmdir(tmp);
}
END_TEST

START_TEST(usage_and_refusals)
{
	char out[4096];
	int status;

	status = run_tool("", out, sizeof(out));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 2, "%s", out);
	status = run_tool("wstest-no-such-arena", out, sizeof(out));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1, "%s", out);
	ck_assert_msg(strstr(out, "No such file"), "%s", out);
	status = run_tool("--wine-prefix /nonexistent-prefix", out, sizeof(out));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1, "%s", out);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("stat_tool");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, cycle_across_two_processes);
	tcase_add_test(tc, wine_prefix_lookup);
	tcase_add_test(tc, usage_and_refusals);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
