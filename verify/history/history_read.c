/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading histories (history.h): a line-by-line parser with messages that name the line. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

static void skip_blanks(const char **p)
{
	while (**p == ' ' || **p == '\t')
		(*p)++;
}

/* A word: letters, digits, '_' or '-' up to a blank; true if it equals `w`. */
static bool word(const char **p, const char *w)
{
	size_t n = strlen(w);

	if (strncmp(*p, w, n) || (*p)[n] == '_' || isalnum((unsigned char)(*p)[n]))
		return false;
	*p += n;
	skip_blanks(p);
	return true;
}

static int number(const char **p, uint64_t *value)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -1;
	errno = 0;
	*value = strtoull(*p, &end, 10);
	if (errno)
		return -1;
	*p = end;
	skip_blanks(p);
	return 0;
}

static int number32(const char **p, uint32_t *value)
{
	uint64_t v;

	if (number(p, &v) || v > UINT32_MAX)
		return -1;
	*value = (uint32_t)v;
	return 0;
}

static int object_ref(const char **p, uint16_t *index)
{
	uint64_t v;

	if (number(p, &v) || v > UINT16_MAX)
		return -1;
	*index = (uint16_t)v;
	return 0;
}

int vh_parse_call(const char **p, struct nt_op *call, uint32_t *timeout_ms)
{
	memset(call, 0, sizeof(*call));
	*timeout_ms = 0;
	if (word(p, "wait")) {
		if (word(p, "any"))
			call->kind = NT_WAIT_ANY;
		else if (word(p, "all"))
			call->kind = NT_WAIT_ALL;
		else
			return -1;
		for (;;) {
			char *end;
			unsigned long v;

			if (!isdigit((unsigned char)**p) || call->nobj == NT_MAX_WAIT)
				return -1;
			v = strtoul(*p, &end, 10);
			if (v > UINT16_MAX)
				return -1;
			call->obj[call->nobj++] = (uint16_t)v;
			*p = end;
			if (**p != ',')
				break;
			(*p)++;
		}
		skip_blanks(p);
		if (word(p, "alert")) {
			if (object_ref(p, &call->alert))
				return -1;
			call->has_alert = 1;
		}
		if (word(p, "poll")) {
			call->timeout = NT_POLL;
		} else if (word(p, "infinite")) {
			call->timeout = NT_INFINITE;
		} else if (word(p, "timeout")) {
			call->timeout = NT_FINITE;
			if (number32(p, timeout_ms))
				return -1;
		} else {
			return -1;
		}
		return 0;
	}
	if (word(p, "die")) {
		call->kind = NT_DIE;
		return 0;
	}
	for (unsigned k = 0; k < NT_KINDS; k++) {
		if (k == NT_WAIT_ANY || k == NT_WAIT_ALL || k == NT_DIE || !word(p, vh_kind_names[k]))
			continue;
		call->kind = (uint8_t)k;
		call->nobj = 1;
		if (object_ref(p, &call->obj[0]))
			return -1;
		if (k == NT_RELEASE && number32(p, &call->arg))
			return -1;
		return 0;
	}
	return -1;
}

int vh_parse_result(const char **p, struct vh_op *op)
{
	struct nt_result *r = &op->result;

	memset(r, 0, sizeof(*r));
	op->error = 0;
	if (word(p, "pending")) {
		op->ret = VH_PENDING;
		return 0;
	}
	if (word(p, "error")) {
		uint64_t v;

		if (number(p, &v) || v == 0 || v > INT32_MAX)
			return -1;
		op->error = (int32_t)v;
		return 0;
	}
	unsigned s;

	for (s = 0; s < NT_STATUSES; s++)
		if (word(p, vh_status_names[s]))
			break;
	if (s == NT_STATUSES)
		return -1;
	r->status = (uint8_t)s;
	for (unsigned i = 0; i < 2 && **p && **p != '#' && **p != '\n'; i++) {
		if (**p == '?') {
			(*p)++;
			skip_blanks(p);
			continue;
		}
		if (number32(p, &r->v[i]))
			return -1;
		r->known |= (uint8_t)(1u << i);
	}
	return 0;
}

/* An object's state may end with "closed" (a history that starts mid-run). */
static int parse_closed(const char **p, struct nt_object *o)
{
	if (word(p, "closed"))
		o->flags |= NT_CLOSED;
	return 0;
}

int vh_parse_object(const char **p, struct nt_object *o)
{
	uint32_t a = 0, b = 0;

	memset(o, 0, sizeof(*o));
	if (word(p, "event")) {
		o->type = NT_EVENT;
		if (word(p, "manual"))
			o->flags |= NT_MANUAL;
		else if (!word(p, "auto"))
			return -1;
		if (number32(p, &a) || a > 1)
			return -1;
		if (a)
			o->flags |= NT_SIGNALED;
		return parse_closed(p, o);
	}
	if (word(p, "sem")) {
		o->type = NT_SEM;
		if (number32(p, &a) || number32(p, &b) || b == 0 || a > b)
			return -1;
		o->count = a;
		o->max = b;
		return parse_closed(p, o);
	}
	if (word(p, "mutex")) {
		o->type = NT_MUTEX;
		if (isdigit((unsigned char)**p) && (number32(p, &a) || number32(p, &b)))
			return -1;
		if ((a == 0) != (b == 0))
			return -1;
		o->owner = a;
		o->count = b;
		if (word(p, "abandoned")) {
			if (a)
				return -1;
			o->flags |= NT_ABANDONED;
		}
		return parse_closed(p, o);
	}
	return -1;
}

static int fail(char *error, size_t size, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *error, size_t size, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(error, size, "line %u: ", line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < size)
		vsnprintf(error + n, size - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* "t3" or "o12". */
static int tagged(const char **p, char tag, uint32_t *value)
{
	if (**p != tag)
		return -1;
	(*p)++;
	return number32(p, value);
}

static int at_end(const char *p)
{
	return !*p || *p == '#' || *p == '\n' || *p == '\r';
}

int vh_read(FILE *f, struct vh_history *h, char *error, size_t size)
{
	char line[1024];
	unsigned lineno = 0;
	bool header = false, ended = false;

	memset(h, 0, sizeof(*h));
	while (fgets(line, sizeof(line), f)) {
		const char *p = line;

		lineno++;
		if (!strchr(line, '\n') && !feof(f))
			return fail(error, size, lineno, "too long");
		skip_blanks(&p);
		if (at_end(p))
			continue;
		if (!header) {
			uint32_t version;

			if (!word(&p, "winsync-verify") || !word(&p, "history") || number32(&p, &version))
				return fail(error, size, lineno, "not a winsync-verify history");
			if (version != VH_VERSION)
				return fail(error, size, lineno, "history version %u, this reader knows %d",
					    version, VH_VERSION);
			header = true;
			continue;
		}
		if (ended)
			return fail(error, size, lineno, "text after 'end'");
		if (word(&p, "backend")) {
			size_t n = strcspn(p, " \t\r\n#");

			if (n == 0 || n >= sizeof(h->backend))
				return fail(error, size, lineno, "bad backend name");
			memcpy(h->backend, p, n);
			h->backend[n] = 0;
			continue;
		}
		if (word(&p, "seed")) {
			if (number(&p, &h->seed))
				return fail(error, size, lineno, "bad seed");
			continue;
		}
		if (word(&p, "threads")) {
			if (number32(&p, &h->threads))
				return fail(error, size, lineno, "bad thread count");
			continue;
		}
		if (word(&p, "end")) {
			ended = true;
			continue;
		}
		if (word(&p, "object")) {
			uint32_t id;
			struct nt_object o, *grown;

			if (number32(&p, &id) || id != h->nobjects)
				return fail(error, size, lineno, "objects must be numbered 0, 1, ... in order");
			if (vh_parse_object(&p, &o) || !at_end(p))
				return fail(error, size, lineno, "bad object (event manual|auto 0|1, sem COUNT MAX, "
						   "mutex [OWNER COUNT] [abandoned]; then [closed])");
			grown = realloc(h->objects, (h->nobjects + 1) * sizeof(*grown));
			if (!grown)
				return fail(error, size, lineno, "out of memory");
			h->objects = grown;
			h->objects[h->nobjects++] = o;
			continue;
		}
		if (word(&p, "op")) {
			struct vh_op *op = vh_append(h);
			uint64_t ret = 0;

			if (!op)
				return fail(error, size, lineno, "out of memory");
			if (tagged(&p, 't', &op->thread) || tagged(&p, 'o', &op->owner) ||
			    number(&p, &op->invoke))
				return fail(error, size, lineno, "expected: op tTHREAD oOWNER INVOKE RETURN|- CALL -> RESULT");
			if (*p == '-' && (p[1] == ' ' || p[1] == '\t')) {
				p++;
				skip_blanks(&p);
				ret = VH_PENDING;
			} else if (number(&p, &ret) || ret < op->invoke) {
				return fail(error, size, lineno, "bad return time (before the invocation?)");
			}
			if (vh_parse_call(&p, &op->call, &op->timeout_ms))
				return fail(error, size, lineno, "bad call");
			op->call.owner = op->owner;
			if (op->owner == 0)
				return fail(error, size, lineno, "owner ids are nonzero");
			for (unsigned i = 0; i < op->call.nobj; i++)
				if (op->call.obj[i] >= h->nobjects)
					return fail(error, size, lineno, "object %u is not declared",
						    (unsigned)op->call.obj[i]);
			if (op->call.has_alert && op->call.alert >= h->nobjects)
				return fail(error, size, lineno, "alert %u is not declared",
					    (unsigned)op->call.alert);
			op->ret = 0;
			if (!word(&p, "->") || vh_parse_result(&p, op) || !at_end(p))
				return fail(error, size, lineno, "bad result");
			if ((op->ret == VH_PENDING) != (ret == VH_PENDING))
				return fail(error, size, lineno, "'-' return time goes with 'pending'");
			op->ret = ret;
			continue;
		}
		return fail(error, size, lineno, "unknown line");
	}
	if (!header)
		return fail(error, size, lineno, "empty: not a winsync-verify history");
	if (ferror(f))
		return fail(error, size, lineno, "read error");
	for (uint32_t i = 0; i < h->nops; i++)
		if (h->ops[i].thread >= h->threads)
			h->threads = h->ops[i].thread + 1;
	return 0;
}

void vh_free(struct vh_history *h)
{
	free(h->objects);
	free(h->ops);
	memset(h, 0, sizeof(*h));
}
