/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the timeline and the picture both need from a failure. */
#ifndef WINSYNC_VERIFY_RENDER_COMMON_H
#define WINSYNC_VERIFY_RENDER_COMMON_H

#include <stdint.h>

#include "check.h"

#define VC_MAX_STEPS_SHOWN 2

struct vc_shown {
	uint32_t column;              /* the thread's place among those shown */
	uint32_t steps[VC_MAX_STEPS_SHOWN]; /* its steps in the explanation, 1-based; 0: none */
	bool starts[VC_MAX_STEPS_SHOWN];    /* that step only starts a wait (it blocks) */
	bool stuck;
	uint8_t role;                 /* enum vc_role */
	bool context;                 /* role != VC_ROLE_NEEDED */
	char call[160];
	char result[64];
};

/* Per operation of f->history: what to show.  Returns the number of threads shown. */
uint32_t vc_shown_ops(const struct vc_failure *f, struct vc_shown *shown, uint32_t *threads);

#endif /* WINSYNC_VERIFY_RENDER_COMMON_H */
