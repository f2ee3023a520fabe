/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The native Linux variant of the Win32 layer (libwinsync-win32.so):
 * threads are pthreads, thread ids are kernel thread ids, the last error
 * lives in thread-local storage, and there are no kernel32 handles.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

static _Thread_local DWORD last_error;
static _Thread_local struct ws32_tls *self;

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* Runs at the end of every thread that used winsync: abandons its mutexes. */
static void on_thread_exit(void *data)
{
	struct ws32_tls *tls = data;

	ws32_thread_exit(tls);
	self = NULL;
	free(tls);
}

static void create_exit_key(void)
{
	pthread_key_create(&exit_key, on_thread_exit);
}

static void forget_self(void)
{
	/* A forked child is a new thread: its id differs. */
	if (self)
		self->id = (DWORD)syscall(SYS_gettid);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, forget_self);
}

struct ws32_tls *ws32_tls(void)
{
	struct ws32_tls *tls = self;

	if (tls)
		return tls;
	pthread_once(&exit_key_once, create_exit_key);
	pthread_once(&atfork_once, register_atfork);
	tls = calloc(1, sizeof(*tls));
	if (!tls)
		return NULL;
	tls->id = (DWORD)syscall(SYS_gettid);
	pthread_setspecific(exit_key, tls);
	self = tls;
	return tls;
}

void ws32_set_last_error(DWORD error)
{
	last_error = error;
}

DWORD WINAPI winsync_GetLastError(void)
{
	return last_error;
}

void WINAPI winsync_SetLastError(DWORD error)
{
	last_error = error;
}

void ws32_clock_now(struct timespec *now)
{
	clock_gettime(CLOCK_MONOTONIC, now);
}

void ws32_yield(void)
{
	sched_yield();
}

DWORD WINAPI winsync_GetCurrentThreadId(void)
{
	struct ws32_tls *tls = ws32_tls();

	return tls ? tls->id : (DWORD)syscall(SYS_gettid);
}

void WINAPI winsync_Sleep(DWORD milliseconds)
{
	struct timespec left = { milliseconds / 1000, (long)(milliseconds % 1000) * 1000000 };

	if (milliseconds == 0) {
		sched_yield();
		return;
	}
	if (milliseconds == INFINITE) {
		for (;;)
			pause();
	}
	while (nanosleep(&left, &left) < 0 && errno == EINTR)
		;
}

struct start {
	struct ws32_thread *thread;
	DWORD id;
	sem_t started;
};

static void *thread_main(void *data)
{
	struct start *start = data;
	struct ws32_thread *thread = start->thread;
	struct ws32_tls *tls = ws32_tls();

	start->id = tls ? tls->id : (DWORD)syscall(SYS_gettid);
	sem_post(&start->started);
	ws32_thread_run(thread);
	return NULL;
}

bool ws32_start_thread(struct ws32_thread *thread, SIZE_T stack_size, DWORD *thread_id,
		       DWORD *error)
{
	struct start start = { .thread = thread };
	pthread_attr_t attr;
	pthread_t id;
	int ret;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (stack_size)
		pthread_attr_setstacksize(&attr, stack_size < (SIZE_T)PTHREAD_STACK_MIN
							 ? (SIZE_T)PTHREAD_STACK_MIN : stack_size);
	sem_init(&start.started, 0, 0);
	ret = pthread_create(&id, &attr, thread_main, &start);
	pthread_attr_destroy(&attr);
	if (ret) {
		sem_destroy(&start.started);
		*error = ret == EAGAIN ? ERROR_NOT_ENOUGH_MEMORY : ERROR_INVALID_PARAMETER;
		return false;
	}
	/* lpThreadId is the new thread's kernel id, known once it runs. */
	while (sem_wait(&start.started) < 0 && errno == EINTR)
		;
	sem_destroy(&start.started);
	*thread_id = start.id;
	return true;
}

void ws32_release_os_thread(struct ws32_thread *thread)
{
	(void)thread; /* detached: nothing kept */
}

bool ws32_foreign_close(HANDLE handle, BOOL *result)
{
	(void)handle, (void)result;
	return false;
}

bool ws32_foreign_wait(DWORD count, const HANDLE *handles, BOOL wait_all, DWORD milliseconds,
		       DWORD *result)
{
	(void)count, (void)handles, (void)wait_all, (void)milliseconds, (void)result;
	return false;
}
