/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "arena.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "futex.h"
#include "os/os.h"

#define PAGE_SIZE 4096u
#define NAME_MAX_LENGTH 64

struct layout {
	uint64_t objects_offset;
	uint64_t waiters_offset;
	uint64_t size;
};

static uint64_t page_align(uint64_t n)
{
	return (n + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
}

static struct layout layout_for(uint32_t capacity, uint32_t waiter_capacity)
{
	struct layout l;

	l.objects_offset = page_align(sizeof(struct ws_arena_header));
	l.waiters_offset = page_align(l.objects_offset + (uint64_t)capacity * sizeof(struct ws_object));
	l.size = page_align(l.waiters_offset + (uint64_t)waiter_capacity * sizeof(struct ws_waiter));
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
	h->waiter_capacity = WS_WAITER_CAPACITY;
	h->objects_offset = p->layout.objects_offset;
	h->waiters_offset = p->layout.waiters_offset;
	h->magic = WS_ARENA_MAGIC;
}

static int attach(void *base, size_t size, bool shared, ws_arena **out)
{
	struct ws_arena_header *h = base;
	struct layout l;
	ws_arena *arena;

	if (size < sizeof(*h) || h->magic != WS_ARENA_MAGIC || h->version != WS_ARENA_VERSION)
		return -EINVAL;
	if (h->capacity == 0 || h->capacity > WS_MAX_CAPACITY ||
	    h->waiter_capacity != WS_WAITER_CAPACITY)
		return -EINVAL;
	l = layout_for(h->capacity, h->waiter_capacity);
	if (h->size != l.size || size != l.size || h->objects_offset != l.objects_offset ||
	    h->waiters_offset != l.waiters_offset)
		return -EINVAL;
	arena = calloc(1, sizeof(*arena));
	if (!arena)
		return -ENOMEM;
	arena->header = h;
	arena->objects = (struct ws_object *)((char *)base + l.objects_offset);
	arena->waiters = (struct ws_waiter *)((char *)base + l.waiters_offset);
	arena->size = size;
	arena->capacity = h->capacity;
	arena->waiter_capacity = h->waiter_capacity;
	arena->shared = shared;
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
	params.layout = layout_for(params.capacity, WS_WAITER_CAPACITY);
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
	ws_os_unmap(arena->header, arena->size);
	free(arena);
}

int ws_arena_unlink(const char *name)
{
	if (!name || !valid_name(name))
		return -EINVAL;
	return ws_os_unlink(name);
}

const char *ws_futex_backend(void)
{
	if (ws_futex_init())
		return NULL;
	return ws_futex_backend_name();
}

/*
 * Free lists are Treiber stacks of 1-based indices; the tag in the upper half
 * of the head changes on every pop, so a stale compare-exchange cannot succeed.
 */
static bool stack_pop(_Atomic uint64_t *head, _Atomic uint32_t *(*next_of)(ws_arena *, uint32_t),
		      ws_arena *arena, uint32_t *index)
{
	uint64_t old = atomic_load_explicit(head, memory_order_acquire);

	for (;;) {
		uint32_t top = (uint32_t)old;
		uint64_t tag = (old >> 32) + 1;
		uint32_t next;

		if (!top)
			return false;
		next = atomic_load_explicit(next_of(arena, top - 1), memory_order_relaxed);
		if (atomic_compare_exchange_weak_explicit(head, &old, tag << 32 | next,
							  memory_order_acquire,
							  memory_order_acquire)) {
			*index = top - 1;
			return true;
		}
	}
}

static void stack_push(_Atomic uint64_t *head, _Atomic uint32_t *(*next_of)(ws_arena *, uint32_t),
		       ws_arena *arena, uint32_t index)
{
	uint64_t old = atomic_load_explicit(head, memory_order_relaxed);

	do {
		atomic_store_explicit(next_of(arena, index), (uint32_t)old, memory_order_relaxed);
	} while (!atomic_compare_exchange_weak_explicit(head, &old,
							(old & 0xffffffff00000000ull) | (index + 1),
							memory_order_release, memory_order_relaxed));
}

/* Hands out never-used indices below `limit`. */
static bool take_fresh(_Atomic uint32_t *fresh, uint32_t limit, uint32_t *index)
{
	uint32_t n = atomic_load_explicit(fresh, memory_order_relaxed);

	do {
		if (n >= limit)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(fresh, &n, n + 1, memory_order_relaxed,
							memory_order_relaxed));
	*index = n;
	return true;
}

static _Atomic uint32_t *object_next(ws_arena *arena, uint32_t index)
{
	return &arena->objects[index].next_free;
}

static _Atomic uint32_t *waiter_next(ws_arena *arena, uint32_t index)
{
	return &arena->waiters[index].next_free;
}

int ws_slot_alloc(ws_arena *arena, uint32_t *index)
{
	if (stack_pop(&arena->header->free_objects, object_next, arena, index) ||
	    take_fresh(&arena->header->fresh_objects, arena->capacity, index))
		return 0;
	return -ENOSPC;
}

void ws_slot_free(ws_arena *arena, uint32_t index)
{
	stack_push(&arena->header->free_objects, object_next, arena, index);
}

int ws_waiter_alloc(ws_arena *arena, uint32_t *index)
{
	if (stack_pop(&arena->header->free_waiters, waiter_next, arena, index) ||
	    take_fresh(&arena->header->fresh_waiters, arena->waiter_capacity, index))
		return 0;
	return -EAGAIN;
}

void ws_waiter_free(ws_arena *arena, uint32_t index)
{
	stack_push(&arena->header->free_waiters, waiter_next, arena, index);
}
