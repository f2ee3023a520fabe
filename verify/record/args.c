/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

void va_defaults(struct vw_config *c)
{
	memset(c, 0, sizeof(*c));
	c->seed = 1;
	c->threads = 8;
	c->ops = 2000;
	c->objects = 8;
	c->stretch = 16;
	c->max_timeout_ms = 20;
	c->deaths = true;
	c->closes = true;
}

static int value(int argc, char **argv, int *i, uint64_t max, uint64_t *v)
{
	char *end;

	if (*i + 1 >= argc) {
		fprintf(stderr, "winsync-verify: %s needs a value\n", argv[*i]);
		return -1;
	}
	*v = strtoull(argv[*i + 1], &end, 0);
	if (!*argv[*i + 1] || *end || *v > max) {
		fprintf(stderr, "winsync-verify: %s %s: a number up to %" PRIu64 " expected\n", argv[*i],
			argv[*i + 1], max);
		return -1;
	}
	(*i)++;
	return 0;
}

int va_take(struct vw_config *c, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	uint64_t v;

	if (!strcmp(a, "--seed")) {
		if (value(argc, argv, i, UINT64_MAX, &v))
			return -1;
		c->seed = v;
	} else if (!strcmp(a, "--threads")) {
		if (value(argc, argv, i, VW_MAX_THREADS, &v) || v < 1)
			return -1;
		c->threads = (uint32_t)v;
	} else if (!strcmp(a, "--ops")) {
		if (value(argc, argv, i, 100000000, &v) || v < 1)
			return -1;
		c->ops = (uint32_t)v;
	} else if (!strcmp(a, "--objects")) {
		if (value(argc, argv, i, VW_MAX_OBJECTS, &v) || v < 1)
			return -1;
		c->objects = (uint32_t)v;
	} else if (!strcmp(a, "--stretch")) {
		if (value(argc, argv, i, 1000000, &v))
			return -1;
		c->stretch = (uint32_t)v;
	} else if (!strcmp(a, "--max-timeout")) {
		if (value(argc, argv, i, 60000, &v) || v < 1)
			return -1;
		c->max_timeout_ms = (uint32_t)v;
	} else if (!strcmp(a, "--no-deaths")) {
		c->deaths = false;
	} else if (!strcmp(a, "--no-closes")) {
		c->closes = false;
	} else if (!strcmp(a, "--polls-only")) {
		c->polls_only = true;
	} else if (!strcmp(a, "--no-delays")) {
		c->no_delays = true;
	} else {
		return 0;
	}
	return 1;
}

int va_format(const struct vw_config *c, char *buf, size_t size)
{
	return snprintf(buf, size, "--seed %" PRIu64 " --threads %" PRIu32 " --ops %" PRIu32 " --objects %" PRIu32
			" --stretch %" PRIu32 " --max-timeout %" PRIu32 "%s%s%s%s",
			c->seed, c->threads, c->ops, c->objects, c->stretch, c->max_timeout_ms,
			c->deaths ? "" : " --no-deaths", c->closes ? "" : " --no-closes",
			c->polls_only ? " --polls-only" : "", c->no_delays ? " --no-delays" : "");
}
