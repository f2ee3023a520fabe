/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A thread's memo of the handle list it last found valid: see memo.h. */
#include "memo.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "os/os.h"

struct ws_list_memo {
	uint64_t serial;   /* the arena's; 0: empty (as a new memo is) */
	uint64_t closes;   /* the count of closes read before the check */
	uint32_t count;
	bool distinct;     /* no two handles of one slot: a wait_all's check too */
	ws_handle handles[WS_MAX_WAIT_OBJECTS];
};
_Static_assert(sizeof(struct ws_list_memo) <= WS_OS_MEMO_BYTES, "the OS layer keeps a memo's bytes");

bool ws_memo_holds(const ws_arena *arena, const ws_handle *handles, uint32_t count,
		   uint64_t closes, bool distinct)
{
	const struct ws_thread *thread = ws_os_thread_peek();
	const struct ws_list_memo *memo = thread ? thread->memo : NULL;

	return memo && memo->serial == arena->serial && memo->closes == closes &&
	       memo->count == count && (memo->distinct || !distinct) &&
	       memcmp(memo->handles, handles, count * sizeof(*handles)) == 0;
}

void ws_memo_keep(const ws_arena *arena, const ws_handle *handles, uint32_t count,
		  uint64_t closes, bool distinct)
{
	struct ws_thread *thread = ws_os_thread_peek();
	struct ws_list_memo *memo = thread ? thread->memo : NULL;

	if (!memo || count > WS_MAX_WAIT_OBJECTS)
		return;
	/* Empty while it changes: a signal handler's wait must not match half of it. */
	memo->serial = 0;
	atomic_signal_fence(memory_order_seq_cst);
	memo->closes = closes;
	memo->count = count;
	memo->distinct = distinct;
	memcpy(memo->handles, handles, count * sizeof(*handles));
	atomic_signal_fence(memory_order_seq_cst);
	memo->serial = arena->serial;
}
