/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The text timeline of a failure: one column per thread, time going down,
 * a row per call ("+- wait any 0 poll") and per return ("`- ok 0"), the
 * explanation's steps as [n] and the impossible one marked.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "render_common.h"

/* Call and return marks by enum vc_role. */
static const char *const mark[3][2] = { { "+-", "`-" }, { "+~", "`~" }, { "+.", "`." } };

struct event {
	uint64_t time;
	uint32_t op;
	bool ret;
};

static int cmp_event(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* At one instant, returns first: one clock reading ends an operation and starts the next. */
	if (x->ret != y->ret)
		return x->ret ? -1 : 1;
	return x->op < y->op ? -1 : x->op > y->op;
}

static void steps_text(const struct vc_shown *s, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = 0;
	for (unsigned j = 0; j < VC_MAX_STEPS_SHOWN && s->steps[j]; j++)
		n += (size_t)snprintf(buf + n, size - n, "%s%" PRIu32, j ? "," : " [", s->steps[j]);
	if (n)
		snprintf(buf + n, size - n, "]");
}

static void print_state(FILE *f, const char *label, const struct vc_failure *fl, const struct nt_state *s)
{
	char text[2048];

	vc_format_state(text, sizeof(text), s, fl->objects);
	fprintf(f, "%s%s\n", label, text);
}

void vc_write_timeline(FILE *f, const struct vc_report *r)
{
	const struct vc_failure *fl = &r->failure;
	const struct vh_history *h = &fl->history;
	struct vc_shown *shown = calloc(h->nops + 1, sizeof(*shown));
	struct event *ev = calloc(2 * h->nops + 1, sizeof(*ev));
	uint32_t *threads = calloc(h->threads + h->nops + 1, sizeof(*threads));
	uint32_t nthreads, nev = 0, width[64];
	uint64_t t0 = UINT64_MAX;
	bool *running = NULL;

	if (!r->has_failure || !shown || !ev || !threads)
		goto out;
	nthreads = vc_shown_ops(fl, shown, threads);
	if (nthreads > 64)
		nthreads = 64;
	running = calloc(nthreads + 1, sizeof(*running));
	if (!running)
		goto out;
	{
		uint32_t count[3] = { 0, 0, 0 };

		for (uint32_t i = 0; i < h->nops; i++)
			count[shown[i].role]++;
		fprintf(f, "NOT LINEARIZABLE: NT allows no order of the %" PRIu32 " operation%s marked +- "
			   "(as recorded)", count[VC_ROLE_NEEDED], count[VC_ROLE_NEEDED] == 1 ? "" : "s");
		if (fl->shrunk)
			fprintf(f, " with the other %" PRIu32 " of their stretch each as recorded or not at all",
				fl->stretch_ops - count[VC_ROLE_NEEDED]);
		if (count[VC_ROLE_USED])
			fprintf(f, ";\n  +~ marks %" PRIu32 " of those that the explanation below makes take effect",
				count[VC_ROLE_USED]);
		if (count[VC_ROLE_CONTEXT])
			fprintf(f, ";\n  +. marks %" PRIu32 " more that ran alongside the impossible one",
				count[VC_ROLE_CONTEXT]);
	}
	fprintf(f, "\nbackend %s, seed %" PRIu64 "; objects:", h->backend, h->seed);
	for (uint32_t i = 0; i < fl->nobjects; i++) {
		char obj[64];

		vh_format_object(obj, sizeof(obj), &h->objects[fl->objects[i]]);
		fprintf(f, "%s %" PRIu32 " = %s", i ? "," : "", fl->objects[i], obj);
	}
	fprintf(f, "\n");
	if (fl->nstarts == 1) {
		print_state(f, "state at the start: ", fl, &fl->starts[0]);
	} else {
		fprintf(f, "state at the start, one of %" PRIu32 ":\n", fl->nstarts);
		for (uint32_t i = 0; i < fl->nstarts && i < 8; i++)
			print_state(f, "  ", fl, &fl->starts[i]);
	}
	for (uint32_t c = 0; c < nthreads; c++)
		width[c] = 12;
	for (uint32_t i = 0; i < h->nops; i++) {
		uint32_t c = shown[i].column, w;

		if (c >= nthreads)
			continue;
		w = (uint32_t)strlen(shown[i].call) + 10;
		if ((uint32_t)strlen(shown[i].result) + 14 > w)
			w = (uint32_t)strlen(shown[i].result) + 14;
		if (w > width[c])
			width[c] = w;
		ev[nev++] = (struct event){ h->ops[i].invoke, i, false };
		if (h->ops[i].ret != VH_PENDING)
			ev[nev++] = (struct event){ h->ops[i].ret, i, true };
		if (h->ops[i].invoke < t0)
			t0 = h->ops[i].invoke;
	}
	qsort(ev, nev, sizeof(*ev), cmp_event);
	fprintf(f, "\n%12s  ", "time (us)");
	for (uint32_t c = 0; c < nthreads; c++) {
		char name[16];

		snprintf(name, sizeof(name), "t%" PRIu32, threads[c]);
		fprintf(f, "%-*s", (int)width[c], name);
	}
	fprintf(f, "\n");
	for (uint32_t k = 0; k < nev; k++) {
		const struct event *e = &ev[k];
		const struct vc_shown *s = &shown[e->op];
		char cell[256], steps[32];

		fprintf(f, "%12.3f  ", (double)(e->time - t0) / 1000.0);
		for (uint32_t c = 0; c < nthreads; c++) {
			if (c == s->column) {
				if (!e->ret) {
					steps_text(s, steps, sizeof(steps));
					snprintf(cell, sizeof(cell), "%s %s%s", mark[s->role][0], s->call, steps);
					running[c] = true;
				} else {
					snprintf(cell, sizeof(cell), "%s %s%s", mark[s->role][1], s->result,
						 s->stuck ? "  <-- X" : "");
					running[c] = false;
				}
			} else {
				snprintf(cell, sizeof(cell), "%s", running[c] ? "|" : "");
			}
			if (c + 1 < nthreads)
				fprintf(f, "%-*s", (int)width[c], cell);
			else
				fprintf(f, "%s", cell);
		}
		fprintf(f, "\n");
	}
	for (uint32_t i = 0; i < h->nops; i++)
		if (h->ops[i].ret == VH_PENDING)
			fprintf(f, "%12s  t%" PRIu32 " '%s' was still running at the end: it may take effect, or not\n",
				"", h->ops[i].thread, shown[i].call);
	if (fl->stuck != UINT32_MAX) {
		fprintf(f, "\nthe longest explanation found (%" PRIu32 " steps):\n", fl->ntrace);
		for (uint32_t k = 0; k < fl->ntrace; k++) {
			const struct vs_step *st = &fl->trace[k];
			struct vh_op op = h->ops[st->op];
			char res[64];

			op.result = st->result;
			op.error = 0;
			op.ret = 0;
			vh_format_result(res, sizeof(res), &op);
			fprintf(f, "  [%" PRIu32 "] t%" PRIu32 " %s%s%s\n", k + 1, op.thread, shown[st->op].call,
				st->done ? " -> " : "  (starts waiting)", st->done ? res : "");
		}
		print_state(f, "  state then: ", fl, &fl->at);
	}
	fprintf(f, "X: %s\n", fl->why);
out:
	free(shown);
	free(ev);
	free(threads);
	free(running);
}
