/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The NT model, one rule per row.  A row is the objects and a script of
 * steps, each written as in a history ("o1 wait any 0,1 poll -> ok 1"):
 *
 *   [!] [NAME:] oOWNER CALL [-> RESULT]   first step of an operation; "!"
 *                                         says NT forbids it (no state)
 *   [!] end NAME                          the second step of a blocked wait
 *   blocked NAME | handed NAME            NAME is blocked, with nothing (with something)
 *                                         handed to it yet, in every state
 *   states N                              NT allows exactly N states now
 *
 * The script runs on the set of states NT allows (the model may allow
 * several: who gets an auto-reset event); a step must leave at least one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "nt_model.h"

struct rule {
	const char *rule;
	const char *objects; /* "event manual 0 | sem 1 3 | mutex" */
	const char *steps;   /* separated by ';' */
};

static const struct rule rules[] = {
	{ "a manual-reset event stays signaled for every waiter until reset",
	  "event manual 1",
	  "o1 wait any 0 poll -> ok 0; o2 wait any 0 poll -> ok 0; o3 read 0 -> ok 1 1" },
	{ "an auto-reset event is reset by the wait that acquires it",
	  "event auto 1",
	  "o1 wait any 0 poll -> ok 0; ! o2 wait any 0 poll -> ok 0; o2 wait any 0 poll -> timeout" },
	{ "SetEvent returns the previous state and signals",
	  "event manual 0",
	  "! o1 set 0 -> ok 1; o1 set 0 -> ok 0; o1 set 0 -> ok 1; o1 read 0 -> ok 1 1" },
	{ "ResetEvent returns the previous state and unsignals",
	  "event manual 1",
	  "o1 reset 0 -> ok 1; o1 reset 0 -> ok 0; o2 wait any 0 poll -> timeout" },
	{ "a wait takes one unit of a semaphore; at 0 it is not ready",
	  "sem 2 5",
	  "o1 wait any 0 poll -> ok 0; o1 wait any 0 poll -> ok 0; o1 read 0 -> ok 0 5;"
	  "! o1 wait any 0 poll -> ok 0" },
	{ "ReleaseSemaphore returns the previous count; past the maximum it fails and changes nothing",
	  "sem 1 3",
	  "o1 release 0 2 -> ok 1; ! o1 release 0 1 -> ok 3; o1 release 0 1 -> eoverflow; o1 read 0 -> ok 3 3" },
	{ "a free mutex goes to the waiting owner; another owner cannot have it",
	  "mutex",
	  "o1 wait any 0 poll -> ok 0; o2 wait any 0 poll -> timeout; o1 read 0 -> ok 1 1" },
	{ "a mutex is recursive: its owner acquires it again and must release it as often",
	  "mutex",
	  "o1 wait any 0 poll -> ok 0; o1 wait any 0 poll -> ok 0; o1 unlock 0 -> ok 2;"
	  "o2 wait any 0 poll -> timeout; o1 unlock 0 -> ok 1; o2 wait any 0 poll -> ok 0" },
	{ "ReleaseMutex by an owner that does not hold it fails (ERROR_NOT_OWNER)",
	  "mutex 1 1",
	  "o2 unlock 0 -> eperm; ! o2 unlock 0 -> ok 1; o1 unlock 0 -> ok 1; o1 unlock 0 -> eperm" },
	{ "an abandoned mutex goes to the next acquirer with WAIT_ABANDONED, once",
	  "mutex",
	  "o1 wait any 0 poll -> ok 0; o1 kill 0 -> ok; o3 read 0 -> abandoned 0 0;"
	  "! o2 wait any 0 poll -> ok 0; o2 wait any 0 poll -> abandoned 0; o2 read 0 -> ok 1 2;"
	  "o2 unlock 0 -> ok 1; o3 wait any 0 poll -> ok 0" },
	{ "only the owner abandons its mutex",
	  "mutex 1 1",
	  "o2 kill 0 -> eperm; o1 kill 0 -> ok" },
	{ "the death of an owner abandons every mutex it holds, and hands them to blocked waits",
	  "mutex | mutex | mutex",
	  "o1 wait all 0,1 poll -> ok 0; w: o2 wait any 1 timeout 10 -> abandoned 0; blocked w;"
	  "o1 die -> ok; end w; o3 wait any 0 poll -> abandoned 0; o3 wait any 2 poll -> ok 0" },
	{ "the death of an owner ends its own blocked waits (ECANCELED)",
	  "event manual 0",
	  "w: o1 wait any 0 timeout 10 -> ecanceled; o2 die -> ok; blocked w; o1 die -> ok; handed w; end w" },
	{ "wait-any acquires the lowest-index ready object",
	  "sem 0 1 | sem 1 1 | sem 1 1",
	  "! o1 wait any 0,1,2 poll -> ok 2; o1 wait any 0,1,2 poll -> ok 1; o1 read 2 -> ok 1 1" },
	{ "wait-all acquires nothing while one object is not ready",
	  "sem 1 1 | mutex 2 1",
	  "o1 wait all 0,1 poll -> timeout; o1 read 0 -> ok 1 1; ! o1 wait all 0,1 poll -> ok 0" },
	{ "wait-all acquires every object at once",
	  "sem 1 1 | event auto 1 | mutex",
	  "o1 wait all 0,1,2 poll -> ok 0; o2 read 0 -> ok 0 1; o2 read 1 -> ok 0 0; o2 read 2 -> ok 1 1" },
	{ "a blocked wait-all leaves a signaled object to others until it can have them all",
	  "sem 0 1 | sem 0 1",
	  "w: o1 wait all 0,1 timeout 10 -> ok 0; o2 release 0 1 -> ok 0; o3 wait any 0 poll -> ok 0;"
	  "blocked w; o2 release 0 1 -> ok 0; o2 release 1 1 -> ok 0; handed w; end w; o3 read 0 -> ok 0 1" },
	{ "a blocked wait-all takes every object the moment the last one is ready",
	  "sem 1 1 | event auto 0",
	  "w: o1 wait all 0,1 timeout 10 -> ok 0; o2 set 1 -> ok 0; o3 wait any 0 poll -> timeout;"
	  "o3 read 1 -> ok 0 0; end w" },
	{ "the alert ends a wait-any when no object is ready (index = count); objects come first",
	  "sem 0 1 | event auto 1 | sem 1 1",
	  "o1 wait any 0 alert 1 poll -> ok 1; o1 set 1 -> ok 0; o1 wait any 0,2 alert 1 poll -> ok 1;"
	  "o1 wait any 0,2 alert 1 poll -> ok 2" },
	{ "the alert ends a wait-all that cannot have all its objects; an auto-reset alert is reset",
	  "sem 1 1 | sem 0 1 | event auto 1",
	  "o1 wait all 0,1 alert 2 poll -> ok 2; o1 read 0 -> ok 1 1; o1 read 2 -> ok 0 0;"
	  "w: o1 wait all 0,1 alert 2 timeout 5 -> ok 2; o2 set 2 -> ok 0; end w" },
	{ "PulseEvent of a manual event releases every wait already blocked, and leaves it reset",
	  "event manual 0",
	  "a: o1 wait any 0 timeout 10 -> ok 0; b: o2 wait any 0 timeout 10 -> ok 0;"
	  "o3 pulse 0 -> ok 0; handed a; handed b; o4 wait any 0 poll -> timeout; end a; end b" },
	{ "PulseEvent releases no wait that starts after it",
	  "event manual 0",
	  "o3 pulse 0 -> ok 0; a: o1 wait any 0 timeout 10 -> timeout; blocked a; end a;"
	  "! o2 wait any 0 poll -> ok 0" },
	{ "PulseEvent of an auto-reset event releases one blocked wait",
	  "event auto 0",
	  "a: o1 wait any 0 timeout 10; b: o2 wait any 0 timeout 10; o3 pulse 0 -> ok 0; states 2;"
	  "o4 read 0 -> ok 0 0" },
	{ "PulseEvent with nobody blocked only leaves the event reset",
	  "event auto 1",
	  "o1 pulse 0 -> ok 1; o2 wait any 0 poll -> timeout" },
	{ "an auto-reset SetEvent goes to exactly one blocked wait and stays reset",
	  "event auto 0",
	  "a: o1 wait any 0 timeout 10 -> ok 0; b: o2 wait any 0 timeout 10 -> timeout;"
	  "o3 set 0 -> ok 0; handed a; blocked b; o4 read 0 -> ok 0 0; end a; end b" },
	{ "NT does not say which blocked wait gets an auto-reset event: each may",
	  "event auto 0",
	  "a: o1 wait any 0 timeout 10; b: o2 wait any 0 timeout 10; o3 set 0 -> ok 0; states 2" },
	{ "a hand-off is immediate: the object is taken before the woken wait returns",
	  "event auto 0",
	  "a: o1 wait any 0 timeout 10 -> ok 0; o3 set 0 -> ok 0; ! o2 wait any 0 poll -> ok 0;"
	  "o2 wait any 0 poll -> timeout; end a" },
	{ "a blocked wait with a timeout may time out while nothing was handed to it",
	  "event auto 0",
	  "a: o1 wait any 0 timeout 10 -> timeout; end a; o3 set 0 -> ok 0; o2 read 0 -> ok 1 0" },
	{ "a wait without a timeout never times out",
	  "event auto 0",
	  "a: o1 wait any 0 infinite -> timeout; ! end a" },
	{ "a wait that was handed an object cannot time out",
	  "event auto 0",
	  "a: o1 wait any 0 timeout 10 -> timeout; ! o3 set 0 -> ok 0" },
	{ "a blocked wait-any returns the index of the object handed to it",
	  "event auto 0 | sem 0 2 | mutex 5 1",
	  "a: o1 wait any 0,1,2 timeout 10 -> ok 1; ! o3 set 0 -> ok 0; o3 release 1 1 -> ok 0; end a" },
	{ "ReleaseSemaphore(n) satisfies up to n blocked waits",
	  "sem 0 5",
	  "a: o1 wait any 0 timeout 10 -> ok 0; b: o2 wait any 0 timeout 10 -> ok 0;"
	  "c: o3 wait any 0 timeout 10 -> ok 0; o4 release 0 2 -> ok 0; states 3; o4 read 0 -> ok 0 5" },
	{ "two wait-alls that share a semaphore: the release goes to one of them, whole",
	  "sem 0 1 | event manual 1 | event manual 1",
	  "a: o1 wait all 0,1 timeout 10; b: o2 wait all 0,2 timeout 10; o3 release 0 1 -> ok 0; states 2;"
	  "o3 read 0 -> ok 0 1" },
	{ "a mutex its owner holds is ready for that owner's wait-all",
	  "mutex | sem 1 1",
	  "o1 wait any 0 poll -> ok 0; o1 wait all 0,1 poll -> ok 0; o1 unlock 0 -> ok 2" },
	{ "closed handles: every later use fails (EBADF); a close twice too",
	  "event manual 1 | sem 1 1",
	  "o1 close 0 -> ok; o1 set 0 -> ebadf; o1 read 0 -> ebadf; o1 wait any 1,0 poll -> ebadf;"
	  "o1 close 0 -> ebadf; o1 wait any 1 poll -> ok 0" },
	{ "a wait blocked on an object that gets closed goes on waiting",
	  "event auto 0 | event auto 0",
	  "a: o1 wait any 0,1 timeout 10 -> ok 1; o2 close 0 -> ok; blocked a; o2 set 1 -> ok 0; end a" },
	{ "a closed object lives on for the waits already blocked on it (they hold it): a wait-all takes it "
	  "with the rest (MSDN calls this undefined; Windows and Wine's server do it)",
	  "sem 1 1 | event auto 0",
	  "a: o1 wait all 0,1 timeout 10 -> ok 0; o2 close 0 -> ok; blocked a; o2 set 1 -> ok 0; handed a;"
	  "! o2 wait any 0 poll -> ok 0; end a" },
	{ "the same object twice in a wait-all is invalid",
	  "sem 2 2",
	  "o1 wait all 0,0 poll -> einval; o1 wait any 0,0 poll -> ok 0" },
	{ "an operation on an object of another type is invalid",
	  "sem 1 1 | event auto 0",
	  "o1 set 0 -> einval; o1 release 1 1 -> einval; o1 unlock 0 -> einval; o1 wait any 0 alert 0 poll -> einval" },
	{ "an unknown value in a recorded result matches any value",
	  "event manual 1",
	  "o1 set 0 -> ok ?; o1 reset 0 -> ok ?; o1 read 0 -> ok ? 1" },
	{ "a death with no waiter abandons all its mutexes at once (the order cannot show)",
	  "mutex | mutex",
	  "o1 wait all 0,1 poll -> ok 0; o1 die -> ok; states 1; o2 read 0 -> abandoned 0 0; o2 read 1 -> abandoned 0 0" },
	{ "a death hands its mutexes on in any order: a wait-any for both may get either",
	  "mutex | mutex",
	  "o1 wait all 0,1 poll -> ok 0; w: o2 wait any 0,1 timeout 10; o1 die -> ok; states 2" },
};

/* --- The script interpreter -------------------------------------------------- */

#define MAX_OPS 64
#define MAX_STATES 64

struct script {
	struct nt_op ops[MAX_OPS];
	struct nt_result expect[MAX_OPS];
	bool has_expect[MAX_OPS];
	char names[MAX_OPS][16];
	unsigned nops;
	struct nt_state set[MAX_STATES];
	unsigned nstates;
};

static bool accept(void *ctx, uint32_t op, const struct nt_result *r)
{
	struct script *sc = ctx;

	return !sc->has_expect[op] || nt_result_match(&sc->expect[op], r);
}

/* -1: not waiting; NT_BLOCKED: nothing handed to it yet; 1: handed something. */
static int waiter_status(const struct nt_state *s, uint32_t op)
{
	for (uint32_t i = 0; i < s->nwaiters; i++)
		if (s->wait[i].op == op)
			return s->wait[i].status == NT_BLOCKED ? NT_BLOCKED : 1;
	return -1;
}

static int find_name(const struct script *sc, const char *name)
{
	for (unsigned i = 0; i < sc->nops; i++)
		if (!strcmp(sc->names[i], name))
			return (int)i;
	return -1;
}

/* Applies one step to every state of the set; the number of states after it. */
static unsigned apply(struct script *sc, uint32_t op, enum nt_phase phase, struct nt_state *next,
		      bool *overflow)
{
	static struct nt_state states[MAX_STATES];
	static struct nt_result results[MAX_STATES];
	static bool done[MAX_STATES];
	struct nt_model m = { sc->ops, accept, sc };
	unsigned n = 0;

	for (unsigned s = 0; s < sc->nstates; s++) {
		struct nt_successors out = { states, results, done, MAX_STATES, 0, false };

		nt_step(&m, &sc->set[s], op, phase, sc->has_expect[op] ? &sc->expect[op] : NULL, &out);
		*overflow |= out.overflow;
		for (unsigned i = 0; i < out.count; i++) {
			bool dup = false;

			for (unsigned j = 0; j < n && !dup; j++)
				dup = nt_state_equal(&next[j], &states[i]);
			if (!dup && n < MAX_STATES)
				nt_state_copy(&next[n++], &states[i]);
		}
	}
	return n;
}

static int run_rule(const struct rule *r)
{
	static struct script sc;
	static struct nt_state next[MAX_STATES];
	char steps[2048], objects[512], *save = NULL, *step;
	unsigned number = 0;

	memset(&sc, 0, sizeof(sc));
	nt_state_init(&sc.set[0]);
	sc.nstates = 1;
	snprintf(objects, sizeof(objects), "%s", r->objects);
	for (char *o = strtok_r(objects, "|", &save); o; o = strtok_r(NULL, "|", &save)) {
		const char *p = o;
		struct nt_object obj;

		while (*p == ' ')
			p++;
		if (vh_parse_object(&p, &obj) || nt_state_add(&sc.set[0], &obj) < 0) {
			printf("  bad object '%s'\n", o);
			return 1;
		}
	}
	snprintf(steps, sizeof(steps), "%s", r->steps);
	for (step = strtok_r(steps, ";", &save); step; step = strtok_r(NULL, ";", &save)) {
		const char *p = step;
		bool forbidden = false, overflow = false;
		enum nt_phase phase = NT_BEGIN;
		uint32_t op;
		unsigned n;
		char name[16] = "";

		number++;
		while (*p == ' ')
			p++;
		if (*p == '!') {
			forbidden = true;
			p++;
			while (*p == ' ')
				p++;
		}
		if (!strncmp(p, "states ", 7)) {
			unsigned want = (unsigned)atoi(p + 7);

			if (sc.nstates != want) {
				printf("  step %u '%s': %u states, NT allows %u\n", number, step, sc.nstates, want);
				return 1;
			}
			continue;
		}
		if (!strncmp(p, "blocked ", 8) || !strncmp(p, "handed ", 7)) {
			bool blocked = p[0] == 'b';
			int i = find_name(&sc, p + (blocked ? 8 : 7));

			if (i < 0) {
				printf("  step %u: unknown name\n", number);
				return 1;
			}
			for (unsigned s = 0; s < sc.nstates; s++) {
				if (waiter_status(&sc.set[s], (uint32_t)i) != (blocked ? (int)NT_BLOCKED : 1)) {
					printf("  step %u '%s': not so in state %u\n", number, step, s);
					return 1;
				}
			}
			continue;
		}
		if (!strncmp(p, "end ", 4)) {
			int i = find_name(&sc, p + 4);

			if (i < 0) {
				printf("  step %u: unknown name '%s'\n", number, p + 4);
				return 1;
			}
			op = (uint32_t)i;
			phase = NT_END;
		} else {
			const char *colon = strchr(p, ':');
			struct vh_op parsed;
			uint32_t timeout;

			const char *blank = strchr(p, ' ');

			if (colon && blank && colon < blank && colon - p < (long)sizeof(name)) {
				memcpy(name, p, (size_t)(colon - p));
				name[colon - p] = 0;
				p = colon + 1;
				while (*p == ' ')
					p++;
			}
			op = sc.nops++;
			if (*p != 'o' || (sc.ops[op].owner = (uint32_t)strtoul(p + 1, (char **)&p, 10)) == 0) {
				printf("  step %u: expected oOWNER\n", number);
				return 1;
			}
			while (*p == ' ')
				p++;
			{
				uint32_t owner = sc.ops[op].owner;

				if (vh_parse_call(&p, &sc.ops[op], &timeout)) {
					printf("  step %u '%s': bad call\n", number, step);
					return 1;
				}
				sc.ops[op].owner = owner;
			}
			snprintf(sc.names[op], sizeof(sc.names[op]), "%s", name);
			if (!strncmp(p, "->", 2)) {
				p += 2;
				while (*p == ' ')
					p++;
				memset(&parsed, 0, sizeof(parsed));
				if (vh_parse_result(&p, &parsed)) {
					printf("  step %u '%s': bad result\n", number, step);
					return 1;
				}
				sc.expect[op] = parsed.result;
				sc.has_expect[op] = true;
			}
		}
		n = apply(&sc, op, phase, next, &overflow);
		if (overflow) {
			printf("  step %u '%s': the model overflowed\n", number, step);
			return 1;
		}
		if (forbidden) {
			if (n) {
				printf("  step %u '%s': NT forbids it, the model allows it\n", number, step);
				return 1;
			}
			if (phase == NT_BEGIN)
				sc.has_expect[op] = false; /* not applied: its op id stays unused */
			continue;
		}
		if (!n) {
			printf("  step %u '%s': NT allows it, the model refuses it\n", number, step);
			return 1;
		}
		for (unsigned i = 0; i < n; i++)
			nt_state_copy(&sc.set[i], &next[i]);
		sc.nstates = n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: %s\nChecks each NT rule of the table against the model; exit 0 when all hold.\n", argv[0]);
		return 0;
	}
	unsigned failed = 0, count = sizeof(rules) / sizeof(rules[0]);

	for (unsigned i = 0; i < count; i++) {
		int bad = run_rule(&rules[i]);

		printf("%s  %s\n", bad ? "FAIL" : "ok  ", rules[i].rule);
		failed += bad != 0;
	}
	printf("%u of %u NT rules hold in the model\n", count - failed, count);
	return failed ? 1 : 0;
}
