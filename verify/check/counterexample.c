/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A failure as a history of its own: the objects in the state where the
 * explanation starts, the operations the proof needs and the optional ones
 * the explanation made take effect.  NT allows no order of the needed
 * operations when the others each took effect as recorded or not at all,
 * so in particular not when exactly those did: this small history fails as
 * well, wherever the first did, and for the same reason (with the needed
 * operations alone it could fail sooner, for want of what the optional
 * ones did).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int vc_write_counterexample(FILE *f, const struct vc_report *r)
{
	const struct vc_failure *fl = &r->failure;
	struct vh_history out;
	int ret;

	if (!r->has_failure || !fl->nstarts)
		return -1;
	memset(&out, 0, sizeof(out));
	snprintf(out.backend, sizeof(out.backend), "%s", fl->history.backend);
	out.seed = fl->history.seed;
	out.threads = fl->history.threads;
	out.nobjects = fl->history.nobjects;
	out.objects = malloc((out.nobjects + 1) * sizeof(*out.objects));
	if (!out.objects)
		return -1;
	memcpy(out.objects, fl->history.objects, out.nobjects * sizeof(*out.objects));
	for (uint32_t i = 0; i < fl->nobjects; i++)
		out.objects[fl->objects[i]] = fl->starts[fl->start < fl->nstarts ? fl->start : 0].obj[i];
	for (uint32_t i = 0; i < fl->history.nops; i++) {
		const struct vh_op *op = &fl->history.ops[i];
		struct vh_op *copy;

		/* What was running at the prefix's end is optional, and a pending
		 * call may take effect with any result: only a death, which has
		 * none, stays (as pending); the others are left out. */
		if (fl->context[i] == VC_ROLE_CONTEXT || (op->ret == VH_PENDING && op->call.kind != NT_DIE))
			continue;
		if (!(copy = vh_append(&out))) {
			vh_free(&out);
			return -1;
		}
		*copy = *op;
	}
	fprintf(f, "# the counterexample of a failure of %s seed %" PRIu64 ": its objects as they were where\n"
		   "# its explanation starts, the operations the proof needs and those the explanation uses\n",
		fl->history.backend, fl->history.seed);
	ret = vh_write(f, &out);
	vh_free(&out);
	return ret;
}
