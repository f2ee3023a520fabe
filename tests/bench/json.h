/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-bench --json: one JSON document on standard output, a row per
 * measured row of the table (json.c).  Without --json every call is a no-op.
 */
#ifndef WINSYNC_BENCH_JSON_H
#define WINSYNC_BENCH_JSON_H

#include <stdbool.h>
#include <stdio.h>

/* From now on the document goes to `out`. */
void json_start(FILE *out);

/*
 * Members: of the document before the first row, of the row between
 * json_row_begin and json_row_end.
 */
void json_str(const char *key, const char *value);
void json_num(const char *key, double value);   /* null when not finite */
void json_bool(const char *key, bool value);

/* A row: begun with its group and label, members added, then ended. */
void json_row_begin(int group, const char *who, const char *what);
void json_row_end(void);

/* Closes the document with the count of failed checks. */
void json_finish(int failures);

#endif
