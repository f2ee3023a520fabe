/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fault-injection campaign's common ground (test_fault): what a victim
 * process reports in shared memory (where it died, whether its operation
 * returned), the victim's side of the handshake, and the tallies of kills,
 * hangs, lost signals and broken invariants that every test adds up.
 */
#ifndef WINSYNC_TESTS_FAULT_CAMPAIGN_H
#define WINSYNC_TESTS_FAULT_CAMPAIGN_H

#include <stdint.h>

#include "robust.h"

#define MAX_SITES 256

struct report {
	long armed_at;        /* ws_fault_passed() when armed */
	long points;          /* points the operation passed (calibration) */
	uintptr_t site;       /* call site offset of the point it died at; 0: after the op */
	_Atomic int ready;    /* the victim's preparations are done */
	_Atomic int go;       /* the waiters are in place: act */
	_Atomic int returned; /* the operation returned */
	int rc;
	int fault_signal;     /* SIGUSR2: the handler records the site, then SIGKILL */
	_Atomic int tid;      /* the victim's thread: its record holds the log it dies with */
};

struct tally {
	long kills, point_kills, external_kills, trials, reruns, unreached;
	long hangs, lost, broken;
	long stranded_claimed, stranded_owed;
	uintptr_t sites[MAX_SITES];
	int nsites;
	char first[6][320];
	int nfirst;
};

/* All tests together: Check runs each in its own child, so they add up in shared memory. */
struct total {
	_Atomic long kills, point_kills, external_kills, hangs, lost, broken, trials;
	_Atomic long stranded_claimed, stranded_owed;
	_Atomic int lock;
	uintptr_t sites[MAX_SITES];
	int nsites;
};

/* The victim's report, shared with it; the test program's load address. */
extern struct report *rep;
extern uintptr_t exe_base;
extern struct tally tl;
extern struct total *total;

uintptr_t base_of(const void *addr);
/* SIGUSR2 handler of a victim at its fault point: records the call site, then SIGKILL. */
void record_site_and_die(int sig);
void victim_setup(void);
/* Arms the victim `k` points ahead (k = 0: only counts, for calibration). */
void victim_arm(long k);
void victim_ready_go(void);
/* After the operation: dies anyway, as a victim whose point came after it. */
_Noreturn void victim_end(int rc);

/* How long a waiter that must end gets: generous, and more under sanitizers. */
long long_ms(void);

void add_site(uintptr_t site);
void remember(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void print_tally(const char *what);
void assert_tally(void);

#endif
