/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-random: options and modes.
 *
 *   winsync-random --mode MODE [--seed N] [--seconds S] [--keep-going]
 *   winsync-random --list
 *
 * The seed defaults to a fixed one per mode, the length to 8 seconds.
 * Exit status: 0 clean, 1 violations (each kind printed in full once, with
 * the command line that repeats the run), 2 set-up error, 77 skipped.
 */
#include "rt.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rt_shm_create(size_t pool);

/* Weights, in enum rt_kind order:
 * create close release sem_read unlock kill mutex_read owner_died
 * set reset pulse event_read wait_any wait_all arena check misc */
static const struct rt_mode modes[] = {
	{ .name = "exact", .about = "own objects only: every result predicted exactly",
	  .capacity = 8192, .parent_actors = 4, .children = 1, .child_actors = 2, .own_max = 16,
	  .weight = { 8, 6, 8, 8, 6, 2, 6, 2, 8, 6, 4, 8, 16, 10, 1, 2, 3 },
	  .bad_pct = 5, .big_wait_pct = 5, .poll_pct = 75, .long_wait_pct = 0, .signals = 20, .cancels = 1 },
	{ .name = "shared", .about = "own and pool objects from threads of several processes",
	  .capacity = 8192, .parent_actors = 3, .children = 2, .child_actors = 2,
	  .pool_events = 16, .pool_sems = 8, .pool_mutexes = 6, .own_max = 8,
	  .weight = { 2, 2, 10, 6, 8, 1, 4, 2, 10, 6, 4, 4, 20, 10, 1, 2, 3 },
	  .bad_pct = 3, .pool_pct = 60, .big_wait_pct = 5, .poll_pct = 40, .long_wait_pct = 5, .signals = 20,
	  .cancels = 1 },
	{ .name = "waitall", .about = "wait_all on large sets over shared events",
	  .capacity = 8192, .parent_actors = 5, .children = 1, .child_actors = 2,
	  .pool_events = 64, .pool_sems = 6, .pool_mutexes = 4, .own_max = 4,
	  .weight = { 1, 1, 6, 2, 6, 1, 2, 1, 14, 4, 6, 2, 6, 30, 0, 2, 1 },
	  .bad_pct = 1, .pool_pct = 90, .big_wait_pct = 60, .poll_pct = 30, .long_wait_pct = 10, .signals = 5,
	  .cancels = 1 },
	{ .name = "close", .about = "reads, releases and waits racing closes and slot reuse",
	  .capacity = 32, .parent_actors = 4, .children = 2, .child_actors = 2, .table = 12,
	  .own_max = 1,
	  .weight = { 6, 5, 14, 24, 2, 0, 6, 0, 8, 4, 4, 24, 10, 4, 0, 1, 1 },
	  .bad_pct = 2, .pool_pct = 95, .poll_pct = 80, .long_wait_pct = 2, .signals = 20000 },
	{ .name = "deaths", .about = "children killed, threads ended inside calls",
	  .capacity = 16384, .parent_actors = 2, .children = 3, .child_actors = 2,
	  .pool_events = 16, .pool_sems = 8, .pool_mutexes = 6, .own_max = 8,
	  .weight = { 2, 2, 10, 6, 8, 1, 4, 2, 10, 6, 4, 4, 20, 10, 1, 2, 3 },
	  .bad_pct = 3, .pool_pct = 60, .big_wait_pct = 5, .poll_pct = 40, .long_wait_pct = 5, .kills = 30,
	  .signals = 10, .cancels = 1 },
	{ .name = "nonblock", .about = "WS_ARENA_NONBLOCK pointers while children are stopped",
	  .capacity = 8192, .parent_actors = 3, .children = 2, .child_actors = 2,
	  .pool_events = 16, .pool_sems = 8, .pool_mutexes = 6, .own_max = 8,
	  .weight = { 4, 4, 10, 6, 8, 1, 4, 2, 10, 6, 4, 4, 20, 10, 1, 2, 3 },
	  .bad_pct = 3, .pool_pct = 60, .big_wait_pct = 5, .poll_pct = 40, .long_wait_pct = 5, .stops = 10,
	  .nonblock_pct = 60, .signals = 10, .cancels = 1 },
	{ .name = "badinput", .about = "bad arguments to every call, half the time",
	  .capacity = 8192, .parent_actors = 3, .children = 1, .child_actors = 2,
	  .pool_events = 8, .pool_sems = 4, .pool_mutexes = 4, .own_max = 12,
	  .weight = { 8, 6, 8, 8, 6, 2, 6, 3, 8, 6, 4, 8, 14, 10, 4, 3, 4 },
	  .bad_pct = 50, .pool_pct = 40, .big_wait_pct = 5, .poll_pct = 60, .long_wait_pct = 2, .signals = 10,
	  .cancels = 1 },
	{ .name = "many", .about = "60,000 shared objects in an arena near its capacity",
	  .capacity = 61000, .parent_actors = 3, .children = 1, .child_actors = 2,
	  .pool_events = 40000, .pool_sems = 15000, .pool_mutexes = 5000, .own_max = 16,
	  .weight = { 8, 6, 8, 6, 6, 1, 4, 2, 10, 6, 4, 4, 16, 10, 0, 1, 2 },
	  .bad_pct = 3, .pool_pct = 80, .big_wait_pct = 30, .poll_pct = 40, .long_wait_pct = 5, .signals = 10,
	  .cancels = 1 },
};

#define NMODES (sizeof modes / sizeof modes[0])

static void usage(FILE *f)
{
	fprintf(f, "usage: winsync-random --mode MODE [--seed N] [--seconds S] [--keep-going]\n"
		   "       winsync-random --list\n"
		   "A seeded random tester of the whole API (tests/random/README.md).\nmodes:");
	for (size_t i = 0; i < NMODES; i++)
		fprintf(f, " %s", modes[i].name);
	fprintf(f, "\n");
}

int main(int argc, char **argv)
{
	const struct rt_mode *mode = NULL;
	char self[400];
	uint64_t seed = 0;
	bool have_seed = false, keep_going = false;
	double seconds = 8;
	ssize_t n;

	if (argc >= 2 && strcmp(argv[1], "--child") == 0)
		return rt_child_main(argc, argv);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--list") == 0) {
			for (size_t m = 0; m < NMODES; m++)
				printf("%-10s %s\n", modes[m].name, modes[m].about);
			return 0;
		} else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
			const char *name = argv[++i];

			for (size_t m = 0; m < NMODES; m++)
				if (strcmp(modes[m].name, name) == 0)
					mode = &modes[m];
		} else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 0);
			have_seed = true;
		} else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else if (strcmp(argv[i], "--keep-going") == 0) {
			keep_going = true;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!mode || seconds <= 0) {
		usage(stderr);
		return 2;
	}
	if (!have_seed)
		seed = 1000 + (uint64_t)(mode - modes);
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return 2;
	self[n] = 0;
	if (rt_shm_create(mode->pool_events + mode->pool_sems + mode->pool_mutexes)) {
		perror("winsync-random: shared memory");
		return 2;
	}
	rt_shm->seed = seed;
	rt_shm->seconds = seconds;
	rt_shm->mode = *mode;
	rt_shm->keep_going = keep_going;
	rt_shm->pool_count = mode->pool_events + mode->pool_sems + mode->pool_mutexes;
	rt_shm->parent_pid = (int32_t)getpid();
	rt_name_run(0);
	snprintf(rt_shm->command, sizeof rt_shm->command,
		 "%s --mode %s --seed %llu --seconds %g%s", self, mode->name,
		 (unsigned long long)seed, seconds, keep_going ? " --keep-going" : "");
	rt_shm->start_ns = rt_now_ns();
	return rt_run(self);
}
