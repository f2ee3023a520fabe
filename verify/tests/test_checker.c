/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The checker on small hand-written histories, each with the verdict NT
 * gives it and why.  A failing one must also shrink to at most the
 * operations its row names, and the impossible step must be the one named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "render.h"

struct row {
	const char *why;
	const char *history;   /* objects and operations, without the header */
	enum vc_verdict verdict;
	unsigned max_needed;   /* VC_FAIL: at most this many operations needed after shrinking */
	const char *stuck;     /* VC_FAIL: the call of the operation that cannot take effect */
};

static const struct row rows[] = {
	{ "a poll after a set that returned sees the event set",
	  "object 0 event manual 0\n"
	  "op t0 o1 10 20 set 0 -> ok 0\n"
	  "op t1 o2 30 40 wait any 0 poll -> ok 0\n",
	  VC_OK, 0, NULL },
	{ "a poll concurrent with a set may see it set",
	  "object 0 event manual 0\n"
	  "op t0 o1 10 40 set 0 -> ok 0\n"
	  "op t1 o2 20 30 wait any 0 poll -> ok 0\n",
	  VC_OK, 0, NULL },
	{ "a poll cannot see a set that starts after it returned",
	  "object 0 event manual 0\n"
	  "op t1 o2 10 20 wait any 0 poll -> ok 0\n"
	  "op t0 o1 30 40 set 0 -> ok 0\n",
	  VC_FAIL, 1, "wait any 0 poll" },
	{ "a wait blocked before a pulse of a manual event is released by it",
	  "object 0 event manual 0\n"
	  "op t1 o2 10 100 wait any 0 timeout 50 -> ok 0\n"
	  "op t2 o3 15 100 wait any 0 timeout 50 -> ok 0\n"
	  "op t0 o1 30 40 pulse 0 -> ok 0\n",
	  VC_OK, 0, NULL },
	{ "a poll never sees a pulsed event set (pulse as set + reset)",
	  "object 0 event manual 0\n"
	  "op t0 o1 10 40 pulse 0 -> ok 0\n"
	  "op t1 o2 20 30 wait any 0 poll -> ok 0\n",
	  VC_FAIL, 1, "wait any 0 poll" },
	{ "an auto-reset set goes to one of two blocked waits, not both",
	  "object 0 event auto 0\n"
	  "op t1 o2 10 100 wait any 0 timeout 50 -> ok 0\n"
	  "op t2 o3 15 100 wait any 0 timeout 50 -> ok 0\n"
	  "op t0 o1 30 40 set 0 -> ok 0\n",
	  VC_FAIL, 3, NULL },
	{ "an auto-reset set goes to one of two blocked waits, the other times out",
	  "object 0 event auto 0\n"
	  "op t1 o2 10 100 wait any 0 timeout 50 -> ok 0\n"
	  "op t2 o3 15 100 wait any 0 timeout 50 -> timeout\n"
	  "op t0 o1 30 40 set 0 -> ok 0\n",
	  VC_OK, 0, NULL },
	{ "nobody sees part of a wait-all taken (one by one with rollback)",
	  "object 0 sem 1 1\n"
	  "object 1 mutex 9 1\n"
	  "op t0 o1 10 50 wait all 0,1 poll -> timeout\n"
	  "op t1 o2 20 30 wait any 0 poll -> timeout\n",
	  VC_FAIL, 2, NULL },
	{ "a mutex acquired twice must be released twice before another owner has it",
	  "object 0 mutex\n"
	  "op t0 o1 10 20 wait any 0 poll -> ok 0\n"
	  "op t0 o1 20 30 wait any 0 poll -> ok 0\n"
	  "op t0 o1 30 40 unlock 0 -> ok ?\n"
	  "op t1 o2 50 60 wait any 0 poll -> ok 0\n",
	  VC_FAIL, 4, "wait any 0 poll" },
	{ "an operation that never returned may have taken effect",
	  "object 0 event manual 0\n"
	  "op t0 o1 10 - set 0 -> pending\n"
	  "op t1 o2 20 30 wait any 0 poll -> ok 0\n",
	  VC_OK, 0, NULL },
	{ "one clock reading ends a call and starts the next of the same thread: they stay in order",
	  "object 0 event auto 1\n"
	  "op t0 o1 10 20 wait any 0 poll -> ok 0\n"
	  "op t0 o1 20 30 wait any 0 poll -> ok 0\n",
	  VC_FAIL, 2, NULL },
	{ "equal times on two threads are concurrent",
	  "object 0 event auto 0\n"
	  "op t1 o2 10 20 wait any 0 poll -> ok 0\n"
	  "op t0 o1 20 30 set 0 -> ok 0\n",
	  VC_OK, 0, NULL },
	{ "a death hands its mutex, abandoned, to the blocked waiter",
	  "object 0 mutex\n"
	  "op t0 o1 10 20 wait any 0 poll -> ok 0\n"
	  "op t1 o2 30 100 wait any 0 timeout 50 -> abandoned 0\n"
	  "op t0 o1 40 50 die -> ok\n",
	  VC_OK, 0, NULL },
	{ "a mutex is not abandoned without a death",
	  "object 0 mutex\n"
	  "op t0 o1 10 20 wait any 0 poll -> ok 0\n"
	  "op t1 o2 30 100 wait any 0 timeout 50 -> abandoned 0\n",
	  VC_FAIL, 2, NULL },
	{ "an error NT never returns is never explained",
	  "object 0 event manual 0\n"
	  "op t0 o1 10 20 set 0 -> error 117\n",
	  VC_FAIL, 1, "set 0" },
	{ "objects never waited on together are checked apart; one of them fails",
	  "object 0 event manual 0\n"
	  "object 1 sem 0 1\n"
	  "op t0 o1 10 20 set 0 -> ok 0\n"
	  "op t1 o2 30 40 wait any 0 poll -> ok 0\n"
	  "op t1 o2 50 60 wait any 1 poll -> ok 0\n",
	  VC_FAIL, 1, "wait any 1 poll" },
	{ "a stretch may end in several states: the next one goes on from the one it needs",
	  "object 0 event manual 0\n"
	  "object 1 sem 0 1\n"
	  "op t0 o1 10 40 set 0 -> ok ?\n"
	  "op t1 o2 15 35 reset 0 -> ok ?\n"
	  "op t2 o3 50 60 wait any 0 poll -> ok 0\n"
	  "op t2 o3 70 80 release 1 1 -> ok 0\n",
	  VC_OK, 0, NULL },
	{ "... and when none of them will do, the stretch after the cut fails",
	  "object 0 event manual 0\n"
	  "op t0 o1 10 40 set 0 -> ok 0\n"
	  "op t1 o2 15 35 reset 0 -> ok 1\n"
	  "op t2 o3 50 60 wait any 0 poll -> ok 0\n",
	  VC_FAIL, 3, NULL },
	{ "a wait-all's alert is taken only when the objects are not all ready",
	  "object 0 sem 1 1\n"
	  "object 1 event auto 1\n"
	  "op t0 o1 10 20 wait all 0 alert 1 poll -> ok 1\n",
	  VC_FAIL, 1, NULL },
	{ "a closed handle fails later calls, and a wait blocked on it goes on",
	  "object 0 event auto 0\n"
	  "object 1 event auto 0\n"
	  "op t1 o2 10 100 wait any 0,1 timeout 50 -> ok 1\n"
	  "op t0 o1 20 30 close 0 -> ok\n"
	  "op t0 o1 30 40 set 0 -> ebadf\n"
	  "op t0 o1 40 50 set 1 -> ok 0\n",
	  VC_OK, 0, NULL },
};

static int check_row(const struct row *r, bool stretches_only)
{
	char text[4096], error[256];
	struct vh_history h;
	struct vc_options o = { 10, 256u << 20, true, stretches_only, 0, NULL, NULL };
	struct vc_report rep;
	FILE *f;
	int bad = 0;

	snprintf(text, sizeof(text), "winsync-verify history 1\nbackend test\nseed 0\n%send\n", r->history);
	f = fmemopen(text, strlen(text), "r");
	if (!f || vh_read(f, &h, error, sizeof(error))) {
		printf("  the history does not parse: %s\n", f ? error : "fmemopen");
		if (f)
			fclose(f);
		return 1;
	}
	fclose(f);
	if (vc_check(&h, &o, &rep)) {
		printf("  vc_check failed\n");
		vh_free(&h);
		return 1;
	}
	if (rep.verdict != r->verdict) {
		printf("  verdict %d, expected %d\n", rep.verdict, r->verdict);
		bad = 1;
	}
	if (!bad && r->verdict == VC_FAIL) {
		const struct vc_failure *fl = &rep.failure;
		unsigned needed = 0;

		for (uint32_t i = 0; i < fl->history.nops; i++)
			needed += fl->context[i] == VC_ROLE_NEEDED;
		if (!rep.has_failure || needed == 0 || needed > r->max_needed) {
			printf("  the counterexample needs %u operations, at most %u expected\n", needed, r->max_needed);
			bad = 1;
		}
		if (r->stuck) {
			char call[160] = "";

			if (fl->stuck < fl->history.nops)
				vh_format_call(call, sizeof(call), &fl->history.ops[fl->stuck].call,
					       fl->history.ops[fl->stuck].timeout_ms);
			if (strcmp(call, r->stuck)) {
				printf("  the impossible step is '%s', expected '%s'\n", call, r->stuck);
				bad = 1;
			}
		}
		/* Both renderings run on every failure (under the sanitizers too). */
		{
			char *out = NULL;
			size_t size = 0;
			FILE *m = open_memstream(&out, &size);

			if (m) {
				vc_write_timeline(m, &rep);
				vc_write_html(m, &rep);
				fclose(m);
			}
			if (!out || !strstr(out, "NOT LINEARIZABLE") || !strstr(out, "<svg")) {
				printf("  the timeline or the picture is missing\n");
				bad = 1;
			}
			if (bad && out)
				fputs(out, stdout);
			free(out);
		}
	}
	vc_report_free(&rep);
	vh_free(&h);
	return bad;
}

/* The reader names the line of each mistake and accepts what the writer writes. */
static int check_format(void)
{
	static const struct {
		const char *text;
		const char *message;
	} bad[] = {
		{ "winsync-verify history 2\n", "version 2" },
		{ "winsync-verify history 1\nobject 1 event manual 0\n", "line 2: objects must be numbered" },
		{ "winsync-verify history 1\nobject 0 sem 3 2\n", "line 2: bad object" },
		{ "winsync-verify history 1\nobject 0 sem 0 2\nop t0 o1 10 5 set 0 -> ok\n", "line 3: bad return time" },
		{ "winsync-verify history 1\nobject 0 sem 0 2\nop t0 o1 10 20 wait any 3 poll -> ok 0\n",
		  "line 3: object 3 is not declared" },
		{ "winsync-verify history 1\nobject 0 sem 0 2\nop t0 o0 10 20 release 0 1 -> ok 0\n",
		  "line 3: owner ids are nonzero" },
		{ "winsync-verify history 1\nobject 0 sem 0 2\nop t0 o1 10 - release 0 1 -> ok 0\n",
		  "line 3: '-' return time goes with 'pending'" },
		{ "winsync-verify history 1\nend\nobject 0 sem 0 2\n", "line 3: text after 'end'" },
	};
	const char *good = "winsync-verify history 1\nbackend x\nseed 7\nthreads 2\n"
			   "object 0 event manual 1\nobject 1 event auto 0\nobject 2 sem 0 3\nobject 3 mutex 2 1\n"
			   "op t0 o1 10 20 wait all 0,2 alert 1 timeout 5 -> abandoned 0\n"
			   "op t1 o2 15 - pulse 1 -> pending\n"
			   "op t0 o1 20 30 read 3 -> ok ? 2\n"
			   "op t1 o4 40 50 release 2 2 -> eoverflow\n"
			   "op t0 o1 50 60 die -> ok\n"
			   "op t0 o3 60 70 set 1 -> error 117\n"
			   "end\n";
	int failed = 0;

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vh_history h;
		char error[256] = "";
		FILE *f = fmemopen((void *)bad[i].text, strlen(bad[i].text), "r");

		if (!vh_read(f, &h, error, sizeof(error)) || !strstr(error, bad[i].message)) {
			printf("FAIL  history format: '%s' gives '%s', expected '%s'\n", bad[i].text, error,
			       bad[i].message);
			failed++;
		}
		vh_free(&h);
		fclose(f);
	}
	{
		struct vh_history h;
		char error[256], *out = NULL;
		size_t size = 0;
		FILE *f = fmemopen((void *)good, strlen(good), "r"), *m;

		if (vh_read(f, &h, error, sizeof(error))) {
			printf("FAIL  history format: %s\n", error);
			fclose(f);
			return 1;
		}
		fclose(f);
		m = open_memstream(&out, &size);
		vh_write(m, &h);
		fclose(m);
		if (strcmp(out, good)) {
			printf("FAIL  history format: written back differently:\n%s", out);
			failed++;
		}
		free(out);
		vh_free(&h);
	}
	printf("%s  the history format: %zu mistakes named by line, a history written back as read\n",
	       failed ? "FAIL" : "ok  ", sizeof(bad) / sizeof(bad[0]));
	return failed;
}

int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: %s\nChecks the checker on small histories with known verdicts; exit 0 when all hold.\n",
		       argv[0]);
		return 0;
	}
	unsigned failed = 0, count = sizeof(rows) / sizeof(rows[0]);

	for (unsigned i = 0; i < count; i++) {
		/* Both ways: the whole group first (the default), and stretch by stretch only. */
		int bad = check_row(&rows[i], false) | check_row(&rows[i], true);

		printf("%s  %s\n", bad ? "FAIL" : "ok  ", rows[i].why);
		failed += bad != 0;
	}
	failed += check_format() != 0;
	printf("%u of %u checker cases hold\n", count + 1 - failed, count + 1);
	return failed ? 1 : 0;
}
