/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* White-box lookups of thread records: see whitebox.h. */
#include "whitebox.h"

#include <stdatomic.h>

#include "../winsync/arena.h"
#include "../winsync/lock.h"
#include "../winsync/record.h"

/* Records past fresh_records were never handed out (zero). */
static uint32_t handed_out(const ws_arena *a)
{
	uint32_t n = atomic_load(&a->header->fresh_records);

	return n < a->records_count ? n : a->records_count;
}

int wb_live_record(ws_arena *a, pid_t tid)
{
	uint32_t n = handed_out(a);

	for (uint32_t r = 0; r < n; r++) {
		uint32_t alive = atomic_load(&a->records[r].alive);

		if (a->records[r].tid == (uint32_t)tid && (alive & WS_FUTEX_TID_MASK) == (uint32_t)tid &&
		    !(alive & WS_FUTEX_OWNER_DIED))
			return (int)r;
	}
	return -1;
}

int wb_named_record(ws_arena *a, pid_t tid)
{
	uint32_t n = handed_out(a);
	int found = -1;

	for (uint32_t r = 0; r < n; r++)
		if (a->records[r].tid == (uint32_t)tid)
			found = (int)r;
	return found;
}

uint32_t wb_lock_ref(ws_arena *a, uint32_t record)
{
	return ws_record_ref(a, record);
}

void wb_pose_as_holder(ws_arena *a, uint32_t record)
{
	struct ws_record *rec = &a->records[record];
	uint32_t odd = atomic_load(&rec->holding) | 1;

	atomic_store(&rec->holding_stamp, ws_lock_stamp(odd));
	atomic_store(&rec->holding, odd);
}

void wb_pose_as_holder_end(ws_arena *a, uint32_t record)
{
	struct ws_record *rec = &a->records[record];

	atomic_store(&rec->holding, (atomic_load(&rec->holding) | 1) + 1);
	atomic_store(&rec->holding_stamp, 0);
}
