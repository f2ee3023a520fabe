/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-random: a seeded random tester of the public API (README.md here).
 * What its files share: the shared-memory state every process of a run maps,
 * the actors (threads running random operations), and the checks.
 */
#ifndef WINSYNC_RANDOM_RT_H
#define WINSYNC_RANDOM_RT_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <winsync.h>

#include "rng.h"

#define RT_MAX_ACTORS   192   /* actor slots in shared memory, reused once folded */
#define RT_RING         32    /* last operations kept per actor */
#define RT_OWNERS       3     /* owner ids per actor; the last one is only used by waits
			       * without mutexes, and others may cancel it */
#define RT_OWN_MAX      24    /* objects one actor owns at most */
#define RT_HELD_MAX     8     /* pool mutexes one actor holds at most */
#define RT_TABLE_MAX    256   /* entries of the close/reuse table */
#define RT_CLOSED_RING  1024  /* handles known closed */
#define RT_KINDS        96    /* distinct failure kinds kept */
#define RT_ACQ_UNKNOWN  UINT32_MAX /* last_acq when a call may or may not have acquired */
#define RT_SERIALS      65536 /* actors whose abandonment rule is kept (by serial) */
#define RT_PENDING      0x7fffffff /* rc of an operation still running */
#define RT_OWNER_BASE   0x40000000u /* synthetic owner ids: above any Linux tid */

/* Every public call of winsync.h. */
enum rt_call {
	C_ARENA_CREATE, C_ARENA_OPEN, C_ARENA_CLOSE, C_ARENA_UNLINK, C_ARENA_SET_FLAGS,
	C_SEM_CREATE, C_SEM_RELEASE, C_SEM_READ,
	C_MUTEX_CREATE, C_MUTEX_UNLOCK, C_MUTEX_KILL, C_MUTEX_READ, C_OWNER_DIED,
	C_EVENT_CREATE, C_EVENT_SET, C_EVENT_RESET, C_EVENT_PULSE, C_EVENT_READ,
	C_CLOSE, C_WAIT_ANY, C_WAIT_ALL,
	C_DEFER_SUSPEND, C_SET_SUSPEND_HOOK, C_IN_CRITICAL, C_ARENA_CHECK, C_STATS_READ,
	C_FUTEX_BACKEND,
	RT_CALLS
};

/* Return values, as histogram buckets and as sets of allowed results. */
enum rt_rc {
	RC_OK, RC_TRUE, RC_EINVAL, RC_EBADF, RC_ENOSPC, RC_EOVERFLOW, RC_EPERM, RC_EOWNERDEAD,
	RC_ETIMEDOUT, RC_EAGAIN, RC_EUSERS, RC_ECANCELED, RC_EUCLEAN, RC_ENOENT, RC_EEXIST,
	RC_EACCES, RC_OTHER,
	RT_RCS
};
#define B(r) (1u << (r))

/* Operation kinds an actor chooses among (weights per mode). */
enum rt_kind {
	K_CREATE, K_CLOSE, K_SEM_RELEASE, K_SEM_READ, K_MUTEX_UNLOCK, K_MUTEX_KILL,
	K_MUTEX_READ, K_OWNER_DIED, K_EVENT_SET, K_EVENT_RESET, K_EVENT_PULSE, K_EVENT_READ,
	K_WAIT_ANY, K_WAIT_ALL, K_ARENA, K_CHECK, K_MISC,
	RT_OPKINDS
};

enum rt_type { RT_NONE, RT_SEM, RT_MUTEX, RT_EVENT };

struct rt_mode {
	char name[16];
	char about[80];
	uint32_t capacity;
	uint32_t parent_actors, children, child_actors;
	uint32_t pool_events, pool_sems, pool_mutexes;
	uint32_t table;          /* close/reuse table entries (0: none) */
	uint32_t own_max;        /* own objects per actor */
	uint32_t weight[RT_OPKINDS];
	uint32_t bad_pct;        /* percent of calls given a bad argument */
	uint32_t pool_pct;       /* percent of targets that are shared (pool or table) */
	uint32_t big_wait_pct;   /* percent of waits on 30..64 objects */
	uint32_t poll_pct;       /* percent of waits that only poll */
	uint32_t long_wait_pct;  /* percent of blocking waits that may last up to 200 ms */
	uint32_t kills;          /* deaths per 10 s: children SIGKILLed, threads ended mid-call */
	uint32_t stops;          /* SIGSTOPs of children per 10 s */
	uint32_t nonblock_pct;   /* percent of calls of parent actors through a NONBLOCK pointer */
	uint32_t signals;        /* suspension signals per 10 s per actor */
	uint32_t cancels;        /* ws_owner_died of another actor's wait-only owner id */
};

/* One operation as the ring keeps it. */
struct rt_oprec {
	uint64_t t_ns;           /* since the start of the run */
	int32_t rc;              /* RT_PENDING while running */
	uint16_t call;
	uint8_t nb;              /* through the NONBLOCK pointer */
	uint8_t nobj;            /* objects recorded (waits) */
	uint32_t a[6];           /* arguments (report.c says which) */
	uint32_t out[3];
	int32_t timeout_us;      /* waits: relative deadline; -1 none (forever), -2 polls */
	uint32_t returned;       /* 1 once the call returned (its time checked) */
	int32_t result;          /* what it returned, while its checks still run */
	uint32_t stop_epoch;     /* rt_shm->stop_epoch when it began, odd if a child was stopped */
	ws_handle objs[WS_MAX_WAIT_OBJECTS];
};

enum rt_state { A_FREE, A_INIT, A_RUNNING, A_DYING, A_DEAD, A_DONE };

struct rt_actor {
	_Atomic int state;
	_Atomic int32_t pid;
	_Atomic int32_t tid;
	_Atomic uint32_t serial;
	_Atomic uint32_t owners[RT_OWNERS];
	/*
	 * The owner id it used last to acquire a mutex or create one owned, and
	 * that of a call in progress that may do so (0: none): the header
	 * abandons only the last one's mutexes when the thread dies.
	 */
	_Atomic uint32_t last_acq, pending_acq;
	_Atomic ws_handle kick;       /* its auto event: ends its waits without deadline */
	_Atomic uint32_t forever;     /* in a wait without deadline */
	_Atomic ws_handle own[RT_OWN_MAX]; /* its objects, closed for it if it dies */
	_Atomic uint64_t ops;
	_Atomic uint32_t ring_next;
	_Atomic uint32_t folded;      /* counted into the totals; the slot may be reused */
	struct rt_oprec ring[RT_RING];
	_Atomic uint64_t hist[RT_CALLS][RT_RCS];
} __attribute__((aligned(64)));

/* A shared object of the pool: never closed, its invariants kept by counters. */
struct rt_pool_obj {
	ws_handle h;
	uint8_t type;
	uint8_t manual;
	uint8_t beacon;              /* a manual event set at creation and never changed */
	uint8_t big;                 /* a semaphore whose maximum no run can reach */
	uint32_t max;
	uint32_t initial;
	_Atomic uint64_t acq;        /* units / auto-event tokens acquired (waits that said so) */
	_Atomic uint64_t rel_units;  /* semaphore: units of successful releases */
	_Atomic uint64_t created;    /* auto event: sets that found it unsignaled */
	_Atomic uint64_t reset_true; /* resets that found it signaled */
	_Atomic uint64_t pulse_true, pulse_false;
	_Atomic uint32_t holder;     /* mutex: owner id of the holder, 0 if none */
	/* Slack from the operations of actors that died inside them. */
	_Atomic uint32_t slack_acq, slack_rel, slack_set, slack_tokens;
} __attribute__((aligned(64)));

/* An entry of the close/reuse table: handle | type << 32 | param << 34 (0: empty). */
struct rt_table_entry {
	_Atomic uint64_t word;
	_Atomic uint64_t units;      /* semaphore: handle << 32 | initial + units released so far */
} __attribute__((aligned(64)));

#define TW_HANDLE(w) ((ws_handle)(w))
#define TW_TYPE(w)   ((uint32_t)((w) >> 32) & 3)
#define TW_PARAM(w)  ((uint32_t)((w) >> 34))
#define TW_MAKE(h, type, param) ((uint64_t)(h) | (uint64_t)(type) << 32 | (uint64_t)(param) << 34)

struct rt_failure_kind {
	char text[256];
	_Atomic uint64_t count;
	double first_s;
	int32_t first_actor;
};

struct rt_shm {
	uint64_t seed;
	double seconds;
	uint64_t start_ns;
	struct rt_mode mode;
	char arena_name[64];
	char command[512];           /* the command line that repeats this run */
	uint32_t keep_going;
	uint32_t pool_count;
	uint32_t beacon;             /* pool index of the beacon, UINT32_MAX if none */
	int32_t parent_pid;
	_Atomic int stop;
	_Atomic uint32_t next_serial;
	_Atomic uint64_t violations;
	_Atomic int32_t kinds_lock;  /* pid of the holder */
	_Atomic uint32_t nkinds;
	struct rt_failure_kind kinds[RT_KINDS];
	_Atomic int32_t print_lock;
	_Atomic int64_t live_ub;     /* creates started and not failed, by every process */
	_Atomic int64_t closes_done; /* successful closes */
	_Atomic int64_t retired_ub;  /* closes of a slot's last generation started and not failed */
	_Atomic int64_t waiting_ub;  /* handles of waits under way: a closed one may be held (ws_close) */
	_Atomic uint32_t closed_next;
	_Atomic ws_handle closed[RT_CLOSED_RING];
	struct rt_table_entry table[RT_TABLE_MAX];
	_Atomic uint64_t retired_hist[RT_CALLS][RT_RCS];
	_Atomic uint64_t retired_ops;
	_Atomic uint64_t thread_deaths, proc_deaths, stops_done, cancels_done, owner_died_done;
	_Atomic uint64_t dead_owners_told;
	_Atomic uint64_t kept_owned;       /* pool mutexes a dead actor left under an id not its last */
	_Atomic uint64_t waits_again;      /* waits on a set an earlier wait built (waits.c) */
	_Atomic uint32_t stop_epoch;       /* +1 at every SIGSTOP and SIGCONT of a child */
	_Atomic uint32_t stopped_children;
	struct rt_actor actors[RT_MAX_ACTORS];
	/*
	 * Per dead actor (by serial % RT_SERIALS): serial << 32 | 1 << 31 | a mask
	 * of the owners[] whose mutexes must be abandoned (all if told dead).
	 */
	_Atomic uint64_t abandon_rule[RT_SERIALS];
	/* the pool follows */
};

extern struct rt_shm *rt_shm;
extern struct rt_pool_obj *rt_pool;
extern size_t rt_shm_size;

/* An own object: the exact model (only its actor touches it). */
struct rt_own {
	ws_handle h;
	uint8_t type;
	bool manual, signaled, abandoned;
	uint32_t count, max;         /* semaphore */
	uint32_t owner, rec;         /* mutex: owner id (0: free) and recursion count */
};

struct rt_held {
	uint32_t pool;               /* pool index */
	uint32_t owner;
	uint32_t count;
};

/* An actor's private state. */
/* waits.c: a set an earlier wait built, to wait on again as a frame loop polls. */
struct rt_repeat {
	uint32_t count;              /* 0: none kept */
	bool all;                    /* built for a wait_all (no twins) */
	uint8_t src[WS_MAX_WAIT_OBJECTS], type[WS_MAX_WAIT_OBJECTS];
	uint32_t idx[WS_MAX_WAIT_OBJECTS];
	ws_handle h[WS_MAX_WAIT_OBJECTS];
};

struct rt_ctx {
	int slot;
	struct rt_actor *me;
	struct rt_rng rng;
	ws_arena *arena;             /* the shared arena */
	ws_arena *nb;                /* a NONBLOCK pointer to it, or NULL */
	ws_arena *cur;               /* the pointer the current call uses */
	bool force_nb;               /* every call through `nb` (the coordinator, mid-run) */
	bool resync;                 /* after a violation: re-read the model from the arena */
	uint32_t weight[RT_OPKINDS]; /* the mode's weights, varied per actor (swarm testing) */
	struct rt_own own[RT_OWN_MAX];
	uint32_t nown;
	ws_handle closed[64];        /* own handles closed (for ever -EBADF) */
	uint32_t nclosed;
	struct rt_held held[RT_HELD_MAX];
	uint32_t nheld;
	struct ws_stats stats;       /* last ws_stats_read */
	bool have_stats;
	const char *backend;
	int sched_fd;                /* this thread's /proc schedstat, once opened (+1; 0 none yet) */
	uint64_t awake0;             /* its time on or waiting for a CPU when a NONBLOCK call began */
	struct rt_repeat repeat;
};

/* report.c */
uint64_t rt_now_ns(void);
double rt_elapsed(void);
struct rt_oprec *rt_begin(struct rt_ctx *c, enum rt_call call);
void rt_end(struct rt_ctx *c, struct rt_oprec *op, int rc);
/* Right after the call returned (before the checks): times a NONBLOCK call. */
void rt_returned(struct rt_ctx *c, struct rt_oprec *op, int rc);
enum rt_rc rt_bucket(int rc);
const char *rt_rc_name(enum rt_rc r);
const char *rt_errname(int rc);
const char *rt_call_name(enum rt_call call);
uint32_t rt_documented(enum rt_call call);
/* A violation: `kind` names it (the same kind is printed in full once). */
void rt_fail(struct rt_ctx *c, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* rc must be in `allowed`; `what` says which case the model saw. False on a violation. */
bool rt_expect(struct rt_ctx *c, struct rt_oprec *op, int rc, uint32_t allowed, const char *what);
void rt_format_op(const struct rt_oprec *op, char *buf, size_t size);
void rt_print_ring(const struct rt_actor *a, int fd);
void rt_fold_actor(struct rt_actor *a);
void rt_print_summary(FILE *f);
void rt_lock(_Atomic int32_t *lock);
void rt_unlock(_Atomic int32_t *lock);

/* model.c: own objects */
bool rt_own_ready(const struct rt_own *o, uint32_t owner);
bool rt_own_take(struct rt_own *o, uint32_t owner);
struct rt_own *rt_own_find(struct rt_ctx *c, ws_handle h);
void rt_own_add(struct rt_ctx *c, const struct rt_own *o);
void rt_own_remove(struct rt_ctx *c, struct rt_own *o);
void rt_own_verify(struct rt_ctx *c, struct rt_own *o);
void rt_resync(struct rt_ctx *c);
bool rt_owner_is_mine(struct rt_ctx *c, uint32_t owner);

/* pool.c: shared objects */
int rt_pool_create(struct rt_ctx *c, uint32_t events, uint32_t sems, uint32_t mutexes,
		   struct rt_rng *rng);
bool rt_owner_dead(uint32_t owner);
void rt_acq_begin(struct rt_ctx *c, uint32_t owner);
void rt_acq_end(struct rt_ctx *c, uint32_t owner, int acquired);
void rt_abandon_rule_set(struct rt_actor *a, bool told);
void rt_pool_acquired(struct rt_ctx *c, uint32_t pool, uint32_t owner, bool abandoned_ok,
		      bool recursive);
struct rt_held *rt_held_find(struct rt_ctx *c, uint32_t pool);
void rt_pool_release_all(struct rt_ctx *c);
void rt_pool_slack(const struct rt_oprec *op);
void rt_pool_final(struct rt_ctx *c);
int32_t rt_pool_index(ws_handle h);

/* table.c: the close/reuse table */
void rt_closed_add(ws_handle h);
ws_handle rt_closed_pick(struct rt_rng *rng);

/* ops.c */
void rt_actor_run(struct rt_ctx *c);
void rt_actor_finish(struct rt_ctx *c);
void rt_op(struct rt_ctx *c, enum rt_kind kind);
ws_handle rt_garbage(struct rt_ctx *c);
bool rt_bad(struct rt_ctx *c);
ws_arena *rt_pick_arena(struct rt_ctx *c);
uint32_t rt_pick_owner(struct rt_ctx *c, bool mutexes);
int rt_create_call(struct rt_ctx *c, enum rt_type type, uint32_t v1, uint32_t v2, bool null_out,
		   ws_handle *out, struct rt_oprec **opp);
/*
 * ws_close(arena, h), counted: closes_done on success, and retired_ub for a
 * handle of its slot's last generation (the slot retires: ENOSPC may come
 * below capacity), counted before the call so that a close in flight or
 * cut short by a death is counted too.
 */
int rt_counted_close(ws_arena *arena, ws_handle h);
bool rt_close_call(struct rt_ctx *c, ws_handle h, uint32_t allowed, const char *what);

/* waits.c */
void rt_wait_op(struct rt_ctx *c, bool all);

/* misc.c: arena-level calls, checks, stats, suspension */
void rt_misc_op(struct rt_ctx *c, enum rt_kind kind);
int rt_check_arena(struct rt_ctx *c, ws_arena *a, const char *when);
void rt_suspend_setup(void);
void rt_suspend_verify(struct rt_ctx *c);
void rt_signal_thread(pid_t pid, pid_t tid);

/* procs.c: actors, child processes, deaths, the coordinator */
int rt_actor_alloc(void);
int rt_actor_setup(struct rt_ctx *c, int slot, ws_arena *arena, bool parent);
int rt_child_main(int argc, char **argv);
int rt_run(const char *self);
void rt_name_run(unsigned attempt);

#endif
