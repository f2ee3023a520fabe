/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The arena: one mapping holding a header, the object slots and the waiter
 * records.  Everything in it refers to everything else by index, never by
 * pointer, so it works at any address in any process.
 */
#ifndef WINSYNC_ARENA_H
#define WINSYNC_ARENA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "winsync.h"

#define WS_ARENA_MAGIC   0x636e7377u /* "wsnc" */
#define WS_ARENA_VERSION 1u

/* Most waits blocked at once in one arena; a wait past it fails with -EAGAIN. */
#define WS_WAITER_CAPACITY 4096u

/* A handle is the slot index plus a generation that changes when it closes. */
#define WS_HANDLE_INDEX_BITS 22
#define WS_HANDLE_INDEX_MASK ((1u << WS_HANDLE_INDEX_BITS) - 1)
#define WS_GENERATION_MASK   ((1u << (32 - WS_HANDLE_INDEX_BITS)) - 1)

enum ws_type {
	WS_TYPE_NONE = 0,
	WS_TYPE_SEM = 1,
	WS_TYPE_MUTEX = 2,
	WS_TYPE_EVENT = 3,
};

/* ws_object.meta: generation << 8 | WS_META_CLOSED? | type */
#define WS_META_TYPE_MASK 0x0fu
#define WS_META_CLOSED    0x10u
#define WS_META_GEN_SHIFT 8

/*
 * One synchronization object, a cache line of its own.  `lock` guards every
 * plain field; `seq` is the futex word waiters sleep on, bumped whenever the
 * object is handed to a waiter; `meta` and `all_waiters` are also read
 * without the lock, as hints that are checked again under it.
 */
struct ws_object {
	_Atomic uint32_t lock;
	_Atomic uint32_t seq;
	_Atomic uint32_t meta;
	_Atomic uint32_t all_waiters; /* queued wait_all entries */
	/*
	 * The state.  Written only under the lock; atomic (relaxed) so that a
	 * wait may peek at it without the lock to skip objects not ready.
	 */
	_Atomic uint32_t count;     /* semaphore count, mutex recursion count, event signaled */
	_Atomic uint32_t aux;       /* semaphore maximum, mutex owner, event manual-reset */
	_Atomic uint32_t abandoned; /* mutex only */
	uint32_t head;      /* queue of wait entries, by entry id; 0 = empty */
	uint32_t tail;
	uint32_t queued;    /* entries in the queue: a closed object is freed at 0 */
	_Atomic uint32_t next_free;
	uint32_t reserved[5];
};

_Static_assert(sizeof(struct ws_object) == 64, "one object per cache line");

/* A wait's link into the queue of one of its objects. */
struct ws_entry {
	uint32_t prev;
	uint32_t next;
	uint32_t object; /* slot index */
	uint32_t reserved;
};

#define WS_ENTRIES_PER_WAITER (WS_MAX_WAIT_OBJECTS + 1) /* the objects and the alert */

/* ws_waiter.state: pending, or who ended the wait. */
#define WS_WAITER_PENDING   0u
#define WS_WAITER_ABANDONED 0x80000000u /* or-ed with index + 1 */
#define WS_WAITER_GAVE_UP   0xffffffffu

/*
 * A blocked wait.  Signalers that find one of its entries in a queue hand
 * the object over by moving `state` from pending to the entry's index + 1,
 * and only the one whose compare-exchange succeeds consumes its object.
 */
struct ws_waiter {
	_Atomic uint32_t state;
	uint32_t owner;
	uint32_t count;     /* objects; the alert, if any, is entry `count` */
	uint32_t wait_all;
	uint32_t has_alert;
	uint32_t tid;       /* for a later sweep of records left by dead processes */
	_Atomic uint32_t next_free;
	uint32_t reserved;
	struct ws_entry entries[WS_ENTRIES_PER_WAITER];
};

struct ws_arena_header {
	uint32_t magic;
	uint32_t version;
	uint64_t size;
	uint32_t capacity;
	uint32_t waiter_capacity;
	uint64_t objects_offset;
	uint64_t waiters_offset;
	_Atomic uint32_t all_lock;     /* taken before any second object lock */
	_Atomic uint32_t fresh_objects; /* slots [0, fresh) have been used once */
	_Atomic uint32_t fresh_waiters;
	_Atomic uint64_t free_objects; /* Treiber stack: tag << 32 | (index + 1) */
	_Atomic uint64_t free_waiters;
};

struct ws_arena {
	struct ws_arena_header *header;
	struct ws_object *objects;
	struct ws_waiter *waiters;
	size_t size;
	uint32_t capacity;
	uint32_t waiter_capacity;
	bool shared;
};

/* Relaxed access to object state: ordering comes from the object lock. */
static inline uint32_t ws_get(const _Atomic uint32_t *field)
{
	return atomic_load_explicit(field, memory_order_relaxed);
}

static inline void ws_put(_Atomic uint32_t *field, uint32_t value)
{
	atomic_store_explicit(field, value, memory_order_relaxed);
}

static inline ws_handle ws_make_handle(uint32_t index, uint32_t generation)
{
	return generation << WS_HANDLE_INDEX_BITS | index;
}

static inline uint32_t ws_handle_index(ws_handle handle)
{
	return handle & WS_HANDLE_INDEX_MASK;
}

static inline uint32_t ws_handle_generation(ws_handle handle)
{
	return handle >> WS_HANDLE_INDEX_BITS;
}

static inline uint32_t ws_meta_generation(uint32_t meta)
{
	return meta >> WS_META_GEN_SHIFT;
}

static inline struct ws_waiter *ws_waiter_at(ws_arena *arena, uint32_t index)
{
	return &arena->waiters[index];
}

/* Entry ids are 1-based so that 0 ends a queue. */
static inline uint32_t ws_entry_id(uint32_t waiter, uint32_t slot)
{
	return waiter * WS_ENTRIES_PER_WAITER + slot + 1;
}

static inline uint32_t ws_entry_waiter(uint32_t id)
{
	return (id - 1) / WS_ENTRIES_PER_WAITER;
}

static inline uint32_t ws_entry_slot(uint32_t id)
{
	return (id - 1) % WS_ENTRIES_PER_WAITER;
}

static inline struct ws_entry *ws_entry_at(ws_arena *arena, uint32_t id)
{
	return &arena->waiters[ws_entry_waiter(id)].entries[ws_entry_slot(id)];
}

/* A free object slot, or -ENOSPC. */
int ws_slot_alloc(ws_arena *arena, uint32_t *index);
void ws_slot_free(ws_arena *arena, uint32_t index);

/* A free waiter record, or -EAGAIN when too many waits are blocked. */
int ws_waiter_alloc(ws_arena *arena, uint32_t *index);
void ws_waiter_free(ws_arena *arena, uint32_t index);

#endif
