/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test-only backends: a small implementation of NT's objects on one
 * pthread mutex, written apart from the model (a checker that accepted only
 * its own model's code would prove little), and the same with one fault
 * each, the approximations real backends have made:
 *
 *   toy-waitall-one-by-one   wait-all takes its objects one at a time and
 *                            gives them back when one is missing (fsync's
 *                            wait-all): others see the part taken
 *   toy-pulse-set-reset      PulseEvent is SetEvent, then ResetEvent: a
 *                            wait that starts in between is released
 *   toy-auto-wakes-all       an auto-reset event's hand-off goes to every
 *                            blocked wait, not one
 *   toy-mutex-no-recursion   a mutex acquired again by its owner is not
 *                            counted, so one release frees it
 *
 * Waits are queued in arrival order; a signal hands the object to the
 * waits it satisfies and wakes each.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends.h"
#include "platform.h"

enum fault {
	FAULT_NONE,
	FAULT_WAITALL_ONE_BY_ONE,
	FAULT_PULSE_SET_RESET,
	FAULT_AUTO_WAKES_ALL,
	FAULT_MUTEX_NO_RECURSION,
};

struct obj {
	uint8_t type;
	bool manual, signaled, abandoned, closed;
	uint32_t owner, count, max;
};

struct waiter {
	const struct nt_op *call;
	bool granted;
	uint8_t status;
	uint32_t index;
	pthread_cond_t cond;
	struct waiter *next, *prev;
};

struct toy {
	enum fault fault;
	pthread_mutex_t lock;
	pthread_cond_t changed;   /* any signal: for the faulty wait-all's retries */
	struct obj obj[VW_MAX_OBJECTS];
	uint32_t nobjects;
	struct waiter *head, *tail;
};

static bool ready(const struct obj *o, uint32_t owner)
{
	if (o->closed)
		return false;
	if (o->type == NT_EVENT)
		return o->signaled;
	if (o->type == NT_SEM)
		return o->count > 0;
	return o->owner == 0 || o->owner == owner;
}

static bool take(struct toy *t, struct obj *o, uint32_t owner)
{
	bool abandoned = false;

	if (o->type == NT_EVENT) {
		if (!o->manual)
			o->signaled = false;
	} else if (o->type == NT_SEM) {
		o->count--;
	} else {
		abandoned = o->abandoned;
		o->abandoned = false;
		if (o->owner == owner && o->count && t->fault == FAULT_MUTEX_NO_RECURSION)
			return abandoned;
		o->owner = owner;
		o->count++;
	}
	return abandoned;
}

/* What a wait acquires now: an index (nobj: the alert), or -1. */
static int pick(struct toy *t, const struct nt_op *c)
{
	unsigned i;

	if (c->kind == NT_WAIT_ANY) {
		for (i = 0; i < c->nobj; i++)
			if (ready(&t->obj[c->obj[i]], c->owner))
				return (int)i;
	} else {
		for (i = 0; i < c->nobj && ready(&t->obj[c->obj[i]], c->owner); i++)
			;
		if (i == c->nobj)
			return 0;
	}
	if (c->has_alert && ready(&t->obj[c->alert], c->owner))
		return c->nobj;
	return -1;
}

static uint8_t acquire(struct toy *t, const struct nt_op *c, int index)
{
	bool abandoned = false;

	if ((unsigned)index == c->nobj && c->has_alert)
		abandoned = take(t, &t->obj[c->alert], c->owner);
	else if (c->kind == NT_WAIT_ANY)
		abandoned = take(t, &t->obj[c->obj[index]], c->owner);
	else
		for (unsigned i = 0; i < c->nobj; i++)
			abandoned |= take(t, &t->obj[c->obj[i]], c->owner);
	return abandoned ? NT_ABANDONED_WAIT : NT_OK;
}

static void dequeue(struct toy *t, struct waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		t->head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		t->tail = w->prev;
}

static void grant(struct waiter *w, uint8_t status, uint32_t index)
{
	w->granted = true;
	w->status = status;
	w->index = index;
	pthread_cond_signal(&w->cond);
}

/* Hands what is ready to the blocked waits, in arrival order.  `changed`: the object signaled. */
static void handoff(struct toy *t, uint32_t changed)
{
	struct obj *o = &t->obj[changed];
	bool wakes_all = t->fault == FAULT_AUTO_WAKES_ALL && o->type == NT_EVENT && !o->manual && o->signaled;
	bool given = false;

	if (wakes_all)
		o->manual = true; /* the fault: it stays set through the whole walk */
	for (struct waiter *w = t->head; w; w = w->next) {
		int index;

		if (w->granted || (index = pick(t, w->call)) < 0)
			continue;
		grant(w, acquire(t, w->call, index), w->call->kind == NT_WAIT_ALL && (unsigned)index != w->call->nobj
							      ? 0 : (uint32_t)index);
		given = true;
	}
	if (wakes_all) {
		o->manual = false;
		if (given)
			o->signaled = false;
	}
	pthread_cond_broadcast(&t->changed);
}

static struct timespec deadline_after(uint32_t ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_nsec -= 1000000000;
		ts.tv_sec++;
	}
	return ts;
}

static bool passed(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline->tv_sec ||
	       (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

/* The fault: wait-all takes one object at a time, and gives them back if one is missing. */
static void wait_all_one_by_one(struct toy *t, const struct nt_op *c, uint32_t timeout_ms, struct vh_op *op)
{
	struct timespec deadline = deadline_after(timeout_ms);

	for (;;) {
		bool taken[NT_MAX_WAIT] = { false }, all = true, abandoned = false;

		for (unsigned i = 0; i < c->nobj && all; i++) {
			pthread_mutex_lock(&t->lock);
			if (ready(&t->obj[c->obj[i]], c->owner)) {
				abandoned |= take(t, &t->obj[c->obj[i]], c->owner);
				taken[i] = true;
			} else {
				all = false;
			}
			pthread_mutex_unlock(&t->lock);
			vp_yield();
		}
		if (all) {
			op->result.status = abandoned ? NT_ABANDONED_WAIT : NT_OK;
			op->result.v[0] = 0;
			op->result.known = 1;
			return;
		}
		pthread_mutex_lock(&t->lock);
		for (unsigned i = 0; i < c->nobj; i++) {
			struct obj *o = &t->obj[c->obj[i]];

			if (!taken[i])
				continue;
			if (o->type == NT_EVENT)
				o->signaled = true;
			else if (o->type == NT_SEM)
				o->count++;
			else if (--o->count == 0)
				o->owner = 0;
			handoff(t, c->obj[i]);
		}
		if (c->has_alert && ready(&t->obj[c->alert], c->owner)) {
			op->result.status = take(t, &t->obj[c->alert], c->owner) ? NT_ABANDONED_WAIT : NT_OK;
			op->result.v[0] = c->nobj;
			op->result.known = 1;
			pthread_mutex_unlock(&t->lock);
			return;
		}
		if (c->timeout == NT_POLL || (c->timeout == NT_FINITE && passed(&deadline))) {
			pthread_mutex_unlock(&t->lock);
			op->result.status = NT_TIMEOUT;
			return;
		}
		{
			struct timespec soon = deadline_after(1);

			if (c->timeout == NT_FINITE && (deadline.tv_sec < soon.tv_sec ||
							(deadline.tv_sec == soon.tv_sec && deadline.tv_nsec < soon.tv_nsec)))
				soon = deadline;
			pthread_cond_timedwait(&t->changed, &t->lock, &soon);
		}
		pthread_mutex_unlock(&t->lock);
	}
}

static void toy_wait(struct toy *t, const struct nt_op *c, uint32_t timeout_ms, struct vh_op *op)
{
	struct timespec deadline = deadline_after(timeout_ms);
	struct waiter w;
	int index;

	for (unsigned i = 0; i < c->nobj; i++) {
		if (t->obj[c->obj[i]].closed) {
			op->result.status = NT_EBADF;
			return;
		}
		for (unsigned j = i + 1; c->kind == NT_WAIT_ALL && j < c->nobj; j++) {
			if (c->obj[i] == c->obj[j]) {
				op->result.status = NT_EINVAL;
				return;
			}
		}
	}
	if (c->has_alert && (t->obj[c->alert].closed || t->obj[c->alert].type != NT_EVENT)) {
		op->result.status = t->obj[c->alert].closed ? NT_EBADF : NT_EINVAL;
		return;
	}
	if (t->fault == FAULT_WAITALL_ONE_BY_ONE && c->kind == NT_WAIT_ALL) {
		pthread_mutex_unlock(&t->lock);
		wait_all_one_by_one(t, c, timeout_ms, op);
		pthread_mutex_lock(&t->lock);
		return;
	}
	if ((index = pick(t, c)) >= 0) {
		op->result.status = acquire(t, c, index);
		op->result.v[0] = c->kind == NT_WAIT_ALL && (unsigned)index != c->nobj ? 0 : (uint32_t)index;
		op->result.known = 1;
		return;
	}
	if (c->timeout == NT_POLL) {
		op->result.status = NT_TIMEOUT;
		return;
	}
	memset(&w, 0, sizeof(w));
	w.call = c;
	{
		pthread_condattr_t attr;

		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&w.cond, &attr);
		pthread_condattr_destroy(&attr);
	}
	w.prev = t->tail;
	if (t->tail)
		t->tail->next = &w;
	else
		t->head = &w;
	t->tail = &w;
	while (!w.granted) {
		int ret = c->timeout == NT_INFINITE ? pthread_cond_wait(&w.cond, &t->lock)
						    : pthread_cond_timedwait(&w.cond, &t->lock, &deadline);

		if (ret == ETIMEDOUT && !w.granted)
			break;
	}
	dequeue(t, &w);
	pthread_cond_destroy(&w.cond);
	if (!w.granted) {
		op->result.status = NT_TIMEOUT;
		return;
	}
	op->result.status = w.status;
	if (w.status != NT_ECANCELED) {
		op->result.v[0] = w.index;
		op->result.known = 1;
	}
}

static void abandon(struct toy *t, uint32_t i)
{
	t->obj[i].owner = 0;
	t->obj[i].count = 0;
	t->obj[i].abandoned = true;
	handoff(t, i);
}

static void toy_call(struct vr_worker *wk, const struct nt_op *c, uint32_t timeout_ms, struct vh_op *op)
{
	struct toy *t = wk->run->priv;
	struct obj *o = c->nobj ? &t->obj[c->obj[0]] : NULL;

	op->result.status = NT_OK;
	pthread_mutex_lock(&t->lock);
	if (o && o->closed && c->kind != NT_WAIT_ANY && c->kind != NT_WAIT_ALL) {
		op->result.status = NT_EBADF;
		goto out;
	}
	switch (c->kind) {
	case NT_SET:
	case NT_PULSE:
		op->result.v[0] = o->signaled;
		op->result.known = 1;
		o->signaled = true;
		handoff(t, c->obj[0]);
		if (c->kind == NT_PULSE && t->fault == FAULT_PULSE_SET_RESET) {
			/* The fault: others run between the set and the reset. */
			pthread_mutex_unlock(&t->lock);
			vp_yield();
			pthread_mutex_lock(&t->lock);
		}
		if (c->kind == NT_PULSE && !o->closed)
			o->signaled = false;
		break;
	case NT_RESET:
		op->result.v[0] = o->signaled;
		op->result.known = 1;
		o->signaled = false;
		break;
	case NT_RELEASE:
		if (c->arg > o->max - o->count) {
			op->result.status = NT_EOVERFLOW;
			break;
		}
		op->result.v[0] = o->count;
		op->result.known = 1;
		o->count += c->arg;
		handoff(t, c->obj[0]);
		break;
	case NT_UNLOCK:
		if (o->owner != c->owner || !o->owner) {
			op->result.status = NT_EPERM;
			break;
		}
		op->result.v[0] = o->count;
		op->result.known = 1;
		if (--o->count == 0) {
			o->owner = 0;
			handoff(t, c->obj[0]);
		}
		break;
	case NT_KILL:
		if (o->owner != c->owner || !o->owner)
			op->result.status = NT_EPERM;
		else
			abandon(t, c->obj[0]);
		break;
	case NT_READ:
		op->result.known = 3;
		if (o->type == NT_EVENT) {
			op->result.v[0] = o->signaled;
			op->result.v[1] = o->manual;
		} else if (o->type == NT_SEM) {
			op->result.v[0] = o->count;
			op->result.v[1] = o->max;
		} else {
			op->result.status = o->abandoned ? NT_ABANDONED_WAIT : NT_OK;
			op->result.v[0] = o->count;
			op->result.v[1] = o->owner;
		}
		break;
	case NT_CLOSE:
		o->closed = true;
		break;
	case NT_DIE:
		for (struct waiter *w = t->head; w; w = w->next)
			if (!w->granted && w->call->owner == c->owner)
				grant(w, NT_ECANCELED, 0);
		for (uint32_t i = 0; i < t->nobjects; i++)
			if (t->obj[i].type == NT_MUTEX && t->obj[i].owner == c->owner)
				abandon(t, i);
		break;
	case NT_WAIT_ANY:
	case NT_WAIT_ALL:
		toy_wait(t, c, timeout_ms, op);
		break;
	default:
		op->error = EINVAL;
		break;
	}
out:
	pthread_mutex_unlock(&t->lock);
}

static int toy_open_fault(struct vr_run *run, enum fault fault)
{
	struct toy *t = calloc(1, sizeof(*t));
	pthread_condattr_t attr;

	if (!t)
		return -1;
	t->fault = fault;
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&t->changed, &attr);
	pthread_condattr_destroy(&attr);
	t->nobjects = run->w->config.objects;
	for (uint32_t i = 0; i < t->nobjects; i++) {
		const struct nt_object *o = &run->w->objects[i];

		t->obj[i].type = o->type;
		t->obj[i].manual = o->flags & NT_MANUAL;
		t->obj[i].signaled = o->flags & NT_SIGNALED;
		t->obj[i].owner = o->owner;
		t->obj[i].count = o->count;
		t->obj[i].max = o->max;
	}
	run->priv = t;
	return 0;
}

static void toy_close(struct vr_run *run)
{
	struct toy *t = run->priv;

	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->changed);
	free(t);
	run->priv = NULL;
}

static int open_none(struct vr_run *run) { return toy_open_fault(run, FAULT_NONE); }
static int open_waitall(struct vr_run *run) { return toy_open_fault(run, FAULT_WAITALL_ONE_BY_ONE); }
static int open_pulse(struct vr_run *run) { return toy_open_fault(run, FAULT_PULSE_SET_RESET); }
static int open_auto(struct vr_run *run) { return toy_open_fault(run, FAULT_AUTO_WAKES_ALL); }
static int open_recursion(struct vr_run *run) { return toy_open_fault(run, FAULT_MUTEX_NO_RECURSION); }

#define TOY_CAPS (VW_CAP_READ | VW_CAP_KILL | VW_CAP_ALERT | VW_CAP_PREV)
#define TOY(var, label, opener) \
	const struct vr_backend var = { .name = label, .caps = TOY_CAPS, .open = opener, \
					.close = toy_close, .call = toy_call }

TOY(vr_backend_toy, "toy", open_none);
TOY(vr_backend_toy_waitall_one_by_one, "toy-waitall-one-by-one", open_waitall);
TOY(vr_backend_toy_pulse_set_reset, "toy-pulse-set-reset", open_pulse);
TOY(vr_backend_toy_auto_wakes_all, "toy-auto-wakes-all", open_auto);
TOY(vr_backend_toy_mutex_no_recursion, "toy-mutex-no-recursion", open_recursion);
