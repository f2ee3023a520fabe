/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small helpers for winsync-bench: the clock, statistics over runs, number
 * formatting and a description of the machine.
 */
#ifndef WINSYNC_BENCH_UTIL_H
#define WINSYNC_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t bench_now_ns(void);

struct bench_stats {
	double median;
	double min;
	double max;
};

/* Median, minimum and maximum of n > 0 values (v is not modified). */
void bench_stats(const double *v, size_t n, struct bench_stats *out);

/* "39.5 M", "812 k", "950": a rate with an SI prefix, at most 3 significant digits. */
void bench_format_si(char *buf, size_t len, double value);

struct bench_machine {
	char cpu[128];      /* model name from /proc/cpuinfo, or "unknown CPU" */
	long cpus_online;   /* sysconf(_SC_NPROCESSORS_ONLN) */
	int cpus_allowed;   /* CPUs in this thread's affinity mask, or -1 */
	bool hypervisor;    /* the "hypervisor" CPU flag is set */
	char sysname[65];   /* uname: "Linux" */
	char release[65];   /* uname: kernel release */
	char machine[65];   /* uname: "x86_64" */
};

void bench_machine_info(struct bench_machine *m);

/* The n-th CPU (0-based) of this thread's affinity mask, or -1. */
int bench_nth_allowed_cpu(int n);

#endif /* WINSYNC_BENCH_UTIL_H */
