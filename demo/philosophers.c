/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Dining philosophers.  Each fork is a mutex; a philosopher takes both of
 * his forks at once with WaitForMultipleObjects(2, forks, TRUE, ...), so
 * nobody ever holds one fork while waiting for the other, and there is no
 * deadlock.  Every meal checks that no neighbour holds the same fork.
 */
#include "demo.h"

#define PHILOSOPHERS 5
#define MEALS        60

static HANDLE forks[PHILOSOPHERS];
static volatile int fork_user[PHILOSOPHERS];
static unsigned int meals[PHILOSOPHERS];
static unsigned int conflicts;
static HANDLE start;

static DWORD WINAPI philosopher(LPVOID parameter)
{
	int me = (int)(intptr_t)parameter;
	int left = me, right = (me + 1) % PHILOSOPHERS;
	HANDLE mine[2] = { forks[left], forks[right] };

	DEMO_CHECK(WaitForSingleObject(start, INFINITE) == WAIT_OBJECT_0, "wait start");
	for (int i = 0; i < MEALS; i++) {
		DWORD r = WaitForMultipleObjects(2, mine, TRUE, 60000);

		DEMO_CHECK(r == WAIT_OBJECT_0, "philosopher %d takes both forks", me);
		if (fork_user[left] != -1 || fork_user[right] != -1)
			conflicts++;
		fork_user[left] = fork_user[right] = me;
		meals[me]++;
		fork_user[left] = fork_user[right] = -1;
		DEMO_CHECK(ReleaseMutex(mine[1]) && ReleaseMutex(mine[0]), "put the forks down");
		if (i % 8 == 0)
			Sleep(0);
	}
	return 0;
}

int main(void)
{
	HANDLE threads[PHILOSOPHERS];
	DWORD r;

	demo_init();
	printf("dining philosophers: %d philosophers, %d meals each, both forks at once\n",
	       PHILOSOPHERS, MEALS);
	start = CreateEventA(NULL, TRUE, FALSE, NULL);
	DEMO_CHECK(start != NULL, "CreateEvent");
	for (int i = 0; i < PHILOSOPHERS; i++) {
		forks[i] = CreateMutexA(NULL, FALSE, NULL);
		DEMO_CHECK(forks[i] != NULL, "CreateMutex");
		fork_user[i] = -1;
	}
	for (int i = 0; i < PHILOSOPHERS; i++)
		threads[i] = demo_thread(philosopher, (LPVOID)(intptr_t)i);
	DEMO_CHECK(SetEvent(start), "SetEvent start");

	r = WaitForMultipleObjects(PHILOSOPHERS, threads, TRUE, 120000);
	printf("all philosophers finished: %s\n", r == WAIT_OBJECT_0 ? "yes, no deadlock" : "NO");
	DEMO_CHECK(r == WAIT_OBJECT_0, "deadlock or failure");
	for (int i = 0; i < PHILOSOPHERS; i++)
		printf("philosopher %d ate %u times\n", i, meals[i]);
	printf("a fork held by two philosophers at once: %s\n", conflicts ? "yes" : "never");

	/* Every fork is free again: one wait takes all five at once. */
	r = WaitForMultipleObjects(PHILOSOPHERS, forks, TRUE, 0);
	printf("main takes all %d forks at once: %s\n", PHILOSOPHERS,
	       r == WAIT_OBJECT_0 ? "WAIT_OBJECT_0" : "failed");
	for (int i = 0; i < PHILOSOPHERS; i++) {
		ReleaseMutex(forks[i]);
		CloseHandle(forks[i]);
		CloseHandle(threads[i]);
	}
	CloseHandle(start);
	return conflicts == 0 ? 0 : 1;
}
