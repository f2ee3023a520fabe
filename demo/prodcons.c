/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A bounded producer/consumer queue: two semaphores count the free and the
 * filled slots of a ring of 8, a mutex guards the ring.  Three producers put
 * numbered items in, three consumers take them out; every item must come
 * out exactly once, and the queue never holds more than its 8 slots.
 */
#include "demo.h"

#define SLOTS      8
#define PRODUCERS  3
#define CONSUMERS  3
#define PER_PRODUCER 300
#define ITEMS      (PRODUCERS * PER_PRODUCER)
#define STOP       (-1)

static HANDLE free_slots, filled_slots, ring_lock;
static int ring[SLOTS];
static unsigned int head, tail, used, most_used;
static unsigned char seen[ITEMS];
static unsigned long long consumed_sum;
static unsigned int consumed;

static void put(int item)
{
	DEMO_CHECK(WaitForSingleObject(free_slots, INFINITE) == WAIT_OBJECT_0, "wait free slot");
	DEMO_CHECK(WaitForSingleObject(ring_lock, INFINITE) == WAIT_OBJECT_0, "wait ring lock");
	ring[tail] = item;
	tail = (tail + 1) % SLOTS;
	if (++used > most_used)
		most_used = used;
	DEMO_CHECK(ReleaseMutex(ring_lock), "release ring lock");
	DEMO_CHECK(ReleaseSemaphore(filled_slots, 1, NULL), "release filled slot");
}

static int take(void)
{
	int item;

	DEMO_CHECK(WaitForSingleObject(filled_slots, INFINITE) == WAIT_OBJECT_0, "wait filled slot");
	DEMO_CHECK(WaitForSingleObject(ring_lock, INFINITE) == WAIT_OBJECT_0, "wait ring lock");
	item = ring[head];
	head = (head + 1) % SLOTS;
	used--;
	if (item != STOP) {
		seen[item]++;
		consumed_sum += (unsigned long long)item;
		consumed++;
	}
	DEMO_CHECK(ReleaseMutex(ring_lock), "release ring lock");
	DEMO_CHECK(ReleaseSemaphore(free_slots, 1, NULL), "release free slot");
	return item;
}

static DWORD WINAPI producer(LPVOID parameter)
{
	int first = (int)(intptr_t)parameter * PER_PRODUCER;

	for (int i = 0; i < PER_PRODUCER; i++)
		put(first + i);
	return 0;
}

static DWORD WINAPI consumer(LPVOID parameter)
{
	(void)parameter;
	while (take() != STOP)
		;
	return 0;
}

int main(void)
{
	HANDLE producers[PRODUCERS], consumers[CONSUMERS];
	unsigned long long expected_sum = 0;
	unsigned int once = 0;
	LONG previous = -1;
	BOOL ok;

	demo_init();
	printf("producer/consumer: %d producers, %d consumers, a ring of %d slots\n",
	       PRODUCERS, CONSUMERS, SLOTS);
	free_slots = CreateSemaphoreA(NULL, SLOTS, SLOTS, NULL);
	filled_slots = CreateSemaphoreA(NULL, 0, SLOTS, NULL);
	ring_lock = CreateMutexA(NULL, FALSE, NULL);
	DEMO_CHECK(free_slots && filled_slots && ring_lock, "creating the objects");

	for (int i = 0; i < CONSUMERS; i++)
		consumers[i] = demo_thread(consumer, NULL);
	for (int i = 0; i < PRODUCERS; i++)
		producers[i] = demo_thread(producer, (LPVOID)(intptr_t)i);
	demo_join(producers, PRODUCERS);
	for (int i = 0; i < CONSUMERS; i++)
		put(STOP);
	demo_join(consumers, CONSUMERS);

	for (int i = 0; i < ITEMS; i++) {
		expected_sum += (unsigned long long)i;
		once += seen[i] == 1;
	}
	printf("produced %d items, consumed %u\n", ITEMS, consumed);
	printf("every item consumed exactly once: %s\n", once == ITEMS ? "yes" : "no");
	printf("sum of the items: %llu (expected %llu)\n", consumed_sum, expected_sum);
	printf("the ring never held more than %d: %s\n", SLOTS, most_used <= SLOTS ? "yes" : "no");

	/* The queue is empty again: all 8 slots free, none filled. */
	printf("wait on the filled-slot semaphore, 0 ms: %s\n",
	       WaitForSingleObject(filled_slots, 0) == WAIT_TIMEOUT ? "WAIT_TIMEOUT" : "signaled");
	SetLastError(ERROR_SUCCESS);
	ok = ReleaseSemaphore(free_slots, 1, &previous);
	printf("ReleaseSemaphore past the maximum: %s, %s\n", ok ? "TRUE" : "FALSE",
	       demo_error_name(GetLastError()));
	ok = ReleaseSemaphore(filled_slots, 3, &previous);
	printf("ReleaseSemaphore(filled, 3): %s, previous count %d\n", ok ? "TRUE" : "FALSE",
	       (int)previous);

	CloseHandle(free_slots);
	CloseHandle(filled_slots);
	CloseHandle(ring_lock);
	return consumed == ITEMS && once == ITEMS && most_used <= SLOTS ? 0 : 1;
}
