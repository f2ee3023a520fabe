/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Win32 API as a recorder backend, one source for three builds
 * (include/winsync/win32.h): natively on libwinsync-win32, and in the
 * Windows recorder on kernel32 (Wine's objects, stock or with the winsync
 * backend) or on winsync.dll (WINSYNC_WIN32_REPLACE).
 *
 * Threads are CreateThread's, and a death is the thread's end: NT abandons
 * the mutexes a thread owns when it ends, before its handle is signaled, so
 * the thread that continues the script (started once the handle is
 * signaled) records the death's return.  Win32 has no reads, no alert and
 * no ws_mutex_kill, and SetEvent, ResetEvent, PulseEvent and ReleaseMutex
 * do not report the previous state: those values are recorded as unknown.
 */
#include <stdio.h>
#include <stdlib.h>

#include <winsync/win32.h>

#include "backends.h"

struct win32 {
	HANDLE handles[VW_MAX_OBJECTS];
	HANDLE threads[VW_MAX_THREADS];   /* live threads, by slot (NULL: none) */
};

static int win32_open(struct vr_run *run)
{
	struct win32 *p = calloc(1, sizeof(*p));

	if (!p)
		return -1;
	for (uint32_t i = 0; i < run->w->config.objects; i++) {
		const struct nt_object *o = &run->w->objects[i];

		if (o->type == NT_EVENT)
			p->handles[i] = CreateEventA(NULL, (o->flags & NT_MANUAL) != 0,
						     (o->flags & NT_SIGNALED) != 0, NULL);
		else if (o->type == NT_SEM)
			p->handles[i] = CreateSemaphoreA(NULL, (LONG)o->count, (LONG)o->max, NULL);
		else
			p->handles[i] = CreateMutexA(NULL, FALSE, NULL);
		if (!p->handles[i] || o->owner) {
			fprintf(stderr, "winsync-verify: win32: creating object %u: error %lu\n", (unsigned)i,
				(unsigned long)GetLastError());
			free(p);
			return -1;
		}
	}
	run->priv = p;
	return 0;
}

static void win32_close(struct vr_run *run)
{
	struct win32 *p = run->priv;

	/* Handles the workload closed fail here: that is fine. */
	for (uint32_t i = 0; i < run->w->config.objects; i++)
		CloseHandle(p->handles[i]);
	free(p);
	run->priv = NULL;
}

static void failed(struct vh_op *op)
{
	DWORD error = GetLastError();

	switch (error) {
	case ERROR_INVALID_HANDLE: op->result.status = NT_EBADF; break;
	case ERROR_NOT_OWNER: op->result.status = NT_EPERM; break;
	case ERROR_TOO_MANY_POSTS: op->result.status = NT_EOVERFLOW; break;
	case ERROR_INVALID_PARAMETER: op->result.status = NT_EINVAL; break;
	default: op->error = error ? (int32_t)error : -1; break;
	}
}

static void win32_call(struct vr_worker *w, const struct nt_op *call, uint32_t timeout_ms, struct vh_op *op)
{
	struct win32 *p = w->run->priv;
	HANDLE h = call->nobj ? p->handles[call->obj[0]] : NULL;
	BOOL ok;

	op->result.status = NT_OK;
	switch (call->kind) {
	case NT_SET:
	case NT_RESET:
	case NT_PULSE:
		ok = call->kind == NT_SET ? SetEvent(h) : call->kind == NT_RESET ? ResetEvent(h) : PulseEvent(h);
		if (!ok)
			failed(op);
		return;
	case NT_RELEASE: {
		LONG prev = 0;

		if (!ReleaseSemaphore(h, (LONG)call->arg, &prev)) {
			failed(op);
			return;
		}
		op->result.v[0] = (uint32_t)prev;
		op->result.known = 1;
		return;
	}
	case NT_UNLOCK:
		if (!ReleaseMutex(h))
			failed(op);
		return;
	case NT_CLOSE:
		if (!CloseHandle(h))
			failed(op);
		return;
	case NT_WAIT_ANY:
	case NT_WAIT_ALL: {
		HANDLE handles[NT_MAX_WAIT];
		DWORD ms = call->timeout == NT_POLL ? 0 : call->timeout == NT_INFINITE ? INFINITE : timeout_ms;
		DWORD r;

		for (unsigned k = 0; k < call->nobj; k++)
			handles[k] = p->handles[call->obj[k]];
		r = WaitForMultipleObjects(call->nobj, handles, call->kind == NT_WAIT_ALL, ms);
		if (r == WAIT_TIMEOUT) {
			op->result.status = NT_TIMEOUT;
		} else if (r < WAIT_OBJECT_0 + call->nobj) {
			op->result.v[0] = call->kind == NT_WAIT_ALL ? 0 : r - WAIT_OBJECT_0;
			op->result.known = 1;
		} else if (r >= WAIT_ABANDONED_0 && r < WAIT_ABANDONED_0 + call->nobj) {
			/* A wait-all's index is that of some abandoned mutex: the model's is 0. */
			op->result.status = NT_ABANDONED_WAIT;
			op->result.v[0] = call->kind == NT_WAIT_ALL ? 0 : r - WAIT_ABANDONED_0;
			op->result.known = 1;
		} else if (r == WAIT_FAILED) {
			failed(op);
		} else {
			op->error = (int32_t)r;
		}
		return;
	}
	default:
		/* No reads, kills or calls to die in Win32: the workload has none. */
		op->error = -1;
		return;
	}
}

static DWORD WINAPI entry(LPVOID arg)
{
	vr_worker_run(arg);
	return 0;
}

static int win32_spawn(struct vr_run *run, struct vr_worker *w)
{
	struct win32 *p = run->priv;

	p->threads[w->slot] = CreateThread(NULL, 0, entry, w, 0, NULL);
	return p->threads[w->slot] ? 0 : -1;
}

static struct vr_worker *win32_wait_exit(struct vr_run *run)
{
	struct win32 *p = run->priv;
	HANDLE live[VW_MAX_THREADS];
	uint32_t slots[VW_MAX_THREADS], n = 0;
	DWORD r;

	for (uint32_t t = 0; t < run->w->config.threads; t++) {
		if (p->threads[t]) {
			slots[n] = t;
			live[n++] = p->threads[t];
		}
	}
	if (!n)
		return NULL;
	r = WaitForMultipleObjects(n, live, FALSE, INFINITE);
	if (r >= WAIT_OBJECT_0 + n)
		return NULL;
	CloseHandle(live[r - WAIT_OBJECT_0]);
	p->threads[slots[r - WAIT_OBJECT_0]] = NULL;
	return &run->workers[slots[r - WAIT_OBJECT_0]];
}

const struct vr_backend vr_backend_win32 = {
	.name = "win32",
	.caps = 0,
	.die_exits = true,
	.open = win32_open,
	.close = win32_close,
	.call = win32_call,
	.spawn = win32_spawn,
	.wait_exit = win32_wait_exit,
};
