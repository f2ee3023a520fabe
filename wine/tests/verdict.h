/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the Windows test programs of wine/tests share: one line per check
 * and the counts their "N passed, N failed" line reports, a millisecond
 * clock, and whether Wine runs them with the winsync backend on.  Each
 * program is one file compiled alone, so everything here is static.
 */
#ifndef WINSYNC_WINE_TESTS_VERDICT_H
#define WINSYNC_WINE_TESTS_VERDICT_H

#include <stdio.h>
#include <string.h>
#include <windows.h>

static int passed, failed;

/* Counts a check; prints it (quiet: only a failure). */
static inline void verdict(int ok, int quiet, const char *what)
{
	if (ok)
		passed++;
	else
		failed++;
	if (ok && quiet)
		return;
	printf("%s: %s\n", ok ? "ok" : "FAILED", what);
	fflush(stdout);
}

static inline void check(int ok, const char *what)
{
	verdict(ok, 0, what);
}

static inline double now_ms(void)
{
	static LARGE_INTEGER freq;
	LARGE_INTEGER t;

	if (!freq.QuadPart)
		QueryPerformanceFrequency(&freq);
	QueryPerformanceCounter(&t);
	return (double)t.QuadPart * 1000.0 / (double)freq.QuadPart;
}

/* WINEWINSYNC=1 in the environment Wine gives the program (wine/run.sh --on). */
static inline int backend_on(void)
{
	char on[8] = "";

	return GetEnvironmentVariableA("WINEWINSYNC", on, sizeof(on)) && !strcmp(on, "1");
}

#endif
