/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Semaphores: the head's value is the count, aux the maximum. */
#include "object.h"
#include "call.h"

int ws_sem_create(ws_arena *arena, uint32_t count, uint32_t max, ws_handle *sem)
{
	if (!arena || !sem || max == 0 || count > max)
		return -EINVAL;
	return ws_object_create(arena, WS_TYPE_SEM, count, max, sem);
}

struct release {
	uint32_t count;
	uint32_t prev;
};

static int add_units(uint64_t head, uint32_t max, struct release *r, uint64_t *next)
{
	uint32_t value = ws_head_value(head);

	r->prev = value;
	if (value > max || r->count > max - value)
		return -EOVERFLOW;
	*next = ws_make_head(ws_head_tag(head), value + r->count);
	return 0;
}

/* Queued waiters are owed the units: only the locked path hands them over. */
static int release_fast(uint64_t head, uint32_t aux, uint64_t *next, void *ctx)
{
	return add_units(head, aux, ctx, next);
}

static int release_locked(struct ws_object *obj, void *ctx)
{
	uint64_t head = atomic_load_explicit(&obj->head, memory_order_relaxed), next;
	int ret = add_units(head, ws_get(&obj->aux), ctx, &next);

	if (!ret)
		ws_head_write(obj, ws_head_tag(next), ws_head_value(next));
	return ret;
}

static const struct ws_object_call release_call = {
	WS_TYPE_SEM, WS_AFTER_SETTLE, WS_HEAD_QUEUED, release_fast, release_locked
};

int ws_sem_release(ws_arena *arena, ws_handle sem, uint32_t count, uint32_t *prev_count)
{
	struct release r = { count, 0 };
	int ret;

	/* Windows rejects a release of nothing, too. */
	if (!arena || count == 0)
		return -EINVAL;
	ret = ws_object_call(arena, sem, &release_call, &r);
	if (!ret && prev_count)
		*prev_count = r.prev;
	return ret;
}

int ws_sem_read(ws_arena *arena, ws_handle sem, uint32_t *count, uint32_t *max)
{
	uint64_t head;
	uint32_t aux;
	int ret;

	if (!arena || !count || !max)
		return -EINVAL;
	ret = ws_object_read(arena, sem, WS_TYPE_SEM, &head, &aux);
	if (ret)
		return ret;
	*count = ws_head_value(head);
	*max = aux;
	return 0;
}
