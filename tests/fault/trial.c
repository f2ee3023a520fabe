/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The trial runner of the fault-injection campaign: see trial.h. */
#define _GNU_SOURCE
#include "trial.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../winsync/arena.h"
#include "fault_api.h"
#include "whitebox.h"




void fail_note(struct trial *t, int *counter, const char *fmt, ...)
{
	va_list ap;

	(*counter)++;
	if (!t->why[0]) {
		va_start(ap, fmt);
		vsnprintf(t->why, sizeof t->why, fmt, ap);
		va_end(ap);
	}
}



struct waiter *add_waiter_nb(struct trial *t, uint32_t owner, bool all, const ws_handle *objs,
			     uint32_t n, long timeout_ms, bool blocks)
{
	struct waiter *w = calloc(1, sizeof(*w));

	ck_assert_ptr_nonnull(w);
	waiter_init(w, t->a, owner, all, objs, n);
	w->forever = timeout_ms == 0;
	w->timeout_ms = timeout_ms ? timeout_ms : LONG_MS;
	waiter_start(w);
	if (blocks)
		waiter_asleep(w);
	t->w[t->nw++] = w;
	return w;
}

/* A waiter that must block (asleep when this returns). */
struct waiter *add_waiter(struct trial *t, uint32_t owner, bool all, const ws_handle *objs,
			  uint32_t n, long timeout_ms)
{
	return add_waiter_nb(t, owner, all, objs, n, timeout_ms, true);
}

int count_done(struct trial *t)
{
	int n = 0;

	for (int i = 0; i < t->nw; i++)
		n += waiter_done(t->w[i]);
	return n;
}

/* Waits until `n` waiters are done or `ms` passed: the number done. */
int await_done(struct trial *t, int n, long ms)
{
	struct timespec end = deadline_ms(ms);

	while (count_done(t) < n && ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0)
		sleep_ms(1);
	return count_done(t);
}

bool wait_over(struct trial *t, int i)
{
	if (waiter_done(t->w[i]))
		return true;
	if (t->record[i] < 0)
		return false;
	return atomic_load(&t->a->records[t->record[i]].state) != WS_WAIT_PENDING;
}

int check_arena(struct trial *t, const char *when)
{
	char report[256];
	int rc = ws_arena_check(t->a, report, sizeof report);

	if (rc)
		BROKEN(t, "ws_arena_check %s: %d (%s) %s", when, rc, errname(rc), report);
	return rc;
}

static int victim_main(void *arg)
{
	struct trial *t = arg;
	ws_arena *a = NULL;

	CHILD_CHECK(ws_arena_open(t->name, &a) == 0, 10);
	atomic_store(&rep->tid, (int)gettid());
	victim_setup();
	victim_end(t->sc->victim(a, t->h, t->k));
}

/* Stops every waiter still blocked; false if one cannot be stopped (it is leaked). */
static bool stop_waiters(struct trial *t)
{
	bool all = true;

	for (int i = 0; i < t->nw; i++) {
		struct waiter *w = t->w[i];

		if (!waiter_done(w))
			ws_owner_died(t->a, w->owner);
		if (!waiter_wait_done(w, long_ms())) {
			HANG(t, "waiter %d cannot be stopped: asleep with its wait over", i);
			atomic_store(&w->release, 1);
			pthread_detach(w->thread);
			all = false;
			continue;
		}
		waiter_join(w);
		free(w);
	}
	t->nw = 0;
	return all;
}

/* One trial: a fresh arena, the victim killed at point k (0: not at all), the verdict. */
void run_trial(const struct scenario *sc, long k, long t1_ms, struct trial *t)
{
	int status;
	char sbuf[64];

	memset(t, 0, sizeof(*t));
	memset(rep, 0, sizeof(*rep));
	rep->fault_signal = SIGUSR2;
	t->sc = sc;
	t->k = k;
	t->t1_ms = t1_ms;
	t->a = named_arena(t->name, sizeof t->name, "fault", CAPACITY);
	for (int i = 0; i < MAXW; i++)
		t->record[i] = -1;
	sc->objects(t);
	pid_t victim = fork_child_fn(victim_main, t);
	struct timespec end = deadline_ms(60000);

	while (!atomic_load(&rep->ready)) {
		ck_assert_msg(ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0, "victim never got ready");
		if (reap_child(victim, 0, &status))
			ck_abort_msg("%s: victim died before it was armed: %s", sc->name,
				     status_str(status, sbuf, sizeof sbuf));
		sleep_ms(1);
	}
	sc->waiters(t);
	/* A locked call orders our reads of the waiters' records after their writes. */
	CK_OK(ws_arena_check(t->a, NULL, 0));
	for (int i = 0; i < t->nw; i++)
		t->record[i] = wb_live_record(t->a, atomic_load(&t->w[i]->tid));
	atomic_store(&rep->go, 1);
	if (!reap_child(victim, 20000 * slow_factor(), &status)) {
		HANG(t, "the victim's operation never returned");
		kill_reap(victim);
	} else if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
		BROKEN(t, "victim ended with %s", status_str(status, sbuf, sizeof sbuf));
	}
	tl.kills++;
	t->site = rep->site;
	t->op_returned = atomic_load(&rep->returned);
	if (!t->op_returned)
		tl.point_kills++;
	add_site(t->site);
	/*
	 * An operation that ended before point k took a shorter path than the
	 * calibration's (a wait whose deadline passed before it slept, on a
	 * slow guest): nothing was killed inside it.  Past point k it must
	 * have died, and whenever it ends it ends as it does unharmed.
	 */
	if (t->op_returned) {
		if (rep->rc != sc->op_rc)
			BROKEN(t, "the operation returned %d (%s), not %d", rep->rc, errname(rep->rc),
			       sc->op_rc);
		else if (k > 0 && rep->points >= k)
			BROKEN(t, "the victim passed point %ld of %ld and was not killed", k,
			       rep->points);
		else if (k > 0)
			t->unreached = true;
	}

	/* What the dead thread left (read only; racy reads only label a failure). */
	int victim_record = wb_named_record(t->a, atomic_load(&rep->tid));

	if (!under_tsan() && victim_record >= 0) {
		struct ws_log *log = &t->a->records[victim_record].log;
		bool committed = atomic_load(&log->state) == WS_LOG_COMMITTED;

		for (int i = 0; i < t->nw; i++)
			t->claimed[i] = wait_over(t, i) ||
					(committed && t->record[i] >= 0 &&
					 log->claim_record == (uint32_t)t->record[i] + 1);
	}
	/* Those the dead thread's operation served must wake without anyone's help. */
	bool done_a[MAXW];

	if (t1_ms) {
		struct timespec t0 = ts_now(CLOCK_MONOTONIC);
		int n = await_done(t, t->nw, t1_ms);

		/* WINSYNC_FAULT_DEBUG: how long the waiters took to wake by themselves. */
		if (getenv("WINSYNC_FAULT_DEBUG"))
			printf("point %ld: %d of %d waiters done %ld ms after the death\n", k, n,
			       t->nw, ts_diff_ms(ts_now(CLOCK_MONOTONIC), t0));
	}
	for (int i = 0; i < t->nw; i++)
		done_a[i] = waiter_done(t->w[i]);
	t->woke = count_done(t);
	check_arena(t, "after the death");
	for (int i = 0; i < t->nw; i++) {
		bool over = wait_over(t, i);

		t->served += over;
		if (over && !done_a[i]) {
			t->late = true;
			if (t->claimed[i])
				t->stranded_claimed++;
			else
				t->stranded_owed++;
		}
	}
	sc->judge(t);
	check_arena(t, "at the end");
	t->leak = !stop_waiters(t);
	if (t->leak)
		ws_arena_close(t->a); /* the mapping stays while the waiter lives */
	else
		drop_arena(t->a, t->name);
	if (t->leak)
		ws_arena_unlink(t->name);
}

/*
 * A trial, re-run with a long grace if a waiter seemed stranded (it may only
 * have been slow to run on a busy machine).  Once one is confirmed in a
 * scenario (or after a few re-runs), later ones count without a re-run: the
 * verdict is made, and the run stays short.
 */
static int confirmed, reruns_left;

void judged_trial(const struct scenario *sc, long k)
{
	struct trial t;
	long t1 = sc->t1_ms * slow_factor();

	run_trial(sc, k, t1, &t);
	if (t.late && t1 && !confirmed && reruns_left > 0) {
		tl.reruns++;
		if (getenv("WINSYNC_FAULT_DEBUG"))
			printf("re-run: %s point %ld site %#lx\n", sc->name, k, (unsigned long)t.site);
		reruns_left--;
		run_trial(sc, k, 1500 * slow_factor(), &t);
	}
	if (t.late) {
		confirmed++;
		HANG(&t, "%d waiter(s) slept until another thread entered the arena: %d "
			 "handed an object (or named by a committed hand-off) but not woken, "
			 "%d owed by the operation the dead thread had begun",
		     t.stranded_claimed + t.stranded_owed, t.stranded_claimed, t.stranded_owed);
		tl.stranded_claimed += t.stranded_claimed;
		tl.stranded_owed += t.stranded_owed;
	}
	tl.trials++;
	tl.unreached += t.unreached;
	tl.hangs += t.hangs;
	tl.lost += t.lost;
	tl.broken += t.broken;
	if (t.hangs || t.lost || t.broken) {
		remember("%s, point %ld (site %#lx%s): %s", sc->name, k, (unsigned long)t.site,
			 t.op_returned ? ", after the op" : "", t.why);
		printf("FAIL %s, point %ld (site %#lx%s): %s\n", sc->name, k, (unsigned long)t.site,
		       t.op_returned ? ", after the op" : "", t.why);
	}
}

/*
 * One scenario: a calibration run, then the victim killed at every fault
 * point of its operation in turn (a sample of them under emulation).
 */
void run_scenario(const struct scenario *sc)
{
	struct trial cal;
	long points, stride, offset;
	struct rng r;

	rep = shared_alloc(sizeof(*rep));
	exe_base = base_of((void *)&record_site_and_die);
	memset(&tl, 0, sizeof tl);
	confirmed = 0;
	reruns_left = 6;
	/* Calibration: the whole operation, the victim killed only after it. */
	run_trial(sc, 0, sc->t1_ms * slow_factor(), &cal);
	points = rep->points;
	tl.trials++;
	tl.hangs += cal.hangs;
	tl.lost += cal.lost;
	tl.broken += cal.broken;
	if (cal.hangs || cal.lost || cal.broken) {
		remember("%s, no kill in the op: %s", sc->name, cal.why);
		printf("FAIL %s, no kill in the op (%ld points): %s\n", sc->name, rep->points,
		       cal.why);
	}
	ck_assert_msg(points > 0, "%s passes no fault point", sc->name);
	/* WINSYNC_FAULT_POINT=k: that point only (with WINSYNC_FAULT_SCENARIO=i to debug one). */
	if (getenv("WINSYNC_FAULT_POINT")) {
		judged_trial(sc, atol(getenv("WINSYNC_FAULT_POINT")));
		print_tally(sc->name);
		assert_tally();
		return;
	}
	/* Every point on the host; a sample elsewhere, from a random offset. */
	stride = (100 + robust_scale() - 1) / robust_scale();
	rng_seed(&r, test_seed(sc->name));
	offset = rng_below(&r, (uint32_t)stride);
	for (long k = 1; k <= points; k++)
		if ((k - 1) % stride == offset || k == points)
			judged_trial(sc, k);
	printf("%s: %ld fault points in the operation\n", sc->name, points);
	print_tally(sc->name);
	assert_tally();
	shared_free(rep, sizeof(*rep));
}
