/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The floors of winsync-bench's uncontended groups: the least work an exact
 * set + wait can do, written on plain words in this process (floor.c), so
 * that a target ratio can be set beside what any implementation of the same
 * rules costs on the machine that runs the bench.
 */
#ifndef WINSYNC_BENCH_FLOOR_H
#define WINSYNC_BENCH_FLOOR_H

#include <stdbool.h>
#include <stdint.h>

/* Objects the floor rows use: a head per cache line, as the arena keeps them. */
#define FLOOR_OBJECTS 64

/* One object: its handle set then taken, n times (group 1's and the 1-object rows' floor). */
bool floor_run_one(uint64_t n, uint64_t *ns);
/* 64 objects, #63 set then the first ready taken after two looks (an exact scan). */
bool floor_run_scan_exact(uint64_t n, uint64_t *ns);
/* 64 objects, #63 set then taken after one look (fsync's poll: not exact). */
bool floor_run_scan_once(uint64_t n, uint64_t *ns);
/* 64 objects, #0 set then taken once the list is known valid (a compare with a kept copy). */
bool floor_run_first_known(uint64_t n, uint64_t *ns);

/*
 * Prints "floor: <what> <a / b>x (target <target>x)" and its JSON row:
 * the floor's own ratio, beside the one the issue asks of winsync.
 */
void floor_footer(int group, const char *what, double a_ns, double b_ns, double target);

#endif
