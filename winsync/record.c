/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Registration on the robust futex list.  A record's first cache line has the
 * shape of a robust pthread mutex, so the record can be linked into the list
 * glibc keeps for every thread, in the layout of the thread's ABI (abi.h):
 *   x86_64: `robust_next` is the list entry, the kernel's futex_offset (-32)
 *     leads from it to `alive`, and `robust_prev` is the back link glibc
 *     writes when it adds or removes its own mutexes next to ours;
 *   i386: `robust_next_i386` is the entry (futex_offset -20) and the list is
 *     singly linked: taking an entry off walks the list to its predecessor,
 *     as glibc does.
 * glibc and this file only ever follow links read from the thread's own
 * memory; a link read from the arena is checked before use.
 *
 * A record is claimed without the arena lock, by a compare-exchange of
 * `alive` from 0 (free) to the thread id, with list_op_pending pointing at
 * it: a thread killed at any point of its registration is still marked
 * dead by the kernel.
 */
#include "record.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "fault.h"
#include "futex.h"
#include "os/os.h"

struct ws_registration {
	uint32_t pid;
	uint32_t tid;
	uint32_t record;
};

static void registry_lock(ws_arena *arena)
{
	while (atomic_exchange_explicit(&arena->registry_lock, 1, memory_order_acquire))
		ws_os_relax();
}

static void registry_unlock(ws_arena *arena)
{
	atomic_store_explicit(&arena->registry_lock, 0, memory_order_release);
}

struct ws_robust_head *ws_robust_head(void)
{
	struct ws_thread *t = ws_os_thread();
	uint32_t tid = ws_os_thread_id();

	if (!t)
		return NULL;
	/* One system call per thread: the head does not move while the thread lives. */
	if (t->robust_tid != tid) {
		t->robust_head = ws_os_robust_head();
		t->robust_tid = tid;
	}
	return t->robust_head;
}

static void *entry_of(struct ws_record *rec)
{
#if WS_ROBUST_DOUBLY_LINKED
	return &rec->robust_next;
#else
	return &rec->robust_next_i386;
#endif
}

#if WS_ROBUST_DOUBLY_LINKED
/* Publishes `rec` at the front of the list, as glibc adds its mutexes. */
static void robust_link(struct ws_robust_head *head, struct ws_record *rec)
{
	uintptr_t first = (uintptr_t)head->next;

	rec->robust_prev = (uint64_t)(uintptr_t)head;
	rec->robust_next = first;
	/* The first entry's back link (glibc's robust_prev in front of an empty head). */
	*(uintptr_t *)((first & ~(uintptr_t)1) - sizeof(void *)) = (uintptr_t)entry_of(rec);
	atomic_signal_fence(memory_order_seq_cst);
	head->next = entry_of(rec);
	atomic_signal_fence(memory_order_seq_cst);
}

/* Takes `rec` off the list if its links, read from the arena, check out. */
static bool robust_unlink(struct ws_robust_head *head, struct ws_record *rec)
{
	uintptr_t entry = (uintptr_t)entry_of(rec);
	uintptr_t prev = (uintptr_t)rec->robust_prev;
	uintptr_t next = (uintptr_t)rec->robust_next;
	uintptr_t next_back = (next & ~(uintptr_t)1) - sizeof(void *);
	uintptr_t seen;

	(void)head;
	if (ws_os_peek((void *)prev, &seen, sizeof(seen)) || (seen & ~(uintptr_t)1) != entry)
		return false;
	if (ws_os_peek((void *)next_back, &seen, sizeof(seen)) || seen != entry)
		return false;
	*(uintptr_t *)prev = next;
	*(uintptr_t *)next_back = prev;
	atomic_signal_fence(memory_order_seq_cst);
	return true;
}
#else
/* Publishes `rec` at the front of the list, as glibc adds its mutexes: no back links. */
static void robust_link(struct ws_robust_head *head, struct ws_record *rec)
{
	rec->robust_next_i386 = (uint32_t)(uintptr_t)head->next;
	atomic_signal_fence(memory_order_seq_cst);
	head->next = entry_of(rec);
	atomic_signal_fence(memory_order_seq_cst);
}

/* The kernel stops walking a robust list after this many entries. */
#define ROBUST_LIST_LIMIT 2048

/*
 * Takes `rec` off the list: finds the link that points at it, walking from
 * the head, each link read with ws_os_peek (the list runs through other
 * records and glibc's mutexes); false if the walk ends without it.
 */
static bool robust_unlink(struct ws_robust_head *head, struct ws_record *rec)
{
	uintptr_t entry = (uintptr_t)entry_of(rec);
	uintptr_t link = (uintptr_t)&head->next;

	for (int i = 0; i <= ROBUST_LIST_LIMIT; i++) {
		uintptr_t node;

		if (ws_os_peek((void *)link, &node, sizeof(node)))
			return false;
		node &= ~(uintptr_t)1; /* glibc's mark of a PI mutex */
		if (node == (uintptr_t)head)
			return false;
		if (node == entry) {
			*(uintptr_t *)link = rec->robust_next_i386;
			atomic_signal_fence(memory_order_seq_cst);
			return true;
		}
		link = node; /* an entry's first word is its link */
	}
	return false;
}
#endif

static bool take_fresh(ws_arena *arena, uint32_t *record)
{
	_Atomic uint32_t *fresh = &arena->header->fresh_records;
	uint32_t n = atomic_load_explicit(fresh, memory_order_relaxed);

	do {
		if (n >= arena->records_count)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(fresh, &n, n + 1, memory_order_relaxed,
							memory_order_relaxed));
	*record = n;
	return true;
}

/*
 * Takes `rec` for the calling thread if its `alive` still reads `expected`
 * (0: free; a dead value: adoption), and links it.
 */
static bool take(struct ws_robust_head *head, struct ws_record *rec, uint32_t expected, uint32_t tid)
{
	void *saved = head->list_op_pending;
	bool taken;

	head->list_op_pending = entry_of(rec);
	atomic_signal_fence(memory_order_seq_cst);
	WS_FAULT();
	taken = atomic_compare_exchange_strong_explicit(&rec->alive, &expected, tid,
							memory_order_acq_rel,
							memory_order_relaxed);
	if (taken) {
		WS_FAULT();
		rec->tid = tid;
		rec->pid = ws_os_process_id();
		/*
		 * An adopted record keeps its dead thread's counter: odd, the
		 * lock words that thread held (they bear our name now) stay
		 * held, by us, until we have taken them over (lock.c's take).
		 * Zeroed, they would look stale to the others (holder_gone),
		 * who would take the arena lock with its log left busy.
		 */
		if (expected == 0) {
			atomic_store_explicit(&rec->holding, 0, memory_order_relaxed);
			atomic_store_explicit(&rec->holding_stamp, 0, memory_order_relaxed);
		}
		robust_link(head, rec);
		WS_FAULT();
	}
	head->list_op_pending = saved;
	atomic_signal_fence(memory_order_seq_cst);
	return taken;
}

/*
 * Claims a free record, or else adopts a dead one that nobody has reclaimed
 * yet (its duties, see reap.c, are then the caller's: *adopted).  A record
 * being reaped is neither: its generation may be changing.  A new record
 * names no owner id until its thread acquires a mutex (reap.c).
 */
static int claim(ws_arena *arena, struct ws_robust_head *head, uint32_t tid, uint32_t *out,
		 bool *adopted)
{
	static _Atomic uint32_t hint;
	uint32_t start = atomic_fetch_add_explicit(&hint, 1, memory_order_relaxed);
	uint32_t fresh;

	*adopted = false;
	if (take_fresh(arena, &fresh) && take(head, &arena->records[fresh], 0, tid)) {
		struct ws_record *rec = &arena->records[fresh];

		atomic_store_explicit(&rec->owner, 0, memory_order_relaxed);
		/*
		 * Never linked anywhere, but zeroed entries would name slot 0: the
		 * first wait would lock that unrelated object to unlink them, and
		 * could not queue under its own object's lock (queue.c, wait.c).
		 */
		for (uint32_t k = 0; k < WS_ENTRIES_PER_WAIT; k++)
			ws_put(&rec->entries[k].object, WS_ENTRY_NOWHERE);
		*out = fresh;
		return 0;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < arena->records_count; i++) {
			uint32_t r = (start + i) % arena->records_count;
			struct ws_record *rec = &arena->records[r];
			uint32_t alive = atomic_load_explicit(&rec->alive, memory_order_relaxed);

			if (pass == 0 ? alive != 0
				      : ws_liveness_of(alive) != WS_DEAD || alive == WS_RECORD_REAPING)
				continue;
			if (!take(head, rec, alive, tid))
				continue;
			if (pass == 0) {
				atomic_store_explicit(&rec->owner, 0, memory_order_relaxed);
				/* Its last thread may have died between a release and the unsaying. */
				ws_put(&rec->log.arena_lock, 0);
			}
			*adopted = pass == 1;
			*out = r;
			return 0;
		}
	}
	return -EUSERS;
}

bool ws_record_reap_begin(ws_arena *arena, uint32_t record)
{
	struct ws_record *rec = &arena->records[record];
	uint32_t alive = atomic_load_explicit(&rec->alive, memory_order_acquire);

	if (alive == WS_RECORD_REAPING)
		return true; /* a reaper died here: its recovery goes on with it */
	return ws_liveness_of(alive) == WS_DEAD &&
	       atomic_compare_exchange_strong_explicit(&rec->alive, &alive, WS_RECORD_REAPING,
						       memory_order_acq_rel, memory_order_relaxed);
}

void ws_record_reap_end(ws_arena *arena, uint32_t record)
{
	struct ws_record *rec = &arena->records[record];

	/* A new generation first: lock words naming the dead thread stay dead. */
	atomic_store_explicit(&rec->generation, ws_get(&rec->generation) + 1,
			      memory_order_relaxed);
	WS_FAULT();
	atomic_store_explicit(&rec->alive, 0, memory_order_release);
	/* Whoever watched the dead thread (mutex waiters, lock sleepers) looks again. */
	ws_futex_wake(&rec->alive, INT_MAX, true);
}

static int remember(ws_arena *arena, uint32_t pid, uint32_t tid, uint32_t record)
{
	int ret = 0;

	registry_lock(arena);
	/* Threads that ended are gone from their records: forget them before growing. */
	if (arena->registry_count == arena->registry_capacity) {
		uint32_t kept = 0;

		for (uint32_t i = 0; i < arena->registry_count; i++) {
			struct ws_registration *r = &arena->registry[i];

			if (ws_alive_is(atomic_load_explicit(&arena->records[r->record].alive,
							     memory_order_relaxed), r->tid))
				arena->registry[kept++] = *r;
		}
		arena->registry_count = kept;
	}
	if (arena->registry_count == arena->registry_capacity) {
		uint32_t capacity = arena->registry_capacity ? arena->registry_capacity * 2 : 16;
		struct ws_registration *grown =
			realloc(arena->registry, capacity * sizeof(*grown));

		if (grown) {
			arena->registry = grown;
			arena->registry_capacity = capacity;
		} else {
			ret = -ENOMEM;
		}
	}
	if (!ret)
		arena->registry[arena->registry_count++] =
			(struct ws_registration){ pid, tid, record };
	registry_unlock(arena);
	return ret;
}

/* A registration of this thread that fell out of its small cache. */
static bool recall(ws_arena *arena, uint32_t tid, uint32_t *record)
{
	bool found = false;

	registry_lock(arena);
	for (uint32_t i = 0; i < arena->registry_count && !found; i++) {
		struct ws_registration *r = &arena->registry[i];

		if (r->tid == tid && ws_alive_is(atomic_load_explicit(&arena->records[r->record].alive,
								      memory_order_relaxed), tid)) {
			*record = r->record;
			found = true;
		}
	}
	registry_unlock(arena);
	return found;
}

static void cache_put(struct ws_thread *t, uint64_t serial, uint32_t tid, uint32_t record)
{
	struct ws_thread_cache *slot = &t->cache[t->cache_next++ % WS_THREAD_CACHE];

	slot->serial = serial;
	slot->tid = tid;
	slot->record = record;
}

int ws_self_cached(ws_arena *arena, uint32_t *record)
{
	struct ws_thread *t = ws_os_thread_peek();
	uint32_t tid = ws_os_thread_id();

	if (!t)
		return -ENOENT;
	for (int i = 0; i < WS_THREAD_CACHE; i++) {
		struct ws_thread_cache *c = &t->cache[i];

		if (c->serial == arena->serial && c->tid == tid) {
			/* Ours until we leave; anything else means someone wrote over it. */
			if (!ws_alive_is(atomic_load_explicit(&arena->records[c->record].alive,
							      memory_order_relaxed), tid))
				return -EUCLEAN;
			*record = c->record;
			return 0;
		}
	}
	return -ENOENT;
}

/* Marks our own record dead, as the kernel would, and wakes whoever watches it. */
static void mark_left(struct ws_record *rec)
{
	uint32_t old = atomic_exchange_explicit(&rec->alive, WS_FUTEX_OWNER_DIED,
						memory_order_acq_rel);

	if (old & WS_FUTEX_WAITERS)
		ws_futex_wake(&rec->alive, INT_MAX, true);
}

/*
 * Takes our record off our list and marks it dead, as our death would; a
 * death meanwhile is still marked by the kernel (list_op_pending).
 */
static void give_back(ws_arena *arena, struct ws_robust_head *head, uint32_t record)
{
	struct ws_record *rec = &arena->records[record];
	void *saved = head->list_op_pending;

	head->list_op_pending = entry_of(rec);
	atomic_signal_fence(memory_order_seq_cst);
	WS_FAULT();
	if (robust_unlink(head, rec))
		mark_left(rec);
	head->list_op_pending = saved;
	atomic_signal_fence(memory_order_seq_cst);
}

int ws_self(ws_arena *arena, uint32_t *record, bool *adopted)
{
	struct ws_thread *t = ws_os_thread();
	uint32_t tid = ws_os_thread_id();
	struct ws_robust_head *head;
	int ret;

	*adopted = false;
	if (!t)
		return -ENOMEM;
	ret = ws_self_cached(arena, record);
	if (ret != -ENOENT)
		return ret;
	if (recall(arena, tid, record)) {
		cache_put(t, arena->serial, tid, *record);
		return 0;
	}
	head = ws_robust_head();
	if (!head)
		return -ENOTSUP;
	ret = claim(arena, head, tid, record, adopted);
	if (ret)
		return ret;
	/* Here, where system calls are made anyway; the wait path never allocates. */
	ws_os_memo_reserve(t);
	ret = remember(arena, ws_os_process_id(), tid, *record);
	if (ret) {
		give_back(arena, head, *record);
		*adopted = false;
		return ret;
	}
	cache_put(t, arena->serial, tid, *record);
	return 0;
}

void ws_self_give_back(ws_arena *arena, uint32_t record)
{
	struct ws_thread *t = ws_os_thread();
	struct ws_robust_head *head = ws_robust_head();
	uint32_t tid = ws_os_thread_id();

	if (!t || !head)
		return; /* ws_self() could not have handed it out */
	registry_lock(arena);
	for (uint32_t i = 0; i < arena->registry_count; i++) {
		struct ws_registration *r = &arena->registry[i];

		if (r->tid == tid && r->record == record) {
			*r = arena->registry[--arena->registry_count];
			break;
		}
	}
	registry_unlock(arena);
	for (int i = 0; i < WS_THREAD_CACHE; i++)
		if (t->cache[i].serial == arena->serial && t->cache[i].record == record)
			t->cache[i].serial = 0;
	give_back(arena, head, record);
}

bool ws_records_leave(ws_arena *arena)
{
	uint32_t pid = ws_os_process_id(), tid = ws_os_thread_id();
	struct ws_thread *t = ws_os_thread();
	bool unmap = true;

	registry_lock(arena);
	for (uint32_t i = 0; i < arena->registry_count; i++) {
		struct ws_registration *r = &arena->registry[i];
		struct ws_record *rec = &arena->records[r->record];

		if (r->pid != pid)
			continue; /* a parent's thread, inherited through fork */
		if (!ws_alive_is(atomic_load_explicit(&rec->alive, memory_order_acquire), r->tid))
			continue; /* that thread has ended: the kernel took it off its list */
		if (r->tid != tid) {
			unmap = false; /* still running, its list still leads here */
			continue;
		}
		struct ws_robust_head *head = ws_robust_head();

		if (!head) {
			unmap = false;
			continue;
		}
		void *saved = head->list_op_pending;

		head->list_op_pending = entry_of(rec);
		atomic_signal_fence(memory_order_seq_cst);
		if (robust_unlink(head, rec))
			mark_left(rec);
		else
			unmap = false;
		head->list_op_pending = saved;
	}
	registry_unlock(arena);
	if (t) {
		for (int i = 0; i < WS_THREAD_CACHE; i++)
			if (t->cache[i].serial == arena->serial)
				t->cache[i].serial = 0;
	}
	free(arena->registry);
	arena->registry = NULL;
	arena->registry_count = arena->registry_capacity = 0;
	return unmap;
}
