/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The process-local view of an arena (struct ws_arena) and the handle and
 * index arithmetic that goes through it.  Sizes, offsets and capacities are
 * copied here when a process maps the arena (layout.c) and never read back
 * from shared memory: a header scribbled over later cannot send the process
 * out of the mapping.
 */
#ifndef WINSYNC_ARENA_H
#define WINSYNC_ARENA_H

#include "layout.h"

struct ws_arena {
	struct ws_arena_header *header;
	struct ws_object *objects;
	struct ws_record *records;
	char *base;
	size_t size;
	/* Copied at attach and validated, never read back from shared memory. */
	uint32_t capacity;
	uint32_t slots;
	uint32_t index_bits;
	uint32_t index_mask;      /* (1 << index_bits) - 1: a handle's slot, in one AND */
	uint32_t records_count;
	uint32_t flags;           /* WS_ARENA_NONBLOCK */
	bool shared;
	uint64_t serial;          /* unique in the process: keys thread caches */
	/* This process's threads registered in the arena (record.c). */
	_Atomic uint32_t registry_lock;
	uint32_t registry_count;
	uint32_t registry_capacity;
	struct ws_registration *registry;
};

/* The last generation of a slot: what the handle's and the head's fields both hold. */
static inline uint32_t ws_gen_mask(const ws_arena *arena)
{
	uint32_t handle_gens = 0xffffffffu >> arena->index_bits;

	return handle_gens < WS_HEAD_GEN_MASK ? handle_gens : WS_HEAD_GEN_MASK;
}

static inline uint32_t ws_handle_slot(const ws_arena *arena, ws_handle handle)
{
	return handle & arena->index_mask;
}

static inline uint32_t ws_handle_gen(const ws_arena *arena, ws_handle handle)
{
	return handle >> arena->index_bits;
}

static inline ws_handle ws_make_handle(const ws_arena *arena, uint32_t slot, uint32_t gen)
{
	return gen << arena->index_bits | slot;
}

/* The entry an id names, or NULL if the id is out of range (corruption). */
static inline struct ws_entry *ws_entry_at(ws_arena *arena, uint32_t id, uint32_t *record,
					   uint32_t *slot)
{
	if (id == 0 || id > arena->records_count * WS_ENTRIES_PER_WAIT)
		return NULL;
	*record = (id - 1) / WS_ENTRIES_PER_WAIT;
	*slot = (id - 1) % WS_ENTRIES_PER_WAIT;
	return &arena->records[*record].entries[*slot];
}

/* The one arena lock word (crit.h takes a lock word as its parameter). */
static inline _Atomic uint32_t *ws_arena_lock(ws_arena *arena)
{
	return &arena->header->lock;
}

#endif
