/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shrinking a stretch of operations that NT forbids, keeping the proof
 * (check.h): the shortest failing prefix, then drop what is not needed.
 */
#ifndef WINSYNC_VERIFY_SHRINK_H
#define WINSYNC_VERIFY_SHRINK_H

#include "search.h"

/*
 * VC_SHOWN: in the counterexample; VC_SHOWN_PENDING: in it, still running
 * at its end; VC_DROPPED: not needed (pending while shrinking, then left
 * out); VC_CUT: after the end of the shortest failing prefix.
 */
enum vc_keep { VC_SHOWN, VC_SHOWN_PENDING, VC_DROPPED, VC_CUT };

/*
 * ops[0..n) (sorted by invoke) fail from `starts`.  Sets keep[i] for each
 * and searches the result once more with a trace: *final, whose operation
 * indexes count the operations not VC_CUT, in order (the dropped ones are
 * in it, optional: the explanation may need them).  Each search stops at
 * `deadline_ns` or after a share of `budget_steps` (a check that runs out
 * counts as passing: nothing is dropped on a guess); the steps bound keeps
 * the result the same on any machine.  0, or -ENOMEM.
 */
int vc_shrink(const struct vs_op *ops, uint32_t n, const struct nt_state *starts, uint32_t nstarts,
	      uint64_t deadline_ns, size_t memory_limit, uint64_t budget_steps, uint8_t *keep,
	      struct vs_outcome *final);

#endif /* WINSYNC_VERIFY_SHRINK_H */
