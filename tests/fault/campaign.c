/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fault-injection campaign's common ground: see campaign.h. */
#define _GNU_SOURCE
#include "campaign.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fault_api.h"

/* The point function itself (winsync/fault.h): frames inside it are not the site. */
void ws_fault_point(void);

/* ---- what victims report (memory shared with them) ---- */


struct report *rep;
uintptr_t exe_base;

uintptr_t base_of(const void *addr)
{
	Dl_info info;

	if (!dladdr(addr, &info))
		return 0;
	return (uintptr_t)info.dli_fbase;
}

/*
 * The call site: below the handler (ours) come the signal trampoline and
 * raise() (libc), then ws_fault_point unless it tail-called raise(), then
 * the site: the first frame of ours after the first foreign one that
 * follows the handler.
 */
void record_site_and_die(int sig)
{
	uintptr_t lo = (uintptr_t)&ws_fault_point, hi = lo + 64;
	void *frames[32];
	int n = backtrace(frames, 32), phase = 0;

	(void)sig;
	if ((uintptr_t)&ws_fault_arm > lo && (uintptr_t)&ws_fault_arm < lo + 4096)
		hi = (uintptr_t)&ws_fault_arm;
	rep->site = 1; /* unknown */
	for (int i = 0; i < n; i++) {
		uintptr_t pc = (uintptr_t)frames[i];
		bool ours = base_of(frames[i]) == exe_base;

		if (phase == 0 && ours)
			phase = 1; /* the handler */
		else if (phase == 1 && !ours)
			phase = 2; /* the trampoline, raise() */
		else if (phase == 2 && ours && !(pc >= lo && pc < hi)) {
			rep->site = pc - 1 - exe_base;
			break;
		}
	}
	raise(SIGKILL);
}

void victim_setup(void)
{
	void *warm[4];

	/* Load the unwinder now, not in the handler. */
	backtrace(warm, 4);
	signal(SIGUSR2, record_site_and_die);
}

/* Arms the victim `k` points ahead (k = 0: only counts, for calibration). */
void victim_arm(long k)
{
	rep->armed_at = ws_fault_passed();
	if (k > 0)
		ws_fault_arm_signal(k, rep->fault_signal);
}

void victim_ready_go(void)
{
	atomic_store(&rep->ready, 1);
	while (!atomic_load(&rep->go))
		sleep_ms(1);
}

/* After the operation: dies anyway, as a victim whose point came after it. */
_Noreturn void victim_end(int rc)
{
	ws_fault_arm(0);
	rep->points = ws_fault_passed() - rep->armed_at;
	rep->rc = rc;
	atomic_store(&rep->returned, 1);
	raise(SIGKILL);
	_exit(99);
}

/* ---- tallies ---- */


struct tally tl;


struct total *total;

static void add_to_total(void)
{
	atomic_fetch_add(&total->kills, tl.kills);
	atomic_fetch_add(&total->point_kills, tl.point_kills);
	atomic_fetch_add(&total->external_kills, tl.external_kills);
	atomic_fetch_add(&total->hangs, tl.hangs);
	atomic_fetch_add(&total->lost, tl.lost);
	atomic_fetch_add(&total->broken, tl.broken);
	atomic_fetch_add(&total->trials, tl.trials);
	atomic_fetch_add(&total->stranded_claimed, tl.stranded_claimed);
	atomic_fetch_add(&total->stranded_owed, tl.stranded_owed);
	while (atomic_exchange(&total->lock, 1))
		sleep_ms(1);
	for (int i = 0; i < tl.nsites; i++) {
		int j = 0;

		while (j < total->nsites && total->sites[j] != tl.sites[i])
			j++;
		if (j == total->nsites && total->nsites < MAX_SITES)
			total->sites[total->nsites++] = tl.sites[i];
	}
	atomic_store(&total->lock, 0);
}

void add_site(uintptr_t site)
{
	if (site <= 1)
		return;
	for (int i = 0; i < tl.nsites; i++)
		if (tl.sites[i] == site)
			return;
	if (tl.nsites < MAX_SITES)
		tl.sites[tl.nsites++] = site;
}

void remember(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (tl.nfirst < 6)
		vsnprintf(tl.first[tl.nfirst++], sizeof tl.first[0], fmt, ap);
	va_end(ap);
}

void print_tally(const char *what)
{
	printf("%s: %ld kills (%ld at fault points, %ld at random times), %ld hangs "
	       "(%ld stranded waiters: %ld claimed but not woken, %ld owed by an unfinished "
	       "operation), %ld lost signals, %ld broken invariants, %d distinct fault points, "
	       "%ld trials (%ld re-run with a longer grace, %ld whose operation ended before "
	       "its point)\n",
	       what, tl.kills, tl.point_kills, tl.external_kills, tl.hangs,
	       tl.stranded_claimed + tl.stranded_owed, tl.stranded_claimed, tl.stranded_owed, tl.lost,
	       tl.broken, tl.nsites, tl.trials, tl.reruns, tl.unreached);
	for (int i = 0; i < tl.nfirst; i++)
		printf("  %s\n", tl.first[i]);
	fflush(stdout);
}

void assert_tally(void)
{
	add_to_total();
	ck_assert_msg(tl.hangs == 0 && tl.lost == 0 && tl.broken == 0,
		      "%ld hangs, %ld lost signals, %ld broken invariants; first: %s", tl.hangs,
		      tl.lost, tl.broken, tl.nfirst ? tl.first[0] : "");
}

long long_ms(void)
{
	return 5000 * slow_factor();
}
