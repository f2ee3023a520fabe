/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The arena's shared-memory format, pinned down number by number: 32-bit and
 * 64-bit processes (Linux i386 and x86_64, winsync.dll for i686 and x86-64)
 * map the same arena, so every field of layout.h must sit at the same offset
 * with the same size on every ABI.  i386 aligns a plain uint64_t to 4 bytes,
 * which is what layout.h's _Alignas(8) undo; this table fails the build of
 * any ABI where a field moves.  A field added to layout.h gets its row here
 * (reserved words are not listed: new fields come out of them).
 */
#include "layout.h"

#define WS_AT(type, field, offset, size)                                          \
	_Static_assert(offsetof(struct type, field) == (offset) &&                 \
		       sizeof(((struct type *)0)->field) == (size),                 \
		       #type "." #field " has one place on every ABI")
#define WS_SIZE(type, size, align)                                                \
	_Static_assert(sizeof(struct type) == (size) && _Alignof(struct type) == (align), \
		       "struct " #type " has one size on every ABI")


WS_SIZE(ws_object, 64, 8);
WS_AT(ws_object, head, 0, 8);
WS_AT(ws_object, aux, 8, 4);
WS_AT(ws_object, queue_head, 12, 4);
WS_AT(ws_object, queue_tail, 16, 4);
WS_AT(ws_object, queued, 20, 4);
WS_AT(ws_object, next_free, 24, 4);
WS_AT(ws_object, lock, 28, 4);
WS_AT(ws_object, held_gen, 32, 4);

WS_SIZE(ws_entry, 16, 4);
WS_AT(ws_entry, prev, 0, 4);
WS_AT(ws_entry, next, 4, 4);
WS_AT(ws_entry, object, 8, 4);
WS_AT(ws_entry, linked, 12, 4);

WS_SIZE(ws_log_locked, 40, 8);
WS_AT(ws_log_locked, slot, 0, 4);
WS_AT(ws_log_locked, released, 4, 4);
WS_AT(ws_log_locked, head, 8, 8);
WS_AT(ws_log_locked, aux, 16, 4);
WS_AT(ws_log_locked, queue_head, 20, 4);
WS_AT(ws_log_locked, queue_tail, 24, 4);
WS_AT(ws_log_locked, queued, 28, 4);
WS_AT(ws_log_locked, unused0, 32, 4);
WS_AT(ws_log_locked, snapped, 36, 4);

WS_SIZE(ws_log_undo, 8, 4);
WS_AT(ws_log_undo, offset, 0, 4);
WS_AT(ws_log_undo, old, 4, 4);

WS_SIZE(ws_log, 13568, 64);
WS_AT(ws_log, state, 0, 4);
WS_AT(ws_log, op, 4, 4);
WS_AT(ws_log, op_slot, 8, 4);
WS_AT(ws_log, op_done, 12, 4);
WS_AT(ws_log, locked_count, 16, 4);
WS_AT(ws_log, undo_count, 20, 4);
WS_AT(ws_log, claim_record, 24, 4);
WS_AT(ws_log, claim_state, 28, 4);
WS_AT(ws_log, owner_died, 32, 4);
WS_AT(ws_log, wake_record, 36, 4);
WS_AT(ws_log, object_lock, 40, 4);
WS_AT(ws_log, arena_lock, 44, 4);
WS_AT(ws_log, locked, 64, 5280);
WS_AT(ws_log, undo, 5344, 8192);

WS_SIZE(ws_record, 14784, 64);
WS_AT(ws_record, alive, 0, 4);
WS_AT(ws_record, generation, 4, 4);
WS_AT(ws_record, tid, 8, 4);
WS_AT(ws_record, owner, 12, 4);
WS_AT(ws_record, holding, 16, 4);
WS_AT(ws_record, robust_next_i386, 20, 4);
WS_AT(ws_record, robust_prev, 24, 8);
WS_AT(ws_record, robust_next, 32, 8);
WS_AT(ws_record, pid, 40, 4);
WS_AT(ws_record, holding_stamp, 44, 4);
WS_AT(ws_record, wake, 64, 4);
WS_AT(ws_record, state, 68, 4);
WS_AT(ws_record, wait_owner, 72, 4);
WS_AT(ws_record, count, 76, 4);
WS_AT(ws_record, wait_all, 80, 4);
WS_AT(ws_record, entries_used, 84, 4);
WS_AT(ws_record, wait_serial, 88, 4);
WS_AT(ws_record, wait_clock, 92, 4);
WS_AT(ws_record, wait_since, 96, 8);
WS_AT(ws_record, wait_deadline, 104, 8);
WS_AT(ws_record, unused0, 112, 4);
WS_AT(ws_record, entries, 128, 1040);
WS_AT(ws_record, log, 1216, 13568);

WS_SIZE(ws_arena_header, 192, 64);
WS_AT(ws_arena_header, magic, 0, 4);
WS_AT(ws_arena_header, version, 4, 4);
WS_AT(ws_arena_header, size, 8, 8);
WS_AT(ws_arena_header, capacity, 16, 4);
WS_AT(ws_arena_header, slots, 20, 4);
WS_AT(ws_arena_header, index_bits, 24, 4);
WS_AT(ws_arena_header, records, 28, 4);
WS_AT(ws_arena_header, objects_offset, 32, 8);
WS_AT(ws_arena_header, records_offset, 40, 8);
WS_AT(ws_arena_header, closes, 48, 8);
WS_AT(ws_arena_header, live, 72, 4);
WS_AT(ws_arena_header, fresh_slots, 76, 4);
WS_AT(ws_arena_header, free_head, 80, 4);
WS_AT(ws_arena_header, free_tail, 84, 4);
WS_AT(ws_arena_header, fresh_records, 88, 4);
WS_AT(ws_arena_header, held_head, 92, 4);
WS_AT(ws_arena_header, held_tail, 96, 4);
WS_AT(ws_arena_header, held, 100, 4);
WS_AT(ws_arena_header, lock, 128, 4);
WS_AT(ws_arena_header, sections, 132, 4);
