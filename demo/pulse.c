/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PulseEvent.  A pulse releases the threads already blocked on the event
 * (all of them for a manual-reset event, one for an auto-reset event) and
 * leaves it unsignaled: a thread that starts waiting after the pulse is not
 * released by it.  This is where esync and fsync differ from Windows.
 *
 * The waiters say they are about to block, and the pulse comes a second
 * later, so they are blocked by then, even on a slow emulated machine.
 */
#include "demo.h"

#define WAITERS 3

static HANDLE event, ready;

static DWORD WINAPI waiter(LPVOID parameter)
{
	(void)parameter;
	DEMO_CHECK(ReleaseSemaphore(ready, 1, NULL), "ReleaseSemaphore ready");
	return WaitForSingleObject(event, 60000);
}

static void start_waiters(HANDLE *threads)
{
	for (int i = 0; i < WAITERS; i++)
		threads[i] = demo_thread(waiter, NULL);
	for (int i = 0; i < WAITERS; i++)
		DEMO_CHECK(WaitForSingleObject(ready, 60000) == WAIT_OBJECT_0, "wait ready");
	Sleep(1000);
}

/*
 * How many waiters the last signal released.  Up to `expected` of them get
 * 30 s each to end (a slow machine must not make a correct run fail); then
 * 500 ms shows whether any more were released.  The ended ones move behind
 * the `*alive` ones still waiting.
 */
static unsigned int released_now(HANDLE *threads, unsigned int *alive, unsigned int expected)
{
	unsigned int ended = 0;

	while (*alive > 0) {
		DWORD r = WaitForMultipleObjects(*alive, threads, FALSE, ended < expected ? 30000 : 500);
		HANDLE t;
		DWORD code;

		if (r == WAIT_TIMEOUT)
			break;
		DEMO_CHECK(r < WAIT_OBJECT_0 + *alive, "wait on the waiters");
		DEMO_CHECK(GetExitCodeThread(threads[r], &code) && code == WAIT_OBJECT_0,
			   "a waiter's wait result");
		t = threads[r];
		threads[r] = threads[*alive - 1];
		threads[*alive - 1] = t;
		--*alive;
		ended++;
	}
	return ended;
}

int main(void)
{
	HANDLE threads[WAITERS];
	unsigned int released, alive;
	DWORD r;

	demo_init();
	printf("PulseEvent with %d waiters\n", WAITERS);
	ready = CreateSemaphoreA(NULL, 0, WAITERS, NULL);
	DEMO_CHECK(ready != NULL, "CreateSemaphore");

	/* Manual reset: every blocked waiter is released, the event ends unsignaled. */
	event = CreateEventA(NULL, TRUE, FALSE, NULL);
	DEMO_CHECK(event != NULL, "CreateEvent");
	start_waiters(threads);
	DEMO_CHECK(PulseEvent(event), "PulseEvent");
	alive = WAITERS;
	released = released_now(threads, &alive, WAITERS);
	printf("manual-reset: one PulseEvent released %u of %d blocked waiters\n", released,
	       WAITERS);
	r = WaitForSingleObject(event, 200);
	printf("manual-reset: a waiter that comes after the pulse: %s\n",
	       r == WAIT_TIMEOUT ? "WAIT_TIMEOUT, not released" : "released");
	demo_join(threads, WAITERS);
	CloseHandle(event);

	/* Auto reset: exactly one blocked waiter is released. */
	event = CreateEventA(NULL, FALSE, FALSE, NULL);
	DEMO_CHECK(event != NULL, "CreateEvent");
	start_waiters(threads);
	DEMO_CHECK(PulseEvent(event), "PulseEvent");
	alive = WAITERS;
	released = released_now(threads, &alive, 1);
	printf("auto-reset: one PulseEvent released %u of %d blocked waiters\n", released,
	       WAITERS);
	r = WaitForSingleObject(event, 200);
	printf("auto-reset: a waiter that comes after the pulse: %s\n",
	       r == WAIT_TIMEOUT ? "WAIT_TIMEOUT, not released" : "released");
	/* SetEvent on an auto-reset event releases one waiter at a time. */
	for (int i = 1; i < WAITERS; i++) {
		DEMO_CHECK(SetEvent(event), "SetEvent");
		released = released_now(threads, &alive, 1);
		printf("auto-reset: SetEvent %d released %u more\n", i, released);
	}
	demo_join(threads, WAITERS);

	/* A pulse with nobody waiting leaves nothing behind. */
	DEMO_CHECK(PulseEvent(event), "PulseEvent");
	r = WaitForSingleObject(event, 0);
	printf("a pulse with no waiter, then a wait: %s\n",
	       r == WAIT_TIMEOUT ? "WAIT_TIMEOUT" : "signaled");
	CloseHandle(event);
	CloseHandle(ready);
	return 0;
}
