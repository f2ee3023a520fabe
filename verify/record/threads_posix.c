/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recorder's threads on POSIX: each thread announces its end, and
 * vr_posix_wait_exit joins it (so whatever runs at a thread's exit, such as
 * the Win32 layer abandoning its mutexes, is over).
 */
#include <pthread.h>
#include <stdlib.h>

#include "recorder.h"

struct posix_threads {
	pthread_mutex_t lock;
	pthread_cond_t ended;
	uint32_t queue[2 * VW_MAX_THREADS];
	uint32_t head, tail;
	pthread_t ids[VW_MAX_THREADS];
};

static void *entry(void *arg)
{
	struct vr_worker *w = arg;
	struct posix_threads *p = w->run->threads;

	vr_worker_run(w);
	pthread_mutex_lock(&p->lock);
	p->queue[p->tail++ % (2 * VW_MAX_THREADS)] = w->slot;
	pthread_cond_signal(&p->ended);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int vr_posix_init(struct vr_run *run)
{
	struct posix_threads *p = calloc(1, sizeof(*p));

	if (!p)
		return -1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->ended, NULL);
	run->threads = p;
	return 0;
}

void vr_posix_fini(struct vr_run *run)
{
	struct posix_threads *p = run->threads;

	if (!p)
		return;
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->ended);
	free(p);
	run->threads = NULL;
}

int vr_posix_spawn(struct vr_run *run, struct vr_worker *w)
{
	struct posix_threads *p = run->threads;

	return pthread_create(&p->ids[w->slot], NULL, entry, w) ? -1 : 0;
}

struct vr_worker *vr_posix_wait_exit(struct vr_run *run)
{
	struct posix_threads *p = run->threads;
	uint32_t slot;

	pthread_mutex_lock(&p->lock);
	while (p->head == p->tail)
		pthread_cond_wait(&p->ended, &p->lock);
	slot = p->queue[p->head++ % (2 * VW_MAX_THREADS)];
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->ids[slot], NULL);
	return &run->workers[slot];
}
