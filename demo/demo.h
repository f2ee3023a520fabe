/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every demo shares.  A demo is written against the Win32 API and
 * builds three ways from the same source:
 *   (a) mingw-w64 with kernel32 (Wine's own objects)
 *   (b) mingw-w64 with -DWINSYNC_WIN32_REPLACE and winsync.dll
 *   (c) native Linux with libwinsync-win32
 * Its output must not depend on the variant or on timing: the runner
 * compares the three byte for byte.
 */
#ifndef WINSYNC_DEMO_H
#define WINSYNC_DEMO_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <winsync/win32.h>

#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#else
#include <time.h>
#endif

/* Line by line, and "\n" never turned into "\r\n" by the Windows C runtime. */
static inline void demo_init(void)
{
#ifdef _WIN32
	_setmode(_fileno(stdout), _O_BINARY);
	_setmode(_fileno(stderr), _O_BINARY);
#endif
	setvbuf(stdout, NULL, _IONBF, 0);
}

/* Prints a failed check on stdout and stderr and ends the program with status 1. */
static inline void demo_fail(const char *what, ...)
{
	va_list ap;

	printf("FAILED: ");
	va_start(ap, what);
	vprintf(what, ap);
	va_end(ap);
	printf(" (last error %u)\n", (unsigned)GetLastError());
	fprintf(stderr, "demo check failed, see stdout\n");
	fflush(stdout);
	exit(1);
}

#define DEMO_CHECK(cond, ...) do { if (!(cond)) demo_fail(__VA_ARGS__); } while (0)

/* The name of a wait result, as the Win32 headers spell it. */
static inline const char *demo_wait_name(DWORD result, DWORD count, char *buf, size_t size)
{
	if (result == WAIT_TIMEOUT)
		return "WAIT_TIMEOUT";
	if (result == WAIT_FAILED)
		return "WAIT_FAILED";
	if (result < WAIT_OBJECT_0 + count)
		snprintf(buf, size, "WAIT_OBJECT_0 + %u", (unsigned)(result - WAIT_OBJECT_0));
	else if (result >= WAIT_ABANDONED_0 && result < WAIT_ABANDONED_0 + count)
		snprintf(buf, size, "WAIT_ABANDONED_0 + %u", (unsigned)(result - WAIT_ABANDONED_0));
	else
		snprintf(buf, size, "0x%x", (unsigned)result);
	return buf;
}

static inline const char *demo_error_name(DWORD error)
{
	switch (error) {
	case ERROR_SUCCESS: return "ERROR_SUCCESS";
	case ERROR_INVALID_HANDLE: return "ERROR_INVALID_HANDLE";
	case ERROR_NOT_ENOUGH_MEMORY: return "ERROR_NOT_ENOUGH_MEMORY";
	case ERROR_NOT_SUPPORTED: return "ERROR_NOT_SUPPORTED";
	case ERROR_INVALID_PARAMETER: return "ERROR_INVALID_PARAMETER";
	case ERROR_NOT_OWNER: return "ERROR_NOT_OWNER";
	case ERROR_TOO_MANY_POSTS: return "ERROR_TOO_MANY_POSTS";
	default: return "another error";
	}
}

/* A thread handle, or the end of the demo. */
static inline HANDLE demo_thread(LPTHREAD_START_ROUTINE start, void *parameter)
{
	HANDLE thread = CreateThread(NULL, 0, start, parameter, 0, NULL);

	DEMO_CHECK(thread != NULL, "CreateThread");
	return thread;
}

/* Waits for every thread (any number) and closes their handles. */
static inline void demo_join(HANDLE *threads, unsigned int count)
{
	for (unsigned int i = 0; i < count; i += MAXIMUM_WAIT_OBJECTS) {
		DWORD n = count - i < MAXIMUM_WAIT_OBJECTS ? count - i : MAXIMUM_WAIT_OBJECTS;

		DEMO_CHECK(WaitForMultipleObjects(n, threads + i, TRUE, INFINITE) == WAIT_OBJECT_0,
			   "waiting for %u threads", (unsigned)n);
	}
	for (unsigned int i = 0; i < count; i++)
		CloseHandle(threads[i]);
}

/* A monotonic clock in nanoseconds, for the benchmark only. */
static inline unsigned long long demo_now_ns(void)
{
#ifdef _WIN32
	LARGE_INTEGER now, frequency;

	QueryPerformanceCounter(&now);
	QueryPerformanceFrequency(&frequency);
	return (unsigned long long)((double)now.QuadPart * 1e9 / (double)frequency.QuadPart);
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
#endif
}

#endif
