/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bad input for every function: NULL arena, NULL required pointers, bad
 * handles (0, never created, closed) -EBADF, wrong type -EINVAL, and after
 * each failure the state of every object is unchanged.
 */
#include "harness.h"

#include <string.h>

struct world {
	ws_arena *a;
	ws_handle sem, mtx, mtx_free, mtx_dead, ev_man, ev_auto;
	ws_handle closed;
	ws_handle bad[8];
	int nbad;
};

struct snapshot {
	uint32_t sem_c, sem_m;
	int mtx_rc, mtx_free_rc, mtx_dead_rc;
	uint32_t mtx_c, mtx_o, mtx_free_c, mtx_free_o, mtx_dead_c, mtx_dead_o;
	bool man_s, man_m, auto_s, auto_m;
};

static struct snapshot snap(struct world *w)
{
	struct snapshot s;
	memset(&s, 0, sizeof s);
	CK_OK(ws_sem_read(w->a, w->sem, &s.sem_c, &s.sem_m));
	s.mtx_rc = ws_mutex_read(w->a, w->mtx, &s.mtx_c, &s.mtx_o);
	s.mtx_free_rc = ws_mutex_read(w->a, w->mtx_free, &s.mtx_free_c, &s.mtx_free_o);
	s.mtx_dead_rc = ws_mutex_read(w->a, w->mtx_dead, &s.mtx_dead_c, &s.mtx_dead_o);
	CK_OK(ws_event_read(w->a, w->ev_man, &s.man_s, &s.man_m));
	CK_OK(ws_event_read(w->a, w->ev_auto, &s.auto_s, &s.auto_m));
	return s;
}

static void same(struct world *w, const struct snapshot *before, const char *what)
{
	struct snapshot now = snap(w);
	ck_assert_msg(memcmp(&now, before, sizeof now) == 0, "state changed by failed %s", what);
}

static bool is_created(struct world *w, ws_handle h)
{
	ws_handle all[] = { w->sem, w->mtx, w->mtx_free, w->mtx_dead, w->ev_man, w->ev_auto };
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (all[i] == h)
			return true;
	return false;
}

static void setup(struct world *w)
{
	memset(w, 0, sizeof *w);
	w->a = test_arena();
	w->sem = mk_sem(w->a, 2, 5);
	w->mtx = mk_mutex(w->a, 5, 2);
	w->mtx_free = mk_mutex(w->a, 0, 0);
	w->mtx_dead = mk_mutex(w->a, 6, 1);
	CK_OK(ws_mutex_kill(w->a, w->mtx_dead, 6));
	w->ev_man = mk_event(w->a, true, true);
	w->ev_auto = mk_event(w->a, false, true);
	w->closed = mk_event(w->a, true, true);
	CK_OK(ws_close(w->a, w->closed));
	/* never created: 0, and values the library never handed out */
	ws_handle cand[] = {
		0, w->closed, UINT32_MAX, 0x7fffffffu, 0x80000000u, 0xdeadbeefu,
		w->ev_auto + 0x10000u, w->ev_auto ^ 0x40000000u, w->ev_auto + 1000,
	};
	for (size_t i = 0; i < sizeof cand / sizeof cand[0] && w->nbad < 8; i++)
		if (!is_created(w, cand[i]))
			w->bad[w->nbad++] = cand[i];
	ck_assert_int_ge(w->nbad, 6);
}

START_TEST(sem_functions)
{
	struct world w;
	setup(&w);
	struct snapshot s0 = snap(&w);
	ws_handle h = 0;
	uint32_t c = 0, m = 0;
	CK_RC(ws_sem_create(NULL, 1, 1, &h), -EINVAL);
	CK_RC(ws_sem_create(w.a, 1, 1, NULL), -EINVAL);
	CK_RC(ws_sem_create(w.a, 2, 1, &h), -EINVAL);
	CK_RC(ws_sem_create(w.a, 0, 0, &h), -EINVAL);
	same(&w, &s0, "ws_sem_create");

	CK_RC(ws_sem_release(NULL, w.sem, 1, &c), -EINVAL);
	CK_RC(ws_sem_release(w.a, w.sem, 0, &c), -EINVAL);
	CK_RC(ws_sem_release(w.a, w.sem, 4, &c), -EOVERFLOW);
	CK_RC(ws_sem_release(w.a, w.sem, UINT32_MAX, &c), -EOVERFLOW);
	CK_RC(ws_sem_release(w.a, w.ev_man, 1, &c), -EINVAL);
	CK_RC(ws_sem_release(w.a, w.mtx, 1, &c), -EINVAL);
	for (int i = 0; i < w.nbad; i++)
		CK_RC(ws_sem_release(w.a, w.bad[i], 1, &c), -EBADF);
	same(&w, &s0, "ws_sem_release");

	CK_RC(ws_sem_read(NULL, w.sem, &c, &m), -EINVAL);
	CK_RC(ws_sem_read(w.a, w.sem, NULL, &m), -EINVAL);
	CK_RC(ws_sem_read(w.a, w.sem, &c, NULL), -EINVAL);
	CK_RC(ws_sem_read(w.a, w.ev_auto, &c, &m), -EINVAL);
	CK_RC(ws_sem_read(w.a, w.mtx_free, &c, &m), -EINVAL);
	for (int i = 0; i < w.nbad; i++)
		CK_RC(ws_sem_read(w.a, w.bad[i], &c, &m), -EBADF);
	same(&w, &s0, "ws_sem_read");
	ws_arena_close(w.a);
}
END_TEST

START_TEST(mutex_functions)
{
	struct world w;
	setup(&w);
	struct snapshot s0 = snap(&w);
	ws_handle h = 0;
	uint32_t c = 0, o = 0;
	CK_RC(ws_mutex_create(NULL, 0, 0, &h), -EINVAL);
	CK_RC(ws_mutex_create(w.a, 0, 0, NULL), -EINVAL);
	CK_RC(ws_mutex_create(w.a, 0, 1, &h), -EINVAL);
	CK_RC(ws_mutex_create(w.a, 1, 0, &h), -EINVAL);
	same(&w, &s0, "ws_mutex_create");

	CK_RC(ws_mutex_unlock(NULL, w.mtx, 5, &c), -EINVAL);
	CK_RC(ws_mutex_unlock(w.a, w.mtx, 0, &c), -EINVAL);
	CK_RC(ws_mutex_unlock(w.a, w.mtx, 6, &c), -EPERM);
	CK_RC(ws_mutex_unlock(w.a, w.mtx_free, 5, &c), -EPERM);
	CK_RC(ws_mutex_unlock(w.a, w.mtx_dead, 6, &c), -EPERM);
	CK_RC(ws_mutex_unlock(w.a, w.sem, 5, &c), -EINVAL);
	CK_RC(ws_mutex_unlock(w.a, w.ev_man, 5, &c), -EINVAL);
	for (int i = 0; i < w.nbad; i++)
		CK_RC(ws_mutex_unlock(w.a, w.bad[i], 5, &c), -EBADF);
	same(&w, &s0, "ws_mutex_unlock");

	CK_RC(ws_mutex_kill(NULL, w.mtx, 5), -EINVAL);
	CK_RC(ws_mutex_kill(w.a, w.mtx, 0), -EINVAL);
	CK_RC(ws_mutex_kill(w.a, w.mtx, 6), -EPERM);
	CK_RC(ws_mutex_kill(w.a, w.mtx_free, 5), -EPERM);
	CK_RC(ws_mutex_kill(w.a, w.mtx_dead, 6), -EPERM);
	CK_RC(ws_mutex_kill(w.a, w.sem, 5), -EINVAL);
	CK_RC(ws_mutex_kill(w.a, w.ev_auto, 5), -EINVAL);
	for (int i = 0; i < w.nbad; i++)
		CK_RC(ws_mutex_kill(w.a, w.bad[i], 5), -EBADF);
	same(&w, &s0, "ws_mutex_kill");

	CK_RC(ws_mutex_read(NULL, w.mtx, &c, &o), -EINVAL);
	CK_RC(ws_mutex_read(w.a, w.mtx, NULL, &o), -EINVAL);
	CK_RC(ws_mutex_read(w.a, w.mtx, &c, NULL), -EINVAL);
	CK_RC(ws_mutex_read(w.a, w.sem, &c, &o), -EINVAL);
	CK_RC(ws_mutex_read(w.a, w.ev_man, &c, &o), -EINVAL);
	for (int i = 0; i < w.nbad; i++)
		CK_RC(ws_mutex_read(w.a, w.bad[i], &c, &o), -EBADF);
	same(&w, &s0, "ws_mutex_read");
	ws_arena_close(w.a);
}
END_TEST

START_TEST(event_functions)
{
	struct world w;
	setup(&w);
	struct snapshot s0 = snap(&w);
	ws_handle h = 0;
	bool b1 = false, b2 = false;
	CK_RC(ws_event_create(NULL, true, true, &h), -EINVAL);
	CK_RC(ws_event_create(w.a, true, true, NULL), -EINVAL);
	same(&w, &s0, "ws_event_create");

	int (*ops[3])(ws_arena *, ws_handle, bool *) = { ws_event_set, ws_event_reset,
							 ws_event_pulse };
	static const char *names[3] = { "ws_event_set", "ws_event_reset", "ws_event_pulse" };
	for (int k = 0; k < 3; k++) {
		CK_RC(ops[k](NULL, w.ev_auto, &b1), -EINVAL);
		CK_RC(ops[k](w.a, w.sem, &b1), -EINVAL);
		CK_RC(ops[k](w.a, w.mtx, &b1), -EINVAL);
		CK_RC(ops[k](w.a, w.mtx_free, NULL), -EINVAL);
		for (int i = 0; i < w.nbad; i++)
			CK_RC(ops[k](w.a, w.bad[i], &b1), -EBADF);
		same(&w, &s0, names[k]);
	}

	CK_RC(ws_event_read(NULL, w.ev_man, &b1, &b2), -EINVAL);
	CK_RC(ws_event_read(w.a, w.ev_man, NULL, &b2), -EINVAL);
	CK_RC(ws_event_read(w.a, w.ev_man, &b1, NULL), -EINVAL);
	CK_RC(ws_event_read(w.a, w.sem, &b1, &b2), -EINVAL);
	CK_RC(ws_event_read(w.a, w.mtx_dead, &b1, &b2), -EINVAL);
	for (int i = 0; i < w.nbad; i++)
		CK_RC(ws_event_read(w.a, w.bad[i], &b1, &b2), -EBADF);
	same(&w, &s0, "ws_event_read");
	ws_arena_close(w.a);
}
END_TEST

START_TEST(close_function)
{
	struct world w;
	setup(&w);
	struct snapshot s0 = snap(&w);
	CK_RC(ws_close(NULL, w.sem), -EINVAL);
	for (int i = 0; i < w.nbad; i++)
		CK_RC(ws_close(w.a, w.bad[i]), -EBADF);
	same(&w, &s0, "ws_close");
	ws_arena_close(w.a);
}
END_TEST

/* A failed wait acquires nothing, even signaled objects before the bad one. */
START_TEST(wait_functions)
{
	struct world w;
	setup(&w);
	struct snapshot s0 = snap(&w);
	struct timespec past = deadline_past();
	uint32_t idx = 99;
	for (int all = 0; all < 2; all++) {
		int (*wf)(ws_arena *, const struct ws_wait *, uint32_t *) =
			all ? ws_wait_all : ws_wait_any;
		const char *name = all ? "ws_wait_all" : "ws_wait_any";
		ws_handle good[4] = { w.ev_auto, w.sem, w.mtx_free, w.ev_man };
		struct ws_wait ok = { .objects = good, .count = 4, .owner = 9, .deadline = &past };
		struct ws_wait x;

		CK_RC(wf(NULL, &ok, &idx), -EINVAL);
		CK_RC(wf(w.a, NULL, &idx), -EINVAL);
		CK_RC(wf(w.a, &ok, NULL), -EINVAL);
		x = ok;
		x.owner = 0;
		CK_RC(wf(w.a, &x, &idx), -EINVAL);
		x = ok;
		x.objects = NULL;
		CK_RC(wf(w.a, &x, &idx), -EINVAL);
		x = ok;
		x.count = WS_MAX_WAIT_OBJECTS + 1;
		ws_handle many[WS_MAX_WAIT_OBJECTS + 1];
		for (int i = 0; i < WS_MAX_WAIT_OBJECTS + 1; i++)
			many[i] = w.ev_man;
		x.objects = many;
		CK_RC(wf(w.a, &x, &idx), -EINVAL);
		same(&w, &s0, name);

		/* a bad handle at every position, after signaled objects */
		for (int i = 0; i < w.nbad; i++) {
			for (int pos = 0; pos < 5; pos++) {
				ws_handle objs[5];
				int k = 0;
				for (int j = 0; j < 5; j++)
					objs[j] = j == pos ? w.bad[i] : good[k++];
				x = ok;
				x.objects = objs;
				x.count = 5;
				int rc = wf(w.a, &x, &idx);
				ck_assert_msg(rc == -EBADF, "%s bad handle %#x at %d: %d (%s)", name,
					      w.bad[i], pos, rc, errname(rc));
				x.deadline = NULL;
				rc = wf(w.a, &x, &idx);
				ck_assert_msg(rc == -EBADF, "%s (no deadline) bad handle %#x at %d: %d (%s)",
					      name, w.bad[i], pos, rc, errname(rc));
			}
			same(&w, &s0, name);
		}
		/* bad alerts: closed / never created (-EBADF), not an event (-EINVAL) */
		for (int i = 0; i < w.nbad; i++) {
			if (w.bad[i] == 0)
				continue; /* 0 means "no alert" */
			x = ok;
			x.alert = w.bad[i];
			CK_RC(wf(w.a, &x, &idx), -EBADF);
		}
		/* an alert that is not an event, not among the objects */
		x = ok;
		x.objects = good;
		x.count = 1; /* { ev_auto } */
		x.alert = w.sem;
		int rc = wf(w.a, &x, &idx);
		ck_assert_msg(rc == -EINVAL, "%s with a semaphore alert: %d (%s)", name, rc,
			      errname(rc));
		x.alert = w.mtx_free;
		rc = wf(w.a, &x, &idx);
		ck_assert_msg(rc == -EINVAL, "%s with a mutex alert: %d (%s)", name, rc,
			      errname(rc));
		same(&w, &s0, name);
		/* ... and one that is also among the objects */
		x = ok;
		x.alert = w.sem;
		rc = wf(w.a, &x, &idx);
		ck_assert_msg(rc == -EINVAL, "%s with a semaphore alert that is also object 1: "
			      "%d (%s)", name, rc, errname(rc));
		x.alert = w.mtx_free;
		rc = wf(w.a, &x, &idx);
		ck_assert_msg(rc == -EINVAL, "%s with a mutex alert that is also object 2: "
			      "%d (%s)", name, rc, errname(rc));
		same(&w, &s0, name);
	}
	/* wait_all with a duplicate */
	ws_handle dup[3] = { w.ev_auto, w.sem, w.ev_auto };
	struct ws_wait d = { .objects = dup, .count = 3, .owner = 9, .deadline = &past };
	CK_RC(ws_wait_all(w.a, &d, &idx), -EINVAL);
	same(&w, &s0, "ws_wait_all duplicate");
	/* and the same good waits do succeed */
	ws_handle good[4] = { w.ev_auto, w.sem, w.mtx_free, w.ev_man };
	struct ws_wait ok = { .objects = good, .count = 4, .owner = 9, .deadline = &past };
	CK_OK(ws_wait_all(w.a, &ok, &idx));
	ws_arena_close(w.a);
}
END_TEST

/* Handles of one arena are not valid in another (fresh) arena. */
START_TEST(foreign_arena_handles)
{
	struct world w;
	setup(&w);
	ws_arena *b = test_arena();
	uint32_t c, m;
	bool s1, s2;
	CK_RC(ws_sem_read(b, w.sem, &c, &m), -EBADF);
	CK_RC(ws_mutex_read(b, w.mtx, &c, &m), -EBADF);
	CK_RC(ws_event_read(b, w.ev_man, &s1, &s2), -EBADF);
	CK_RC(ws_event_set(b, w.ev_auto, NULL), -EBADF);
	CK_RC(ws_close(b, w.sem), -EBADF);
	uint32_t idx;
	CK_RC(poll_any(b, &w.ev_man, 1, 1, &idx), -EBADF);
	ws_arena_close(b);
	ws_arena_close(w.a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("bad_input");
	TCase *tc = tcase_create("bad_input");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, sem_functions);
	tcase_add_test(tc, mutex_functions);
	tcase_add_test(tc, event_functions);
	tcase_add_test(tc, close_function);
	tcase_add_test(tc, wait_functions);
	tcase_add_test(tc, foreign_arena_handles);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
