/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The actor loop and the object calls: each operation picks a target (an
 * own object, a pool object, a closed handle, garbage), sometimes a bad
 * argument, computes what the model allows, makes the call and checks it.
 */
#include "rt.h"

#include "../../winsync/arena.h" /* white-box: a handle's generation, the last one */

#include <string.h>

void rt_table_op(struct rt_ctx *c, enum rt_kind kind);

bool rt_bad(struct rt_ctx *c)
{
	return rt_pct(&c->rng, rt_shm->mode.bad_pct);
}

ws_arena *rt_pick_arena(struct rt_ctx *c)
{
	c->cur = c->nb && (c->force_nb || rt_pct(&c->rng, rt_shm->mode.nonblock_pct)) ? c->nb : c->arena;
	return c->cur;
}

/* A handle that names nothing: never created, or closed (for ever -EBADF). */
ws_handle rt_garbage(struct rt_ctx *c)
{
	ws_handle h;

	switch (rt_below(&c->rng, 5)) {
	case 0:
		return UINT32_MAX;
	case 1:
		/* A live handle with the top generation bit flipped: a generation no slot reaches. */
		return c->nown ? c->own[rt_below(&c->rng, c->nown)].h ^ 0x80000000u : 0x80000001u;
	case 2:
		if (c->nclosed)
			return c->closed[rt_below(&c->rng, c->nclosed < 64 ? c->nclosed : 64)];
		/* fall through */
	default:
		h = rt_closed_pick(&c->rng);
		return h ? h : 0xfffffff0u;
	}
}

uint32_t rt_pick_owner(struct rt_ctx *c, bool mutexes)
{
	return c->me->owners[rt_below(&c->rng, mutexes ? RT_OWNERS - 1 : RT_OWNERS)];
}

static bool nb_now(struct rt_ctx *c)
{
	return c->nb && c->cur == c->nb;
}

/* What makes the rc set of a call. */
struct expect {
	uint32_t errs;       /* errors the arguments call for (any of them) */
	uint32_t maybe;      /* results allowed besides */
	const char *why;
};

static void add_err(struct expect *e, enum rt_rc r, const char *why)
{
	if (!e->errs)
		e->why = why;
	e->errs |= B(r);
}

static uint32_t allowed(struct rt_ctx *c, const struct expect *e, uint32_t success)
{
	uint32_t set = e->errs ? e->errs : success;

	return set | e->maybe | (nb_now(c) ? B(RC_EAGAIN) : 0);
}

/* A target of a call on one handle. */
enum tkind { TK_OWN, TK_POOL, TK_BAD };

struct target {
	enum tkind kind;
	ws_handle h;
	enum rt_type type;
	struct rt_own *own;
	uint32_t pool;
};

static bool pool_has(enum rt_type type)
{
	const struct rt_mode *m = &rt_shm->mode;

	return type == RT_EVENT ? m->pool_events : type == RT_SEM ? m->pool_sems : m->pool_mutexes;
}

static uint32_t pool_pick(struct rt_ctx *c, enum rt_type type)
{
	const struct rt_mode *m = &rt_shm->mode;

	switch (type) {
	case RT_EVENT: return rt_below(&c->rng, m->pool_events);
	case RT_SEM: return m->pool_events + rt_below(&c->rng, m->pool_sems);
	default: return m->pool_events + m->pool_sems + rt_below(&c->rng, m->pool_mutexes);
	}
}

static struct rt_own *own_pick(struct rt_ctx *c, enum rt_type type)
{
	uint32_t n = 0, k;

	for (uint32_t i = 0; i < c->nown; i++)
		n += c->own[i].type == type;
	if (!n)
		return NULL;
	k = rt_below(&c->rng, n);
	for (uint32_t i = 0; i < c->nown; i++)
		if (c->own[i].type == type && k-- == 0)
			return &c->own[i];
	return NULL;
}

/* Mostly of type `want`; sometimes another type or a bad handle (bad input). */
static bool pick_target(struct rt_ctx *c, enum rt_type want, struct target *t)
{
	enum rt_type type = want;

	memset(t, 0, sizeof *t);
	if (rt_bad(c)) {
		if (rt_pct(&c->rng, 50)) {
			t->kind = TK_BAD;
			t->h = rt_pct(&c->rng, 10) ? 0 : rt_garbage(c);
			return true;
		}
		type = (enum rt_type)rt_range(&c->rng, RT_SEM, RT_EVENT);
	}
	if (pool_has(type) && (rt_pct(&c->rng, rt_shm->mode.pool_pct) || !own_pick(c, type))) {
		t->kind = TK_POOL;
		t->pool = pool_pick(c, type);
		t->h = rt_pool[t->pool].h;
		t->type = type;
		return true;
	}
	t->own = own_pick(c, type);
	if (!t->own)
		return false;
	t->kind = TK_OWN;
	t->h = t->own->h;
	t->type = type;
	return true;
}

/* The errors a target calls for when the call wants `want`. */
static void target_errs(const struct target *t, enum rt_type want, struct expect *e)
{
	if (t->kind == TK_BAD)
		add_err(e, RC_EBADF, "a handle that names nothing");
	else if (t->type != want)
		add_err(e, RC_EINVAL, "a handle of another type");
}

int rt_create_call(struct rt_ctx *c, enum rt_type type, uint32_t v1, uint32_t v2, bool null_out,
		   ws_handle *out, struct rt_oprec **opp)
{
	static const enum rt_call calls[] = { [RT_SEM] = C_SEM_CREATE, [RT_MUTEX] = C_MUTEX_CREATE,
					      [RT_EVENT] = C_EVENT_CREATE };
	int64_t closes_before = atomic_load(&rt_shm->closes_done);
	/* Each closed object a wait under way is queued on is held for it (ws_close). */
	int64_t waiting_before = atomic_load(&rt_shm->waiting_ub);
	struct rt_oprec *op;
	ws_handle h = 0;
	int rc;

	atomic_fetch_add(&rt_shm->live_ub, 1);
	op = rt_begin(c, calls[type]);
	op->a[0] = v1;
	op->a[1] = v2;
	op->a[5] = (c->cur == NULL) | null_out << 1;
	switch (type) {
	case RT_SEM:
		rc = ws_sem_create(c->cur, v1, v2, null_out ? NULL : &h);
		break;
	case RT_MUTEX: {
		bool mine = false;

		for (int k = 0; k < RT_OWNERS; k++)
			mine |= v1 == atomic_load(&c->me->owners[k]);
		/* Created owned, by one of our ids: that id is now the one used last. */
		if (mine && v2)
			rt_acq_begin(c, v1);
		rc = ws_mutex_create(c->cur, v1, v2, null_out ? NULL : &h);
		if (mine && v2)
			rt_acq_end(c, v1, rc == 0);
		break;
	}
	default:
		rc = ws_event_create(c->cur, v1, v2, null_out ? NULL : &h);
		break;
	}
	op->out[0] = h;
	if (rc)
		atomic_fetch_sub(&rt_shm->live_ub, 1);
	rt_end(c, op, rc);
	*out = h;
	*opp = op;
	if (rc == -ENOSPC) {
		int64_t most = atomic_load(&rt_shm->live_ub) - closes_before;
		/* A slot past its last generation retires: it is never given out again. */
		int64_t retired = atomic_load(&rt_shm->retired_ub);
		int64_t usable = (int64_t)rt_shm->mode.capacity - retired - waiting_before;

		if (most < usable)
			rt_fail(c, "-ENOSPC below capacity",
				"%s: -ENOSPC with at most %lld live objects, capacity %u, "
				"%lld slots retired at most, %lld held for waits at most",
				rt_call_name(calls[type]), (long long)most, rt_shm->mode.capacity,
				(long long)retired, (long long)waiting_before);
	}
	return rc;
}

int rt_counted_close(ws_arena *arena, ws_handle h)
{
	bool last = arena && (h & arena->index_mask) < arena->slots &&
		    h >> arena->index_bits == ws_gen_mask(arena);
	int rc;

	if (last)
		atomic_fetch_add(&rt_shm->retired_ub, 1);
	rc = ws_close(arena, h);
	if (rc == 0)
		atomic_fetch_add(&rt_shm->closes_done, 1);
	else if (last)
		atomic_fetch_sub(&rt_shm->retired_ub, 1);
	return rc;
}

bool rt_close_call(struct rt_ctx *c, ws_handle h, uint32_t allowed_set, const char *what)
{
	struct rt_oprec *op = rt_begin(c, C_CLOSE);
	int rc;

	op->a[0] = h;
	op->a[5] = c->cur == NULL;
	rc = rt_counted_close(c->cur, h);
	rt_end(c, op, rc);
	if (rc == 0)
		rt_closed_add(h);
	return rt_expect(c, op, rc, allowed_set, what) && rc == 0;
}

static void op_create(struct rt_ctx *c)
{
	enum rt_type type = (enum rt_type)rt_range(&c->rng, RT_SEM, RT_EVENT);
	struct expect e = { 0 };
	struct rt_own o = { 0 };
	bool null_out = false;
	uint32_t v1 = 0, v2 = 0;
	struct rt_oprec *op;
	ws_handle h;
	int rc;

	if (c->nown >= rt_shm->mode.own_max)
		return;
	rt_pick_arena(c);
	o.type = (uint8_t)type;
	switch (type) {
	case RT_SEM:
		switch (rt_below(&c->rng, 8)) {
		case 0: v2 = UINT32_MAX; v1 = rt_pct(&c->rng, 50) ? UINT32_MAX : UINT32_MAX - 2; break;
		case 1: v2 = 1; v1 = rt_below(&c->rng, 2); break;
		default: v2 = rt_range(&c->rng, 1, 8); v1 = rt_below(&c->rng, v2 + 1); break;
		}
		if (rt_bad(c)) {
			if (rt_pct(&c->rng, 50))
				v2 = 0;
			else
				v1 = v2 + 1 + rt_below(&c->rng, 5);
		}
		if (v2 == 0 || v1 > v2)
			add_err(&e, RC_EINVAL, "semaphore count above max, or max 0");
		o.count = v1;
		o.max = v2;
		break;
	case RT_MUTEX:
		if (rt_pct(&c->rng, 40)) {
			v1 = rt_pick_owner(c, true);
			v2 = rt_pct(&c->rng, 5) ? UINT32_MAX - rt_below(&c->rng, 2) : rt_range(&c->rng, 1, 3);
		}
		if (rt_bad(c)) {
			if (rt_pct(&c->rng, 50))
				v1 = 0, v2 = rt_range(&c->rng, 1, 3);
			else
				v1 = rt_pick_owner(c, true), v2 = 0;
		}
		if ((v1 == 0) != (v2 == 0))
			add_err(&e, RC_EINVAL, "mutex owner without count or count without owner");
		o.owner = v1;
		o.rec = v2;
		break;
	default:
		v1 = rt_pct(&c->rng, 50);
		v2 = rt_pct(&c->rng, 50);
		o.manual = v1;
		o.signaled = v2;
		break;
	}
	if (rt_bad(c)) {
		if (rt_pct(&c->rng, 50))
			c->cur = NULL;
		else
			null_out = true;
		add_err(&e, RC_EINVAL, "NULL arena or handle pointer");
	}
	rc = rt_create_call(c, type, v1, v2, null_out, &h, &op);
	e.maybe |= B(RC_ENOSPC);
	if (!rt_expect(c, op, rc, allowed(c, &e, B(RC_OK)), e.why ? e.why : "create") || rc)
		return;
	o.h = h;
	rt_own_add(c, &o);
}

static void op_close(struct rt_ctx *c)
{
	struct expect e = { 0 };
	ws_handle h;
	struct rt_own *o = NULL;

	rt_pick_arena(c);
	if (c->nown && !rt_bad(c)) {
		o = &c->own[rt_below(&c->rng, c->nown)];
		h = o->h;
	} else {
		h = rt_pct(&c->rng, 10) ? 0 : rt_garbage(c);
		add_err(&e, RC_EBADF, "close of a handle that names nothing");
	}
	if (rt_bad(c)) {
		c->cur = NULL;
		add_err(&e, RC_EINVAL, "NULL arena");
	}
	if (rt_close_call(c, h, allowed(c, &e, B(RC_OK)), e.why ? e.why : "close of an own object") && o)
		rt_own_remove(c, o);
}

static void op_sem_release(struct rt_ctx *c)
{
	struct target t;
	struct expect e = { 0 };
	uint32_t count = rt_range(&c->rng, 1, 3), prev = 0xdead, succ = B(RC_OK), nulls = 0;
	bool prev_null = rt_pct(&c->rng, 10);
	struct rt_oprec *op;
	int rc;

	if (!pick_target(c, RT_SEM, &t))
		return;
	rt_pick_arena(c);
	target_errs(&t, RT_SEM, &e);
	if (t.kind == TK_OWN && t.type == RT_SEM && rt_pct(&c->rng, 15))
		count = t.own->max - t.own->count + rt_below(&c->rng, 2); /* to the edge, or past it */
	if (rt_bad(c)) {
		if (rt_pct(&c->rng, 50)) {
			count = 0;
			add_err(&e, RC_EINVAL, "release of 0 units");
		} else {
			c->cur = NULL;
			nulls = 1;
			add_err(&e, RC_EINVAL, "NULL arena");
		}
	}
	if (count == 0)
		add_err(&e, RC_EINVAL, "release of 0 units");
	if (!e.errs && t.kind == TK_OWN && count > t.own->max - t.own->count)
		succ = B(RC_EOVERFLOW);
	if (!e.errs && t.kind == TK_POOL && !rt_pool[t.pool].big)
		succ |= B(RC_EOVERFLOW);
	op = rt_begin(c, C_SEM_RELEASE);
	op->a[0] = t.h;
	op->a[1] = count;
	op->a[5] = nulls | prev_null << 1;
	rc = ws_sem_release(c->cur, t.h, count, prev_null ? NULL : &prev);
	op->out[0] = prev;
	if (rc == 0 && t.kind == TK_POOL && !e.errs)
		atomic_fetch_add(&rt_pool[t.pool].rel_units, count);
	rt_end(c, op, rc);
	if (!rt_expect(c, op, rc, allowed(c, &e, succ),
		       e.why ? e.why : t.kind == TK_POOL && rt_pool[t.pool].big ?
		       "release of a semaphore whose maximum no run reaches" : "release") || rc)
		return;
	if (t.kind == TK_OWN) {
		if (!prev_null && prev != t.own->count)
			rt_fail(c, "ws_sem_release: own semaphore's previous count differs from its model",
				"handle %#x: prev %u, model %u", t.h, prev, t.own->count);
		t.own->count += count;
	} else if (!prev_null && (prev > rt_pool[t.pool].max - count)) {
		rt_fail(c, "ws_sem_release: a previous count the semaphore never had",
			"pool semaphore %#x (max %u): prev %u + %u", t.h, rt_pool[t.pool].max, prev, count);
	}
}

static void op_sem_read(struct rt_ctx *c)
{
	struct target t;
	struct expect e = { 0 };
	uint32_t x = 0xdead, y = 0xdead, nulls = 0;
	struct rt_oprec *op;
	int rc;

	if (!pick_target(c, RT_SEM, &t))
		return;
	rt_pick_arena(c);
	target_errs(&t, RT_SEM, &e);
	if (rt_bad(c)) {
		nulls = 1u << rt_below(&c->rng, 3);
		if (nulls & 1)
			c->cur = NULL;
		add_err(&e, RC_EINVAL, "NULL arena or output pointer");
	}
	op = rt_begin(c, C_SEM_READ);
	op->a[0] = t.h;
	op->a[5] = nulls;
	rc = ws_sem_read(c->cur, t.h, nulls & 2 ? NULL : &x, nulls & 4 ? NULL : &y);
	op->out[0] = x;
	op->out[1] = y;
	rt_end(c, op, rc);
	if (!rt_expect(c, op, rc, allowed(c, &e, B(RC_OK)), e.why ? e.why : "read") || rc)
		return;
	if (t.kind == TK_OWN && (x != t.own->count || y != t.own->max))
		rt_fail(c, "ws_sem_read: own semaphore differs from its model",
			"handle %#x: read %u/%u, model %u/%u", t.h, x, y, t.own->count, t.own->max);
	if (t.kind == TK_POOL && (y != rt_pool[t.pool].max || x > y))
		rt_fail(c, "ws_sem_read: a state the semaphore never had",
			"pool semaphore %#x (max %u): read count %u max %u", t.h, rt_pool[t.pool].max, x, y);
}

/* A pool mutex this actor holds, or an own mutex; unlock (or kill) it, or try one it does not hold. */
static void op_mutex_unlock(struct rt_ctx *c, bool kill)
{
	struct target t;
	struct expect e = { 0 };
	struct rt_held *held = NULL;
	uint32_t owner, prev = 0xdead, nulls = 0, succ = B(RC_OK);
	bool prev_null = rt_pct(&c->rng, 10);
	struct rt_oprec *op;
	int rc;

	if (c->nheld && rt_pct(&c->rng, 60)) {
		held = &c->held[rt_below(&c->rng, c->nheld)];
		t = (struct target){ TK_POOL, rt_pool[held->pool].h, RT_MUTEX, NULL, held->pool };
	} else if (!pick_target(c, RT_MUTEX, &t)) {
		return;
	}
	if (t.kind == TK_POOL && !held)
		held = rt_held_find(c, t.pool);
	rt_pick_arena(c);
	target_errs(&t, RT_MUTEX, &e);
	if (held && rt_pct(&c->rng, 90))
		owner = held->owner;
	else if (t.kind == TK_OWN && t.own->owner && rt_pct(&c->rng, 80))
		owner = t.own->owner;
	else
		owner = rt_pick_owner(c, true);
	if (rt_bad(c)) {
		if (rt_pct(&c->rng, 50)) {
			owner = 0;
		} else {
			c->cur = NULL;
			nulls = 1;
		}
		add_err(&e, RC_EINVAL, "owner 0 or NULL arena");
	}
	if (!e.errs) {
		if (t.kind == TK_OWN && t.own->owner != owner)
			succ = B(RC_EPERM);
		if (t.kind == TK_POOL && (!held || held->owner != owner))
			succ = B(RC_EPERM);
	}
	/* The holder word goes first: from here someone else may take it. */
	if (!e.errs && succ == B(RC_OK) && held && (kill || held->count == 1)) {
		uint32_t expected = owner;

		if (!atomic_compare_exchange_strong(&rt_pool[t.pool].holder, &expected, 0))
			rt_fail(c, "mutual exclusion: holder word changed under its holder",
				"pool mutex %#x: holder word %#x, held by %#x", t.h, expected, owner);
	}
	op = rt_begin(c, kill ? C_MUTEX_KILL : C_MUTEX_UNLOCK);
	op->a[0] = t.h;
	op->a[1] = owner;
	op->a[5] = nulls | prev_null << 1;
	rc = kill ? ws_mutex_kill(c->cur, t.h, owner) :
		    ws_mutex_unlock(c->cur, t.h, owner, prev_null ? NULL : &prev);
	op->out[0] = prev;
	rt_end(c, op, rc);
	if (!rt_expect(c, op, rc, allowed(c, &e, succ), e.why ? e.why :
		       succ == B(RC_EPERM) ? "unlock by an owner id that does not hold it" :
		       "unlock by the holder")) {
		return;
	}
	if (rc == -EAGAIN && held && succ == B(RC_OK) && !e.errs && (kill || held->count == 1))
		atomic_store(&rt_pool[t.pool].holder, owner); /* nothing changed: still ours */
	if (rc)
		return;
	if (t.kind == TK_OWN) {
		if (!kill && !prev_null && prev != t.own->rec)
			rt_fail(c, "ws_mutex_unlock: own mutex's previous count differs from its model",
				"handle %#x: prev %u, model %u", t.h, prev, t.own->rec);
		if (kill) {
			t.own->owner = 0;
			t.own->rec = 0;
			t.own->abandoned = true;
		} else if (--t.own->rec == 0) {
			t.own->owner = 0;
		}
		return;
	}
	if (!kill && !prev_null && prev != held->count)
		rt_fail(c, "ws_mutex_unlock: wrong previous count of a held mutex",
			"pool mutex %#x: prev %u, held %u times", t.h, prev, held->count);
	if (kill || --held->count == 0)
		*held = c->held[--c->nheld];
}

static void op_mutex_read(struct rt_ctx *c)
{
	struct target t;
	struct expect e = { 0 };
	uint32_t x = 0xdead, y = 0xdead, nulls = 0, succ = B(RC_OK) | B(RC_EOWNERDEAD);
	struct rt_held *held = NULL;
	struct rt_oprec *op;
	int rc;

	if (!pick_target(c, RT_MUTEX, &t))
		return;
	rt_pick_arena(c);
	target_errs(&t, RT_MUTEX, &e);
	if (rt_bad(c)) {
		nulls = 1u << rt_below(&c->rng, 3);
		if (nulls & 1)
			c->cur = NULL;
		add_err(&e, RC_EINVAL, "NULL arena or output pointer");
	}
	if (t.kind == TK_OWN && t.type == RT_MUTEX)
		succ = t.own->abandoned ? B(RC_EOWNERDEAD) : B(RC_OK);
	if (t.kind == TK_POOL) {
		held = rt_held_find(c, t.pool);
		if (held)
			succ = B(RC_OK);
	}
	op = rt_begin(c, C_MUTEX_READ);
	op->a[0] = t.h;
	op->a[5] = nulls;
	rc = ws_mutex_read(c->cur, t.h, nulls & 2 ? NULL : &x, nulls & 4 ? NULL : &y);
	op->out[0] = x;
	op->out[1] = y;
	rt_end(c, op, rc);
	if (!rt_expect(c, op, rc, allowed(c, &e, succ), e.why ? e.why : "read") ||
	    (rc != 0 && rc != -EOWNERDEAD))
		return;
	if (t.kind == TK_OWN && (x != t.own->rec || y != t.own->owner))
		rt_fail(c, "ws_mutex_read: own mutex differs from its model",
			"handle %#x: read count %u owner %#x, model %u %#x", t.h, x, y, t.own->rec,
			t.own->owner);
	if (held && (x != held->count || y != held->owner))
		rt_fail(c, "ws_mutex_read: a held pool mutex read wrong",
			"pool mutex %#x: read count %u owner %#x, held %u times by %#x", t.h, x, y,
			held->count, held->owner);
	if (t.kind == TK_POOL && !held && ((x == 0) != (y == 0) || rt_owner_is_mine(c, y)))
		rt_fail(c, "ws_mutex_read: a state the mutex never had",
			"pool mutex %#x: count %u owner %#x (not held by this actor)", t.h, x, y);
}

/* A dead actor's owner id, another actor's wait-only id, our own, or one nobody uses. */
static void op_owner_died(struct rt_ctx *c)
{
	struct expect e = { 0 };
	uint32_t owner, nulls = 0, choice = rt_below(&c->rng, 10);
	struct rt_oprec *op;
	int rc;

	rt_pick_arena(c);
	if (choice < 3 && rt_shm->mode.cancels) {
		struct rt_actor *a = &rt_shm->actors[rt_below(&c->rng, RT_MAX_ACTORS)];

		if (atomic_load(&a->state) != A_RUNNING)
			return;
		owner = a->owners[RT_OWNERS - 1];
		atomic_fetch_add(&rt_shm->cancels_done, 1);
	} else if (choice < 5) {
		struct rt_actor *a = &rt_shm->actors[rt_below(&c->rng, RT_MAX_ACTORS)];

		if (atomic_load(&a->state) != A_DEAD)
			return;
		owner = a->owners[rt_below(&c->rng, RT_OWNERS)];
	} else if (choice < 8) {
		owner = c->me->owners[rt_below(&c->rng, RT_OWNERS - 1)];
	} else {
		owner = 0x3f000000u + rt_below(&c->rng, 1u << 20);
	}
	if (rt_bad(c)) {
		if (rt_pct(&c->rng, 50))
			owner = 0;
		else
			c->cur = NULL, nulls = 1;
		add_err(&e, RC_EINVAL, "owner 0 or NULL arena");
	}
	/* Our own id: its holder words go first, as for an unlock. */
	if (!e.errs && rt_owner_is_mine(c, owner)) {
		for (uint32_t i = 0; i < c->nheld; i++) {
			uint32_t expected = owner;

			if (c->held[i].owner == owner &&
			    !atomic_compare_exchange_strong(&rt_pool[c->held[i].pool].holder,
							    &expected, 0))
				rt_fail(c, "mutual exclusion: holder word changed under its holder",
					"pool mutex %#x: holder word %#x, held by %#x",
					rt_pool[c->held[i].pool].h, expected, owner);
		}
	}
	op = rt_begin(c, C_OWNER_DIED);
	op->a[0] = owner;
	op->a[5] = nulls;
	rc = ws_owner_died(c->cur, owner);
	rt_end(c, op, rc);
	if (!rt_expect(c, op, rc, allowed(c, &e, B(RC_OK)), e.why ? e.why : "owner died"))
		return;
	if (!rt_owner_is_mine(c, owner) || e.errs)
		return;
	if (rc == -EAGAIN) {
		for (uint32_t i = 0; i < c->nheld; i++)
			if (c->held[i].owner == owner)
				atomic_store(&rt_pool[c->held[i].pool].holder, owner);
		return;
	}
	for (uint32_t i = 0; i < c->nown; i++) {
		struct rt_own *o = &c->own[i];

		if (o->type == RT_MUTEX && o->owner == owner) {
			o->owner = 0;
			o->rec = 0;
			o->abandoned = true;
		}
	}
	for (uint32_t i = 0; i < c->nheld;) {
		if (c->held[i].owner == owner)
			c->held[i] = c->held[--c->nheld];
		else
			i++;
	}
}

static void op_event(struct rt_ctx *c, enum rt_call call)
{
	struct target t;
	struct expect e = { 0 };
	bool was = false, was_null, pool_auto;
	uint32_t nulls = 0;
	struct rt_oprec *op;
	int rc;

	if (!pick_target(c, RT_EVENT, &t))
		return;
	/* The beacon stays signaled for ever. */
	if (t.kind == TK_POOL && rt_pool[t.pool].beacon && call != C_EVENT_SET)
		return;
	pool_auto = t.kind == TK_POOL && t.type == RT_EVENT && !rt_pool[t.pool].manual;
	was_null = !pool_auto && rt_pct(&c->rng, 15);
	rt_pick_arena(c);
	target_errs(&t, RT_EVENT, &e);
	if (rt_bad(c)) {
		c->cur = NULL;
		nulls = 1;
		add_err(&e, RC_EINVAL, "NULL arena");
	}
	op = rt_begin(c, call);
	op->a[0] = t.h;
	op->a[5] = nulls | was_null << 1;
	rc = call == C_EVENT_SET ? ws_event_set(c->cur, t.h, was_null ? NULL : &was) :
	     call == C_EVENT_RESET ? ws_event_reset(c->cur, t.h, was_null ? NULL : &was) :
				     ws_event_pulse(c->cur, t.h, was_null ? NULL : &was);
	op->out[0] = was;
	if (rc == 0 && pool_auto && !e.errs) {
		struct rt_pool_obj *p = &rt_pool[t.pool];

		if (call == C_EVENT_SET && !was)
			atomic_fetch_add(&p->created, 1);
		else if (call == C_EVENT_RESET && was)
			atomic_fetch_add(&p->reset_true, 1);
		else if (call == C_EVENT_PULSE)
			atomic_fetch_add(was ? &p->pulse_true : &p->pulse_false, 1);
	}
	rt_end(c, op, rc);
	if (!rt_expect(c, op, rc, allowed(c, &e, B(RC_OK)), e.why ? e.why : "event change") || rc)
		return;
	if (t.kind == TK_OWN) {
		if (!was_null && was != t.own->signaled)
			rt_fail(c, "own event's previous state differs from its model",
				"%s(%#x): was %d, model %d", rt_call_name(call), t.h, was, t.own->signaled);
		t.own->signaled = call == C_EVENT_SET;
	}
}

static void op_event_read(struct rt_ctx *c)
{
	struct target t;
	struct expect e = { 0 };
	bool s = false, m = false;
	uint32_t nulls = 0;
	struct rt_oprec *op;
	int rc;

	if (!pick_target(c, RT_EVENT, &t))
		return;
	rt_pick_arena(c);
	target_errs(&t, RT_EVENT, &e);
	if (rt_bad(c)) {
		nulls = 1u << rt_below(&c->rng, 3);
		if (nulls & 1)
			c->cur = NULL;
		add_err(&e, RC_EINVAL, "NULL arena or output pointer");
	}
	op = rt_begin(c, C_EVENT_READ);
	op->a[0] = t.h;
	op->a[5] = nulls;
	rc = ws_event_read(c->cur, t.h, nulls & 2 ? NULL : &s, nulls & 4 ? NULL : &m);
	op->out[0] = s;
	op->out[1] = m;
	rt_end(c, op, rc);
	if (!rt_expect(c, op, rc, allowed(c, &e, B(RC_OK)), e.why ? e.why : "read") || rc)
		return;
	if (t.kind == TK_OWN && (s != t.own->signaled || m != t.own->manual))
		rt_fail(c, "ws_event_read: own event differs from its model",
			"handle %#x: read %d/%d, model %d/%d", t.h, s, m, t.own->signaled, t.own->manual);
	if (t.kind == TK_POOL && (m != rt_pool[t.pool].manual || (rt_pool[t.pool].beacon && !s)))
		rt_fail(c, "ws_event_read: a state the event never had",
			"pool event %#x (manual %d, beacon %d): read signaled %d manual %d", t.h,
			rt_pool[t.pool].manual, rt_pool[t.pool].beacon, s, m);
}

void rt_op(struct rt_ctx *c, enum rt_kind kind)
{
	c->cur = c->arena;
	if (rt_shm->mode.table && rt_pct(&c->rng, rt_shm->mode.pool_pct) && kind != K_WAIT_ANY &&
	    kind != K_WAIT_ALL && kind < K_ARENA) {
		rt_table_op(c, kind);
		return;
	}
	switch (kind) {
	case K_CREATE: op_create(c); break;
	case K_CLOSE: op_close(c); break;
	case K_SEM_RELEASE: op_sem_release(c); break;
	case K_SEM_READ: op_sem_read(c); break;
	case K_MUTEX_UNLOCK: op_mutex_unlock(c, false); break;
	case K_MUTEX_KILL: op_mutex_unlock(c, true); break;
	case K_MUTEX_READ: op_mutex_read(c); break;
	case K_OWNER_DIED: op_owner_died(c); break;
	case K_EVENT_SET: op_event(c, C_EVENT_SET); break;
	case K_EVENT_RESET: op_event(c, C_EVENT_RESET); break;
	case K_EVENT_PULSE: op_event(c, C_EVENT_PULSE); break;
	case K_EVENT_READ: op_event_read(c); break;
	case K_WAIT_ANY: rt_wait_op(c, false); break;
	case K_WAIT_ALL: rt_wait_op(c, true); break;
	default: rt_misc_op(c, kind); break;
	}
}

/*
 * Swarm testing: each actor leaves out some kinds of operation and favours
 * others, so that some actors only read while others only close, say: races
 * a uniform mix makes rare become common, and no two actors are alike.
 */
static void swarm(struct rt_ctx *c)
{
	const struct rt_mode *m = &rt_shm->mode;
	uint32_t total = 0;

	while (!total) {
		for (int k = 0; k < RT_OPKINDS; k++) {
			uint32_t r = rt_below(&c->rng, 10);

			c->weight[k] = m->weight[k] * (r < 2 ? 0 : r < 7 ? 1 : 5);
			total += c->weight[k];
		}
	}
}

void rt_actor_run(struct rt_ctx *c)
{
	uint32_t total = 0;

	swarm(c);
	for (int k = 0; k < RT_OPKINDS; k++)
		total += c->weight[k];
	while (!atomic_load_explicit(&rt_shm->stop, memory_order_relaxed)) {
		uint32_t pick = rt_below(&c->rng, total);
		int k = 0;

		if (c->resync)
			rt_resync(c);
		while (pick >= c->weight[k])
			pick -= c->weight[k++];
		rt_op(c, (enum rt_kind)k);
		rt_suspend_verify(c);
		if (c->resync)
			rt_resync(c);
		/* Held mutexes block everyone else: let them go now and then. */
		if (c->nheld && rt_pct(&c->rng, c->nheld > 3 ? 30 : 5))
			rt_pool_release_all(c);
	}
}

/* The end: release what is held, compare every own object with its model, close them. */
void rt_actor_finish(struct rt_ctx *c)
{
	rt_pool_release_all(c);
	c->cur = c->arena;
	while (c->nown) {
		struct rt_own *o = &c->own[c->nown - 1];

		rt_own_verify(c, o);
		if (rt_close_call(c, o->h, B(RC_OK), "close of an own object at the end"))
			rt_own_remove(c, o);
		else
			c->nown--;
	}
	rt_suspend_verify(c);
}
