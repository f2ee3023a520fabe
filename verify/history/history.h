/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Histories: what a recorder saw, one line per operation (the format is in
 * verify/README.md and winsync-verify(1)).  The writer is plain C99 with
 * stdio (it is also built into the Windows recorder); the reader is the
 * checker's.
 */
#ifndef WINSYNC_VERIFY_HISTORY_H
#define WINSYNC_VERIFY_HISTORY_H

#include <stdint.h>
#include <stdio.h>

#include "nt_model.h"

#define VH_VERSION 1
#define VH_PENDING UINT64_MAX /* the return time of an operation that never returned */

struct vh_op {
	uint32_t thread;        /* the worker: a row of the timeline */
	uint32_t owner;         /* the owner id it acquired mutexes with */
	uint64_t invoke;        /* ns since the run's start */
	uint64_t ret;           /* ns, or VH_PENDING */
	uint32_t timeout_ms;    /* finite waits: the timeout given */
	int32_t error;          /* nonzero: the call failed in a way the model never does */
	struct nt_op call;      /* object numbers are the history's */
	struct nt_result result;
};

struct vh_history {
	char backend[64];
	uint64_t seed;
	uint32_t threads;
	uint32_t nobjects;
	struct nt_object *objects;
	uint32_t nops;
	uint32_t capacity;
	struct vh_op *ops;
};

/* "wait any 0,2 alert 5 timeout 3": no newline; returns the length. */
int vh_format_call(char *buf, size_t size, const struct nt_op *call, uint32_t timeout_ms);
/* "ok 1 ?", "timeout", "error 117", "pending". */
int vh_format_result(char *buf, size_t size, const struct vh_op *op);
/* "event manual 1", "sem 0 3", "mutex 0 0". */
int vh_format_object(char *buf, size_t size, const struct nt_object *o);

/* Writes a whole history; 0, or -1 when the stream failed. */
int vh_write(FILE *f, const struct vh_history *h);

/*
 * Parsing.  Each takes *p, advances it past what it read and its trailing
 * blanks, and returns 0, or -1 with nothing promised about *p.
 */
int vh_parse_call(const char **p, struct nt_op *call, uint32_t *timeout_ms);
int vh_parse_result(const char **p, struct vh_op *op);
int vh_parse_object(const char **p, struct nt_object *o);

/*
 * Reads a history.  0, or -1 with a message naming the line in `error`.
 * vh_free releases what vh_read allocated.
 */
int vh_read(FILE *f, struct vh_history *h, char *error, size_t size);
void vh_free(struct vh_history *h);

/* Appends an operation (growing the array); a pointer to it, NULL without memory. */
struct vh_op *vh_append(struct vh_history *h);

extern const char *const vh_status_names[NT_STATUSES];
extern const char *const vh_kind_names[NT_KINDS];

#endif /* WINSYNC_VERIFY_HISTORY_H */
