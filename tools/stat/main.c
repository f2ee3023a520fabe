/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* winsync-stat: command line; see winsync-stat(1). */
#include "stat.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

enum view {
	VIEW_ALL,
	VIEW_CHAINS,
	VIEW_JSON,
};

struct run {
	const char *name;
	enum view view;
	unsigned cycles;
};

static int show(FILE *out, void *ctx)
{
	struct run *run = ctx;
	struct ws_snapshot *s;
	int ret = ws_snapshot_open(run->name, 0, &s);

	if (ret) {
		fprintf(stderr, "winsync-stat: %s: %s%s\n", run->name, strerror(-ret),
			ret == -EPROTO ? " (an arena of another winsync version)" :
			ret == -EACCES ? " (not a file of yours with mode 0600)" : "");
		return ret;
	}
	switch (run->view) {
	case VIEW_JSON:
		stat_print_json(out, run->name, s);
		break;
	case VIEW_CHAINS:
		fprintf(out, "arena %s: %u threads, %u deadlocked%s\n", run->name, s->thread_count,
			s->deadlocked, s->gave_up ? " (some reads gave up: see the full view)" : "");
		run->cycles = stat_print_chains(out, s);
		break;
	default:
		stat_print_text(out, run->name, s);
	}
	ws_snapshot_free(s);
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: winsync-stat [--chains | --json] [--watch [--interval MS]] "
		     "(NAME | --wine-prefix DIR)\n"
		     "  NAME               a shared arena (/dev/shm/winsync-NAME)\n"
		     "  --wine-prefix DIR  the arena of a Wine prefix run with WINEWINSYNC=1\n"
		     "  --chains           only the wait chains and cycles\n"
		     "  --json             the whole snapshot as JSON\n"
		     "  --watch            redraw every second until q is typed\n"
		     "  --interval MS      the --watch period (default 1000)\n");
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "chains", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "watch", no_argument, NULL, 'w' },
		{ "interval", required_argument, NULL, 'i' },
		{ "wine-prefix", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct run run = { 0 };
	const char *prefix = NULL;
	char name[96], why[512];
	unsigned interval = 1000;
	bool watch = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "cjwi:p:h", options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			run.view = VIEW_CHAINS;
			break;
		case 'j':
			run.view = VIEW_JSON;
			break;
		case 'w':
			watch = true;
			break;
		case 'i':
			interval = (unsigned)strtoul(optarg, NULL, 10);
			if (interval < 50)
				interval = 50;
			break;
		case 'p':
			prefix = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if ((prefix != NULL) == (optind < argc) || argc - optind > 1) {
		usage(stderr);
		return 2;
	}
	if (prefix) {
		if (stat_wine_arena(prefix, name, sizeof(name), why, sizeof(why))) {
			fprintf(stderr, "winsync-stat: %s\n", why);
			return 1;
		}
		run.name = name;
	} else {
		run.name = argv[optind];
	}
	if (watch)
		return stat_watch(show, &run, interval);
	return show(stdout, &run) ? 1 : 0;
}
