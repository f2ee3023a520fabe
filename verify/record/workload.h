/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seeded workload: objects and one script of operations per thread,
 * the same for every backend given the same seed and capabilities.  The
 * mix is chosen to make races likely: waits on small overlapping sets of
 * objects (wait-all among them), pulses while others wait, releases racing
 * short timeouts, polls and reads that see the in-between states a faulty
 * backend shows, mutexes taken recursively, owner deaths, and at the end
 * handles closed while others still use them.  Portable C (it is also
 * built into the Windows recorder).
 */
#ifndef WINSYNC_VERIFY_WORKLOAD_H
#define WINSYNC_VERIFY_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "nt_model.h"

/* What a backend can do besides the Win32 calls every one has. */
#define VW_CAP_READ  0x1u /* read an object's state (ws_*_read) */
#define VW_CAP_KILL  0x2u /* abandon one mutex (ws_mutex_kill) */
#define VW_CAP_ALERT 0x4u /* waits with an alert event */
#define VW_CAP_PREV  0x8u /* set, reset, pulse and unlock report the previous state */

#define VW_MAX_THREADS 32
#define VW_MAX_OBJECTS 64

/* Script entries that are not operations of the model. */
enum vw_extra {
	VW_BARRIER = NT_KINDS, /* every thread meets here (after releasing its mutexes) */
	VW_UNLOCK_HELD,        /* unlock the mutex held last (any, if none: not owned) */
	VW_KILL_HELD,          /* abandon the mutex held last */
};

struct vw_op {
	struct nt_op call;     /* kind: enum nt_kind or enum vw_extra */
	uint32_t timeout_ms;   /* finite waits */
	uint32_t delay;        /* busy iterations before it (0: none) */
};

struct vw_config {
	uint64_t seed;
	uint32_t threads;      /* 1 .. VW_MAX_THREADS */
	uint32_t ops;          /* operations of all threads together (about) */
	uint32_t objects;      /* 1 .. VW_MAX_OBJECTS: manual event, auto event, semaphore, mutex, ... */
	uint32_t stretch;      /* operations per thread between barriers (0: none) */
	uint32_t max_timeout_ms;
	unsigned caps;         /* VW_CAP_* */
	bool deaths;           /* owner deaths */
	bool closes;           /* a last phase that closes some objects */
	bool polls_only;       /* every wait a poll, no deaths, no closes: for timing the calls */
	bool no_delays;        /* no pauses between calls: for timing them */
};

struct vw_workload {
	struct vw_config config;
	struct nt_object objects[VW_MAX_OBJECTS];
	struct vw_op *script[VW_MAX_THREADS];
	uint32_t length[VW_MAX_THREADS];
};

/* 0, or -1 (bad configuration, no memory) with nothing allocated. */
int vw_generate(const struct vw_config *c, struct vw_workload *w);
void vw_free(struct vw_workload *w);

/* The seeded generator (splitmix64). */
uint64_t vw_random(uint64_t *state);

#endif /* WINSYNC_VERIFY_WORKLOAD_H */
