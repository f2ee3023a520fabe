/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ws_owner_died: a host that learns of deaths itself abandons an owner id (reap.h). */
#include <errno.h>

#include "crit.h"
#include "reap.h"

int ws_owner_died(ws_arena *arena, uint32_t owner)
{
	struct ws_crit c;
	int ret;

	if (!arena || owner == 0)
		return -EINVAL;
	ret = ws_crit_enter(arena, ws_arena_lock(arena), &c);
	if (ret)
		return ret;
	/* Several operations: whoever takes over from us if we die finishes them all,
	 * woken by the kernel if need be. */
	ws_guard_owner(&c, owner);
	c.log->owner_died = owner;
	ret = ws_owner_died_locked(&c, owner);
	c.log->owner_died = 0;
	ws_crit_leave(&c);
	return ret;
}
