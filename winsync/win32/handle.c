/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The process-wide arena and the handle table.
 *
 * A Win32 handle names an entry of this table: its kind (event, mutex,
 * semaphore, thread) and the winsync object behind it.  Handle values are
 * 0x40000000 + 4 * index: multiples of 4 like kernel handles, kept in 32
 * bits as Windows guarantees, and far above the small values Wine hands out,
 * so the DLL can tell its own handles from kernel32's.  Like Windows, a
 * closed handle's value may be handed out again later.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

#define HANDLE_BASE   0x40000000u
#define CHUNK_BITS    12
#define CHUNK_SIZE    (1u << CHUNK_BITS)
#define MAX_CHUNKS    256u
#define MAX_HANDLES   (CHUNK_SIZE * MAX_CHUNKS)
/* Room for every handle's object, threads' exit events included. */
#define ARENA_CAPACITY MAX_HANDLES

struct entry {
	_Atomic uint32_t kind; /* enum ws32_kind; published last */
	ws_handle object;
	struct ws32_thread *thread;
	uint32_t next_free;    /* index + 1 of the next free entry, 0 ends */
};

static _Atomic(ws_arena *) arena;
static _Atomic(struct entry *) chunks[MAX_CHUNKS];

/* Guards the free list and the growth of the table; held for a few instructions. */
static atomic_flag table_lock = ATOMIC_FLAG_INIT;
static uint32_t free_head;  /* index + 1, 0: empty */
static uint32_t fresh;      /* entries [0, fresh) have been used */

ws_arena *ws32_arena(DWORD *error)
{
	ws_arena *current = atomic_load_explicit(&arena, memory_order_acquire);
	ws_arena *created;
	int ret;

	if (current)
		return current;
	ret = ws_arena_create(NULL, ARENA_CAPACITY, &created);
	if (ret) {
		*error = ws32_error_of(ret);
		return NULL;
	}
	/* Two threads may race to create it: the loser closes its own. */
	if (!atomic_compare_exchange_strong_explicit(&arena, &current, created,
						     memory_order_acq_rel, memory_order_acquire)) {
		ws_arena_close(created);
		return current;
	}
	return created;
}

ws_arena *ws32_arena_if_created(void)
{
	return atomic_load_explicit(&arena, memory_order_acquire);
}

static void lock_table(void)
{
	for (unsigned int spins = 0; atomic_flag_test_and_set_explicit(&table_lock,
								     memory_order_acquire);
	     spins++)
		if (spins >= 100)
			ws32_yield();
}

static void unlock_table(void)
{
	atomic_flag_clear_explicit(&table_lock, memory_order_release);
}

static struct entry *entry_at(uint32_t index)
{
	struct entry *chunk;

	if (index >= MAX_HANDLES)
		return NULL;
	chunk = atomic_load_explicit(&chunks[index >> CHUNK_BITS], memory_order_acquire);
	return chunk ? &chunk[index & (CHUNK_SIZE - 1)] : NULL;
}

static bool index_of(HANDLE handle, uint32_t *index)
{
	uintptr_t value = (uintptr_t)handle;

	if (value < HANDLE_BASE || value >= HANDLE_BASE + 4ull * MAX_HANDLES || (value & 3))
		return false;
	*index = (uint32_t)((value - HANDLE_BASE) >> 2);
	return true;
}

bool ws32_handle_is_ours(HANDLE handle)
{
	uint32_t index;

	return index_of(handle, &index);
}

HANDLE ws32_handle_new(const struct ws32_object *object, DWORD *error)
{
	struct entry *e = NULL;
	uint32_t index = 0;

	lock_table();
	if (free_head) {
		index = free_head - 1;
		e = entry_at(index);
		free_head = e->next_free;
	} else if (fresh < MAX_HANDLES) {
		index = fresh;
		e = entry_at(index);
		if (!e) {
			struct entry *chunk = calloc(CHUNK_SIZE, sizeof(*chunk));

			if (chunk) {
				atomic_store_explicit(&chunks[index >> CHUNK_BITS], chunk,
						      memory_order_release);
				e = &chunk[0];
			}
		}
		if (e)
			fresh++;
	}
	unlock_table();
	if (!e) {
		*error = ERROR_NOT_ENOUGH_MEMORY;
		return NULL;
	}
	e->object = object->object;
	e->thread = object->thread;
	atomic_store_explicit(&e->kind, object->kind, memory_order_release);
	return (HANDLE)(uintptr_t)(HANDLE_BASE + 4ull * index);
}

bool ws32_handle_get(HANDLE handle, struct ws32_object *object)
{
	struct entry *e;
	uint32_t index;

	if (!index_of(handle, &index) || !(e = entry_at(index)))
		return false;
	object->kind = (enum ws32_kind)atomic_load_explicit(&e->kind, memory_order_acquire);
	if (object->kind == WS32_FREE)
		return false;
	object->object = e->object;
	object->thread = e->thread;
	return true;
}

bool ws32_handle_free(HANDLE handle, struct ws32_object *object)
{
	struct entry *e;
	uint32_t index;
	bool live = false;

	if (!index_of(handle, &index) || !(e = entry_at(index)))
		return false;
	lock_table();
	/* Under the lock: of two racing CloseHandle calls, one wins. */
	object->kind = (enum ws32_kind)atomic_load_explicit(&e->kind, memory_order_relaxed);
	if (object->kind != WS32_FREE) {
		live = true;
		object->object = e->object;
		object->thread = e->thread;
		atomic_store_explicit(&e->kind, WS32_FREE, memory_order_relaxed);
		e->next_free = free_head;
		free_head = index + 1;
	}
	unlock_table();
	return live;
}

DWORD ws32_error_of(int err)
{
	switch (err) {
	case -EBADF:
		return ERROR_INVALID_HANDLE;
	case -EINVAL:
		return ERROR_INVALID_PARAMETER;
	case -EPERM:
		return ERROR_NOT_OWNER;
	case -EOVERFLOW:
		return ERROR_TOO_MANY_POSTS;
	case -ENOSYS:
	case -ENOTSUP:
		return ERROR_NOT_SUPPORTED;
	case -EUCLEAN:
		return ERROR_FILE_CORRUPT;
	case -EUSERS:
		return ERROR_TOO_MANY_TCBS;
	case -ENOSPC:
	case -ENOMEM:
	case -EAGAIN:
	default:
		return ERROR_NOT_ENOUGH_MEMORY;
	}
}
