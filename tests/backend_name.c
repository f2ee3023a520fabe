/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ws_futex_backend() and WINSYNC_BACKEND agree (issue 22): the names the
 * function returns are accepted as values, and it never returns NULL.
 * One process per value, since the backend is chosen once per process:
 * CTest runs this program with WINSYNC_BACKEND set to each name, to a short
 * name, to nonsense, and unset.
 *
 * Exit status: 0 as documented, 1 not, 77 the forced backend is missing
 * from the running kernel (then "none" and -ENOSYS are checked first).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <winsync.h>

static const char *canonical(const char *value)
{
	if (!value || !*value)
		return "";
	if (!strcmp(value, "waitv") || !strcmp(value, "futex_waitv"))
		return "futex_waitv";
	if (!strcmp(value, "multiple") || !strcmp(value, "futex_wait_multiple"))
		return "futex_wait_multiple";
	return NULL;
}

int main(int argc, char **argv)
{
	const char *value = getenv("WINSYNC_BACKEND");
	const char *want = canonical(value);
	const char *name;
	ws_arena *arena = NULL;
	int ret;

	if (argc > 1) {
		printf("usage: WINSYNC_BACKEND=VALUE %s\n"
		       "checks ws_futex_backend() and ws_arena_create() against VALUE\n", argv[0]);
		return strcmp(argv[1], "--help") ? 2 : 0;
	}
	name = ws_futex_backend();
	ret = ws_arena_create(NULL, 0, &arena);
	printf("WINSYNC_BACKEND=%s: ws_futex_backend() = %s, ws_arena_create = %d\n",
	       value ? value : "(unset)", name ? name : "NULL", ret);
	if (!name) {
		puts("FAILED: ws_futex_backend() returned NULL");
		return 1;
	}
	if (!want) {
		/* Not a backend's name: refused, and said so. */
		if (strcmp(name, "none") || ret != -EINVAL) {
			puts("FAILED: an unknown WINSYNC_BACKEND must give \"none\" and -EINVAL");
			return 1;
		}
		return 0;
	}
	if (ret == -ENOSYS) {
		if (strcmp(name, "none")) {
			puts("FAILED: -ENOSYS, but ws_futex_backend() names a backend");
			return 1;
		}
		return 77;
	}
	if (ret) {
		puts("FAILED: ws_arena_create");
		return 1;
	}
	ws_arena_close(arena);
	if (*want ? strcmp(name, want) != 0
		  : strcmp(name, "futex_waitv") && strcmp(name, "futex_wait_multiple")) {
		printf("FAILED: expected %s\n", *want ? want : "a backend's name");
		return 1;
	}
	return 0;
}
