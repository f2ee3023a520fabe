/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The arena's shared-memory format: one mapping holding a header, the
 * object slots and the thread records (each with the transaction log of its
 * critical sections).  Everything in it refers to everything else by index,
 * never by pointer, so it works at any address in any process, and every
 * index read from it is checked before use: another process may have
 * scribbled over any of it (-EUCLEAN, never a stray access).
 *
 * Who may write what:
 *   object head    a CAS by anyone while WS_HEAD_LOCKED is clear (the
 *                  uncontended paths); only a lock holder sets LOCKED:
 *                  the holder of the arena lock, or the holder of the
 *                  object's own lock word (an operation on that object
 *                  alone, crit.h), and while it is set only that holder
 *                  writes the object.
 *   other object fields, queues: whoever has the object LOCKED (an
 *                  entry: whoever has the object it is linked to).
 *   free lists (the header's ends, each free slot's next_free), the
 *                  header: the arena lock's holder, LOCKED or not.
 *   record.state   waiter.c, the only file that changes a wait's state:
 *                  the lock holder arms and hands off, the waiter itself
 *                  gives up (a compare-exchange, no lock).
 *   record.log     its own thread while it holds the lock; whoever takes
 *                  the lock over from it once it has died.
 *   a record's identity (alive, generation): see record.c.
 */
#ifndef WINSYNC_LAYOUT_H
#define WINSYNC_LAYOUT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi.h"
#include "winsync.h"

#define WS_ARENA_MAGIC   0x636e7377u /* "wsnc" */
#define WS_ARENA_VERSION 9u /* 4: the head's stamp; 5: a lock per object; 6: closes; 7: arena_lock;
			      8: objects held for their waits after a close; 9: holding_stamp */

/*
 * Object head: the value in the low half, the rest in the high half.
 *   sem: count; mutex: owner id (0: free); event: signaled (0/1).
 * A handle is generation << index_bits | slot; the head keeps the slot's
 * current generation, and the type is NONE while the slot is not live.
 *
 * The stamp counts the head's writes (every write but setting LOCKED adds
 * one, wrapping): equal heads read at two times mean the object did not
 * change in between, however it changed and came back (ABA), unless it
 * changed a multiple of 2^11 times.  A wait on several objects needs that
 * to see them all at one instant without the lock (wait.c).
 */
#define WS_HEAD_LOCKED      0x80000000u /* the lock holder is editing it */
#define WS_HEAD_QUEUED      0x40000000u /* its queue has entries: signals take the slow path */
#define WS_HEAD_ABANDONED   0x20000000u /* mutex: abandoned, not acquired since */
#define WS_HEAD_TYPE_SHIFT  27
#define WS_HEAD_TYPE_MASK   (3u << WS_HEAD_TYPE_SHIFT)
#define WS_HEAD_STAMP_SHIFT 16
#define WS_HEAD_STAMP_MASK  (((1u << WS_HEAD_TYPE_SHIFT) - 1) & ~WS_HEAD_GEN_MASK)
#define WS_HEAD_GEN_MASK    ((1u << WS_HEAD_STAMP_SHIFT) - 1)

/*
 * Fewest index bits.  Generations have 32 - index_bits bits, at most 16
 * (the head's field), and there are at least 32 slots: an arena gives out
 * at least slots x 65,535 handles before its slots retire.  A test build
 * raises it to leave only a few generation bits (test_handles_tinygen).
 */
#ifndef WS_MIN_INDEX_BITS
#define WS_MIN_INDEX_BITS 5
#endif

enum ws_type {
	WS_TYPE_NONE = 0,
	WS_TYPE_SEM = 1,
	WS_TYPE_MUTEX = 2,
	WS_TYPE_EVENT = 3,
};

/* One synchronization object, a cache line of its own. */
struct ws_object {
	_Alignas(8) _Atomic uint64_t head;
	/* sem: maximum; event: manual reset; mutex: acquisitions beyond the first. */
	_Atomic uint32_t aux;
	uint32_t queue_head;     /* entry ids; 0 ends the queue */
	uint32_t queue_tail;
	uint32_t queued;         /* entries linked */
	uint32_t next_free;      /* slot + 1 in the free or held FIFO: a logged cell, not snapshotted */
	_Atomic uint32_t lock;   /* the object's own lock word (crit.h), like the arena's */
	/*
	 * Closed while waits were queued on it: the generation they queued on
	 * (the closed handle's), and the object is held for them (object.c);
	 * 0 otherwise.  A logged cell, written before the head.
	 */
	_Atomic uint32_t held_gen;
	uint32_t reserved[7];
};
_Static_assert(sizeof(struct ws_object) == 64, "one object per cache line");

/*
 * A wait's link into the queue of one of its objects.  `linked` is the
 * object's generation when the entry was linked, 0 when it is not: closing
 * an object moves its slot to the next generation and drops its queue at
 * once, and an entry whose generation is no longer its slot's (an orphan)
 * is unlinked without touching the slot's new queue.
 *
 * Atomic: an entry is guarded by the lock of whichever object it is linked
 * to, so it passes from one object's lock to another's, often through a
 * thread of another process or another mapping of the arena.  The ordering
 * that makes this safe is in the shared memory, but a checker that keeps
 * its clocks per process and per address (ThreadSanitizer) cannot see it.
 */
struct ws_entry {
	_Atomic uint32_t prev;
	_Atomic uint32_t next;
	_Atomic uint32_t object; /* slot it was last linked to, WS_ENTRY_NOWHERE once seen unlinked */
	_Atomic uint32_t linked; /* generation of the object it is queued on, or 0 */
};

#define WS_ENTRIES_PER_WAIT (WS_MAX_WAIT_OBJECTS + 1) /* the objects and the alert */
/* entry.object of an entry its thread found unlinked (queue.c): no object to look at. */
#define WS_ENTRY_NOWHERE UINT32_MAX

/* record.state: what the thread's current wait is doing (waiter.c). */
#define WS_WAIT_IDLE      0u          /* no wait; entries may still be linked (stale) */
#define WS_WAIT_PENDING   1u          /* blocked; signalers may hand it an object */
#define WS_WAIT_GAVE_UP   2u          /* its deadline passed */
#define WS_WAIT_CANCELED  3u          /* ws_owner_died dropped it */
#define WS_WAIT_GOT       0x100u      /* | index: a signaler handed it entry `index` */
#define WS_WAIT_ABANDONED 0x200u      /* | WS_WAIT_GOT | index: and a mutex was abandoned */
#define WS_WAIT_INDEX     0xffu
/*
 * | any state a lock holder hands: handed under the arena lock, in the
 * critical section whose number's low bits follow (crit.h: the waiter
 * returns only once that section is over).  Without it: handed by a
 * section on one object, which hands out one result at most.
 */
#define WS_WAIT_IN_SECTION    0x400u
#define WS_WAIT_SECTION_SHIFT 11
#define WS_WAIT_SECTION_BITS  21

/* record.wait_clock: the clock of the wait's deadline, for inspectors. */
#define WS_WAIT_CLOCK_FOREVER   0u
#define WS_WAIT_CLOCK_MONOTONIC 1u
#define WS_WAIT_CLOCK_REALTIME  2u

/*
 * The transaction log of a lock holder (txn.h), in the holder's own record.
 * Sized for one operation: its objects (a wait locks up to 65 and unlinks
 * its last wait's entries from up to 65 more; a hand-off to a wait_all
 * waiter locks up to 64 besides the operation's own object, and gives back
 * those it did not use), the undo cells of one transaction, one hand-off.
 */
#define WS_LOG_LOCKED 132
#define WS_LOG_UNDO   1024

#define WS_LOG_IDLE      0u
#define WS_LOG_ACTIVE    1u
#define WS_LOG_COMMITTED 2u

struct ws_log_locked {
	uint32_t slot;
	uint32_t released;        /* unlocked again: recovery only clears LOCKED */
	_Alignas(8) uint64_t head; /* the snapshot taken when it was locked */
	uint32_t aux;
	uint32_t queue_head;
	uint32_t queue_tail;
	uint32_t queued;
	uint32_t unused0;         /* next_free was here: the free list's links are logged cells */
	uint32_t snapped;         /* the fields above were read with it LOCKED (txn.c) */
};

struct ws_log_undo {
	uint32_t offset;          /* of a 32-bit cell, from the arena base */
	uint32_t old;
};

struct ws_log {
	_Alignas(64) _Atomic uint32_t state;   /* WS_LOG_IDLE / ACTIVE / COMMITTED */
	uint32_t op;              /* what to finish after a recovery (txn.h) */
	uint32_t op_slot;         /* its object */
	uint32_t op_done;         /* hand-offs it made so far */
	uint32_t locked_count;
	uint32_t undo_count;
	uint32_t claim_record;    /* record + 1 handed something in this transaction, or 0 */
	uint32_t claim_state;     /* and what: the wait state that commits the hand-off */
	uint32_t owner_died;      /* the owner id of a ws_owner_died() under way, or 0 */
	uint32_t wake_record;     /* record + 1 handed an object, maybe not yet woken, or 0 */
	_Atomic uint32_t object_lock; /* slot + 1 of the object lock word taken or held, or 0 */
	_Atomic uint32_t arena_lock;  /* 1 while it takes or holds the arena lock (lock.c) */
	uint32_t reserved[4];
	struct ws_log_locked locked[WS_LOG_LOCKED];
	struct ws_log_undo undo[WS_LOG_UNDO];
};

/*
 * A thread of some process that uses the arena.  The first cache line
 * mirrors a robust pthread mutex as glibc lays it out, so the record can sit
 * on the thread's own robust futex list: when the thread dies the kernel
 * sets OWNER_DIED in `alive`, whatever killed it.  The lock word is at 0 for
 * both ABIs; the list entry is at 32 for an x86_64 thread (futex_offset -32,
 * glibc's back link at 24) and at 20 for an i386 thread (futex_offset -20, a
 * singly linked list).  A record serves one thread of one ABI at a time, and
 * the other ABI's entry is left alone.
 */
struct ws_record {
	_Atomic uint32_t alive;   /* the thread's tid while it lives (record.h) */
	_Atomic uint32_t generation; /* bumped when the record is freed; read without the lock */
	uint32_t tid;
	_Atomic uint32_t owner;   /* the owner id it last acquired a mutex with, or 0 */
	_Atomic uint32_t holding; /* odd while it takes or holds the lock (lock.c) */
	uint32_t robust_next_i386; /* an i386 thread's list entry */
	_Alignas(8) uint64_t robust_prev; /* an x86_64 thread's back link */
	_Alignas(8) uint64_t robust_next; /* an x86_64 thread's list entry */
	uint32_t pid;             /* the thread's process, for inspectors (snapshot.c) */
	_Atomic uint32_t holding_stamp; /* ws_lock_stamp(holding) while it is odd (lock.c) */
	uint32_t reserved0[4];
	/* The wait (waiter.c). */
	_Atomic uint32_t wake;    /* futex word a blocked wait sleeps on: 0 = asleep */
	_Atomic uint32_t state;
	_Atomic uint32_t wait_owner; /* read by ws_owner_died before it pins the wait (reap.c) */
	uint32_t count;           /* objects; the alert, if any, is entry `count` */
	uint32_t wait_all;
	uint32_t entries_used;    /* count, plus one with an alert */
	/*
	 * For inspectors only (snapshot.c), written by the waiter as it arms:
	 * wait_serial changes before the fields above and these are written, so
	 * a reader that sees it unchanged around its reads saw one wait.
	 */
	_Atomic uint32_t wait_serial;
	uint32_t wait_clock;      /* WS_WAIT_CLOCK_* of wait_deadline */
	_Alignas(8) uint64_t wait_since;    /* CLOCK_MONOTONIC ns when it blocked */
	_Alignas(8) uint64_t wait_deadline; /* ns on its clock */
	uint32_t unused0;         /* layout 4's handed_in: the wait state says it now */
	uint32_t reserved1[3];
	struct ws_entry entries[WS_ENTRIES_PER_WAIT];
	uint32_t reserved2[12];
	struct ws_log log;
};
_Static_assert(offsetof(struct ws_record, robust_next) == WS_ROBUST_OFFSET_X86_64,
	       "glibc's futex_offset on x86_64 is -32");
_Static_assert(offsetof(struct ws_record, robust_prev) == WS_ROBUST_OFFSET_X86_64 - 8,
	       "glibc's back link on x86_64 is just before the entry");
_Static_assert(offsetof(struct ws_record, robust_next_i386) == WS_ROBUST_OFFSET_I386,
	       "glibc's futex_offset on i386 is -20");
_Static_assert(offsetof(struct ws_record, wake) == 64, "the wait on its own line");
_Static_assert(offsetof(struct ws_record, entries) == 128, "the entries after the wait's line");
_Static_assert(offsetof(struct ws_record, log) % 64 == 0, "the log on lines of its own");
_Static_assert(sizeof(struct ws_record) % 64 == 0, "records are whole cache lines");

/* The lock word: holder ref, plus the contended bit. */
#define WS_LOCK_CONTENDED 0x80000000u
#define WS_REF_INDEX_BITS 12
#define WS_REF_INDEX_MASK ((1u << WS_REF_INDEX_BITS) - 1)
#define WS_REF_GEN_MASK   (0x7fffffffu >> WS_REF_INDEX_BITS)
_Static_assert(WS_MAX_THREADS == WS_REF_INDEX_MASK, "a ref holds record + 1");

/* In `sections`: somebody sleeps on it until the current section is over. */
#define WS_SECTIONS_WAITED 0x80000000u

struct ws_arena_header {
	uint32_t magic;
	uint32_t version;
	_Alignas(8) uint64_t size;
	uint32_t capacity;        /* live objects allowed */
	uint32_t slots;           /* object slots: capacity, at least 32 */
	uint32_t index_bits;
	uint32_t records;
	_Alignas(8) uint64_t objects_offset;
	_Alignas(8) uint64_t records_offset;
	/* Closes, counted while the object is locked, before its head is written: a memo of a valid list (memo.h) holds while it stays. */
	_Alignas(8) _Atomic uint64_t closes;
	uint32_t reserved0[4];
	/* Under the lock. */
	uint32_t live;            /* live objects */
	uint32_t fresh_slots;     /* slots [0, fresh) have been used */
	uint32_t free_head;       /* slot + 1: oldest freed slot */
	uint32_t free_tail;
	_Atomic uint32_t fresh_records; /* records [0, fresh) have been claimed once: no lock */
	uint32_t held_head;       /* slot + 1: objects closed while waits were queued (object.c) */
	uint32_t held_tail;
	uint32_t held;            /* how many: each also counted live, its slot in use */
	_Alignas(64) _Atomic uint32_t lock;
	_Atomic uint32_t sections; /* critical sections entered, and WS_SECTIONS_WAITED (crit.c) */
	uint32_t reserved2[14];
};

/* Relaxed access to fields whose ordering comes from the lock. */
static inline uint32_t ws_get(const _Atomic uint32_t *field)
{
	return atomic_load_explicit(field, memory_order_relaxed);
}

static inline void ws_put(_Atomic uint32_t *field, uint32_t value)
{
	atomic_store_explicit(field, value, memory_order_relaxed);
}

static inline uint32_t ws_head_value(uint64_t head)
{
	return (uint32_t)head;
}

static inline uint32_t ws_head_tag(uint64_t head)
{
	return (uint32_t)(head >> 32);
}

static inline enum ws_type ws_head_type(uint64_t head)
{
	return (enum ws_type)((ws_head_tag(head) & WS_HEAD_TYPE_MASK) >> WS_HEAD_TYPE_SHIFT);
}

static inline uint32_t ws_head_gen(uint64_t head)
{
	return ws_head_tag(head) & WS_HEAD_GEN_MASK;
}

/*
 * The generation an object's queue entries are linked with: its head's,
 * or the closed handle's while it is held for its waits.  `head` must be
 * read with acquire (or under the object's lock): a close writes held_gen
 * before the head.
 */
static inline uint32_t ws_queue_gen(const struct ws_object *obj, uint64_t head)
{
	uint32_t held = atomic_load_explicit(&obj->held_gen, memory_order_relaxed);

	return held ? held : ws_head_gen(head);
}

static inline uint64_t ws_make_head(uint32_t tag, uint32_t value)
{
	return (uint64_t)tag << 32 | value;
}

/* `tag` with the stamp of `old` plus one: every write of a head goes through it. */
static inline uint32_t ws_tag_restamped(uint32_t tag, uint32_t old)
{
	uint32_t stamp = (old & WS_HEAD_STAMP_MASK) + (1u << WS_HEAD_STAMP_SHIFT);

	return (tag & ~WS_HEAD_STAMP_MASK) | (stamp & WS_HEAD_STAMP_MASK);
}

/* The head `next` (computed from `old`) with the next stamp. */
static inline uint64_t ws_head_next(uint64_t old, uint64_t next)
{
	return ws_make_head(ws_tag_restamped(ws_head_tag(next), ws_head_tag(old)), ws_head_value(next));
}

/* Entry ids are 1-based so that 0 ends a queue. */
static inline uint32_t ws_entry_id(uint32_t record, uint32_t slot)
{
	return record * WS_ENTRIES_PER_WAIT + slot + 1;
}

#endif
