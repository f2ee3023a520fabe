/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The benchmark, in operations per second:
 *   uncontended   SetEvent + WaitForSingleObject(event, 0) on an auto-reset
 *                 event nobody else uses (one operation: the pair)
 *   ping-pong     two threads hand the turn back and forth through two
 *                 auto-reset events (one operation: a round trip)
 *   wait-64       WaitForMultipleObjects (any, 0 ms) over 64 events of which
 *                 only the last is signaled
 * Each runs three rounds of about the given time (argv[1], milliseconds,
 * default 500) and reports the median round.
 * Output lines: "bench NAME OPS_PER_SECOND".
 */
#include "demo.h"

static HANDLE ping, pong;
static volatile LONG stop_pong;

static double rate(unsigned long long ops, unsigned long long ns)
{
	return ns ? (double)ops * 1e9 / (double)ns : 0.0;
}

/* Runs `step` in batches until `ms` have passed; returns operations per second. */
static double round_rate(void (*step)(void), unsigned int ms)
{
	unsigned long long start = demo_now_ns(), now, ops = 0, batch = 1;
	unsigned long long budget = (unsigned long long)ms * 1000000ull;

	for (;;) {
		unsigned long long batch_start = demo_now_ns();

		for (unsigned long long i = 0; i < batch; i++)
			step();
		ops += batch;
		now = demo_now_ns();
		if (now - start >= budget)
			return rate(ops, now - start);
		/* Batches of about a millisecond: slow variants do not overshoot. */
		if (now - batch_start < 1000000ull && batch < (1ull << 20))
			batch *= 2;
	}
}

/* The median of three rounds. */
static double measure(void (*step)(void), unsigned int ms)
{
	double r[3], t;

	for (int i = 0; i < 3; i++)
		r[i] = round_rate(step, ms);
	if (r[0] > r[1]) { t = r[0]; r[0] = r[1]; r[1] = t; }
	if (r[1] > r[2]) { t = r[1]; r[1] = r[2]; r[2] = t; }
	if (r[0] > r[1]) { t = r[0]; r[0] = r[1]; r[1] = t; }
	return r[1];
}

static HANDLE uncontended_event;

static void uncontended_step(void)
{
	DEMO_CHECK(SetEvent(uncontended_event), "SetEvent");
	DEMO_CHECK(WaitForSingleObject(uncontended_event, 0) == WAIT_OBJECT_0, "wait 0 ms");
}

static void ping_pong_step(void)
{
	DEMO_CHECK(SetEvent(ping), "SetEvent ping");
	DEMO_CHECK(WaitForSingleObject(pong, INFINITE) == WAIT_OBJECT_0, "wait pong");
}

static DWORD WINAPI ponger(LPVOID parameter)
{
	(void)parameter;
	for (;;) {
		DEMO_CHECK(WaitForSingleObject(ping, INFINITE) == WAIT_OBJECT_0, "wait ping");
		if (stop_pong)
			return 0;
		DEMO_CHECK(SetEvent(pong), "SetEvent pong");
	}
}

static HANDLE many[MAXIMUM_WAIT_OBJECTS];

static void wait_many_step(void)
{
	DEMO_CHECK(WaitForMultipleObjects(MAXIMUM_WAIT_OBJECTS, many, FALSE, 0) ==
		   WAIT_OBJECT_0 + MAXIMUM_WAIT_OBJECTS - 1, "wait on 64");
}

int main(int argc, char **argv)
{
	unsigned int ms = argc > 1 ? (unsigned int)atoi(argv[1]) : 500;
	HANDLE thread;

	demo_init();
	if (ms == 0)
		ms = 500;

	uncontended_event = CreateEventA(NULL, FALSE, FALSE, NULL);
	DEMO_CHECK(uncontended_event != NULL, "CreateEvent");
	printf("bench uncontended %.0f\n", measure(uncontended_step, ms));
	CloseHandle(uncontended_event);

	ping = CreateEventA(NULL, FALSE, FALSE, NULL);
	pong = CreateEventA(NULL, FALSE, FALSE, NULL);
	DEMO_CHECK(ping && pong, "CreateEvent");
	thread = demo_thread(ponger, NULL);
	printf("bench ping-pong %.0f\n", measure(ping_pong_step, ms));
	stop_pong = 1;
	DEMO_CHECK(SetEvent(ping), "SetEvent ping");
	demo_join(&thread, 1);
	CloseHandle(ping);
	CloseHandle(pong);

	for (int i = 0; i < MAXIMUM_WAIT_OBJECTS; i++) {
		many[i] = CreateEventA(NULL, TRUE, i == MAXIMUM_WAIT_OBJECTS - 1, NULL);
		DEMO_CHECK(many[i] != NULL, "CreateEvent");
	}
	printf("bench wait-64 %.0f\n", measure(wait_many_step, ms));
	for (int i = 0; i < MAXIMUM_WAIT_OBJECTS; i++)
		CloseHandle(many[i]);
	return 0;
}
