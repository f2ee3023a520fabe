/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The checker: is a history linearizable against the NT model?
 *
 * Objects that no wait names together are independent (linearizability is
 * local), so the history is split into groups of objects that waits tie
 * together; a death, which touches every mutex of its owner, is copied into
 * each group its owner used (a weaker check than one atomic step, never a
 * false alarm).  A group is cut where none of its operations is running;
 * the stretches between cuts are searched in turn, each from every state
 * the one before can end in.
 *
 * On a failure the failing stretch is shrunk without losing the proof: to
 * the shortest prefix NT forbids (operations still running at its end
 * become "pending": optional, any result), then every operation that NT
 * forbids the rest without, even pending, is dropped.
 */
#ifndef WINSYNC_VERIFY_CHECK_H
#define WINSYNC_VERIFY_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "history.h"
#include "search.h"

struct vc_options {
	double time_limit;     /* seconds for the whole check; 0: none */
	size_t memory_limit;   /* bytes one search may use; 0: none */
	bool shrink;           /* shrink a failure to a small counterexample */
	bool stretches_only;   /* skip the first, whole-group search (tests of the other path) */
	uint64_t shrink_steps; /* search steps shrinking may take in all (0: the default, 20 million) */
	/* Called after each stretch: operations checked so far, of all. */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
};

enum vc_verdict { VC_OK, VC_FAIL, VC_UNKNOWN };

/*
 * Why an operation of a counterexample is shown: the proof needs it as
 * recorded; or the proof leaves it optional (as recorded, or not at all)
 * and the explanation made it take effect; or it only ran alongside the
 * operation that could not take effect.
 */
enum vc_role { VC_ROLE_NEEDED, VC_ROLE_USED, VC_ROLE_CONTEXT };

/* A history NT forbids, small enough to read, and where its explanation stops. */
struct vc_failure {
	struct vh_history history;  /* its operations; objects: those of the whole history */
	uint32_t *source;           /* per operation: its index in the checked history */
	uint8_t *context;           /* per operation: enum vc_role */
	uint32_t nobjects;          /* the group's objects ... */
	uint32_t *objects;          /* ... as history numbers (the states number them 0, 1, ...) */
	struct nt_state *starts;    /* the states NT allows where the history starts */
	uint32_t nstarts;
	struct vs_step *trace;      /* the longest partial linearization (operation indexes) */
	uint32_t ntrace;
	uint32_t stuck;             /* the operation that could not take effect before its return */
	uint32_t start;             /* the trace starts from starts[start] */
	struct nt_state at;         /* the state after the trace */
	char why[1024];              /* what the model allows `stuck` there */
	uint32_t stretch_ops;       /* operations of the failing stretch before shrinking */
	bool shrunk;
};

struct vc_report {
	enum vc_verdict verdict;
	char unknown[160];          /* VC_UNKNOWN: which bound, where */
	uint64_t ops;               /* operations checked */
	uint32_t groups;
	uint32_t stretches;
	uint32_t largest_stretch;   /* operations */
	uint64_t nodes;             /* search steps tried */
	size_t peak_memory;
	double seconds;             /* the check */
	double shrink_seconds;
	bool has_failure;
	struct vc_failure failure;
};

int vc_check(const struct vh_history *h, const struct vc_options *o, struct vc_report *r);
void vc_report_free(struct vc_report *r);

/*
 * The counterexample as a history of its own (it fails too): the objects
 * in the state where the explanation starts, the needed operations and the
 * optional ones the explanation used.
 * 0, or -1.
 */
int vc_write_counterexample(FILE *f, const struct vc_report *r);

/* "0 event auto reset, 3 sem 0/2, 5 mutex o3x1": a group's state with history numbers. */
int vc_format_state(char *buf, size_t size, const struct nt_state *s, const uint32_t *objects);

#endif /* WINSYNC_VERIFY_CHECK_H */
