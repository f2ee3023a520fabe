/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The native core as a recorder backend: every call of the model is one
 * call of include/winsync.h, with the history's owner ids as winsync owner
 * ids, and a death is ws_owner_died() of the dying owner.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <winsync.h>

#include "backends.h"

struct core {
	ws_arena *arena;
	ws_handle handles[VW_MAX_OBJECTS];
};

static int core_open(struct vr_run *run)
{
	struct core *c = calloc(1, sizeof(*c));
	int ret;

	if (!c)
		return -1;
	ret = ws_arena_create(NULL, 0, &c->arena);
	for (uint32_t i = 0; !ret && i < run->w->config.objects; i++) {
		const struct nt_object *o = &run->w->objects[i];

		if (o->type == NT_EVENT)
			ret = ws_event_create(c->arena, o->flags & NT_MANUAL, o->flags & NT_SIGNALED, &c->handles[i]);
		else if (o->type == NT_SEM)
			ret = ws_sem_create(c->arena, o->count, o->max, &c->handles[i]);
		else
			ret = ws_mutex_create(c->arena, o->owner, o->count, &c->handles[i]);
	}
	if (ret) {
		fprintf(stderr, "winsync-verify: core: creating the objects: error %d\n", ret);
		if (c->arena)
			ws_arena_close(c->arena);
		free(c);
		return -1;
	}
	run->priv = c;
	return 0;
}

static void core_close(struct vr_run *run)
{
	struct core *c = run->priv;

	ws_arena_close(c->arena);
	free(c);
	run->priv = NULL;
}

/* The model's status for a return value; false for what NT never returns. */
static bool status_of(int ret, struct vh_op *op)
{
	switch (ret) {
	case 0: op->result.status = NT_OK; return true;
	case -EOWNERDEAD: op->result.status = NT_ABANDONED_WAIT; return true;
	case -ETIMEDOUT: op->result.status = NT_TIMEOUT; return true;
	case -EBADF: op->result.status = NT_EBADF; return true;
	case -EPERM: op->result.status = NT_EPERM; return true;
	case -EOVERFLOW: op->result.status = NT_EOVERFLOW; return true;
	case -ECANCELED: op->result.status = NT_ECANCELED; return true;
	case -EINVAL: op->result.status = NT_EINVAL; return true;
	default: op->error = -ret; return false;
	}
}

static void value(struct vh_op *op, unsigned i, uint32_t v)
{
	op->result.v[i] = v;
	op->result.known |= (uint8_t)(1u << i);
}

static void core_call(struct vr_worker *w, const struct nt_op *call, uint32_t timeout_ms, struct vh_op *op)
{
	struct core *c = w->run->priv;
	ws_handle h = call->nobj ? c->handles[call->obj[0]] : 0;
	int ret = -EINVAL;

	switch (call->kind) {
	case NT_SET:
	case NT_RESET:
	case NT_PULSE: {
		bool was = false;

		ret = call->kind == NT_SET ? ws_event_set(c->arena, h, &was)
		      : call->kind == NT_RESET ? ws_event_reset(c->arena, h, &was)
		      : ws_event_pulse(c->arena, h, &was);
		if (status_of(ret, op) && ret == 0)
			value(op, 0, was);
		return;
	}
	case NT_RELEASE: {
		uint32_t prev = 0;

		ret = ws_sem_release(c->arena, h, call->arg, &prev);
		if (status_of(ret, op) && ret == 0)
			value(op, 0, prev);
		return;
	}
	case NT_UNLOCK: {
		uint32_t prev = 0;

		ret = ws_mutex_unlock(c->arena, h, call->owner, &prev);
		if (status_of(ret, op) && ret == 0)
			value(op, 0, prev);
		return;
	}
	case NT_KILL:
		status_of(ws_mutex_kill(c->arena, h, call->owner), op);
		return;
	case NT_READ: {
		const struct nt_object *o = &w->run->w->objects[call->obj[0]];
		uint32_t a = 0, b = 0;

		if (o->type == NT_EVENT) {
			bool signaled = false, manual = false;

			ret = ws_event_read(c->arena, h, &signaled, &manual);
			a = signaled;
			b = manual;
		} else if (o->type == NT_SEM) {
			ret = ws_sem_read(c->arena, h, &a, &b);
		} else {
			ret = ws_mutex_read(c->arena, h, &a, &b);
		}
		if (status_of(ret, op) && (ret == 0 || ret == -EOWNERDEAD)) {
			value(op, 0, a);
			value(op, 1, b);
		}
		return;
	}
	case NT_CLOSE:
		status_of(ws_close(c->arena, h), op);
		return;
	case NT_DIE:
		status_of(ws_owner_died(c->arena, call->owner), op);
		return;
	case NT_WAIT_ANY:
	case NT_WAIT_ALL: {
		ws_handle objects[NT_MAX_WAIT];
		struct timespec deadline = { 0, 0 };
		struct ws_wait wait = { objects, call->nobj, call->owner, 0, 0, &deadline };
		uint32_t index = 0;

		for (unsigned k = 0; k < call->nobj; k++)
			objects[k] = c->handles[call->obj[k]];
		if (call->has_alert)
			wait.alert = c->handles[call->alert];
		if (call->timeout == NT_INFINITE) {
			wait.deadline = NULL;
		} else if (call->timeout == NT_FINITE) {
			clock_gettime(CLOCK_MONOTONIC, &deadline);
			deadline.tv_sec += timeout_ms / 1000;
			deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
			if (deadline.tv_nsec >= 1000000000) {
				deadline.tv_nsec -= 1000000000;
				deadline.tv_sec++;
			}
		}
		ret = call->kind == NT_WAIT_ANY ? ws_wait_any(c->arena, &wait, &index)
						: ws_wait_all(c->arena, &wait, &index);
		if (status_of(ret, op) && (ret == 0 || ret == -EOWNERDEAD))
			value(op, 0, index);
		return;
	}
	default:
		op->error = EINVAL;
		return;
	}
}

const struct vr_backend vr_backend_core = {
	.name = "core",
	.caps = VW_CAP_READ | VW_CAP_KILL | VW_CAP_ALERT | VW_CAP_PREV,
	.die_exits = false,
	.open = core_open,
	.close = core_close,
	.call = core_call,
};
