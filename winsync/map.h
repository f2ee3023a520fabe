/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where everything sits in an arena of a given capacity, writing a new
 * header, and checking a mapped one before trusting it (attach).
 */
#ifndef WINSYNC_MAP_H
#define WINSYNC_MAP_H

#include "arena.h"

struct ws_layout {
	uint32_t capacity;
	uint32_t slots;
	uint32_t index_bits;
	uint64_t objects_offset;
	uint64_t records_offset;
	uint64_t size;
};

/* The layout of an arena for `capacity` live objects (1 .. WS_MAX_CAPACITY). */
struct ws_layout ws_layout_for(uint32_t capacity);
/* Writes the header of a fresh, zeroed mapping (ctx: its struct ws_layout). */
void ws_layout_init(void *base, void *ctx);
/*
 * The process-local view of a mapping, once its header matches the layout
 * its capacity implies and the mapping's size: 0, -EINVAL or -ENOMEM.
 */
int ws_layout_attach(void *base, size_t size, bool shared, ws_arena **arena);

/* Is `name` a valid name of a shared arena: 1 to 64 of [A-Za-z0-9._-]? */
bool ws_arena_name_valid(const char *name);

#endif
