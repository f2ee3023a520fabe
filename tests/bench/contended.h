/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* winsync-bench group (6): independent pairs in one arena (contended.c). */
#ifndef WINSYNC_BENCH_CONTENDED_H
#define WINSYNC_BENCH_CONTENDED_H

#include <winsync.h>

#define CONTENDED_MAX_PAIRS 64

/*
 * 1, 2, 4, 8, ... up to `max_pairs` independent pairs, each ping-ponging on
 * two auto-reset events of its own: in `arena`, in one arena per pair, and
 * on raw futex words.  Prints the table; returns the number of failed runs.
 */
int bench_contended(ws_arena *arena, int max_pairs, double seconds);

#endif
