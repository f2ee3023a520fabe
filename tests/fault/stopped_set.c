/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "stopped_set.h"

#include <signal.h>
#include <stdint.h>

#include "fault_api.h"

struct stopped_set {
	const char *name;
	ws_handle ev;
	long k;
};

static int set_until_stopped(void *arg)
{
	const struct stopped_set *s = arg;
	ws_arena *a = NULL;

	if (ws_arena_open(s->name, &a) || ws_arena_check(a, NULL, 0))
		return 50;
	ws_fault_arm_signal(s->k, SIGSTOP);
	return ws_event_set(a, s->ev, NULL) ? 52 : 0;
}

pid_t fork_stopped_set(const char *name, ws_handle ev, long k)
{
	/* The child reads its copy, taken at the fork. */
	struct stopped_set s = { name, ev, k };

	return fork_child_fn(set_until_stopped, &s);
}
