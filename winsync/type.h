/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rules of the three object types, one table: when a wait can acquire
 * an object, and what acquiring it does.  Every "is it ready" in the core
 * (the uncontended scan, the locked acquire, the hand-off walk, the
 * invariant check) asks these.
 *
 *   semaphore  value = count, aux = maximum: ready while count > 0; takes a unit
 *   event      value = signaled, aux = manual reset: ready while signaled;
 *              an auto-reset event is reset by the acquire
 *   mutex      value = owner id (0 free), aux = acquisitions beyond the first:
 *              ready when free or already the waiter's (below the recursion
 *              limit); an abandoned mutex acquired reports -EOWNERDEAD
 */
#ifndef WINSYNC_TYPE_H
#define WINSYNC_TYPE_H

#include "arena.h"

/* An owner id no waiter has (ids are nonzero): "ready for anybody". */
#define WS_ANY_OWNER 0u

struct ws_type_rules {
	/* Ready for `owner`, from the head alone (a mutex's recursion limit aside). */
	bool (*head_ready)(uint64_t head, uint32_t owner);
	/* Exact readiness of a locked object. */
	bool (*ready)(const struct ws_object *obj, uint32_t owner);
	/* Acquires a locked, ready object; true if that took an abandoned mutex. */
	bool (*take)(struct ws_object *obj, uint32_t owner);
};

extern const struct ws_type_rules ws_type_rules[4];

/* The head-only rules, inline for the uncontended scan; the table uses the same. */
static inline bool ws_valued_head_ready(uint64_t head, uint32_t owner)
{
	(void)owner;
	return ws_head_value(head) != 0;
}

static inline bool ws_mutex_head_ready(uint64_t head, uint32_t owner)
{
	uint32_t value = ws_head_value(head);

	return value == 0 || value == owner;
}

static inline bool ws_head_ready(uint64_t head, uint32_t owner)
{
	switch (ws_head_type(head)) {
	case WS_TYPE_SEM:
	case WS_TYPE_EVENT:
		return ws_valued_head_ready(head, owner);
	case WS_TYPE_MUTEX:
		return ws_mutex_head_ready(head, owner);
	default:
		return false;
	}
}

static inline const struct ws_type_rules *ws_rules(uint64_t head)
{
	return &ws_type_rules[ws_head_type(head)];
}

static inline bool ws_obj_ready(const struct ws_object *obj, uint32_t owner)
{
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);

	return ws_rules(head)->ready(obj, owner);
}

static inline bool ws_obj_take(struct ws_object *obj, uint32_t owner)
{
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed);

	return ws_rules(head)->take(obj, owner);
}

/*
 * The head after an uncontended acquire by `owner` of a ready object: a
 * semaphore unit, an auto-reset event, a free mutex.  (A manual event is
 * not changed; a recursive acquisition changes aux and takes the slow path.)
 */
static inline uint64_t ws_head_taken(uint64_t head, uint32_t owner)
{
	uint32_t tag = ws_tag_restamped(ws_head_tag(head), ws_head_tag(head));
	uint32_t value = ws_head_value(head);

	switch (ws_head_type(head)) {
	case WS_TYPE_SEM:
		return ws_make_head(tag, value - 1);
	case WS_TYPE_EVENT:
		return ws_make_head(tag, 0);
	case WS_TYPE_MUTEX:
		return ws_make_head(tag & ~WS_HEAD_ABANDONED, owner);
	default:
		return head;
	}
}

#endif
