/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vw_generate (workload.h). */
#include <stdlib.h>
#include <string.h>

#include "workload.h"

uint64_t vw_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static uint32_t below(uint64_t *rng, uint32_t n)
{
	return n ? (uint32_t)(vw_random(rng) % n) : 0;
}

/* A random object of `type`, or -1 when there is none. */
static int of_type(const struct vw_workload *w, uint64_t *rng, uint8_t type)
{
	uint32_t n = 0, pick;

	for (uint32_t i = 0; i < w->config.objects; i++)
		n += w->objects[i].type == type;
	if (!n)
		return -1;
	pick = below(rng, n);
	for (uint32_t i = 0; i < w->config.objects; i++)
		if (w->objects[i].type == type && pick-- == 0)
			return (int)i;
	return -1;
}

static uint32_t timeout_for(const struct vw_config *c, uint64_t *rng, uint8_t *kind)
{
	static const uint32_t ms[] = { 1, 1, 2, 2, 3, 5, 8, 20 };
	uint32_t r = below(rng, 100), t;

	if (c->polls_only || r < 30) {
		*kind = NT_POLL;
		return 0;
	}
	*kind = NT_FINITE;
	t = ms[below(rng, sizeof(ms) / sizeof(ms[0]))];
	return c->max_timeout_ms && t > c->max_timeout_ms ? c->max_timeout_ms : t;
}

/*
 * A wait on 1 to 3 objects near each other (base, base+1, ... modulo the
 * count), so that waits overlap without all tying every object together.
 */
static void make_wait(const struct vw_workload *w, uint64_t *rng, struct vw_op *op, bool all)
{
	uint32_t n = w->config.objects, want = all ? 2 + below(rng, 2) : 1 + below(rng, 3);
	uint32_t base = below(rng, n), span = n < 4 ? n : 4;

	if (want > n)
		want = n;
	op->call.kind = all ? NT_WAIT_ALL : NT_WAIT_ANY;
	while (op->call.nobj < want) {
		uint16_t obj = (uint16_t)((base + below(rng, span)) % n);
		bool dup = false;

		for (unsigned k = 0; k < op->call.nobj; k++)
			dup |= op->call.obj[k] == obj;
		if (!dup)
			op->call.obj[op->call.nobj++] = obj;
		else if (span < n)
			span++;
	}
	op->timeout_ms = timeout_for(&w->config, rng, &op->call.timeout);
	if ((w->config.caps & VW_CAP_ALERT) && below(rng, 4) == 0) {
		int alert = of_type(w, rng, NT_EVENT);
		bool in = false;

		for (unsigned k = 0; k < op->call.nobj && alert >= 0; k++)
			in |= op->call.obj[k] == alert;
		if (alert >= 0 && !in) {
			op->call.has_alert = 1;
			op->call.alert = (uint16_t)alert;
		}
	}
}

/* One operation of the main phase. */
static void make_op(const struct vw_workload *w, uint64_t *rng, struct vw_op *op)
{
	const struct vw_config *c = &w->config;

	for (;;) {
		uint32_t r = below(rng, 100);
		int obj;

		memset(op, 0, sizeof(*op));
		op->call.nobj = 1;
		if (r < 22) {
			op->call.nobj = 0;
			make_wait(w, rng, op, false);
			return;
		}
		if (r < 34) {
			op->call.nobj = 0;
			make_wait(w, rng, op, true);
			return;
		}
		if (r < 44) {
			/* A poll of one object: sees what is signaled now. */
			op->call.kind = NT_WAIT_ANY;
			op->call.obj[0] = (uint16_t)below(rng, c->objects);
			op->call.timeout = NT_POLL;
			return;
		}
		if (r < 66) {
			static const uint8_t kinds[] = { NT_SET, NT_SET, NT_SET, NT_RESET, NT_PULSE, NT_PULSE,
							 NT_PULSE };

			if ((obj = of_type(w, rng, NT_EVENT)) < 0)
				continue;
			op->call.kind = kinds[below(rng, sizeof(kinds))];
			op->call.obj[0] = (uint16_t)obj;
			return;
		}
		if (r < 75) {
			if ((obj = of_type(w, rng, NT_SEM)) < 0)
				continue;
			op->call.kind = NT_RELEASE;
			op->call.obj[0] = (uint16_t)obj;
			op->call.arg = below(rng, 5) == 0 ? 2 : 1;
			return;
		}
		if (r < 88) {
			if (of_type(w, rng, NT_MUTEX) < 0)
				continue;
			op->call.kind = VW_UNLOCK_HELD;
			return;
		}
		if (r < 94) {
			if (!(c->caps & VW_CAP_READ))
				continue;
			op->call.kind = NT_READ;
			op->call.obj[0] = (uint16_t)below(rng, c->objects);
			return;
		}
		if (r < 96) {
			if (!(c->caps & VW_CAP_KILL) || c->polls_only || of_type(w, rng, NT_MUTEX) < 0)
				continue;
			op->call.kind = VW_KILL_HELD;
			return;
		}
		if (r < 97) {
			if (!c->deaths || c->polls_only)
				continue;
			op->call.kind = NT_DIE;
			op->call.nobj = 0;
			return;
		}
		/* A wait on a mutex already held makes recursion likely. */
		if ((obj = of_type(w, rng, NT_MUTEX)) < 0)
			continue;
		op->call.kind = NT_WAIT_ANY;
		op->call.obj[0] = (uint16_t)obj;
		op->timeout_ms = timeout_for(c, rng, &op->call.timeout);
		return;
	}
}

int vw_generate(const struct vw_config *c, struct vw_workload *w)
{
	uint64_t rng = c->seed;
	uint32_t per_thread;

	memset(w, 0, sizeof(*w));
	if (c->threads < 1 || c->threads > VW_MAX_THREADS || c->objects < 1 ||
	    c->objects > VW_MAX_OBJECTS)
		return -1;
	w->config = *c;
	per_thread = (c->ops + c->threads - 1) / c->threads;
	for (uint32_t i = 0; i < c->objects; i++) {
		struct nt_object *o = &w->objects[i];

		switch (i % 4) {
		case 0:
		case 1:
			o->type = NT_EVENT;
			o->flags = (uint8_t)((i % 4 == 0 ? NT_MANUAL : 0) | (below(&rng, 2) ? NT_SIGNALED : 0));
			break;
		case 2:
			o->type = NT_SEM;
			o->max = 1 + below(&rng, 3);
			o->count = below(&rng, o->max + 1);
			break;
		default:
			o->type = NT_MUTEX;
			break;
		}
	}
	for (uint32_t t = 0; t < c->threads; t++) {
		uint64_t trng = vw_random(&rng);
		uint32_t closing = c->closes && !c->polls_only ? per_thread / 16 + 2 : 0;
		uint32_t main = per_thread > closing ? per_thread - closing : per_thread;
		uint32_t n = 0, cap = per_thread + per_thread / (c->stretch ? c->stretch : per_thread + 1) + 4;
		struct vw_op *s = calloc(cap, sizeof(*s));

		if (!s) {
			vw_free(w);
			return -1;
		}
		w->script[t] = s;
		s[n++].call.kind = VW_BARRIER; /* all start together */
		for (uint32_t k = 0; k < main && n + 2 < cap; k++) {
			if (c->stretch && k && k % c->stretch == 0)
				s[n++].call.kind = VW_BARRIER;
			make_op(w, &trng, &s[n]);
			/* Now and then a pause, to shift this thread against the others. */
			if (below(&trng, 8) == 0)
				s[n].delay = c->no_delays ? 0 : below(&trng, 2000);
			n++;
		}
		if (closing && n + closing + 1 <= cap) {
			s[n++].call.kind = VW_BARRIER;
			for (uint32_t k = 0; k < closing; k++) {
				make_op(w, &trng, &s[n]);
				if (s[n].call.kind == NT_DIE) {
					s[n].call.kind = NT_WAIT_ANY;
					s[n].call.nobj = 1;
					s[n].call.obj[0] = 0;
					s[n].call.timeout = NT_POLL;
				}
				/* The first threads close one object each, a few operations in. */
				if (k == 2 && t < 2 && t < c->objects) {
					memset(&s[n], 0, sizeof(s[n]));
					s[n].call.kind = NT_CLOSE;
					s[n].call.nobj = 1;
					s[n].call.obj[0] = (uint16_t)((t * 5 + 1) % c->objects);
				}
				n++;
			}
		}
		w->length[t] = n;
	}
	return 0;
}

void vw_free(struct vw_workload *w)
{
	for (uint32_t t = 0; t < VW_MAX_THREADS; t++)
		free(w->script[t]);
	memset(w, 0, sizeof(*w));
}
