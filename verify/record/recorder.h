/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recorder: runs a workload (workload.h) on a backend, one thread per
 * script, and records each operation's call, result and the times around
 * it.  One clock reading serves as one operation's return and the next
 * one's invocation; records go to per-thread arrays, the history is built
 * after the run.  Portable C11 (also built into the Windows recorder).
 */
#ifndef WINSYNC_VERIFY_RECORDER_H
#define WINSYNC_VERIFY_RECORDER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "history.h"
#include "workload.h"

struct vr_run;
struct vr_worker;

struct vr_backend {
	const char *name;
	unsigned caps;          /* VW_CAP_* */
	bool die_exits;         /* a death is the thread's exit (Win32); else a call */
	/* Creates the workload's objects. 0, or -1 with a message on stderr. */
	int (*open)(struct vr_run *run);
	void (*close)(struct vr_run *run);
	/* One call: fills op->result, or op->error for what the model never returns. */
	void (*call)(struct vr_worker *w, const struct nt_op *call, uint32_t timeout_ms, struct vh_op *op);
	/* Threads: NULL for POSIX threads. */
	int (*spawn)(struct vr_run *run, struct vr_worker *w);
	struct vr_worker *(*wait_exit)(struct vr_run *run);
};

enum vr_state { VR_RUNNING, VR_DYING, VR_DONE };

struct vr_worker {
	struct vr_run *run;
	uint32_t slot;
	uint32_t owner;         /* history owner id: 1 + slot + threads * incarnation */
	uint32_t incarnation;
	uint32_t pos;           /* the next script entry */
	enum vr_state state;
	uint64_t t;             /* the last clock reading */
	struct vh_op *rec;
	uint32_t nrec, caprec;
	uint32_t die_rec;       /* with VR_DYING: the death's record */
	uint32_t held[VW_MAX_OBJECTS];   /* recursion counts this worker believes it holds */
	uint16_t stack[64];     /* mutexes in the order they were first acquired */
	uint32_t depth;
	uint64_t calls;
	void *os;               /* the thread's handle, for spawn/wait_exit */
	bool failed;            /* out of memory */
};

struct vr_run {
	const struct vw_workload *w;
	const struct vr_backend *b;
	void *priv;             /* the backend's */
	bool record;            /* false: time the calls only */
	uint64_t t0;
	atomic_uint barrier_count;
	atomic_uint barrier_generation;
	struct vr_worker workers[VW_MAX_THREADS];
	void *threads;          /* the POSIX thread set */
	uint64_t elapsed_ns;    /* the run, from the threads' start to the last one's end */
	uint64_t cpu_ns;        /* the processor time of the process meanwhile */
	uint64_t calls;
};

struct vr_times {
	uint64_t calls;
	uint64_t elapsed_ns;
	uint64_t cpu_ns;
};

/*
 * Runs the workload; with `record`, builds the history in *h (vh_free it);
 * what the calls took in *times (may be NULL).  0, or -1 with a message on
 * stderr.
 */
int vr_run(const struct vw_workload *w, const struct vr_backend *b, bool record, struct vh_history *h,
	   struct vr_times *times);

/* The thread body (for backends that make their own threads). */
void vr_worker_run(struct vr_worker *w);

/* POSIX threads (platform_threads.c); the recorder uses them when spawn is NULL. */
int vr_posix_spawn(struct vr_run *run, struct vr_worker *w);
struct vr_worker *vr_posix_wait_exit(struct vr_run *run);
int vr_posix_init(struct vr_run *run);
void vr_posix_fini(struct vr_run *run);

#endif /* WINSYNC_VERIFY_RECORDER_H */
