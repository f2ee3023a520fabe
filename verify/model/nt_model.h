/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The NT model: a sequential specification of NT's events, semaphores and
 * mutexes and of WaitForMultipleObjects, for the linearizability checker.
 * Plain C, no I/O, no allocation.
 *
 * A state is the objects and the waits that are blocked now.  An operation
 * takes effect in one step, except a wait that blocks: its first step (it
 * starts waiting) puts it among the blocked waits, and its second step (it
 * returns) takes it out again.  Whoever signals an object hands it, inside
 * its own step, to the blocked waits it satisfies, so "a pulse releases the
 * waits already blocked" and "an auto-reset set goes to one blocked wait"
 * are steps of the model, and a blocked wait's second step only reports
 * what was handed to it (or that it timed out).
 *
 * NT does not say which of several blocked waits gets an object: the model
 * is nondeterministic there, and a step yields every state NT allows.  The
 * caller prunes them with `accept`: a hand-off that gives a wait a result
 * other than the one it returned in the history is no use.
 */
#ifndef WINSYNC_NT_MODEL_H
#define WINSYNC_NT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NT_MAX_OBJECTS 32 /* objects in one state (one independent group) */
#define NT_MAX_WAITERS 32 /* blocked waits at once: at most one per thread */
#define NT_MAX_WAIT    8  /* objects one wait names, besides its alert */

enum nt_type { NT_EVENT, NT_SEM, NT_MUTEX };

/* nt_object.flags */
#define NT_MANUAL    0x1u /* event: manual reset */
#define NT_SIGNALED  0x2u /* event: signaled */
#define NT_ABANDONED 0x4u /* mutex: abandoned and not acquired since */
#define NT_CLOSED    0x8u /* every later use is NT_EBADF */

struct nt_object {
	uint8_t type;   /* enum nt_type */
	uint8_t flags;
	uint16_t pad;
	uint32_t owner; /* mutex: owner id, 0 when free */
	uint32_t count; /* semaphore: count; mutex: recursion count */
	uint32_t max;   /* semaphore: maximum count */
};

/* nt_waiter.status while the wait is blocked and nothing was handed to it */
#define NT_BLOCKED 0xffu

struct nt_waiter {
	uint32_t op;     /* the wait's operation id */
	uint8_t status;  /* NT_BLOCKED, or the enum nt_status it was handed */
	uint8_t index;   /* with a hand-off: the index it returns */
	uint16_t pad;
};

/* Waits are kept sorted by operation id: equal states have equal bytes. */
struct nt_state {
	uint32_t nobjects;
	uint32_t nwaiters;
	struct nt_object obj[NT_MAX_OBJECTS];
	struct nt_waiter wait[NT_MAX_WAITERS];
};

enum nt_kind {
	NT_SET,      /* event: SetEvent; v0 = previous state */
	NT_RESET,    /* event: ResetEvent; v0 = previous state */
	NT_PULSE,    /* event: PulseEvent; v0 = previous state */
	NT_RELEASE,  /* semaphore: ReleaseSemaphore(arg); v0 = previous count */
	NT_UNLOCK,   /* mutex: ReleaseMutex by owner; v0 = previous count */
	NT_KILL,     /* mutex: abandoned by its owner (ws_mutex_kill) */
	NT_READ,     /* any: event v0 signaled v1 manual; sem v0 count v1 max;
		      * mutex v0 count v1 owner (NT_ABANDONED while abandoned) */
	NT_CLOSE,    /* any: CloseHandle */
	NT_WAIT_ANY, /* WaitForMultipleObjects(FALSE); v0 = index */
	NT_WAIT_ALL, /* WaitForMultipleObjects(TRUE); v0 = 0, or nobj for the alert */
	NT_DIE,      /* the owner dies: its mutexes are abandoned, its waits cancelled */
	NT_KINDS
};

enum nt_timeout { NT_POLL, NT_FINITE, NT_INFINITE };

struct nt_op {
	uint8_t kind;     /* enum nt_kind */
	uint8_t nobj;     /* objects in obj[]: 1 for the single-object kinds, 0 for NT_DIE */
	uint8_t timeout;  /* waits: enum nt_timeout */
	uint8_t has_alert;
	uint32_t owner;   /* who acquires mutexes, unlocks, kills, dies: nonzero */
	uint32_t arg;     /* NT_RELEASE: the count released */
	uint16_t alert;   /* with has_alert: the alert event (ws_wait.alert) */
	uint16_t obj[NT_MAX_WAIT];
};

enum nt_status {
	NT_OK,
	NT_ABANDONED_WAIT, /* acquired an abandoned mutex (WAIT_ABANDONED, -EOWNERDEAD) */
	NT_TIMEOUT,
	NT_EBADF,          /* closed handle */
	NT_EPERM,          /* unlock or kill of a mutex the owner does not hold */
	NT_EOVERFLOW,      /* release past the semaphore's maximum */
	NT_ECANCELED,      /* the wait's owner died */
	NT_EINVAL,         /* wrong object type, the same object twice in a wait-all, ... */
	NT_STATUSES
};

struct nt_result {
	uint8_t status; /* enum nt_status */
	uint8_t known;  /* bit i: v[i] is known (in a history: recorded, not "?") */
	uint16_t pad;
	uint32_t v[2];
};

/* The two steps of an operation. */
enum nt_phase { NT_BEGIN, NT_END };

struct nt_model {
	const struct nt_op *ops; /* by operation id */
	/*
	 * May a blocked wait `op` be handed `result`?  NULL: always.  A wait
	 * that returned something else in the history would fail its second
	 * step anyway; saying so here keeps the branches few.
	 */
	bool (*accept)(void *ctx, uint32_t op, const struct nt_result *result);
	void *ctx;
};

/*
 * Where a step puts the states it allows: the caller's arrays of `cap`
 * entries.  done[i] is false when successor i has the wait blocked (its
 * second step is still to come); result[i] is the operation's own result
 * when done.  `overflow` is set when NT allows more than `cap` states, or
 * more hand-off orders than the model explores (NT_MAX_BRANCH): the step is
 * then incomplete and a checker must answer "unknown".
 */
#define NT_MAX_BRANCH 4096
struct nt_successors {
	struct nt_state *state;
	struct nt_result *result;
	bool *done;
	unsigned cap;
	unsigned count;
	bool overflow;
};

void nt_state_init(struct nt_state *s);
/* Appends an object; its index is the old nobjects.  -1 when full or invalid. */
int nt_state_add(struct nt_state *s, const struct nt_object *o);
/* Copies only the used part. */
void nt_state_copy(struct nt_state *dst, const struct nt_state *src);
bool nt_state_equal(const struct nt_state *a, const struct nt_state *b);
/* The canonical bytes of a state (at most nt_key_max() bytes); returns the length. */
size_t nt_state_key(const struct nt_state *s, uint8_t *buf);
size_t nt_key_max(void);
/* The state whose key is buf[0..len). */
void nt_state_unkey(const uint8_t *buf, struct nt_state *s);
/*
 * A shorter canonical form, for memo tables: equal for equal states of the
 * same objects (what never changes, a semaphore's maximum, is left out),
 * at most nt_key_max() bytes, not decodable.
 */
size_t nt_state_digest(const struct nt_state *s, uint8_t *buf);
/* Is operation `op` blocked in state s (its first step taken, its second not)? */
bool nt_state_waiting(const struct nt_state *s, uint32_t op);

/*
 * One step of operation `op` (m->ops[op]) from state s.  `expect` is the
 * result recorded for it, or NULL when any result will do (an operation
 * that never returned); only successors whose result matches are kept (a
 * blocked successor of NT_BEGIN matches any).  Returns out->count.
 */
unsigned nt_step(const struct nt_model *m, const struct nt_state *s, uint32_t op,
		 enum nt_phase phase, const struct nt_result *expect, struct nt_successors *out);

/* Does `got` (complete) match `want` (whose unknown values match anything)? */
bool nt_result_match(const struct nt_result *want, const struct nt_result *got);

/* Is object `index` ready for a wait by `owner` (the NT "signaled" test)? */
bool nt_ready(const struct nt_state *s, uint32_t index, uint32_t owner);

#endif /* WINSYNC_NT_MODEL_H */
