/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fault injection (libwinsync-fault): processes that use a shared arena are
 * killed with SIGKILL at fault points chosen at random, at random times
 * (anywhere, blocked waits included), and at every fault point of chosen
 * operations in turn, while threads of this process wait and signal.  After
 * each death:
 *   hang    a survivor's wait ends later than its deadline allows, or a
 *           waiter that the dead process's operation had already served
 *           (or had committed to serve) sleeps on until somebody else enters
 *           the arena: with no deadline it would sleep forever;
 *   lost    a signal given after the death does not reach the live waiter
 *           it is for;
 *   broken  ws_arena_check reports an invariant, or an operation took
 *           effect partly (a pulse that released some of its waiters, a
 *           ws_owner_died that did half), or twice.
 * The summary gives the kills, hangs, lost signals, broken invariants and
 * the distinct fault points (call sites) where victims died; all but the
 * kills must be 0.
 *
 * White-box: the test reads the waiters' records (arena.h) to tell which
 * of them the dead thread's operation served, and a victim records the
 * call site of the fault point it dies at (a backtrace in the handler of
 * the signal the point raises, then SIGKILL) so that failures name it:
 *   addr2line -fe build/<preset>/tests/test_fault <offset>
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "campaign.h"
#include "random_kills.h"
#include "trial.h"

/* WINSYNC_FAULT_SCENARIO=i runs only scenario i; =random only the random kills. */
static bool selected(const char *which)
{
	const char *only = getenv("WINSYNC_FAULT_SCENARIO");

	return !only || strcmp(only, which) == 0;
}

START_TEST(chosen_points)
{
	char which[16];

	snprintf(which, sizeof which, "%d", _i);
	if (selected(which))
		run_scenario(&fault_scenarios[_i]);
}
END_TEST

START_TEST(random_kills)
{
	if (selected("random"))
		run_random_kills();
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("fault");
	TCase *tc = tcase_create("fault");

	tcase_set_timeout(tc, 280);
	tcase_add_test(tc, random_kills);
	tcase_add_loop_test(tc, chosen_points, 0, fault_scenario_count);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int ret;

	total = mmap(NULL, sizeof(*total), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (total == MAP_FAILED)
		return 1;
	ret = harness_run(make_suite());
	printf("fault injection: %ld kills (%ld at fault points, %ld at random times), "
	       "%ld hangs (%ld waiters stranded: %ld claimed but not woken, %ld owed), "
	       "%ld lost signals, %ld broken invariants, %d distinct fault points\n",
	       atomic_load(&total->kills), atomic_load(&total->point_kills),
	       atomic_load(&total->external_kills), atomic_load(&total->hangs),
	       atomic_load(&total->stranded_claimed) + atomic_load(&total->stranded_owed),
	       atomic_load(&total->stranded_claimed), atomic_load(&total->stranded_owed),
	       atomic_load(&total->lost), atomic_load(&total->broken), total->nsites);
	return ret;
}
