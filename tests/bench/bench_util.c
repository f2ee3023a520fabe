/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_util.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void bench_stats(const double *v, size_t n, struct bench_stats *out)
{
	double *s = malloc(n * sizeof(*s));

	if (!s || n == 0) {
		free(s);
		out->median = out->min = out->max = 0.0;
		return;
	}
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	out->min = s[0];
	out->max = s[n - 1];
	out->median = (n % 2) ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
	free(s);
}

void bench_format_si(char *buf, size_t len, double value)
{
	static const char prefix[] = " kMGT";
	int p = 0;

	while (value >= 999.5 && p < 4) {
		value /= 1000.0;
		p++;
	}
	if (p == 0)
		snprintf(buf, len, "%.0f  ", value);
	else if (value >= 99.95)
		snprintf(buf, len, "%.0f %c", value, prefix[p]);
	else if (value >= 9.995)
		snprintf(buf, len, "%.1f %c", value, prefix[p]);
	else
		snprintf(buf, len, "%.2f %c", value, prefix[p]);
}

/* Copies the value of the first "key : value" line of /proc/cpuinfo whose key is `key`. */
static bool cpuinfo_value(const char *key, char *out, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	size_t klen = strlen(key);
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *colon, *v, *end;

		if (strncmp(line, key, klen) != 0 || (line[klen] != ' ' && line[klen] != '\t' && line[klen] != ':'))
			continue;
		colon = strchr(line, ':');
		if (!colon)
			continue;
		v = colon + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		end = v + strlen(v);
		while (end > v && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		snprintf(out, len, "%s", v);
		found = true;
	}
	fclose(f);
	return found;
}

void bench_machine_info(struct bench_machine *m)
{
	static const char *const model_keys[] = { "model name", "Model", "cpu model", "cpu", "Hardware" };
	struct utsname u;
	cpu_set_t set;
	char flags[4096];

	memset(m, 0, sizeof(*m));
	snprintf(m->cpu, sizeof(m->cpu), "unknown CPU");
	for (size_t i = 0; i < sizeof(model_keys) / sizeof(model_keys[0]); i++)
		if (cpuinfo_value(model_keys[i], m->cpu, sizeof(m->cpu)) && m->cpu[0])
			break;
	/* Collapse runs of spaces ("Intel(R) Xeon(R) CPU   E5-..."). */
	for (char *r = m->cpu, *w = m->cpu;; r++) {
		if (*r == ' ' && w > m->cpu && w[-1] == ' ')
			continue;
		*w++ = *r;
		if (!*r)
			break;
	}
	if (cpuinfo_value("flags", flags, sizeof(flags))) {
		char *h = strstr(flags, "hypervisor");

		m->hypervisor = h && (h == flags || h[-1] == ' ') && (h[10] == ' ' || h[10] == '\0');
	}

	m->cpus_online = sysconf(_SC_NPROCESSORS_ONLN);
	m->cpus_allowed = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : -1;

	if (uname(&u) == 0) {
		snprintf(m->sysname, sizeof(m->sysname), "%s", u.sysname);
		snprintf(m->release, sizeof(m->release), "%s", u.release);
		snprintf(m->machine, sizeof(m->machine), "%s", u.machine);
	} else {
		snprintf(m->sysname, sizeof(m->sysname), "?");
		snprintf(m->release, sizeof(m->release), "?");
		snprintf(m->machine, sizeof(m->machine), "?");
	}
}

int bench_nth_allowed_cpu(int n)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set) && n-- == 0)
			return cpu;
	return -1;
}
