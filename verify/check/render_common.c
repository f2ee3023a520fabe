/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "render_common.h"

uint32_t vc_shown_ops(const struct vc_failure *f, struct vc_shown *shown, uint32_t *threads)
{
	const struct vh_history *h = &f->history;
	uint32_t nthreads = 0;

	for (uint32_t i = 0; i < h->nops; i++) {
		const struct vh_op *op = &h->ops[i];
		uint32_t c;

		memset(&shown[i], 0, sizeof(shown[i]));
		for (c = 0; c < nthreads && threads[c] != op->thread; c++)
			;
		if (c == nthreads)
			threads[nthreads++] = op->thread;
		shown[i].column = c;
		shown[i].stuck = i == f->stuck;
		shown[i].role = f->context ? f->context[i] : VC_ROLE_NEEDED;
		shown[i].context = shown[i].role != VC_ROLE_NEEDED;
		vh_format_call(shown[i].call, sizeof(shown[i].call), &op->call, op->timeout_ms);
		if (op->ret == VH_PENDING)
			strcpy(shown[i].result, "(running)");
		else
			vh_format_result(shown[i].result, sizeof(shown[i].result), op);
	}
	for (uint32_t k = 0; k < f->ntrace; k++) {
		struct vc_shown *s = &shown[f->trace[k].op];

		for (unsigned j = 0; j < VC_MAX_STEPS_SHOWN; j++) {
			if (!s->steps[j]) {
				s->steps[j] = k + 1;
				s->starts[j] = !f->trace[k].done;
				break;
			}
		}
	}
	/* Threads in ascending order, columns renumbered. */
	for (uint32_t a = 0; a < nthreads; a++) {
		for (uint32_t b = a + 1; b < nthreads; b++) {
			if (threads[b] < threads[a]) {
				uint32_t t = threads[a];

				threads[a] = threads[b];
				threads[b] = t;
			}
		}
	}
	for (uint32_t i = 0; i < h->nops; i++)
		for (uint32_t c = 0; c < nthreads; c++)
			if (threads[c] == h->ops[i].thread)
				shown[i].column = c;
	return nthreads;
}
