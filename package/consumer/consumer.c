/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program on the installed <winsync.h>: an auto-reset event is not
 * signaled, then set, then taken by one wait, which resets it.  Prints one
 * line per step; exits 1 on any unexpected result.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include <winsync.h>

static int poll_event(ws_arena *arena, ws_handle event, uint32_t *index)
{
	struct timespec past = { 0, 0 };
	struct ws_wait wait = {
		.objects = &event, .count = 1, .owner = 1, .deadline = &past,
	};

	return ws_wait_any(arena, &wait, index);
}

static int check(const char *what, int got, int want)
{
	if (got == 0 || got == -ETIMEDOUT)
		printf("%s: %s\n", what, got == 0 ? "0" : "-ETIMEDOUT");
	else
		printf("%s: error %d\n", what, got);
	if (got != want) {
		fprintf(stderr, "consumer: %s returned %d, expected %d\n", what, got, want);
		return 1;
	}
	return 0;
}

int main(void)
{
	ws_arena *arena;
	ws_handle event;
	uint32_t index = 99;
	int bad = 0;

	if (check("ws_arena_create", ws_arena_create(NULL, 16, &arena), 0) ||
	    check("ws_event_create", ws_event_create(arena, false, false, &event), 0))
		return 1;
	bad |= check("wait on the unsignaled event", poll_event(arena, event, &index), -ETIMEDOUT);
	bad |= check("ws_event_set", ws_event_set(arena, event, NULL), 0);
	bad |= check("wait on the set event", poll_event(arena, event, &index), 0);
	if (index != 0) {
		fprintf(stderr, "consumer: index %u, expected 0\n", (unsigned)index);
		bad = 1;
	}
	bad |= check("wait again (auto reset)", poll_event(arena, event, &index), -ETIMEDOUT);
	ws_arena_close(arena);
	return bad;
}
