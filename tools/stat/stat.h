/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-stat: what a live arena holds, from ws_snapshot_open().  One file
 * per view: text.c (the tables), chains.c (wait chains), json.c (--json),
 * watch.c (--watch), prefix.c (a Wine prefix's arena); names.c names things for all.
 */
#ifndef WINSYNC_STAT_H
#define WINSYNC_STAT_H

#include <stdio.h>

#include <winsync.h>

/* "thread 0x2c (tid 1234)": a thread by its owner id (Wine's thread id under Wine) and tid. */
void stat_thread_name(const struct ws_snapshot *s, uint32_t t, char *buf, size_t size);
/* "mutex 0x58": an object by its type and handle. */
void stat_object_name(const struct ws_snapshot *s, ws_handle h, char *buf, size_t size);
/* The object a handle names, or NULL (closed). */
const struct ws_snapshot_object *stat_object(const struct ws_snapshot *s, ws_handle h);
const char *stat_type_name(uint32_t type);

/* The tables and the problems, then the chains. */
void stat_print_text(FILE *out, const char *name, const struct ws_snapshot *s);
/* Every waiter's chain; cycles marked.  Returns the number of cycles printed. */
unsigned stat_print_chains(FILE *out, const struct ws_snapshot *s);
void stat_print_json(FILE *out, const char *name, const struct ws_snapshot *s);

/*
 * The arena name of the Wine prefix `dir` (the wineserver names it after its
 * server directory): 0, or a negative errno with a message in `why`.
 */
int stat_wine_arena(const char *dir, char *name, size_t size, char *why, size_t why_size);

/* Redraws `show` every interval_ms until q is typed (or forever without a terminal). */
int stat_watch(int (*show)(FILE *out, void *ctx), void *ctx, unsigned interval_ms);

#endif
