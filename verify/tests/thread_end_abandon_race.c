/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The death behind win32 seed 3 (verify/README.md), without the checker: a
 * thread that ends owning two mutexes abandons both in one step, as NT's
 * thread end does, so a thread that has taken the first one abandoned must
 * find the second abandoned too, never still owned.
 *
 * Round i: the owner thread takes MUTEXES mutexes, M1 first, M2 last, and
 * returns; the main thread polls M1 until it gets it (WAIT_ABANDONED),
 * then polls M2 once.  The Win32 layer abandoned them with one
 * ws_mutex_kill each, in the order taken: the poll of M2 fell before M2's
 * turn and timed out.
 *
 *   thread_end_abandon_race [ROUNDS]   exit 0: M2 never found owned in ROUNDS (1000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <winsync/win32.h>

#define MUTEXES 16

static HANDLE mutexes[MUTEXES], taken;
#define m1 mutexes[0]
#define m2 mutexes[MUTEXES - 1]

static DWORD WINAPI owner(LPVOID arg)
{
	(void)arg;
	for (int i = 0; i < MUTEXES; i++)
		if (WaitForSingleObject(mutexes[i], INFINITE) != WAIT_OBJECT_0)
			return 1;
	SetEvent(taken);
	return 0; /* ends owning them all */
}

int main(int argc, char **argv)
{
	long rounds, violations = 0, first = -1;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: %s [ROUNDS]\nA thread ends owning several mutexes; exit 1 if another thread, having\n"
		       "taken the first abandoned, ever finds the last still owned.\n", argv[0]);
		return 0;
	}
	rounds = argc > 1 ? atol(argv[1]) : 1000;
	for (int i = 0; i < MUTEXES; i++)
		mutexes[i] = CreateMutexW(NULL, FALSE, NULL);
	taken = CreateEventW(NULL, FALSE, FALSE, NULL);
	if (!mutexes[MUTEXES - 1] || !taken) {
		fprintf(stderr, "thread_end_abandon_race: create failed (%lu)\n",
			(unsigned long)GetLastError());
		return 2;
	}
	for (long i = 0; i < rounds; i++) {
		HANDLE thread = CreateThread(NULL, 0, owner, NULL, 0, NULL);
		DWORD r;

		if (!thread || WaitForSingleObject(taken, 20000) != WAIT_OBJECT_0) {
			fprintf(stderr, "thread_end_abandon_race: round %ld: the owner never took both\n", i);
			return 2;
		}
		while ((r = WaitForSingleObject(m1, 0)) == WAIT_TIMEOUT)
			;
		if (r != WAIT_ABANDONED_0) {
			fprintf(stderr, "thread_end_abandon_race: round %ld: M1 gave %#lx\n", i,
				(unsigned long)r);
			return 2;
		}
		r = WaitForSingleObject(m2, 0);
		if (r == WAIT_TIMEOUT) {
			violations++;
			if (first < 0)
				first = i;
			r = WaitForSingleObject(m2, 20000);
		}
		if (r != WAIT_ABANDONED_0 || !ReleaseMutex(m1) || !ReleaseMutex(m2) ||
		    WaitForSingleObject(thread, 20000) != WAIT_OBJECT_0 || !CloseHandle(thread)) {
			fprintf(stderr, "thread_end_abandon_race: round %ld: M2 gave %#lx\n", i,
				(unsigned long)r);
			return 2;
		}
		/* The ones between, abandoned meanwhile: taken and given back. */
		for (int k = 1; k < MUTEXES - 1; k++)
			if (WaitForSingleObject(mutexes[k], 20000) != WAIT_ABANDONED_0 ||
			    !ReleaseMutex(mutexes[k])) {
				fprintf(stderr, "thread_end_abandon_race: round %ld: mutex %d\n", i, k);
				return 2;
			}
	}
	printf("%ld rounds of a thread ending with %d mutexes: the last found still owned after M1 "
	       "was taken abandoned %ld times", rounds, MUTEXES, violations);
	if (first >= 0)
		printf(" (first in round %ld)", first);
	printf("\n");
	return violations ? 1 : 0;
}
