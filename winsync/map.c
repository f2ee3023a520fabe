/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "os/os.h"

#define PAGE_SIZE 4096u
#define MIN_SLOTS 32u
#define NAME_MAX_LENGTH 64

static uint64_t page_align(uint64_t n)
{
	return (n + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
}

struct ws_layout ws_layout_for(uint32_t capacity)
{
	struct ws_layout l;

	l.capacity = capacity;
	/*
	 * At least 32 slots and 5 index bits: a slot retires after
	 * min(2^(32-bits), 2^16) - 1 generations (layout.h), so a closed handle
	 * stays dead for good, and the arena gives out slots x 65,535 handles.
	 */
	l.slots = capacity < MIN_SLOTS ? MIN_SLOTS : capacity;
	l.index_bits = WS_MIN_INDEX_BITS;
	while ((1ull << l.index_bits) < l.slots)
		l.index_bits++;
	l.objects_offset = page_align(sizeof(struct ws_arena_header));
	l.records_offset = page_align(l.objects_offset + (uint64_t)l.slots * sizeof(struct ws_object));
	l.size = page_align(l.records_offset + (uint64_t)WS_MAX_THREADS * sizeof(struct ws_record));
	return l;
}

/* The mapping starts zeroed: only the header needs values. */
void ws_layout_init(void *base, void *ctx)
{
	const struct ws_layout *l = ctx;
	struct ws_arena_header *h = base;

	h->version = WS_ARENA_VERSION;
	h->size = l->size;
	h->capacity = l->capacity;
	h->slots = l->slots;
	h->index_bits = l->index_bits;
	h->records = WS_MAX_THREADS;
	h->objects_offset = l->objects_offset;
	h->records_offset = l->records_offset;
	atomic_thread_fence(memory_order_release);
	h->magic = WS_ARENA_MAGIC;
}

int ws_layout_attach(void *base, size_t size, bool shared, ws_arena **out)
{
	static _Atomic uint64_t serials;
	struct ws_arena_header *h = base;
	struct ws_layout l;
	const char *spin;
	ws_arena *arena;

	if (size < sizeof(*h) || h->magic != WS_ARENA_MAGIC || h->version != WS_ARENA_VERSION)
		return -EINVAL;
	if (h->capacity == 0 || h->capacity > WS_MAX_CAPACITY || h->records != WS_MAX_THREADS)
		return -EINVAL;
	l = ws_layout_for(h->capacity);
	if (h->size != l.size || size != l.size || h->slots != l.slots ||
	    h->index_bits != l.index_bits || h->objects_offset != l.objects_offset ||
	    h->records_offset != l.records_offset)
		return -EINVAL;
	arena = calloc(1, sizeof(*arena));
	if (!arena)
		return -ENOMEM;
	arena->header = h;
	arena->base = base;
	arena->objects = (struct ws_object *)((char *)base + l.objects_offset);
	arena->records = (struct ws_record *)((char *)base + l.records_offset);
	arena->size = size;
	arena->capacity = h->capacity;
	arena->slots = l.slots;
	arena->index_bits = l.index_bits;
	arena->index_mask = (1u << l.index_bits) - 1;
	arena->records_count = WS_MAX_THREADS;
	arena->shared = shared;
	arena->serial = atomic_fetch_add(&serials, 1) + 1;
	/* WINSYNC_SPIN=1: every arena pointer of the process starts with WS_ARENA_SPIN. */
	spin = ws_os_getenv("WINSYNC_SPIN");
	if (spin && !strcmp(spin, "1"))
		arena->flags = WS_ARENA_SPIN;
	*out = arena;
	return 0;
}

bool ws_arena_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > NAME_MAX_LENGTH)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}
