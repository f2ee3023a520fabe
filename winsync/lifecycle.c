/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The public arena lifecycle: create, open, close, unlink, flags.  The
 * layout and its checks are map.c's; the OS mapping is os/'s.
 */
#include "arena.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "futex.h"
#include "map.h"
#include "os/os.h"
#include "record.h"

int ws_arena_create(const char *name, uint32_t capacity, ws_arena **arena)
{
	struct ws_layout layout;
	void *base;
	int ret;

	if (!arena || (name && !ws_arena_name_valid(name)) || capacity > WS_MAX_CAPACITY)
		return -EINVAL;
	ret = ws_futex_init();
	if (ret)
		return ret;
	layout = ws_layout_for(capacity ? capacity : WS_DEFAULT_CAPACITY);
	if (name) {
		ret = ws_os_map_create(name, layout.size, &base, ws_layout_init, &layout);
	} else {
		ret = ws_os_map_private(layout.size, &base);
		if (!ret)
			ws_layout_init(base, &layout);
	}
	if (ret)
		return ret;
	ret = ws_layout_attach(base, layout.size, name != NULL, arena);
	if (ret) {
		ws_os_unmap(base, layout.size);
		if (name)
			ws_os_unlink(name);
	}
	return ret;
}

int ws_arena_open(const char *name, ws_arena **arena)
{
	void *base;
	size_t size;
	int ret;

	if (!arena || !name || !ws_arena_name_valid(name))
		return -EINVAL;
	ret = ws_futex_init();
	if (ret)
		return ret;
	ret = ws_os_map_open(name, &base, &size);
	if (ret)
		return ret;
	ret = ws_layout_attach(base, size, true, arena);
	if (ret)
		ws_os_unmap(base, size);
	return ret;
}

void ws_arena_close(ws_arena *arena)
{
	if (!arena)
		return;
	/*
	 * A running thread of ours whose record stays on its robust list keeps
	 * the mapping: the kernel must find the record when that thread dies.
	 */
	if (ws_records_leave(arena))
		ws_os_unmap(arena->base, arena->size);
	free(arena);
}

int ws_arena_unlink(const char *name)
{
	if (!name || !ws_arena_name_valid(name))
		return -EINVAL;
	return ws_os_unlink(name);
}

int ws_arena_set_flags(ws_arena *arena, uint32_t flags)
{
	if (!arena || (flags & ~(WS_ARENA_NONBLOCK | WS_ARENA_SPIN)))
		return -EINVAL;
	arena->flags = flags;
	return 0;
}

const char *ws_futex_backend(void)
{
	if (ws_futex_init())
		return "none";
	return ws_futex_backend_name();
}
