/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A worker pool.  The dispatcher hands out jobs and waits with one
 * WaitForMultipleObjects (any) on all 64 objects it cares about: the 32
 * workers' "done" events and the 32 worker thread handles (a thread handle
 * that becomes signaled here means a worker died).  A worker reports a job
 * done and waits for the next with SignalObjectAndWait.  Results are printed in
 * job order, so the output does not depend on which worker did what.
 */
#include "demo.h"

#define WORKERS 32
#define JOBS    96
#define QUIT    (-1)

struct worker {
	HANDLE go;   /* auto-reset: a job is waiting in `job` */
	HANDLE done; /* auto-reset: the job is finished */
	HANDLE thread;
	int job;
	unsigned int jobs_done;
};

static struct worker workers[WORKERS];
static unsigned int steps[JOBS];

/* The job: the number of Collatz steps from n down to 1. */
static unsigned int collatz(unsigned long long n)
{
	unsigned int count = 0;

	while (n != 1) {
		n = n % 2 ? 3 * n + 1 : n / 2;
		count++;
	}
	return count;
}

static unsigned long long job_input(int job)
{
	return 1000ull * (unsigned long long)job + 27;
}

static DWORD WINAPI worker_main(LPVOID parameter)
{
	struct worker *w = parameter;

	DEMO_CHECK(WaitForSingleObject(w->go, INFINITE) == WAIT_OBJECT_0, "worker wait");
	while (w->job != QUIT) {
		steps[w->job] = collatz(job_input(w->job));
		w->jobs_done++;
		/* Report the job done and wait for the next one, in one call. */
		DEMO_CHECK(SignalObjectAndWait(w->done, w->go, INFINITE, FALSE) == WAIT_OBJECT_0,
			   "worker done, wait for more");
	}
	return 0;
}

int main(void)
{
	HANDLE watch[2 * WORKERS + 1];
	HANDLE threads[WORKERS];
	unsigned int next_job = 0, finished = 0, total = 0, running = WORKERS;
	char name[32];
	DWORD r;

	demo_init();
	printf("worker pool: %d workers, %d jobs, the dispatcher waits on %d objects\n",
	       WORKERS, JOBS, 2 * WORKERS);
	for (int i = 0; i < WORKERS; i++) {
		workers[i].go = CreateEventA(NULL, FALSE, FALSE, NULL);
		workers[i].done = CreateEventA(NULL, FALSE, FALSE, NULL);
		DEMO_CHECK(workers[i].go && workers[i].done, "CreateEvent");
		workers[i].thread = demo_thread(worker_main, &workers[i]);
		watch[i] = workers[i].done;
		watch[WORKERS + i] = workers[i].thread;
	}

	/* Every worker starts with a job; then each finished one gets the next. */
	for (int i = 0; i < WORKERS && next_job < JOBS; i++) {
		workers[i].job = (int)next_job++;
		DEMO_CHECK(SetEvent(workers[i].go), "SetEvent go");
	}
	while (finished < JOBS) {
		r = WaitForMultipleObjects(2 * WORKERS, watch, FALSE, 60000);
		DEMO_CHECK(r < WAIT_OBJECT_0 + WORKERS, "dispatcher wait: %s",
			   demo_wait_name(r, 2 * WORKERS, name, sizeof(name)));
		finished++;
		if (next_job < JOBS) {
			struct worker *w = &workers[r - WAIT_OBJECT_0];

			w->job = (int)next_job++;
			DEMO_CHECK(SetEvent(w->go), "SetEvent go");
		}
	}
	for (int i = 0; i < JOBS; i++)
		printf("job %2d: collatz(%llu) takes %u steps\n", i, job_input(i), steps[i]);

	/* Shut down, and watch the thread handles become signaled one by one. */
	for (int i = 0; i < WORKERS; i++) {
		workers[i].job = QUIT;
		DEMO_CHECK(SetEvent(workers[i].go), "SetEvent quit");
		threads[i] = workers[i].thread;
	}
	while (running > 0) {
		r = WaitForMultipleObjects(running, threads, FALSE, 60000);
		DEMO_CHECK(r < WAIT_OBJECT_0 + running, "waiting for the workers: %s",
			   demo_wait_name(r, running, name, sizeof(name)));
		threads[r - WAIT_OBJECT_0] = threads[--running];
	}
	for (int i = 0; i < WORKERS; i++)
		total += workers[i].jobs_done;
	printf("all %d worker threads exited; %u jobs done in all\n", WORKERS, total);

	/* A wait on more than MAXIMUM_WAIT_OBJECTS handles is refused. */
	watch[2 * WORKERS] = workers[0].go;
	SetLastError(ERROR_SUCCESS);
	r = WaitForMultipleObjects(2 * WORKERS + 1, watch, FALSE, 0);
	printf("WaitForMultipleObjects on %d handles: %s, %s\n", 2 * WORKERS + 1,
	       demo_wait_name(r, 2 * WORKERS + 1, name, sizeof(name)),
	       demo_error_name(GetLastError()));
	r = WaitForMultipleObjects(WORKERS, watch + WORKERS, TRUE, 0);
	printf("wait-all on the %d exited threads: %s\n", WORKERS,
	       demo_wait_name(r, WORKERS, name, sizeof(name)));

	for (int i = 0; i < WORKERS; i++) {
		CloseHandle(workers[i].go);
		CloseHandle(workers[i].done);
		CloseHandle(workers[i].thread);
	}
	return total == JOBS ? 0 : 1;
}
