/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A thread's memo of the handle list it last found valid: see memo.h. */
#include "memo.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

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
