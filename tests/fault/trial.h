/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Chosen-point trials of the fault-injection campaign (test_fault): one
 * scenario's victim process runs one operation on a shared arena and is
 * killed at its k-th fault point while threads of the coordinator wait;
 * the trial then judges what the death left (campaign.h tallies it).
 * The scenarios themselves are scenarios.c.
 */
#ifndef WINSYNC_TESTS_FAULT_TRIAL_H
#define WINSYNC_TESTS_FAULT_TRIAL_H

#include "campaign.h"

#define MAXW 4
#define MAXH 8
#define CAPACITY 32

struct trial;

struct scenario {
	const char *name;
	/* Coordinator, before the victim exists: objects (and a dead waiter). */
	void (*objects)(struct trial *t);
	/* In the victim: preparations, victim_ready_go(), victim_arm(k), the operation. */
	int (*victim)(ws_arena *a, const ws_handle *h, long k);
	/* Coordinator, once the victim is ready: the waiters it acts on. */
	void (*waiters)(struct trial *t);
	/* Coordinator, after the death and the generic checks. */
	void (*judge)(struct trial *t);
	long t1_ms;           /* grace for waiters to wake by themselves after the death */
	int op_rc;            /* what the operation returns when nothing kills it */
};

struct trial {
	const struct scenario *sc;
	char name[80];
	ws_arena *a;
	ws_handle h[MAXH];
	struct waiter *w[MAXW];
	int record[MAXW];     /* the waiters' records */
	int nw;
	pid_t dead;           /* a process killed while blocked (reap scenario) */
	long k;
	long t1_ms;
	/* outcome */
	int served;           /* waiters whose wait is over after the check's recovery */
	int woke;             /* of them, those that returned within t1 by themselves */
	bool claimed[MAXW];   /* at the death: handed something, or named by a committed hand-off */
	int stranded_claimed; /* served, claimed at the death, yet not woken */
	int stranded_owed;    /* served by the recovery of an operation the dead thread began */
	bool late, leak;
	int hangs, lost, broken;
	char why[320];
	uintptr_t site;
	bool op_returned;
	bool unreached;       /* the operation ended before point k: a shorter path this time */
};

void fail_note(struct trial *t, int *counter, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define BROKEN(t, ...) fail_note((t), &(t)->broken, __VA_ARGS__)
#define LOST(t, ...)   fail_note((t), &(t)->lost, __VA_ARGS__)
#define HANG(t, ...)   fail_note((t), &(t)->hangs, __VA_ARGS__)

struct waiter *add_waiter_nb(struct trial *t, uint32_t owner, bool all, const ws_handle *objs,
			     uint32_t n, long timeout_ms, bool blocks);
/* A waiter that must block (asleep when this returns); timeout 0: forever. */
struct waiter *add_waiter(struct trial *t, uint32_t owner, bool all, const ws_handle *objs,
			  uint32_t n, long timeout_ms);
int count_done(struct trial *t);
int await_done(struct trial *t, int n, long ms);
bool wait_over(struct trial *t, int i);
int check_arena(struct trial *t, const char *when);

/* One trial: a fresh arena, the victim killed at point k (0: not at all), the verdict. */
void run_trial(const struct scenario *sc, long k, long t1_ms, struct trial *t);
/* The same, re-run once with a long grace if a waiter seemed stranded; tallied. */
void judged_trial(const struct scenario *sc, long k);
void run_scenario(const struct scenario *sc);

extern const struct scenario fault_scenarios[];
extern const int fault_scenario_count;

#endif
