/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-verify: records what NT sync backends do under a seeded
 * concurrent workload and checks it against the NT model
 * (winsync-verify(1)).
 *
 *   winsync-verify run --backend B [options]     record one history (and check it)
 *   winsync-verify check FILE [options]          check a history
 *   winsync-verify fuzz --backend B [options]    record and check seed after seed
 *   winsync-verify overhead --backend B          what recording costs per call
 *   winsync-verify benchmark                     the checker's time by history size
 *   winsync-verify backends                      list the backends
 *
 * Exit status: 0 linearizable, 1 not linearizable (or, with fuzz
 * --expect-failure, not caught), 2 unknown (a bound was hit), 3 error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "check.h"
#include "paths.h"
#include "registry.h"
#include "render.h"


enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_UNKNOWN = 2, EXIT_ERROR = 3 };

struct opts {
	struct vw_config workload;
	const struct vt_backend *backend;
	const char *output;      /* run: the history file */
	const char *html, *svg;
	const char *counterexample; /* --counterexample FILE */
	const char *exe, *wine;
	const char *keep;        /* fuzz: where failing histories go */
	double minutes;
	uint32_t seeds;
	uint32_t rounds;
	const char *sizes;       /* benchmark: the history sizes */
	bool check;              /* run: check too */
	bool expect_failure;
	bool quiet;
	struct vc_options check_opts;
};

/* --- Progress: one line rewritten on a terminal, a line every few seconds otherwise. --- */

static uint64_t last_progress;

static void progress(bool final, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void progress(bool final, const char *fmt, ...)
{
	uint64_t now = vs_now_ns();
	bool tty = isatty(STDERR_FILENO);
	va_list ap;

	if (!final && now - last_progress < (tty ? 200000000ull : 10000000000ull))
		return;
	last_progress = now;
	va_start(ap, fmt);
	if (tty)
		fputs("\r\033[K", stderr);
	vfprintf(stderr, fmt, ap);
	if (!tty || final)
		fputc('\n', stderr);
	fflush(stderr);
	va_end(ap);
}

static void check_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	progress(false, "checking: %" PRIu64 " of %" PRIu64 " operations", done, total);
}

static void usage(FILE *f)
{
	fputs("usage: winsync-verify run --backend NAME [workload] [-o FILE] [--check [checking]]\n"
	      "       winsync-verify check FILE [checking]\n"
	      "       winsync-verify fuzz --backend NAME [--minutes M | --seeds N] [--keep DIR]\n"
	      "                           [--expect-failure] [workload] [checking]\n"
	      "       winsync-verify overhead --backend NAME [--rounds N] [workload]\n"
	      "       winsync-verify benchmark [--backend NAME] [--rounds N] [--sizes N,N,...] [workload]\n"
	      "       winsync-verify backends\n"
	      "workload: --seed S --threads N --ops N --objects N --stretch N --max-timeout MS\n"
	      "          --no-deaths --no-closes --polls-only --no-delays\n"
	      "          --exe FILE --wine COMMAND (the Windows recorder and how to run it)\n"
	      "checking: --html FILE --svg FILE --counterexample FILE --time-limit SECONDS --memory-limit MB\n"
	      "          --shrink-steps N --no-shrink --stretches-only --quiet\n"
	      "See winsync-verify(1).\n",
	      f);
}

/* --- Recording ------------------------------------------------------------------------- */

/* A command-line word for /bin/sh. */
static void quoted(char *buf, size_t size, const char *word)
{
	size_t n = 0;

	if (n + 1 < size)
		buf[n++] = '\'';
	for (; *word && n + 5 < size; word++) {
		if (*word == '\'') {
			memcpy(buf + n, "'\\''", 4);
			n += 4;
		} else {
			buf[n++] = *word;
		}
	}
	if (n + 1 < size)
		buf[n++] = '\'';
	buf[n] = 0;
}

static int exe_path(const struct opts *o, char *buf, size_t size)
{
	const char *dir = getenv("WINSYNC_VERIFY_EXE_DIR");
	char installed[4096];

	if (o->exe) {
		snprintf(buf, size, "%s", o->exe);
	} else {
		if (!dir || !*dir)
			dir = vt_exe_dir(installed, sizeof(installed)) ? "." : installed;
		if (snprintf(buf, size, "%s/%s", dir, o->backend->exe) >= (int)size)
			return -1;
	}
	if (access(buf, R_OK)) {
		fprintf(stderr, "winsync-verify: %s: no Windows recorder '%s' (--exe FILE, or WINSYNC_VERIFY_EXE_DIR)\n",
			o->backend->name, buf);
		return -1;
	}
	return 0;
}

/*
 * Runs the Windows recorder under Wine; its output (a history, then
 * "# calls N ns T") in *text.  0, or -1 with a message.
 */
static int run_external(const struct opts *o, const struct vw_config *c, bool record, char **text, size_t *size)
{
	const char *wine = o->wine;
	char exe[4096], q[8200], args[512], *cmd;
	FILE *p, *out;
	int status;

	if (!wine)
		wine = o->backend->wine_env ? getenv(o->backend->wine_env) : NULL;
	if (!wine || !*wine)
		wine = o->backend->wine_default;
	if (!wine) {
		fprintf(stderr, "winsync-verify: %s needs --wine COMMAND (or %s): the command that runs a Windows "
				"program on Wine with the winsync backend, e.g. 'wine/run.sh --on --'\n",
			o->backend->name, o->backend->wine_env);
		return -1;
	}
	if (exe_path(o, exe, sizeof(exe)))
		return -1;
	quoted(q, sizeof(q), exe);
	va_format(c, args, sizeof(args));
	if (asprintf(&cmd, "%s %s --name %s %s%s", wine, q, o->backend->name, args, record ? "" : " --time") < 0)
		return -1;
	p = popen(cmd, "r");
	if (!p) {
		fprintf(stderr, "winsync-verify: cannot run %s\n", cmd);
		free(cmd);
		return -1;
	}
	out = open_memstream(text, size);
	if (!out) {
		pclose(p);
		free(cmd);
		return -1;
	}
	{
		char buf[65536];
		size_t n;

		while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
			fwrite(buf, 1, n, out);
	}
	fclose(out);
	status = pclose(p);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "winsync-verify: '%s' failed (status %d)\n", cmd, status);
		free(cmd);
		free(*text);
		*text = NULL;
		return -1;
	}
	free(cmd);
	return 0;
}

static int write_file(const char *path, const char *text, size_t size)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(text, 1, size, f) != size || fclose(f)) {
		fprintf(stderr, "winsync-verify: cannot write %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	return 0;
}

/* Records one history with o->backend and the workload c (the output file too, with o->output). */
static int record(const struct opts *o, const struct vw_config *config, struct vh_history *h)
{
	struct vw_config c = *config;
	char error[256];

	if (o->backend->inproc) {
		struct vw_workload w;
		int ret;

		c.caps = o->backend->inproc->caps;
		if (vw_generate(&c, &w)) {
			fprintf(stderr, "winsync-verify: bad workload\n");
			return -1;
		}
		ret = vr_run(&w, o->backend->inproc, true, h, NULL);
		vw_free(&w);
		if (ret)
			return -1;
		if (o->output) {
			FILE *f = fopen(o->output, "w");

			if (!f || vh_write(f, h) || fclose(f)) {
				fprintf(stderr, "winsync-verify: cannot write %s\n", o->output);
				return -1;
			}
		}
		return 0;
	}
	char *text = NULL;
	size_t size = 0;
	FILE *f;
	int ret;

	if (run_external(o, &c, true, &text, &size))
		return -1;
	if (o->output && write_file(o->output, text, size)) {
		free(text);
		return -1;
	}
	f = fmemopen(text, size, "r");
	ret = f ? vh_read(f, h, error, sizeof(error)) : -1;
	if (f)
		fclose(f);
	if (ret)
		fprintf(stderr, "winsync-verify: the Windows recorder's history: %s\n", f ? error : "no memory");
	free(text);
	return ret;
}

/* --- Checking ---------------------------------------------------------------------------- */

static int write_picture(const char *path, const struct vc_report *r, bool html)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "winsync-verify: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (html)
		vc_write_html(f, r);
	else
		vc_write_svg(f, r);
	return fclose(f);
}

static int write_counterexample(const char *path, const struct vc_report *r)
{
	FILE *f = fopen(path, "w");

	if (!f || vc_write_counterexample(f, r) || fclose(f)) {
		fprintf(stderr, "winsync-verify: cannot write %s\n", path);
		return -1;
	}
	return 0;
}

static const char *verdict_name(enum vc_verdict v)
{
	return v == VC_OK ? "linearizable" : v == VC_FAIL ? "NOT LINEARIZABLE" : "unknown";
}

/* Checks h, prints the verdict (and the timeline of a failure); the exit status. */
static int check_history(const struct opts *o, const struct vh_history *h, const char *html, const char *svg,
			 bool summary)
{
	struct vc_report r;
	struct vc_options co = o->check_opts;
	int status;

	if (!o->quiet && summary)
		co.progress = check_progress;
	if (vc_check(h, &co, &r)) {
		fprintf(stderr, "winsync-verify: out of memory while checking\n");
		return EXIT_ERROR;
	}
	if (summary) {
		printf("%s seed %" PRIu64 ": %" PRIu64 " operations of %" PRIu32 " threads: %s "
		       "(%.3f s; %" PRIu32 " groups, %" PRIu32 " stretches, the largest %" PRIu32 " operations, "
		       "%" PRIu64 " steps, %.1f MB)\n",
		       h->backend, h->seed, r.ops, h->threads, verdict_name(r.verdict), r.seconds, r.groups,
		       r.stretches, r.largest_stretch, r.nodes, (double)r.peak_memory / 1048576.0);
		if (r.verdict == VC_UNKNOWN)
			printf("unknown: %s\n", r.unknown);
	}
	if (r.has_failure) {
		if (!o->quiet) {
			printf("\n");
			vc_write_timeline(stdout, &r);
			printf("(shrinking took %.3f s)\n", r.shrink_seconds);
		}
		if (html)
			write_picture(html, &r, true);
		if (svg)
			write_picture(svg, &r, false);
		if (o->counterexample)
			write_counterexample(o->counterexample, &r);
	}
	status = r.verdict == VC_OK ? EXIT_OK : r.verdict == VC_FAIL ? EXIT_FAIL : EXIT_UNKNOWN;
	vc_report_free(&r);
	fflush(stdout);
	return status;
}

/* --- Subcommands --------------------------------------------------------------------------- */

static int cmd_run(struct opts *o)
{
	struct vh_history h;
	int status = EXIT_OK;

	if (record(o, &o->workload, &h))
		return EXIT_ERROR;
	if (!o->check && !o->quiet)
		printf("%s seed %" PRIu64 ": recorded %" PRIu32 " operations of %" PRIu32 " threads%s%s\n",
		       h.backend, h.seed, h.nops, h.threads, o->output ? " into " : "", o->output ? o->output : "");
	if (o->check)
		status = check_history(o, &h, o->html, o->svg, true);
	vh_free(&h);
	return status;
}

static int cmd_check(struct opts *o, const char *path)
{
	struct vh_history h;
	char error[256];
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	int status;

	if (!f) {
		fprintf(stderr, "winsync-verify: %s: %s\n", path, strerror(errno));
		return EXIT_ERROR;
	}
	if (vh_read(f, &h, error, sizeof(error))) {
		fprintf(stderr, "winsync-verify: %s: %s\n", path, error);
		if (f != stdin)
			fclose(f);
		return EXIT_ERROR;
	}
	if (f != stdin)
		fclose(f);
	status = check_history(o, &h, o->html, o->svg, true);
	vh_free(&h);
	return status;
}

static int cmd_fuzz(struct opts *o)
{
	uint64_t start = vs_now_ns(), ops = 0;
	uint64_t end = o->minutes > 0 ? start + (uint64_t)(o->minutes * 60e9) : 0;
	uint32_t runs = 0, failures = 0, unknowns = 0;
	struct vw_config c = o->workload;
	int status = EXIT_OK;

	if (!o->minutes && !o->seeds)
		o->seeds = 10;
	if (o->keep)
		mkdir(o->keep, 0777);
	for (;; c.seed++) {
		struct vh_history h;
		struct vc_report r;
		struct vc_options co = o->check_opts;
		char rest[64];
		double left;

		if (o->seeds && runs == o->seeds)
			break;
		if (end && vs_now_ns() >= end)
			break;
		if (record(o, &c, &h))
			return EXIT_ERROR;
		if (vc_check(&h, &co, &r)) {
			vh_free(&h);
			return EXIT_ERROR;
		}
		runs++;
		ops += r.ops;
		if (r.verdict == VC_UNKNOWN) {
			char path[4096];
			FILE *f;

			unknowns++;
			progress(true, "fuzz %s: seed %" PRIu64 ": unknown (%s)", h.backend, c.seed, r.unknown);
			snprintf(path, sizeof(path), "%s/%s-seed%" PRIu64 ".unknown.history", o->keep ? o->keep : ".",
				 h.backend, c.seed);
			if ((f = fopen(path, "w"))) {
				vh_write(f, &h);
				fclose(f);
				printf("fuzz %s: seed %" PRIu64 ": unknown (%s); kept %s\n", h.backend, c.seed, r.unknown,
				       path);
			}
		}
		if (r.verdict == VC_FAIL) {
			char path[4096];
			FILE *f;

			failures++;
			printf("fuzz %s: seed %" PRIu64 ": NOT LINEARIZABLE (run %" PRIu32 ", %" PRIu32 " operations)\n",
			       h.backend, c.seed, runs, h.nops);
			if (!o->quiet) {
				vc_write_timeline(stdout, &r);
				printf("\n");
			}
			snprintf(path, sizeof(path), "%s/%s-seed%" PRIu64 ".history", o->keep ? o->keep : ".",
				 h.backend, c.seed);
			if ((f = fopen(path, "w"))) {
				vh_write(f, &h);
				fclose(f);
				printf("kept %s\n", path);
			}
			snprintf(path, sizeof(path), "%s/%s-seed%" PRIu64 ".html", o->keep ? o->keep : ".",
				 h.backend, c.seed);
			write_picture(path, &r, true);
			snprintf(path, sizeof(path), "%s/%s-seed%" PRIu64 ".counterexample", o->keep ? o->keep : ".",
				 h.backend, c.seed);
			write_counterexample(path, &r);
			fflush(stdout);
		}
		left = end ? (double)(end - vs_now_ns()) / 1e9 : 0;
		if (left < 0)
			left = 0;
		if (end)
			snprintf(rest, sizeof(rest), ", %.0f s left", left);
		else
			snprintf(rest, sizeof(rest), ", %" PRIu32 " seeds left", o->seeds - runs);
		progress(false, "fuzz %s: seed %" PRIu64 ", %" PRIu32 " runs, %" PRIu64 " operations checked, "
				"%" PRIu32 " not linearizable, %" PRIu32 " unknown%s",
			 h.backend, c.seed, runs, ops, failures, unknowns, rest);
		vc_report_free(&r);
		vh_free(&h);
		if (failures && o->expect_failure)
			break;
	}
	progress(true, "fuzz %s: %" PRIu32 " runs (seeds %" PRIu64 "..%" PRIu64 "), %" PRIu64
		       " operations checked, %" PRIu32 " not linearizable, %" PRIu32 " unknown, %.1f s",
		 o->backend->name, runs, o->workload.seed, o->workload.seed + runs - 1, ops, failures, unknowns,
		 (double)(vs_now_ns() - start) / 1e9);
	printf("fuzz %s: %" PRIu32 " runs, %" PRIu64 " operations checked, %" PRIu32 " not linearizable, %" PRIu32
	       " unknown\n", o->backend->name, runs, ops, failures, unknowns);
	if (o->expect_failure) {
		if (failures) {
			printf("fuzz %s: caught after %" PRIu32 " seed%s\n", o->backend->name, runs, runs > 1 ? "s" : "");
			return EXIT_OK;
		}
		printf("fuzz %s: NOT caught in %" PRIu32 " seeds\n", o->backend->name, runs);
		return EXIT_FAIL;
	}
	if (failures)
		status = EXIT_FAIL;
	else if (unknowns)
		status = EXIT_UNKNOWN;
	return status;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One timed run: wall-clock and processor ns per call, with or without recording. */
static int timed(const struct opts *o, bool rec, double *wall, double *cpu)
{
	struct vr_times t = { 0, 0, 0 };
	struct vw_config c = o->workload;

	if (o->backend->inproc) {
		struct vw_workload w;
		struct vh_history h;
		int ret;

		c.caps = o->backend->inproc->caps;
		if (vw_generate(&c, &w))
			return -1;
		ret = vr_run(&w, o->backend->inproc, rec, &h, &t);
		vw_free(&w);
		if (ret)
			return -1;
		if (rec)
			vh_free(&h);
	} else {
		char *text = NULL, *line;
		size_t size = 0;

		if (run_external(o, &c, rec, &text, &size))
			return -1;
		line = strstr(text, "# calls ");
		if (!line || sscanf(line, "# calls %" SCNu64 " ns %" SCNu64 " cpu %" SCNu64, &t.calls, &t.elapsed_ns,
				    &t.cpu_ns) != 3) {
			free(text);
			return -1;
		}
		free(text);
	}
	*wall = t.calls ? (double)t.elapsed_ns / (double)t.calls : 0;
	*cpu = t.calls ? (double)t.cpu_ns / (double)t.calls : 0;
	return 0;
}

static int cmd_overhead(struct opts *o)
{
	double wall[2][64], cpu[2][64], ratio[2][64];
	uint32_t rounds = o->rounds ? o->rounds : 7;

	if (rounds > 64)
		rounds = 64;
	/* The workload's pauses between calls would only dilute the ratio. */
	o->workload.no_delays = true;
	/* Alternated, so that both see the same machine. */
	for (uint32_t i = 0; i < rounds; i++) {
		if (timed(o, false, &wall[0][i], &cpu[0][i]) || timed(o, true, &wall[1][i], &cpu[1][i]))
			return EXIT_ERROR;
		ratio[0][i] = wall[0][i] > 0 ? wall[1][i] / wall[0][i] : 0;
		ratio[1][i] = cpu[0][i] > 0 ? cpu[1][i] / cpu[0][i] : 0;
		progress(false, "overhead %s: round %" PRIu32 " of %" PRIu32, o->backend->name, i + 1, rounds);
	}
	for (int k = 0; k < 2; k++) {
		qsort(wall[k], rounds, sizeof(double), cmp_double);
		qsort(cpu[k], rounds, sizeof(double), cmp_double);
		qsort(ratio[k], rounds, sizeof(double), cmp_double);
	}
	printf("overhead %s (%" PRIu32 " threads, %" PRIu32 " operations, %s; medians of %" PRIu32 " rounds):\n"
	       "                       wall ns/call (min-max)       cpu ns/call (min-max)\n"
	       "  calls alone       %10.1f (%.1f-%.1f) %14.1f (%.1f-%.1f)\n"
	       "  calls recorded    %10.1f (%.1f-%.1f) %14.1f (%.1f-%.1f)\n"
	       "  recorded / alone  %9.2fx (%.2f-%.2f) %13.2fx (%.2f-%.2f)  (medians of the rounds' ratios)\n",
	       o->backend->name, o->workload.threads, o->workload.ops,
	       o->workload.polls_only ? "polls only" : "the default mix", rounds,
	       wall[0][rounds / 2], wall[0][0], wall[0][rounds - 1], cpu[0][rounds / 2], cpu[0][0],
	       cpu[0][rounds - 1], wall[1][rounds / 2], wall[1][0], wall[1][rounds - 1], cpu[1][rounds / 2],
	       cpu[1][0], cpu[1][rounds - 1], ratio[0][rounds / 2], ratio[0][0], ratio[0][rounds - 1],
	       ratio[1][rounds / 2], ratio[1][0], ratio[1][rounds - 1]);
	return EXIT_OK;
}

static double process_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Checks histories of each size o->rounds times: medians of the wall-clock and processor times. */
static int cmd_benchmark(struct opts *o)
{
	uint32_t rounds = o->rounds ? o->rounds : 5, n = 0;
	double previous = 0;

	if (rounds > 64)
		rounds = 64;
	printf("checking histories of %s (%" PRIu32 " threads, %" PRIu32 " objects, seed %" PRIu64 "); "
	       "medians of %" PRIu32 " checks:\n", o->backend->name, o->workload.threads, o->workload.objects,
	       o->workload.seed, rounds);
	printf("  %10s %8s %12s %12s %12s %10s %10s\n", "operations", "verdict", "wall s", "cpu s", "cpu range",
	       "us/op", "x prev");
	for (const char *p = o->sizes; *p; n++) {
		struct vw_config c = o->workload;
		struct vh_history h;
		double wall[64], cpu[64];
		enum vc_verdict verdict = VC_OK;
		char *end;

		c.ops = (uint32_t)strtoul(p, &end, 10);
		if (end == p || c.ops == 0) {
			fprintf(stderr, "winsync-verify: --sizes: a list of numbers expected\n");
			return EXIT_ERROR;
		}
		p = *end == ',' ? end + 1 : end;
		progress(false, "benchmark: recording %" PRIu32 " operations", c.ops);
		if (record(o, &c, &h))
			return EXIT_ERROR;
		for (uint32_t r = 0; r < rounds; r++) {
			struct vc_options co = o->check_opts;
			struct vc_report rep;
			uint64_t t0 = vs_now_ns();
			double c0 = process_seconds();

			co.progress = NULL;
			if (vc_check(&h, &co, &rep)) {
				vh_free(&h);
				return EXIT_ERROR;
			}
			cpu[r] = process_seconds() - c0;
			wall[r] = (double)(vs_now_ns() - t0) / 1e9;
			verdict = rep.verdict;
			vc_report_free(&rep);
			progress(false, "benchmark: %" PRIu32 " operations, check %" PRIu32 " of %" PRIu32, h.nops, r + 1,
				 rounds);
		}
		qsort(wall, rounds, sizeof(double), cmp_double);
		qsort(cpu, rounds, sizeof(double), cmp_double);
		char growth[16] = "";

		if (previous > 0)
			snprintf(growth, sizeof growth, "%.1fx", cpu[rounds / 2] / previous);
		printf("  %10" PRIu32 " %8s %12.3f %12.3f %5.3f-%-6.3f %10.2f %10s\n", h.nops,
		       verdict == VC_OK ? "ok" : verdict == VC_FAIL ? "FAIL" : "unknown", wall[rounds / 2],
		       cpu[rounds / 2], cpu[0], cpu[rounds - 1], cpu[rounds / 2] * 1e6 / h.nops, growth);
		previous = cpu[rounds / 2];
		vh_free(&h);
		fflush(stdout);
	}
	printf("  (cpu: this process's processor time; wall: elapsed, which other load on the machine inflates)\n");
	return EXIT_OK;
}

static int cmd_backends(void)
{
	for (unsigned i = 0; i < vt_nbackends; i++)
		printf("%-24s %s\n", vt_backends[i].name, vt_backends[i].about);
	return EXIT_OK;
}

static int number(const char *opt, const char *v, double max, double *out)
{
	char *end;

	*out = strtod(v, &end);
	if (!*v || *end || *out < 0 || *out > max) {
		fprintf(stderr, "winsync-verify: %s %s: a number from 0 to %g expected\n", opt, v, max);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	const char *cmd, *file = NULL, *backend = NULL;

	memset(&o, 0, sizeof(o));
	va_defaults(&o.workload);
	o.check_opts.time_limit = 300;
	o.check_opts.memory_limit = (size_t)2048 << 20;
	o.check_opts.shrink = true;
	if (argc < 2) {
		usage(stderr);
		return EXIT_ERROR;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return EXIT_OK;
	}
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		int taken = va_take(&o.workload, argc, argv, &i);
		double v;

		if (taken < 0)
			return EXIT_ERROR;
		if (taken)
			continue;
		bool has = i + 1 < argc;

		if (!strcmp(a, "--backend") && has) {
			backend = argv[++i];
		} else if (!strcmp(a, "-o") && has) {
			o.output = argv[++i];
		} else if (!strcmp(a, "--html") && has) {
			o.html = argv[++i];
		} else if (!strcmp(a, "--counterexample") && has) {
			o.counterexample = argv[++i];
		} else if (!strcmp(a, "--svg") && has) {
			o.svg = argv[++i];
		} else if (!strcmp(a, "--exe") && has) {
			o.exe = argv[++i];
		} else if (!strcmp(a, "--wine") && has) {
			o.wine = argv[++i];
		} else if (!strcmp(a, "--sizes") && has) {
			o.sizes = argv[++i];
		} else if (!strcmp(a, "--keep") && has) {
			o.keep = argv[++i];
		} else if (!strcmp(a, "--minutes") && has) {
			if (number(a, argv[++i], 1e6, &o.minutes))
				return EXIT_ERROR;
		} else if (!strcmp(a, "--seeds") && has) {
			if (number(a, argv[++i], 1e9, &v))
				return EXIT_ERROR;
			o.seeds = (uint32_t)v;
		} else if (!strcmp(a, "--rounds") && has) {
			if (number(a, argv[++i], 64, &v))
				return EXIT_ERROR;
			o.rounds = (uint32_t)v;
		} else if (!strcmp(a, "--time-limit") && has) {
			if (number(a, argv[++i], 1e7, &o.check_opts.time_limit))
				return EXIT_ERROR;
		} else if (!strcmp(a, "--memory-limit") && has) {
			if (number(a, argv[++i], 1 << 20, &v))
				return EXIT_ERROR;
			o.check_opts.memory_limit = (size_t)v << 20;
		} else if (!strcmp(a, "--shrink-steps") && has) {
			if (number(a, argv[++i], 1e12, &v))
				return EXIT_ERROR;
			o.check_opts.shrink_steps = (uint64_t)v;
		} else if (!strcmp(a, "--stretches-only")) {
			o.check_opts.stretches_only = true;
		} else if (!strcmp(a, "--no-shrink")) {
			o.check_opts.shrink = false;
		} else if (!strcmp(a, "--check")) {
			o.check = true;
		} else if (!strcmp(a, "--expect-failure")) {
			o.expect_failure = true;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			o.quiet = true;
		} else if (a[0] != '-' && !file) {
			file = a;
		} else {
			fprintf(stderr, "winsync-verify: unknown or incomplete option '%s'\n", a);
			usage(stderr);
			return EXIT_ERROR;
		}
	}
	if (!strcmp(cmd, "backends"))
		return cmd_backends();
	if (!strcmp(cmd, "check")) {
		if (!file) {
			usage(stderr);
			return EXIT_ERROR;
		}
		return cmd_check(&o, file);
	}
	if (!strcmp(cmd, "benchmark")) {
		if (!o.sizes)
			o.sizes = "1000,10000,100000";
		if (!backend)
			backend = "core";
	}
	if (strcmp(cmd, "run") && strcmp(cmd, "fuzz") && strcmp(cmd, "overhead") && strcmp(cmd, "benchmark")) {
		fprintf(stderr, "winsync-verify: unknown command '%s'\n", cmd);
		usage(stderr);
		return EXIT_ERROR;
	}
	if (!backend || !(o.backend = vt_find_backend(backend))) {
		fprintf(stderr, "winsync-verify: %s needs --backend NAME, one of:\n", cmd);
		cmd_backends();
		return EXIT_ERROR;
	}
	if (!strcmp(cmd, "run"))
		return cmd_run(&o);
	if (!strcmp(cmd, "fuzz"))
		return cmd_fuzz(&o);
	if (!strcmp(cmd, "benchmark"))
		return cmd_benchmark(&o);
	return cmd_overhead(&o);
}
