/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The linearizability search over one group of operations: Lowe's
 * just-in-time linearization (Wing & Gong's search over a list of call and
 * return entries in time order), with the memoization of (state,
 * linearized set) that Porcupine uses.  An operation is linearized when its
 * call comes before the first return still in the list; a blocked wait takes
 * two steps (nt_model.h), its entries leaving the list after the second.
 */
#ifndef WINSYNC_VERIFY_SEARCH_H
#define WINSYNC_VERIFY_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nt_model.h"

#define VS_NEVER UINT64_MAX

struct vs_op {
	struct nt_op call;        /* objects are the group's numbers */
	struct nt_result result;
	/*
	 * Order keys, not clocks: a call and a return with equal keys count
	 * as concurrent (the caller breaks ties within a thread).
	 */
	uint64_t invoke;
	uint64_t ret;             /* VS_NEVER: pending */
	bool pending;             /* optional, any result, no deadline: it never returned */
	bool optional;            /* it took effect as recorded, or not at all (shrinking) */
	bool impossible;          /* it returned something NT never returns */
	uint32_t tag;             /* the caller's */
};

struct vs_problem {
	const struct vs_op *ops;  /* sorted by invoke */
	uint32_t nops;
	const struct nt_state *starts;
	uint32_t nstarts;
	bool collect;             /* every end state, not only the first linearization */
	bool trace;               /* keep the deepest partial linearization */
	uint64_t deadline_ns;     /* CLOCK_MONOTONIC; 0: none */
	size_t memory_limit;      /* bytes of memo and stack; 0: none */
	uint32_t max_ends;        /* collect: at most this many end states (0: 4096) */
	uint64_t max_nodes;       /* at most this many steps (0: no bound) */
};

enum vs_verdict { VS_OK, VS_FAIL, VS_UNKNOWN };

struct vs_step {
	uint32_t op;
	uint8_t phase;            /* enum nt_phase */
	uint8_t done;             /* the operation returned in this step */
	uint8_t skipped;          /* an optional operation left out (no effect) */
	struct nt_result result;  /* with done: its result */
};

struct vs_outcome {
	enum vs_verdict verdict;
	const char *unknown;      /* why VS_UNKNOWN: "time", "memory", ... */
	uint64_t nodes;           /* steps tried */
	size_t memory;            /* peak bytes */
	struct nt_state *ends;    /* collect: the distinct end states */
	uint32_t nends;
	/* trace, on VS_FAIL: the longest partial linearization found */
	struct vs_step *trace;
	uint32_t ntrace;
	uint32_t stuck;           /* the operation whose return ended it */
	uint32_t start;           /* from starts[start] */
	struct nt_state at;       /* the state after it */
};

int vs_search(const struct vs_problem *p, struct vs_outcome *out);
void vs_outcome_free(struct vs_outcome *out);

uint64_t vs_now_ns(void);

#endif /* WINSYNC_VERIFY_SEARCH_H */
