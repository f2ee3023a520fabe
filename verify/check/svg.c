/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The picture of a failure: threads as rows, operations as bars from their
 * call to their return (on a time axis that gives each distinct instant a
 * slot, so short operations stay readable), the steps of the longest
 * explanation as numbered dots, the operation that cannot take effect in
 * red.  vc_write_html wraps it with the text timeline.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "render_common.h"

#define LEFT 70
#define RIGHT 40
#define ROW 92
#define TOP 96
#define LABEL_LINES 3
#define MIN_STEP 46
#define MAX_STEP 150

static void escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else
			fputc(*s, f);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint32_t rank_of(const uint64_t *times, uint32_t n, uint64_t t)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (times[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Text split into lines of at most `width` characters at blanks. */
static void wrapped(FILE *f, int x, int y, int width, const char *text, const char *style)
{
	const char *p = text;

	while (*p) {
		int n = (int)strlen(p), cut = n;

		if (n > width) {
			cut = width;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = width;
		}
		char line[512];

		snprintf(line, sizeof(line), "%.*s", cut, p);
		fprintf(f, "<text x=\"%d\" y=\"%d\" %s>", x, y, style);
		escaped(f, line);
		fputs("</text>\n", f);
		y += 16;
		p += cut;
		while (*p == ' ')
			p++;
	}
}

void vc_write_svg(FILE *f, const struct vc_report *r)
{
	const struct vc_failure *fl = &r->failure;
	const struct vh_history *h = &fl->history;
	struct vc_shown *shown = calloc(h->nops + 1, sizeof(*shown));
	uint32_t *threads = calloc(h->threads + h->nops + 1, sizeof(*threads));
	uint64_t *times = calloc(2 * h->nops + 1, sizeof(*times));
	uint32_t nthreads, ntimes = 0, distinct = 0;
	int step, width, height, axis;
	char text[2048];

	if (!r->has_failure || !shown || !threads || !times)
		goto out;
	nthreads = vc_shown_ops(fl, shown, threads);
	for (uint32_t i = 0; i < h->nops; i++) {
		times[ntimes++] = h->ops[i].invoke;
		if (h->ops[i].ret != VH_PENDING)
			times[ntimes++] = h->ops[i].ret;
	}
	qsort(times, ntimes, sizeof(*times), cmp_u64);
	for (uint32_t i = 0; i < ntimes; i++)
		if (!distinct || times[distinct - 1] != times[i])
			times[distinct++] = times[i];
	step = distinct > 1 ? 1100 / (int)distinct : MAX_STEP;
	step = step < MIN_STEP ? MIN_STEP : step > MAX_STEP ? MAX_STEP : step;
	width = LEFT + step * (int)(distinct ? distinct : 1) + RIGHT + 120;
	if (width < 900)
		width = 900;
	axis = TOP + ROW * (int)nthreads + 10;
	height = axis + 70 + 16 * (int)(strlen(fl->why) / 110 + 2) + 16 * (int)(fl->ntrace + 3);
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"12\">\n",
		width, height, width, height);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	{
		uint32_t needed = 0;

		for (uint32_t i = 0; i < h->nops; i++)
			needed += shown[i].role == VC_ROLE_NEEDED;
		snprintf(text, sizeof(text), "NOT LINEARIZABLE: NT allows no order of the %" PRIu32
			 " operation%s with solid borders (backend %s, seed %" PRIu64 ")", needed,
			 needed == 1 ? "" : "s", h->backend, h->seed);
	}
	fprintf(f, "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">");
	escaped(f, text);
	fputs("</text>\n", f);
	{
		size_t n = (size_t)snprintf(text, sizeof(text), "objects:");

		for (uint32_t i = 0; i < fl->nobjects && n < sizeof(text); i++) {
			char obj[64];

			vh_format_object(obj, sizeof(obj), &h->objects[fl->objects[i]]);
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%s %" PRIu32 " = %s", i ? "," : "",
					      fl->objects[i], obj);
		}
		fprintf(f, "<text x=\"10\" y=\"44\">");
		escaped(f, text);
		fputs("</text>\n", f);
	}
	strcpy(text, "at the start: ");
	vc_format_state(text + strlen(text), sizeof(text) - strlen(text), &fl->starts[fl->start < fl->nstarts ? fl->start : 0],
			fl->objects);
	if (fl->nstarts > 1)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), " (one of %" PRIu32 " states)", fl->nstarts);
	fprintf(f, "<text x=\"10\" y=\"62\">");
	escaped(f, text);
	fputs("</text>\n", f);
	fprintf(f, "<text x=\"10\" y=\"80\" fill=\"#555\">dashed: optional (as recorded or not at all) "
		   "or still running; grey: ran alongside; red: cannot take effect before it returns</text>\n");
	/* Rows. */
	for (uint32_t c = 0; c < nthreads; c++) {
		int y = TOP + ROW * (int)c;

		fprintf(f, "<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", y, width, ROW,
			c % 2 ? "#f7f7f7" : "#ffffff");
		fprintf(f, "<text x=\"12\" y=\"%d\" font-weight=\"bold\">t%" PRIu32 "</text>\n", y + ROW / 2 + 4,
			threads[c]);
	}
	/* The time axis: each distinct instant, in microseconds from the first. */
	for (uint32_t i = 0; i < distinct; i++) {
		int x = LEFT + step * (int)i + step / 2;

		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#e0e0e0\"/>\n", x, TOP, x, axis);
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#666\" transform=\"rotate(-35 %d %d)\">"
			   "%.3f</text>\n", x - 14, axis + 26, x - 14, axis + 26,
			(double)(times[i] - times[0]) / 1000.0);
	}
	fprintf(f, "<text x=\"10\" y=\"%d\" font-size=\"10\" fill=\"#666\">us</text>\n", axis + 26);
	/* Bars. */
	int (*label_end)[LABEL_LINES] = calloc(nthreads + 1, sizeof(*label_end));

	if (!label_end)
		goto out;
	for (uint32_t i = 0; i < h->nops; i++) {
		const struct vc_shown *s = &shown[i];
		const struct vh_op *op = &h->ops[i];
		int y = TOP + ROW * (int)s->column + 40;
		int x0 = LEFT + step * (int)rank_of(times, distinct, op->invoke) + step / 2;
		int x1 = op->ret == VH_PENDING ? width - RIGHT
					       : LEFT + step * (int)rank_of(times, distinct, op->ret) + step / 2;
		const char *fill = s->stuck ? "#f4c7c3" : s->role == VC_ROLE_CONTEXT ? "#f3f3f3"
						      : s->steps[0] ? "#d5ecd4" : "#e4e4e4";
		const char *stroke = s->stuck ? "#c62828" : s->role == VC_ROLE_CONTEXT ? "#bbb"
							: s->steps[0] ? "#2e7d32" : "#888";

		if (x1 - x0 < 24)
			x1 = x0 + 24;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"22\" rx=\"4\" fill=\"%s\" stroke=\"%s\""
			   " stroke-width=\"%d\"%s/>\n", x0, y, x1 - x0, fill, stroke, s->stuck ? 3 : 1,
			op->ret == VH_PENDING || s->role != VC_ROLE_NEEDED ? " stroke-dasharray=\"5,3\"" : "");
		/*
		 * A label that would run into the one before it in this row goes
		 * a line higher; a context operation's label is left out when no
		 * line is free.
		 */
		int label = (int)(strlen(s->call) + (s->role != VC_ROLE_NEEDED ? 11 : 0)) * 7 + 8;
		int line;

		for (line = 0; line < LABEL_LINES && x0 + 2 < label_end[s->column][line]; line++)
			;
		if (line == LABEL_LINES) {
			if (s->role == VC_ROLE_CONTEXT)
				goto bar_text;
			line = 0;
		}
		label_end[s->column][line] = x0 + 2 + label;
		fprintf(f, "<text x=\"%d\" y=\"%d\"%s>", x0 + 2, y - 5 - 13 * line, s->context ? " fill=\"#999\"" : "");
		escaped(f, s->call);
		fputs(s->role == VC_ROLE_CONTEXT ? " (alongside)" : s->role == VC_ROLE_USED ? " (optional)" : "", f);
		fputs("</text>\n", f);
bar_text:
		fprintf(f, "<text x=\"%d\" y=\"%d\"%s>-&gt; ", x0 + 4, y + 15,
			s->stuck ? " font-weight=\"bold\" fill=\"#b71c1c\"" : "");
		escaped(f, s->result);
		fputs(s->stuck ? "  X" : "", f);
		fputs("</text>\n", f);
		/* A step that starts a wait at the bar's start, one that ends the call at its end. */
		for (unsigned j = 0; j < VC_MAX_STEPS_SHOWN && s->steps[j]; j++) {
			int cx = s->starts[j] ? x0 + 12 : x1 - 12;

			fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"9\" fill=\"#2e7d32\"/>"
				   "<text x=\"%d\" y=\"%d\" fill=\"white\" font-size=\"10\" text-anchor=\"middle\">%" PRIu32
				   "</text>\n", cx, y + 33, cx, y + 37, s->steps[j]);
		}
	}
	free(label_end);
	/* The explanation and why it stops. */
	{
		int y = axis + 62;

		fprintf(f, "<text x=\"10\" y=\"%d\" font-weight=\"bold\">The longest explanation found "
			   "(green dots: the order of its steps):</text>\n", y);
		y += 18;
		for (uint32_t k = 0; k < fl->ntrace && fl->stuck != UINT32_MAX; k++) {
			const struct vs_step *st = &fl->trace[k];
			struct vh_op op = h->ops[st->op];
			char res[64];

			op.result = st->result;
			op.error = 0;
			op.ret = 0;
			vh_format_result(res, sizeof(res), &op);
			snprintf(text, sizeof(text), "%" PRIu32 ". t%" PRIu32 " %s%s%s", k + 1, op.thread,
				 shown[st->op].call, st->done ? " -> " : " (starts waiting)", st->done ? res : "");
			fprintf(f, "<text x=\"20\" y=\"%d\">", y);
			escaped(f, text);
			fputs("</text>\n", f);
			y += 16;
		}
		wrapped(f, 10, y + 6, 110, fl->why, "fill=\"#b71c1c\" font-weight=\"bold\"");
	}
	fputs("</svg>\n", f);
out:
	free(shown);
	free(threads);
	free(times);
}

void vc_write_html(FILE *f, const struct vc_report *r)
{
	char *text = NULL;
	size_t size = 0;
	FILE *mem = open_memstream(&text, &size);

	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>winsync-verify: not linearizable"
	      "</title></head>\n<body style=\"font-family: sans-serif\">\n<h1>winsync-verify: not linearizable</h1>\n",
	      f);
	vc_write_svg(f, r);
	fputs("<h2>Timeline</h2>\n<pre>", f);
	if (mem) {
		vc_write_timeline(mem, r);
		fclose(mem);
		escaped(f, text ? text : "");
		free(text);
	}
	fputs("</pre>\n</body></html>\n", f);
}
