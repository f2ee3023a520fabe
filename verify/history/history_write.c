/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Histories as text: one line per operation (history.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

const char *const vh_status_names[NT_STATUSES] = {
	[NT_OK] = "ok", [NT_ABANDONED_WAIT] = "abandoned", [NT_TIMEOUT] = "timeout",
	[NT_EBADF] = "ebadf", [NT_EPERM] = "eperm", [NT_EOVERFLOW] = "eoverflow",
	[NT_ECANCELED] = "ecanceled", [NT_EINVAL] = "einval",
};

const char *const vh_kind_names[NT_KINDS] = {
	[NT_SET] = "set", [NT_RESET] = "reset", [NT_PULSE] = "pulse",
	[NT_RELEASE] = "release", [NT_UNLOCK] = "unlock", [NT_KILL] = "kill",
	[NT_READ] = "read", [NT_CLOSE] = "close", [NT_WAIT_ANY] = "wait",
	[NT_WAIT_ALL] = "wait", [NT_DIE] = "die",
};

/* snprintf that keeps count of what fits, for building a line in parts. */
struct out {
	char *buf;
	size_t size;
	size_t len;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->buf + (o->len < o->size ? o->len : o->size),
		      o->len < o->size ? o->size - o->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

int vh_format_call(char *buf, size_t size, const struct nt_op *call, uint32_t timeout_ms)
{
	struct out o = { buf, size, 0 };

	if (size)
		buf[0] = 0;
	if (call->kind >= NT_KINDS)
		return 0;
	put(&o, "%s", vh_kind_names[call->kind]);
	switch (call->kind) {
	case NT_WAIT_ANY:
	case NT_WAIT_ALL:
		put(&o, " %s ", call->kind == NT_WAIT_ANY ? "any" : "all");
		for (unsigned i = 0; i < call->nobj; i++)
			put(&o, "%s%u", i ? "," : "", (unsigned)call->obj[i]);
		if (call->has_alert)
			put(&o, " alert %u", (unsigned)call->alert);
		if (call->timeout == NT_POLL)
			put(&o, " poll");
		else if (call->timeout == NT_INFINITE)
			put(&o, " infinite");
		else
			put(&o, " timeout %" PRIu32, timeout_ms);
		break;
	case NT_RELEASE:
		put(&o, " %u %" PRIu32, (unsigned)call->obj[0], call->arg);
		break;
	case NT_DIE:
		break;
	default:
		put(&o, " %u", (unsigned)call->obj[0]);
		break;
	}
	return (int)o.len;
}

int vh_format_result(char *buf, size_t size, const struct vh_op *op)
{
	struct out o = { buf, size, 0 };
	const struct nt_result *r = &op->result;
	unsigned values = 0;

	if (size)
		buf[0] = 0;
	if (op->ret == VH_PENDING) {
		put(&o, "pending");
		return (int)o.len;
	}
	if (op->error) {
		put(&o, "error %" PRId32, op->error);
		return (int)o.len;
	}
	put(&o, "%s", r->status < NT_STATUSES ? vh_status_names[r->status] : "?");
	/* How many values the result of this kind has. */
	if (r->status == NT_OK || r->status == NT_ABANDONED_WAIT) {
		switch (op->call.kind) {
		case NT_SET: case NT_RESET: case NT_PULSE: case NT_RELEASE: case NT_UNLOCK:
		case NT_WAIT_ANY: case NT_WAIT_ALL:
			values = 1;
			break;
		case NT_READ:
			values = 2;
			break;
		default:
			break;
		}
	}
	for (unsigned i = 0; i < values; i++) {
		if (r->known & (1u << i))
			put(&o, " %" PRIu32, r->v[i]);
		else
			put(&o, " ?");
	}
	return (int)o.len;
}

int vh_format_object(char *buf, size_t size, const struct nt_object *o)
{
	const char *closed = (o->flags & NT_CLOSED) ? " closed" : "";

	switch (o->type) {
	case NT_EVENT:
		return snprintf(buf, size, "event %s %d%s", (o->flags & NT_MANUAL) ? "manual" : "auto",
				(o->flags & NT_SIGNALED) != 0, closed);
	case NT_SEM:
		return snprintf(buf, size, "sem %" PRIu32 " %" PRIu32 "%s", o->count, o->max, closed);
	default:
		return snprintf(buf, size, "mutex %" PRIu32 " %" PRIu32 "%s%s", o->owner, o->count,
				(o->flags & NT_ABANDONED) ? " abandoned" : "", closed);
	}
}

int vh_write(FILE *f, const struct vh_history *h)
{
	char call[256], result[64], object[64];

	fprintf(f, "winsync-verify history %d\n", VH_VERSION);
	fprintf(f, "backend %s\nseed %" PRIu64 "\nthreads %" PRIu32 "\n", h->backend, h->seed,
		h->threads);
	for (uint32_t i = 0; i < h->nobjects; i++) {
		vh_format_object(object, sizeof(object), &h->objects[i]);
		fprintf(f, "object %" PRIu32 " %s\n", i, object);
	}
	for (uint32_t i = 0; i < h->nops; i++) {
		const struct vh_op *op = &h->ops[i];

		vh_format_call(call, sizeof(call), &op->call, op->timeout_ms);
		vh_format_result(result, sizeof(result), op);
		if (op->ret == VH_PENDING)
			fprintf(f, "op t%" PRIu32 " o%" PRIu32 " %" PRIu64 " - %s -> %s\n", op->thread,
				op->owner, op->invoke, call, result);
		else
			fprintf(f, "op t%" PRIu32 " o%" PRIu32 " %" PRIu64 " %" PRIu64 " %s -> %s\n",
				op->thread, op->owner, op->invoke, op->ret, call, result);
	}
	fprintf(f, "end\n");
	fflush(f);
	return ferror(f) ? -1 : 0;
}

struct vh_op *vh_append(struct vh_history *h)
{
	if (h->nops == h->capacity) {
		uint32_t capacity = h->capacity ? 2 * h->capacity : 1024;
		struct vh_op *grown = realloc(h->ops, capacity * sizeof(*grown));

		if (!grown)
			return NULL;
		h->ops = grown;
		h->capacity = capacity;
	}
	memset(&h->ops[h->nops], 0, sizeof(h->ops[0]));
	return &h->ops[h->nops++];
}
