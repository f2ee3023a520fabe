/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The random-kill campaign of test_fault: victim processes run random
 * operations on a shared arena and are killed at random fault points and
 * at random times, while surviving threads wait and probes signal; every
 * survivor's wait must end by itself and every signal given after a death
 * must arrive (campaign.h tallies them).
 */
#define _GNU_SOURCE
#include "random_kills.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../winsync/arena.h"
#include "campaign.h"
#include "fault_api.h"

enum { EA0, EA1, EM, S0, S1, M0, M1, NOBJ };
#define VICTIMS 3
#define SURVIVORS 2

struct rshared {
	char name[80];
	ws_handle h[NOBJ];
	uint32_t dead[512];        /* owner ids of dead victims (owner_of_tid) */
	_Atomic uint32_t ndead;
	struct report rep[VICTIMS];
	char complaint[VICTIMS][400];
	uint64_t seed;
};

static struct rshared *rs;

static bool is_mutex(int i)
{
	return i == M0 || i == M1;
}

/* A random subset of distinct objects, in random order. */
static uint32_t pick(struct rng *r, int *idx, ws_handle *objs, uint32_t max)
{
	uint32_t n = 1 + rng_below(r, max), k = 0;
	bool used[NOBJ] = { false };

	while (k < n) {
		int i = (int)rng_below(r, NOBJ);

		if (used[i])
			continue;
		used[i] = true;
		idx[k] = i;
		objs[k++] = rs->h[i];
	}
	return n;
}

#define COMPLAIN(v, ...)                                                               \
	do {                                                                           \
		snprintf(rs->complaint[v], sizeof rs->complaint[v], __VA_ARGS__);      \
		_exit(3);                                                              \
	} while (0)

static int random_victim(void *arg)
{
	int v = (int)(intptr_t)arg;
	ws_arena *a = NULL;
	struct rng r;
	uint32_t me = self_owner(), held[NOBJ] = { 0 };
	ws_handle temp[8];
	int ntemp = 0;
	bool all;

	rng_seed(&r, rs->seed ^ me);
	rep = &rs->rep[v];
	CHILD_CHECK(ws_arena_open(rs->name, &a) == 0, 2);
	victim_setup();
	if (rng_below(&r, 10) < 7)
		victim_arm(1 + rng_below(&r, 400));
	for (int op = 0; op < 100000; op++) {
		int idx[4], rc;
		ws_handle objs[4];
		uint32_t n, index;
		struct timespec dl = deadline_ms(rng_below(&r, 15));
		struct ws_wait w = { .objects = objs, .owner = me, .deadline = &dl };

		switch (rng_below(&r, 11)) {
		case 0:
		case 1:
		case 2:
			w.count = n = pick(&r, idx, objs, 4);
			if (rng_below(&r, 4) == 0)
				w.alert = rs->h[rng_below(&r, 2) ? EA0 : EM];
			all = rng_below(&r, 3) == 0;
			rc = all ? ws_wait_all(a, &w, &index) : ws_wait_any(a, &w, &index);
			if (rc == -EINVAL && all && w.alert)
				break; /* the alert was one of the objects of a wait_all */
			if (rc != 0 && rc != -ETIMEDOUT && rc != -EOWNERDEAD)
				COMPLAIN(v, "wait: %d (%s)", rc, errname(rc));
			if (rc == -ETIMEDOUT || index == n)
				break;
			/* Mutexes taken are kept a while: some victims die holding them. */
			for (uint32_t i = 0; i < n; i++)
				if (is_mutex(idx[i]) && (all || i == index))
					held[idx[i]]++;
			break;
		case 3:
			rc = ws_event_set(a, rs->h[rng_below(&r, 3)], NULL);
			if (rc)
				COMPLAIN(v, "set: %d (%s)", rc, errname(rc));
			break;
		case 4:
			rc = ws_event_pulse(a, rs->h[rng_below(&r, 3)], NULL);
			if (rc)
				COMPLAIN(v, "pulse: %d (%s)", rc, errname(rc));
			break;
		case 5:
			rc = ws_event_reset(a, rs->h[rng_below(&r, 3)], NULL);
			if (rc)
				COMPLAIN(v, "reset: %d (%s)", rc, errname(rc));
			break;
		case 6:
			rc = ws_sem_release(a, rs->h[S0 + rng_below(&r, 2)], 1 + rng_below(&r, 2), NULL);
			if (rc && rc != -EOVERFLOW)
				COMPLAIN(v, "release: %d (%s)", rc, errname(rc));
			break;
		case 7: {
			int m = M0 + (int)rng_below(&r, 2);

			if (!held[m])
				break;
			rc = rng_below(&r, 5) ? ws_mutex_unlock(a, rs->h[m], me, NULL)
					      : ws_mutex_kill(a, rs->h[m], me);
			if (rc)
				COMPLAIN(v, "unlock/kill: %d (%s)", rc, errname(rc));
			held[m] = 0;
			if (rc == 0)
				while (ws_mutex_unlock(a, rs->h[m], me, NULL) == 0)
					;
			break;
		}
		case 8:
			if (ntemp < 8 && rng_below(&r, 2)) {
				rc = ws_sem_create(a, 0, 1, &temp[ntemp]);
				if (rc == 0)
					ntemp++;
				else if (rc != -ENOSPC)
					COMPLAIN(v, "create: %d (%s)", rc, errname(rc));
			} else if (ntemp) {
				rc = ws_close(a, temp[--ntemp]);
				if (rc)
					COMPLAIN(v, "close: %d (%s)", rc, errname(rc));
			}
			break;
		case 9: {
			uint32_t nd = atomic_load(&rs->ndead), who;

			who = nd && rng_below(&r, 2) ? rs->dead[rng_below(&r, nd)] : 0x5000 + rng_below(&r, 64);
			rc = ws_owner_died(a, who);
			if (rc)
				COMPLAIN(v, "ws_owner_died: %d (%s)", rc, errname(rc));
			break;
		}
		case 10: {
			char report[200];

			rc = ws_arena_check(a, report, sizeof report);
			if (rc)
				COMPLAIN(v, "ws_arena_check: %d (%s) %s", rc, errname(rc), report);
			break;
		}
		}
	}
	return 0;
}

struct survivor {
	ws_arena *a;
	uint32_t owner;
	_Atomic int *stop;
	long waits, overshoot_max, hangs, unexpected;
	char why[300];
	uint64_t seed;
};

static void *survivor_main(void *arg)
{
	struct survivor *s = arg;
	struct rng r;

	rng_seed(&r, s->seed);
	while (!atomic_load(s->stop)) {
		int idx[4], rc;
		ws_handle objs[4];
		uint32_t n, index;
		struct timespec dl = deadline_ms(rng_below(&r, 20));
		struct ws_wait w = { .objects = objs, .owner = s->owner, .deadline = &dl };
		long over;
		bool all;

		switch (rng_below(&r, 4)) {
		case 0:
		case 1:
			w.count = n = pick(&r, idx, objs, 3);
			all = rng_below(&r, 3) == 0;
			rc = all ? ws_wait_all(s->a, &w, &index) : ws_wait_any(s->a, &w, &index);
			over = ts_diff_ms(ts_now(CLOCK_MONOTONIC), dl);
			s->waits++;
			if (over > s->overshoot_max)
				s->overshoot_max = over;
			if (over > 3000 * slow_factor()) {
				s->hangs++;
				snprintf(s->why, sizeof s->why, "a survivor's wait returned %ld ms late",
					 over);
			}
			if (rc != 0 && rc != -ETIMEDOUT && rc != -EOWNERDEAD) {
				s->unexpected++;
				snprintf(s->why, sizeof s->why, "survivor wait: %d (%s)", rc,
					 errname(rc));
			}
			if (rc == -ETIMEDOUT)
				break;
			/* Give back the mutexes it took: the probe wants them free or abandoned. */
			for (uint32_t i = 0; i < n; i++) {
				int urc;

				if (!is_mutex(idx[i]) || !(all || i == index))
					continue;
				urc = ws_mutex_unlock(s->a, objs[i], s->owner, NULL);
				if (urc) {
					uint32_t count = 0, owner = 0;
					int mrc = ws_mutex_read(s->a, objs[i], &count, &owner);

					s->unexpected++;
					snprintf(s->why, sizeof s->why,
						 "survivor %#x: %s of %u objects returned %d (%s) "
						 "index %u, then unlocking M%d: %d (%s); it reads %d, "
						 "owner %#x count %u",
						 s->owner, all ? "wait_all" : "wait_any", n, rc,
						 errname(rc), index, idx[i] - M0, urc, errname(urc),
						 mrc, owner, count);
				}
			}
			break;
		case 2:
			ws_event_set(s->a, rs->h[rng_below(&r, 3)], NULL);
			break;
		case 3:
			ws_sem_release(s->a, rs->h[S0 + rng_below(&r, 2)], 1, NULL);
			break;
		}
	}
	return NULL;
}

struct rtally {
	bool replace;
	long rounds, probes;
	long overshoot_max, survivor_waits;
};

/* A call of the probe that must work on a consistent arena: else a broken invariant. */
static bool probe_ok(ws_arena *a, struct rtally *rt, int rc, const char *what, int object)
{
	char report[256];

	if (rc == 0)
		return true;
	tl.broken++;
	ws_arena_check(a, report, sizeof report);
	remember("random round %ld: %s of object %d after the deaths: %d (%s); the check says: %s",
		 rt->rounds, what, object, rc, errname(rc), report);
	return false;
}

/* Signals given after the round's deaths, each to one live waiter. */
static bool probe(ws_arena *a, struct rtally *rt)
{
	struct waiter *p[NOBJ];
	uint32_t idx;

	/* Nothing signaled to start with: events reset, semaphores drained. */
	for (int i = 0; i <= EM; i++)
		if (!probe_ok(a, rt, ws_event_reset(a, rs->h[i], NULL), "reset", i))
			return false;
	for (int i = S0; i <= S1; i++)
		while (poll_any(a, &rs->h[i], 1, 1, &idx) == 0)
			;
	for (int i = 0; i < NOBJ; i++) {
		p[i] = calloc(1, sizeof(**p));
		ck_assert_ptr_nonnull(p[i]);
		waiter_init(p[i], a, new_owner(), false, &rs->h[i], 1);
		p[i]->timeout_ms = LONG_MS;
		waiter_start(p[i]);
		/* A mutex of dead owners comes by itself (abandoned): no signal needed. */
		if (!is_mutex(i))
			waiter_asleep(p[i]);
	}
	probe_ok(a, rt, ws_event_set(a, rs->h[EA0], NULL), "set", EA0);
	probe_ok(a, rt, ws_event_set(a, rs->h[EA1], NULL), "set", EA1);
	probe_ok(a, rt, ws_event_set(a, rs->h[EM], NULL), "set", EM);
	probe_ok(a, rt, ws_sem_release(a, rs->h[S0], 1, NULL), "release", S0);
	probe_ok(a, rt, ws_sem_release(a, rs->h[S1], 1, NULL), "release", S1);
	for (int i = 0; i < NOBJ; i++) {
		rt->probes++;
		if (!waiter_wait_done(p[i], long_ms())) {
			tl.lost++;
			remember("random round %ld: object %d: no live waiter got the signal given after "
				 "the deaths",
				 rt->rounds, i);
			ws_owner_died(a, p[i]->owner);
			if (!waiter_wait_done(p[i], long_ms())) {
				tl.hangs++;
				atomic_store(&p[i]->release, 1);
				pthread_detach(p[i]->thread);
				continue;
			}
		} else if (p[i]->rc != 0 && !(is_mutex(i) && p[i]->rc == -EOWNERDEAD)) {
			tl.broken++;
			remember("random round %ld: probe of object %d returned %d (%s)", rt->rounds, i,
				 p[i]->rc, errname(p[i]->rc));
		}
		if (is_mutex(i) && (p[i]->rc == 0 || p[i]->rc == -EOWNERDEAD))
			probe_ok(a, rt, ws_mutex_unlock(a, rs->h[i], p[i]->owner, NULL), "unlock", i);
		waiter_join(p[i]);
		free(p[i]);
	}
	if (ev_signaled(a, rs->h[EA0]) || ev_signaled(a, rs->h[EA1]) || sem_count(a, rs->h[S0]) ||
	    sem_count(a, rs->h[S1])) {
		tl.broken++;
		remember("random round %ld: a signal given once was received and also left behind",
			 rt->rounds);
	}
	return true;
}

static void random_round(ws_arena *a, struct rng *r, struct rtally *rt)
{
	_Atomic int stop = 0;
	struct survivor sv[SURVIVORS];
	pthread_t th[SURVIVORS];
	pid_t pid[VICTIMS];
	long external_at[VICTIMS];
	struct timespec start = ts_now(CLOCK_MONOTONIC);
	char report[256];
	int rc;

	rs->seed = rng_next(r) | (uint64_t)rng_next(r) << 32;
	memset(rs->rep, 0, sizeof rs->rep);
	for (int i = 0; i < SURVIVORS; i++) {
		sv[i] = (struct survivor){ .a = a, .owner = new_owner(), .stop = &stop,
					   .seed = rng_next(r) };
		th[i] = spawn(survivor_main, &sv[i]);
	}
	for (int v = 0; v < VICTIMS; v++) {
		rs->rep[v].fault_signal = SIGUSR2;
		external_at[v] = 1 + rng_below(r, 40);
		pid[v] = fork_child_fn(random_victim, (void *)(intptr_t)v);
	}
	for (int v = 0; v < VICTIMS; v++) {
		int status;
		long left = external_at[v] - ts_diff_ms(ts_now(CLOCK_MONOTONIC), start);
		bool ended = reap_child(pid[v], left > 0 ? left : 0, &status);
		char sbuf[64];

		if (!ended) {
			kill(pid[v], SIGKILL);
			ck_assert_int_eq(waitpid(pid[v], &status, 0), pid[v]);
			tl.external_kills++;
		} else if (rs->rep[v].site) {
			tl.point_kills++;
			add_site(rs->rep[v].site);
		} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
			tl.point_kills++; /* at a point, not recorded (TSan) */
		}
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
			tl.kills++;
		} else {
			tl.broken++;
			remember("random round %ld: victim ended with %s: %s", rt->rounds,
				 status_str(status, sbuf, sizeof sbuf), rs->complaint[v]);
		}
		if (rs->ndead < 512)
			rs->dead[rs->ndead++] = owner_of_tid(pid[v]);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < SURVIVORS; i++) {
		join(th[i]);
		tl.hangs += sv[i].hangs;
		tl.broken += sv[i].unexpected;
		if (sv[i].hangs || sv[i].unexpected)
			remember("random round %ld: %s", rt->rounds, sv[i].why);
		if (sv[i].overshoot_max > rt->overshoot_max)
			rt->overshoot_max = sv[i].overshoot_max;
		rt->survivor_waits += sv[i].waits;
	}
	rc = ws_arena_check(a, report, sizeof report);
	if (rc) {
		tl.broken++;
		remember("random round %ld: ws_arena_check after the deaths: %d (%s) %s", rt->rounds,
			 rc, errname(rc), report);
	}
	/* A broken arena is replaced: later rounds test the deaths, not the debris. */
	if (rc || !probe(a, rt))
		rt->replace = true;
	else if ((rc = ws_arena_check(a, report, sizeof report)) != 0) {
		tl.broken++;
		rt->replace = true;
		remember("random round %ld: ws_arena_check after the probe: %d (%s) %s", rt->rounds,
			 rc, errname(rc), report);
	}
	rt->rounds++;
}

void run_random_kills(void)
{
	long rounds = scaled(60, 3);
	struct rtally rt = { 0 };
	struct rng r;
	ws_arena *a = NULL;

	memset(&tl, 0, sizeof tl);
	rs = shared_alloc(sizeof(*rs));
	exe_base = base_of((void *)&record_site_and_die);
	rng_seed(&r, test_seed("random kills"));
	for (long i = 0; i < rounds; i++) {
		/* A new arena every 10 rounds: most rounds inherit what earlier deaths left. */
		if (i % 10 == 0 || rt.replace) {
			rt.replace = false;
			if (a)
				drop_arena(a, rs->name);
			a = named_arena(rs->name, sizeof rs->name, "random", 64);
			rs->h[EA0] = mk_event(a, false, false);
			rs->h[EA1] = mk_event(a, false, true);
			rs->h[EM] = mk_event(a, true, false);
			rs->h[S0] = mk_sem(a, 0, 4);
			rs->h[S1] = mk_sem(a, 2, 4);
			rs->h[M0] = mk_mutex(a, 0, 0);
			rs->h[M1] = mk_mutex(a, 0, 0);
		}
		random_round(a, &r, &rt);
	}
	drop_arena(a, rs->name);
	printf("random kills: %ld rounds, %ld survivor waits (latest %ld ms past a deadline), "
	       "%ld probe signals\n",
	       rt.rounds, rt.survivor_waits, rt.overshoot_max, rt.probes);
	print_tally("random kills");
	assert_tally();
	shared_free(rs, sizeof(*rs));
}
