/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "platform.h"

#ifdef _WIN32
#include <windows.h>

uint64_t vp_now_ns(void)
{
	static LARGE_INTEGER frequency;
	LARGE_INTEGER now;

	if (!frequency.QuadPart)
		QueryPerformanceFrequency(&frequency);
	QueryPerformanceCounter(&now);
	return (uint64_t)(now.QuadPart / frequency.QuadPart) * 1000000000u +
	       (uint64_t)(now.QuadPart % frequency.QuadPart) * 1000000000u / (uint64_t)frequency.QuadPart;
}

uint64_t vp_cpu_ns(void)
{
	FILETIME created, exited, kernel, user;

	if (!GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user))
		return 0;
	return ((((uint64_t)kernel.dwHighDateTime << 32) | kernel.dwLowDateTime) +
		(((uint64_t)user.dwHighDateTime << 32) | user.dwLowDateTime)) * 100;
}

void vp_yield(void)
{
	SwitchToThread();
}
#else
#include <sched.h>
#include <time.h>

uint64_t vp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t vp_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void vp_yield(void)
{
	sched_yield();
}
#endif

void vp_spin(uint32_t iterations)
{
	for (volatile uint32_t i = 0; i < iterations; i++)
		;
}
