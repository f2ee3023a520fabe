/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vr_run (recorder.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "recorder.h"

static struct vh_op *new_record(struct vr_worker *w)
{
	if (w->nrec == w->caprec) {
		uint32_t cap = w->caprec ? 2 * w->caprec : 256;
		struct vh_op *rec = realloc(w->rec, cap * sizeof(*rec));

		if (!rec) {
			w->failed = true;
			return NULL;
		}
		w->rec = rec;
		w->caprec = cap;
	}
	memset(&w->rec[w->nrec], 0, sizeof(w->rec[0]));
	return &w->rec[w->nrec++];
}

static void forget(struct vr_worker *w, uint16_t mutex)
{
	w->held[mutex] = 0;
	for (uint32_t i = 0; i < w->depth; i++) {
		if (w->stack[i] == mutex) {
			memmove(&w->stack[i], &w->stack[i + 1], (w->depth - i - 1) * sizeof(w->stack[0]));
			w->depth--;
			return;
		}
	}
}

static void acquired(struct vr_worker *w, uint16_t obj)
{
	if (w->run->w->objects[obj].type != NT_MUTEX)
		return;
	if (w->held[obj]++ == 0 && w->depth < sizeof(w->stack) / sizeof(w->stack[0]))
		w->stack[w->depth++] = obj;
}

/* What this worker holds after the call, by its result. */
static void track(struct vr_worker *w, const struct vh_op *op)
{
	const struct nt_op *c = &op->call;
	const struct nt_result *r = &op->result;
	bool ok = !op->error && (r->status == NT_OK || r->status == NT_ABANDONED_WAIT);

	switch (c->kind) {
	case NT_WAIT_ANY:
		if (ok && r->v[0] < c->nobj)
			acquired(w, c->obj[r->v[0]]);
		break;
	case NT_WAIT_ALL:
		if (ok && r->v[0] == 0)
			for (unsigned k = 0; k < c->nobj; k++)
				acquired(w, c->obj[k]);
		break;
	case NT_UNLOCK:
		if (ok && w->held[c->obj[0]] > 1)
			w->held[c->obj[0]]--;
		else
			forget(w, c->obj[0]);
		break;
	case NT_KILL:
		forget(w, c->obj[0]);
		break;
	case NT_DIE:
		while (w->depth)
			forget(w, w->stack[w->depth - 1]);
		break;
	default:
		break;
	}
}

/* Runs one call and records it. */
static void step(struct vr_worker *w, const struct nt_op *call, uint32_t timeout_ms)
{
	struct vr_run *run = w->run;
	struct vh_op *op = new_record(w);
	uint64_t t;

	if (!op)
		return;
	op->thread = w->slot;
	op->owner = w->owner;
	op->call = *call;
	op->call.owner = w->owner;
	op->timeout_ms = timeout_ms;
	run->b->call(w, &op->call, timeout_ms, op);
	w->calls++;
	if (run->record) {
		t = vp_now_ns();
		op->invoke = w->t;
		op->ret = t;
		w->t = t;
	}
	track(w, op);
	if (!run->record)
		w->nrec--; /* the slot is reused: nothing is kept */
}

static void release_held(struct vr_worker *w)
{
	while (w->depth && !w->failed) {
		struct nt_op unlock = { .kind = NT_UNLOCK, .nobj = 1 };

		unlock.obj[0] = w->stack[w->depth - 1];
		step(w, &unlock, 0);
	}
}

/* A sense-reversing barrier: the last to arrive starts the next generation. */
static void barrier(struct vr_run *run)
{
	unsigned gen = atomic_load(&run->barrier_generation);

	if (atomic_fetch_add(&run->barrier_count, 1) + 1 == run->w->config.threads) {
		atomic_store(&run->barrier_count, 0);
		atomic_fetch_add(&run->barrier_generation, 1);
		return;
	}
	while (atomic_load(&run->barrier_generation) == gen)
		vp_yield();
}

static uint32_t next_owner(const struct vr_worker *w)
{
	return 1 + w->slot + w->run->w->config.threads * (w->incarnation + 1);
}

void vr_worker_run(struct vr_worker *w)
{
	struct vr_run *run = w->run;
	const struct vw_op *script = run->w->script[w->slot];
	uint32_t length = run->w->length[w->slot];

	if (w->state == VR_DYING) {
		/* The thread before this one died: its death has happened by now. */
		uint64_t t = vp_now_ns();

		if (run->record) {
			w->rec[w->die_rec].ret = t;
			w->t = t;
		}
		w->owner = next_owner(w);
		w->incarnation++;
		w->state = VR_RUNNING;
	} else if (run->record) {
		w->t = vp_now_ns();
	}
	while (w->pos < length && !w->failed) {
		const struct vw_op *op = &script[w->pos++];
		struct nt_op call = op->call;

		if (call.kind == VW_BARRIER) {
			release_held(w);
			barrier(run);
			if (run->record)
				w->t = vp_now_ns();
			continue;
		}
		if (op->delay) {
			vp_spin(op->delay);
			if (run->record)
				w->t = vp_now_ns();
		}
		if (call.kind == VW_UNLOCK_HELD || call.kind == VW_KILL_HELD) {
			uint16_t mutex = 0;

			if (w->depth) {
				mutex = w->stack[w->depth - 1];
			} else {
				/* Nothing held: any mutex, which this owner does not hold. */
				for (uint16_t i = 0; i < run->w->config.objects; i++)
					if (run->w->objects[i].type == NT_MUTEX)
						mutex = i;
			}
			call.kind = call.kind == VW_UNLOCK_HELD ? NT_UNLOCK : NT_KILL;
			call.nobj = 1;
			call.obj[0] = mutex;
		}
		if (call.kind == NT_DIE && run->b->die_exits) {
			struct vh_op *rec = new_record(w);

			if (!rec)
				break;
			rec->thread = w->slot;
			rec->owner = w->owner;
			rec->call = call;
			rec->call.owner = w->owner;
			rec->invoke = w->t;
			rec->result.status = NT_OK;
			w->die_rec = w->nrec - 1;
			if (!run->record)
				w->nrec--;
			while (w->depth)
				forget(w, w->stack[w->depth - 1]);
			w->state = VR_DYING;
			return; /* the thread ends, and its mutexes are abandoned */
		}
		step(w, &call, op->timeout_ms);
		if (call.kind == NT_DIE) {
			w->owner = next_owner(w);
			w->incarnation++;
		}
	}
	release_held(w);
	w->state = VR_DONE;
}

static int cmp_invoke(const void *a, const void *b)
{
	const struct vh_op *x = a, *y = b;

	if (x->invoke != y->invoke)
		return x->invoke < y->invoke ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

int vr_run(const struct vw_workload *w, const struct vr_backend *b, bool record, struct vh_history *h,
	   struct vr_times *times)
{
	struct vr_run *run = calloc(1, sizeof(*run));
#ifdef _WIN32
	/* Windows: the backend's threads (CreateThread) only. */
	int (*spawn)(struct vr_run *, struct vr_worker *) = b->spawn;
	struct vr_worker *(*wait_exit)(struct vr_run *) = b->wait_exit;
#else
	int (*spawn)(struct vr_run *, struct vr_worker *) = b->spawn ? b->spawn : vr_posix_spawn;
	struct vr_worker *(*wait_exit)(struct vr_run *) = b->wait_exit ? b->wait_exit : vr_posix_wait_exit;
#endif
	uint32_t threads = w->config.threads, active = 0;
	uint64_t t_start, cpu_start;
	int ret = -1;

	if (!run) {
		fprintf(stderr, "winsync-verify: out of memory\n");
		return -1;
	}
	run->w = w;
	run->b = b;
	run->record = record;
	atomic_init(&run->barrier_count, 0);
	atomic_init(&run->barrier_generation, 0);
#ifndef _WIN32
	if (!b->spawn && vr_posix_init(run)) {
		free(run);
		return -1;
	}
#endif
	if (b->open(run))
		goto out;
	for (uint32_t t = 0; t < threads; t++) {
		struct vr_worker *wk = &run->workers[t];

		wk->run = run;
		wk->slot = t;
		wk->owner = 1 + t;
	}
	cpu_start = vp_cpu_ns();
	run->t0 = t_start = vp_now_ns();
	for (uint32_t t = 0; t < threads; t++) {
		if (spawn(run, &run->workers[t])) {
			fprintf(stderr, "winsync-verify: cannot start thread %u\n", t);
			/* The others wait at the first barrier forever: nothing to do but stop. */
			exit(2);
		}
		active++;
	}
	while (active) {
		struct vr_worker *wk = wait_exit(run);

		if (!wk) {
			fprintf(stderr, "winsync-verify: lost track of the threads\n");
			exit(2);
		}
		if (wk->state == VR_DYING) {
			if (spawn(run, wk)) {
				fprintf(stderr, "winsync-verify: cannot restart thread %u\n", wk->slot);
				exit(2);
			}
		} else {
			active--;
		}
	}
	run->elapsed_ns = vp_now_ns() - t_start;
	run->cpu_ns = vp_cpu_ns() - cpu_start;
	b->close(run);
	for (uint32_t t = 0; t < threads; t++) {
		run->calls += run->workers[t].calls;
		if (run->workers[t].failed) {
			fprintf(stderr, "winsync-verify: out of memory while recording\n");
			goto out;
		}
	}
	if (times) {
		times->calls = run->calls;
		times->elapsed_ns = run->elapsed_ns;
		times->cpu_ns = run->cpu_ns;
	}
	if (record) {
		memset(h, 0, sizeof(*h));
		snprintf(h->backend, sizeof(h->backend), "%s", b->name);
		h->seed = w->config.seed;
		h->threads = threads;
		h->nobjects = w->config.objects;
		h->objects = malloc(h->nobjects * sizeof(*h->objects));
		if (!h->objects)
			goto out;
		memcpy(h->objects, w->objects, h->nobjects * sizeof(*h->objects));
		for (uint32_t t = 0; t < threads; t++) {
			for (uint32_t i = 0; i < run->workers[t].nrec; i++) {
				struct vh_op *op = vh_append(h);

				if (!op) {
					vh_free(h);
					goto out;
				}
				*op = run->workers[t].rec[i];
				op->invoke -= run->t0;
				op->ret -= run->t0;
			}
		}
		qsort(h->ops, h->nops, sizeof(*h->ops), cmp_invoke);
	}
	ret = 0;
out:
	for (uint32_t t = 0; t < threads; t++)
		free(run->workers[t].rec);
#ifndef _WIN32
	if (!b->spawn)
		vr_posix_fini(run);
#endif
	free(run);
	return ret;
}
