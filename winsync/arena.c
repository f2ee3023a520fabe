/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Arenas: the layout of the mapping, creating and opening one, and the
 * checks that make its header trustworthy.  Everything the process derives
 * from the header (sizes, offsets, capacities) is computed and compared
 * once, at attach, and kept in the process-local struct ws_arena: a header
 * scribbled over later cannot send the process out of the mapping.
 */
#include "arena.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "futex.h"
#include "os/os.h"
#include "thread.h"

#define PAGE_SIZE        4096u
#define NAME_MAX_LENGTH  64
#define MIN_SLOTS        32u

struct layout {
	uint32_t slots;
	uint32_t index_bits;
	uint64_t objects_offset;
	uint64_t records_offset;
	uint64_t log_offset;
	uint64_t size;
};

static uint64_t page_align(uint64_t n)
{
	return (n + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
}

static struct layout layout_for(uint32_t capacity)
{
	struct layout l;

	/*
	 * At least 32 slots and 5 index bits: a slot retires after 2^(32-bits)-1
	 * generations, so closed handles stay dead for over 2^31 cycles whatever
	 * the capacity.
	 */
	l.slots = capacity < MIN_SLOTS ? MIN_SLOTS : capacity;
	l.index_bits = WS_MIN_INDEX_BITS;
	while ((1ull << l.index_bits) < l.slots)
		l.index_bits++;
	l.objects_offset = page_align(sizeof(struct ws_arena_header));
	l.records_offset = page_align(l.objects_offset + (uint64_t)l.slots * sizeof(struct ws_object));
	l.log_offset = page_align(l.records_offset +
				  (uint64_t)WS_MAX_THREADS * sizeof(struct ws_record));
	l.size = page_align(l.log_offset + sizeof(struct ws_log));
	return l;
}

static bool valid_name(const char *name)
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

struct init_params {
	uint32_t capacity;
	struct layout layout;
};

/* The mapping starts zeroed: only the header needs values. */
static void init_header(void *base, void *ctx)
{
	const struct init_params *p = ctx;
	struct ws_arena_header *h = base;

	h->version = WS_ARENA_VERSION;
	h->size = p->layout.size;
	h->capacity = p->capacity;
	h->slots = p->layout.slots;
	h->index_bits = p->layout.index_bits;
	h->records = WS_MAX_THREADS;
	h->objects_offset = p->layout.objects_offset;
	h->records_offset = p->layout.records_offset;
	h->log_offset = p->layout.log_offset;
	atomic_thread_fence(memory_order_release);
	h->magic = WS_ARENA_MAGIC;
}

static int attach(void *base, size_t size, bool shared, ws_arena **out)
{
	static _Atomic uint64_t serials;
	struct ws_arena_header *h = base;
	struct layout l;
	ws_arena *arena;

	if (size < sizeof(*h) || h->magic != WS_ARENA_MAGIC || h->version != WS_ARENA_VERSION)
		return -EINVAL;
	if (h->capacity == 0 || h->capacity > WS_MAX_CAPACITY || h->records != WS_MAX_THREADS)
		return -EINVAL;
	l = layout_for(h->capacity);
	if (h->size != l.size || size != l.size || h->slots != l.slots ||
	    h->index_bits != l.index_bits || h->objects_offset != l.objects_offset ||
	    h->records_offset != l.records_offset || h->log_offset != l.log_offset)
		return -EINVAL;
	arena = calloc(1, sizeof(*arena));
	if (!arena)
		return -ENOMEM;
	arena->header = h;
	arena->base = base;
	arena->objects = (struct ws_object *)((char *)base + l.objects_offset);
	arena->records = (struct ws_record *)((char *)base + l.records_offset);
	arena->log = (struct ws_log *)((char *)base + l.log_offset);
	arena->size = size;
	arena->capacity = h->capacity;
	arena->slots = l.slots;
	arena->index_bits = l.index_bits;
	arena->records_count = WS_MAX_THREADS;
	arena->shared = shared;
	arena->serial = atomic_fetch_add(&serials, 1) + 1;
	*out = arena;
	return 0;
}

int ws_arena_create(const char *name, uint32_t capacity, ws_arena **arena)
{
	struct init_params params;
	void *base;
	int ret;

	if (!arena || (name && !valid_name(name)) || capacity > WS_MAX_CAPACITY)
		return -EINVAL;
	ret = ws_futex_init();
	if (ret)
		return ret;
	params.capacity = capacity ? capacity : WS_DEFAULT_CAPACITY;
	params.layout = layout_for(params.capacity);
	if (name) {
		ret = ws_os_map_create(name, params.layout.size, &base, init_header, &params);
	} else {
		ret = ws_os_map_private(params.layout.size, &base);
		if (!ret)
			init_header(base, &params);
	}
	if (ret)
		return ret;
	ret = attach(base, params.layout.size, name != NULL, arena);
	if (ret) {
		ws_os_unmap(base, params.layout.size);
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

	if (!arena || !name || !valid_name(name))
		return -EINVAL;
	ret = ws_futex_init();
	if (ret)
		return ret;
	ret = ws_os_map_open(name, &base, &size);
	if (ret)
		return ret;
	ret = attach(base, size, true, arena);
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
	if (ws_threads_leave(arena))
		ws_os_unmap(arena->base, arena->size);
	free(arena);
}

int ws_arena_unlink(const char *name)
{
	if (!name || !valid_name(name))
		return -EINVAL;
	return ws_os_unlink(name);
}

int ws_arena_set_flags(ws_arena *arena, uint32_t flags)
{
	if (!arena || (flags & ~WS_ARENA_NONBLOCK))
		return -EINVAL;
	arena->flags = flags;
	return 0;
}

const char *ws_futex_backend(void)
{
	if (ws_futex_init())
		return NULL;
	return ws_futex_backend_name();
}
