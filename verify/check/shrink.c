/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vc_shrink (shrink.h).  Both steps keep the proof:
 *
 * - A prefix: the operations that returned by a cut time, those still
 *   running there made optional (as recorded, or not at all), and nothing
 *   later.  If the whole is linearizable, so is such a prefix: in a
 *   linearization every operation that returned by the cut comes before
 *   every one that started after it, so keep the order up to the first of
 *   those and leave out the running operations that come after it (nothing
 *   that returned by the cut can depend on them).  So a failing prefix
 *   proves the whole fails, and failing prefixes only grow: a binary search
 *   finds the shortest.
 * - Dropping: an operation made optional (it took effect as recorded, or
 *   not at all) only loosens the history, so if NT still forbids it, the
 *   original fails too, and it fails without that operation.  Dropped
 *   operations stay optional while others are tried, so each step keeps the
 *   proof of the one before.  Chunks first (halves, quarters, ...), then
 *   single operations, within a time budget.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "shrink.h"

#define STEP_SECONDS 1
#define BUDGET_SECONDS 60
#define DEFAULT_BUDGET_STEPS 20000000ull

/* Builds the problem of the ops whose keep[] is not VC_DROPPED (or all, with `dropped_too`). */
static uint32_t select_ops(const struct vs_op *ops, uint32_t n, const uint8_t *keep, bool dropped_too,
			   struct vs_op *sel)
{
	uint32_t m = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (keep[i] == VC_CUT || (keep[i] == VC_DROPPED && !dropped_too))
			continue;
		sel[m] = ops[i];
		/*
		 * Running at the cut, dropped: optional (as recorded, or not
		 * at all).  An operation that never returned stays pending.
		 */
		if (!ops[i].pending && (keep[i] == VC_SHOWN_PENDING || keep[i] == VC_DROPPED))
			sel[m].optional = true;
		m++;
	}
	return m;
}

static unsigned count_flag(const struct vs_op *ops, uint32_t n, int which)
{
	unsigned c = 0;

	for (uint32_t i = 0; i < n; i++)
		c += which == 1 ? ops[i].optional : ops[i].pending;
	return c;
}

/* 1 if NT forbids it (within the time of one step), 0 if not or unknown, -ENOMEM. */
static int fails(const struct vs_op *ops, uint32_t n, const struct nt_state *starts, uint32_t nstarts,
		 uint64_t deadline_ns, size_t memory_limit, uint64_t step_nodes, uint64_t *spent)
{
	/* Bounded in steps, not time: the same history shrinks the same way on any machine. */
	struct vs_problem p = { ops, n, starts, nstarts, false, false, deadline_ns, memory_limit, 0, step_nodes };
	struct vs_outcome out;
	uint64_t step = vs_now_ns();
	if (vs_search(&p, &out))
		return -ENOMEM;
	vs_outcome_free(&out);
	*spent += out.nodes;
	if (getenv("VERIFY_DEBUG_SHRINK"))
		fprintf(stderr, "shrink: %u ops (%u optional, %u pending): %s, %llu nodes, %.3f s\n", n,
			count_flag(ops, n, 1), count_flag(ops, n, 2),
			out.verdict == VS_FAIL ? "fails" : out.verdict == VS_OK ? "passes" : "unknown",
			(unsigned long long)out.nodes, (double)(vs_now_ns() - step) / 1e9);
	return out.verdict == VS_FAIL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* keep[] for the prefix that ends at `cut`. */
static void prefix(const struct vs_op *ops, uint32_t n, uint64_t cut, uint8_t *keep)
{
	for (uint32_t i = 0; i < n; i++) {
		if (ops[i].invoke > cut)
			keep[i] = VC_CUT;
		else if (ops[i].pending || ops[i].ret > cut)
			keep[i] = VC_SHOWN_PENDING;
		else
			keep[i] = VC_SHOWN;
	}
}

int vc_shrink(const struct vs_op *ops, uint32_t n, const struct nt_state *starts, uint32_t nstarts,
	      uint64_t deadline_ns, size_t memory_limit, uint64_t budget_steps, uint8_t *keep,
	      struct vs_outcome *final)
{
	uint64_t step_nodes;

	struct vs_op *sel = malloc((n + 1) * sizeof(*sel));
	uint64_t *cuts = malloc((n + 1) * sizeof(*cuts));
	uint8_t *was = malloc(n + 1);
	uint32_t ncuts = 0, lo, hi, m;
	uint64_t spent = 0;
	int ret = -ENOMEM, f;

	if (!budget_steps)
		budget_steps = DEFAULT_BUDGET_STEPS;
	/* One check may take a fiftieth of it, and no less than 100,000 steps. */
	step_nodes = budget_steps / 50 > 100000 ? budget_steps / 50 : 100000;

	memset(final, 0, sizeof(*final));
	if (!sel || !cuts || !was)
		goto out;
	for (uint32_t i = 0; i < n; i++)
		if (!ops[i].pending)
			cuts[ncuts++] = ops[i].ret;
	qsort(cuts, ncuts, sizeof(*cuts), cmp_u64);
	for (uint32_t i = 0; i < n; i++)
		keep[i] = VC_SHOWN;
	/* The shortest failing prefix: cuts[hi] fails (the whole does), find the first. */
	if (ncuts) {
		lo = 0;
		hi = ncuts - 1;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			prefix(ops, n, cuts[mid], keep);
			m = select_ops(ops, n, keep, false, sel);
			if ((f = fails(sel, m, starts, nstarts, deadline_ns, memory_limit, step_nodes, &spent)) < 0)
				goto out;
			if (f)
				hi = mid;
			else
				lo = mid + 1;
		}
		prefix(ops, n, cuts[hi], keep);
	}
	/* Drop what the proof does not need: chunks of halving size, then one by one. */
	{
		uint64_t budget = vs_now_ns() + BUDGET_SECONDS * 1000000000ull;
		uint32_t live = 0;

		for (uint32_t i = 0; i < n; i++)
			live += keep[i] == VC_SHOWN || keep[i] == VC_SHOWN_PENDING;
		for (uint32_t size = live / 2 ? live / 2 : 1; size >= 1; size /= 2) {
			for (uint32_t from = 0; from < n && vs_now_ns() < budget && spent < budget_steps;) {
				uint32_t taken = 0, i;

				memcpy(was, keep, n);
				for (i = from; i < n && taken < size; i++) {
					if (keep[i] == VC_SHOWN || keep[i] == VC_SHOWN_PENDING) {
						keep[i] = VC_DROPPED;
						taken++;
					}
				}
				from = i;
				if (!taken)
					break;
				m = select_ops(ops, n, keep, true, sel);
				if ((f = fails(sel, m, starts, nstarts, deadline_ns, memory_limit, step_nodes, &spent)) < 0)
					goto out;
				if (!f)
					memcpy(keep, was, n);
			}
			if (size == 1)
				break;
		}
	}
	/* Once more, with the trace that explains it (dropped operations optional in it). */
	{
		struct vs_problem p = { sel, 0, starts, nstarts, false, true, 0, memory_limit, 0, 0 };

		p.nops = select_ops(ops, n, keep, true, sel);
		p.deadline_ns = vs_now_ns() + 10ull * STEP_SECONDS * 1000000000ull;
		if (vs_search(&p, final))
			goto out;
	}
	ret = 0;
out:
	free(sel);
	free(cuts);
	free(was);
	return ret;
}
