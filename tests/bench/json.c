/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-bench --json: the document is written as the rows are measured,
 * so a run that dies part way leaves the rows it had (and no closing
 * brace: a script sees it is cut).
 *
 *   { "tool": "winsync-bench", "format": 1, ...top members...,
 *     "rows": [ { "group": 1, "who": "winsync", "what": "...", ... }, ... ],
 *     "failures": 0 }
 */
#include "json.h"

#include <math.h>

static FILE *out;
static enum { TOP, ROWS, IN_ROW } state;
static bool first_row;

void json_start(FILE *f)
{
	out = f;
	state = TOP;
	fputs("{\"tool\": \"winsync-bench\", \"format\": 1", out);
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void put_string(const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", out);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void put_key(const char *key)
{
	fputs(", ", out);
	put_string(key);
	fputs(": ", out);
}

static void put_num(double v)
{
	if (isfinite(v))
		fprintf(out, "%.17g", v);
	else
		fputs("null", out);
}

void json_row_begin(int group, const char *who, const char *what)
{
	if (!out)
		return;
	if (state == TOP) {
		fputs(",\n \"rows\": [", out);
		first_row = true;
	}
	fprintf(out, "%s\n  {\"group\": %d", first_row ? "" : ",", group);
	first_row = false;
	state = IN_ROW;
	put_key("who");
	put_string(who);
	put_key("what");
	put_string(what);
}

void json_str(const char *key, const char *value)
{
	if (!out || state == ROWS)
		return;
	put_key(key);
	put_string(value);
}

void json_num(const char *key, double value)
{
	if (!out || state == ROWS)
		return;
	put_key(key);
	put_num(value);
}

void json_bool(const char *key, bool value)
{
	if (!out || state == ROWS)
		return;
	put_key(key);
	fputs(value ? "true" : "false", out);
}

void json_row_end(void)
{
	if (!out || state != IN_ROW)
		return;
	fputc('}', out);
	state = ROWS;
	fflush(out);
}

void json_finish(int failures)
{
	if (!out)
		return;
	fputs(state == TOP ? ",\n \"rows\": [" : "", out);
	fprintf(out, "\n ],\n \"failures\": %d}\n", failures);
	fflush(out);
}
