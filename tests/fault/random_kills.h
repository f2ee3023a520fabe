/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The random-kill campaign of test_fault (random_kills.c). */
#ifndef WINSYNC_TESTS_FAULT_RANDOM_KILLS_H
#define WINSYNC_TESTS_FAULT_RANDOM_KILLS_H

void run_random_kills(void);

#endif
