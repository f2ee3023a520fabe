/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Arenas: private and named, names, -EEXIST/-ENOENT, permissions, capacity,
 * different mapping addresses, backend name. */
#define _GNU_SOURCE
#include "harness.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

START_TEST(private_arena_basic)
{
	ws_arena *a = NULL;
	CK_OK(ws_arena_create(NULL, 0, &a));
	ck_assert_ptr_nonnull(a);
	ws_handle e = mk_event(a, true, false);
	CK_OK(ws_event_set(a, e, NULL));
	ck_assert(ev_signaled(a, e));
	ws_arena_close(a);
}
END_TEST

START_TEST(private_arenas_are_independent)
{
	ws_arena *a = test_arena();
	ws_arena *b = test_arena();
	ws_handle e = mk_event(a, true, true);
	bool s, m;
	/* b has no objects at all: the handle from a is not valid in b */
	CK_RC(ws_event_read(b, e, &s, &m), -EBADF);
	ws_handle e2 = mk_event(b, true, false);
	/* even if handle values coincide, state is per arena */
	if (e2 == e) {
		ck_assert(ev_signaled(a, e));
		ck_assert(!ev_signaled(b, e2));
	}
	ws_arena_close(a);
	ws_arena_close(b);
}
END_TEST

START_TEST(close_null_arena_is_harmless)
{
	ws_arena_close(NULL);
}
END_TEST

START_TEST(named_create_open_same_handles)
{
	char name[80];
	test_arena_name(name, sizeof name, "named");
	ws_arena *a = NULL, *b = NULL;
	CK_OK(ws_arena_create(name, 0, &a));
	CK_OK(ws_arena_open(name, &b));
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_ne(a, b);

	ws_handle e = mk_event(a, false, false);
	ws_handle s = mk_sem(b, 2, 5);
	ws_handle m = mk_mutex(a, 7, 1);
	bool sig, man;
	CK_OK(ws_event_read(b, e, &sig, &man));
	ck_assert(!sig && !man);
	CK_OK(ws_event_set(b, e, NULL));
	ck_assert(ev_signaled(a, e));
	ck_assert_uint_eq(sem_count(a, s), 2);
	uint32_t c, o;
	mtx_state(b, m, &c, &o);
	ck_assert_uint_eq(c, 1);
	ck_assert_uint_eq(o, 7);
	CK_OK(ws_mutex_unlock(b, m, 7, NULL));
	mtx_state(a, m, &c, &o);
	ck_assert_uint_eq(c, 0);
	ck_assert_uint_eq(o, 0);
	/* a wait through one mapping acquires what the other sees */
	uint32_t idx = 99;
	CK_OK(poll_any(b, &s, 1, 1, &idx));
	ck_assert_uint_eq(sem_count(a, s), 1);

	ws_arena_close(a);
	/* b stays usable after a is closed */
	ck_assert(ev_signaled(b, e));
	ck_assert_uint_eq(sem_count(b, s), 1);
	ws_arena_close(b);
	CK_OK(ws_arena_unlink(name));
}
END_TEST

START_TEST(named_valid_names)
{
	/* every allowed character class, and exactly 64 characters */
	char name[80];
	char base[80];
	test_arena_name(base, sizeof base, "Az09._-");
	snprintf(name, sizeof name, "%s", base);
	ws_arena *a = NULL;
	CK_OK(ws_arena_create(name, 16, &a));
	ws_arena_close(a);
	CK_OK(ws_arena_unlink(name));

	char n64[65];
	memset(n64, 'x', 64);
	n64[64] = 0;
	memcpy(n64, base, strlen(base)); /* keep it unique */
	ck_assert_uint_eq(strlen(n64), 64);
	CK_OK(ws_arena_create(n64, 16, &a));
	ws_arena *b = NULL;
	CK_OK(ws_arena_open(n64, &b));
	ws_arena_close(b);
	ws_arena_close(a);
	CK_OK(ws_arena_unlink(n64));

	/* short names, including ones that are special as path names */
	static const char *shorts[] = { "Q", ".", "..", "-", "_", "..." };
	for (size_t i = 0; i < sizeof shorts / sizeof shorts[0]; i++) {
		int rc = ws_arena_create(shorts[i], 16, &a);
		if (rc == -EEXIST) { /* a leftover from an earlier crash */
			CK_OK(ws_arena_unlink(shorts[i]));
			rc = ws_arena_create(shorts[i], 16, &a);
		}
		ck_assert_msg(rc == 0, "create \"%s\": %d (%s)", shorts[i], rc, errname(rc));
		ws_handle e = mk_event(a, true, true);
		ws_arena *b = NULL;
		rc = ws_arena_open(shorts[i], &b);
		ck_assert_msg(rc == 0, "open \"%s\": %d (%s)", shorts[i], rc, errname(rc));
		ck_assert(ev_signaled(b, e));
		ws_arena_close(b);
		ws_arena_close(a);
		rc = ws_arena_unlink(shorts[i]);
		ck_assert_msg(rc == 0, "unlink \"%s\": %d (%s)", shorts[i], rc, errname(rc));
	}
}
END_TEST

/* Several threads create the same name at once: exactly one wins. */
struct race {
	const char *name;
	_Atomic int go;
	int rc;
	ws_arena *a;
};

static void *create_racer(void *arg)
{
	struct race *r = arg;
	while (!atomic_load(&r->go))
		;
	r->rc = ws_arena_create(r->name, 64, &r->a);
	return NULL;
}

START_TEST(concurrent_create_one_wins)
{
	char name[80];
	test_arena_name(name, sizeof name, "race");
	for (int round = 0; round < 20; round++) {
		struct race r[4];
		pthread_t t[4];
		for (int i = 0; i < 4; i++) {
			r[i].name = name;
			atomic_store(&r[i].go, 0);
			r[i].rc = 1;
			r[i].a = NULL;
			t[i] = spawn(create_racer, &r[i]);
		}
		for (int i = 0; i < 4; i++)
			atomic_store(&r[i].go, 1);
		int winners = 0;
		for (int i = 0; i < 4; i++) {
			join(t[i]);
			ck_assert_msg(r[i].rc == 0 || r[i].rc == -EEXIST, "create: %d (%s)", r[i].rc,
				      errname(r[i].rc));
			if (r[i].rc == 0) {
				winners++;
				ws_handle e = mk_event(r[i].a, false, true);
				ck_assert(ev_signaled(r[i].a, e));
				ws_arena_close(r[i].a);
			}
		}
		ck_assert_int_eq(winners, 1);
		CK_OK(ws_arena_unlink(name));
	}
}
END_TEST

/* An open racing with the create sees -ENOENT or a complete arena. */
struct opener {
	const char *name;
	_Atomic int stop;
	_Atomic int bad;
	int bad_rc;
	long opened;
};

static void *open_racer(void *arg)
{
	struct opener *o = arg;
	while (!atomic_load(&o->stop)) {
		ws_arena *a = NULL;
		int rc = ws_arena_open(o->name, &a);
		if (rc == -ENOENT)
			continue;
		if (rc != 0) {
			o->bad_rc = rc;
			atomic_store(&o->bad, 1);
			return NULL;
		}
		ws_handle s;
		uint32_t c, m;
		if (ws_sem_create(a, 1, 2, &s) != 0 || ws_sem_read(a, s, &c, &m) != 0 || c != 1 ||
		    m != 2 || ws_close(a, s) != 0) {
			o->bad_rc = 1;
			atomic_store(&o->bad, 1);
		}
		o->opened++;
		ws_arena_close(a);
	}
	return NULL;
}

START_TEST(open_during_create)
{
	char name[80];
	test_arena_name(name, sizeof name, "openrace");
	struct opener o = { .name = name };
	pthread_t t = spawn(open_racer, &o);
	for (int round = 0; round < 50; round++) {
		ws_arena *a = NULL;
		CK_OK(ws_arena_create(name, 1024, &a));
		sleep_ms(1);
		ws_arena_close(a);
		CK_OK(ws_arena_unlink(name));
		if (atomic_load(&o.bad))
			break;
	}
	atomic_store(&o.stop, 1);
	join(t);
	ck_assert_msg(!atomic_load(&o.bad), "open during create: %d (%s)", o.bad_rc,
		      errname(o.bad_rc));
	ws_arena_unlink(name);
}
END_TEST

static const char *bad_names[] = {
	"", "a/b", "/abc", "abc/", "a b", "a*", "a\\b", "a:b", "\xc3\xa4", "a\n",
	"..~", "a%b", "name\t",
};

START_TEST(bad_names_einval)
{
	char n65[66];
	memset(n65, 'y', 65);
	n65[65] = 0;
	for (size_t i = 0; i <= sizeof bad_names / sizeof bad_names[0]; i++) {
		const char *n = i < sizeof bad_names / sizeof bad_names[0] ? bad_names[i] : n65;
		ws_arena *a = (ws_arena *)(uintptr_t)0x1234;
		int rc = ws_arena_create(n, 16, &a);
		ck_assert_msg(rc == -EINVAL, "create \"%s\": %d (%s)", n, rc, errname(rc));
		rc = ws_arena_open(n, &a);
		ck_assert_msg(rc == -EINVAL, "open \"%s\": %d (%s)", n, rc, errname(rc));
		rc = ws_arena_unlink(n);
		ck_assert_msg(rc == -EINVAL, "unlink \"%s\": %d (%s)", n, rc, errname(rc));
	}
	/* open/unlink of NULL: a private arena cannot be opened or unlinked */
	ws_arena *a = NULL;
	CK_RC(ws_arena_open(NULL, &a), -EINVAL);
	CK_RC(ws_arena_unlink(NULL), -EINVAL);
}
END_TEST

START_TEST(null_arena_pointer_einval)
{
	char name[80];
	test_arena_name(name, sizeof name, "nullp");
	CK_RC(ws_arena_create(NULL, 0, NULL), -EINVAL);
	CK_RC(ws_arena_create(name, 0, NULL), -EINVAL);
	/* and the failed named create left nothing behind */
	ws_arena *a = NULL;
	CK_RC(ws_arena_open(name, &a), -ENOENT);
	CK_OK(ws_arena_create(name, 0, &a));
	CK_RC(ws_arena_open(name, NULL), -EINVAL);
	ws_arena_close(a);
	CK_OK(ws_arena_unlink(name));
}
END_TEST

START_TEST(create_existing_eexist)
{
	char name[80];
	test_arena_name(name, sizeof name, "exist");
	ws_arena *a = NULL, *b = NULL;
	CK_OK(ws_arena_create(name, 0, &a));
	ws_handle s = mk_sem(a, 3, 10);
	CK_RC(ws_arena_create(name, 0, &b), -EEXIST);
	CK_RC(ws_arena_create(name, 100, &b), -EEXIST);
	/* the existing arena is untouched */
	ck_assert_uint_eq(sem_count(a, s), 3);
	CK_OK(ws_arena_open(name, &b));
	ck_assert_uint_eq(sem_count(b, s), 3);
	ws_arena_close(b);
	ws_arena_close(a);
	CK_OK(ws_arena_unlink(name));
}
END_TEST

START_TEST(open_missing_enoent)
{
	char name[80];
	test_arena_name(name, sizeof name, "missing");
	ws_arena *a = NULL;
	CK_RC(ws_arena_open(name, &a), -ENOENT);
	CK_RC(ws_arena_unlink(name), -ENOENT);
}
END_TEST

START_TEST(unlink_semantics)
{
	char name[80];
	test_arena_name(name, sizeof name, "unlink");
	ws_arena *a = NULL, *b = NULL;
	CK_OK(ws_arena_create(name, 0, &a));
	ws_handle e = mk_event(a, true, false);
	CK_OK(ws_arena_unlink(name));
	CK_RC(ws_arena_open(name, &b), -ENOENT);
	/* the existing mapping still works */
	CK_OK(ws_event_set(a, e, NULL));
	ck_assert(ev_signaled(a, e));
	/* the name can be reused: a new, empty arena */
	CK_OK(ws_arena_create(name, 0, &b));
	ws_handle e2 = mk_event(b, true, false);
	ck_assert(!ev_signaled(b, e2));
	ck_assert(ev_signaled(a, e));
	ws_arena_close(b);
	ws_arena_close(a);
	CK_OK(ws_arena_unlink(name));
}
END_TEST

START_TEST(named_persists_until_unlink)
{
	char name[80];
	test_arena_name(name, sizeof name, "persist");
	ws_arena *a = NULL;
	CK_OK(ws_arena_create(name, 0, &a));
	ws_handle s = mk_sem(a, 4, 9);
	ws_arena_close(a);
	a = NULL;
	CK_OK(ws_arena_open(name, &a));
	uint32_t c, m;
	CK_OK(ws_sem_read(a, s, &c, &m));
	ck_assert_uint_eq(c, 4);
	ck_assert_uint_eq(m, 9);
	ws_arena_close(a);
	CK_OK(ws_arena_unlink(name));
}
END_TEST

/* A shared arena is readable and writable by its owner only. */
START_TEST(named_mode_0600)
{
	char name[80];
	test_arena_name(name, sizeof name, "mode");
	mode_t old = umask(0); /* the library must not rely on the umask */
	ws_arena *a = NULL;
	CK_OK(ws_arena_create(name, 0, &a));
	umask(old);
	int found = 0;
	DIR *d = opendir("/dev/shm");
	ck_assert_ptr_nonnull(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strstr(de->d_name, name))
			continue;
		char path[512];
		snprintf(path, sizeof path, "/dev/shm/%s", de->d_name);
		struct stat st;
		if (stat(path, &st) != 0)
			continue;
		found++;
		ck_assert_msg((st.st_mode & 07777) == 0600, "%s has mode %04o, expected 0600",
			      path, (unsigned)(st.st_mode & 07777));
		ck_assert_uint_eq(st.st_uid, geteuid());
	}
	closedir(d);
	ck_assert_msg(found > 0, "no file in /dev/shm names the arena \"%s\"", name);
	ws_arena_close(a);
	CK_OK(ws_arena_unlink(name));
}
END_TEST

/* Fill an arena to capacity with mixed objects; one more is -ENOSPC. */
static void fill_check(ws_arena *a, uint32_t cap)
{
	ws_handle *h = malloc(sizeof *h * cap);
	ck_assert_ptr_nonnull(h);
	for (uint32_t i = 0; i < cap; i++) {
		int rc;
		switch (i % 3) {
		case 0: rc = ws_event_create(a, i & 1, false, &h[i]); break;
		case 1: rc = ws_sem_create(a, 0, 1, &h[i]); break;
		default: rc = ws_mutex_create(a, 0, 0, &h[i]); break;
		}
		ck_assert_msg(rc == 0, "create #%u of %u: %d (%s)", i, cap, rc, errname(rc));
		ck_assert_uint_ne(h[i], 0);
	}
	ws_handle x = 0;
	CK_RC(ws_event_create(a, false, false, &x), -ENOSPC);
	CK_RC(ws_sem_create(a, 0, 1, &x), -ENOSPC);
	CK_RC(ws_mutex_create(a, 0, 0, &x), -ENOSPC);
	CK_OK(ws_close(a, h[cap / 2]));
	CK_OK(ws_sem_create(a, 1, 1, &x));
	ck_assert_uint_ne(x, 0);
	ck_assert_uint_eq(sem_count(a, x), 1);
	CK_RC(ws_event_create(a, false, false, &x), -ENOSPC);
	free(h);
}

START_TEST(capacity_small)
{
	ws_arena *a = test_arena_cap(3);
	ws_handle x;
	/* failed creates do not use up capacity */
	for (int i = 0; i < 10; i++) {
		CK_RC(ws_sem_create(a, 2, 1, &x), -EINVAL);
		CK_RC(ws_mutex_create(a, 0, 1, &x), -EINVAL);
		CK_RC(ws_event_create(a, false, false, NULL), -EINVAL);
	}
	fill_check(a, 3);
	ws_arena_close(a);
}
END_TEST

START_TEST(capacity_default)
{
	ws_arena *a = test_arena_cap(0);
	fill_check(a, WS_DEFAULT_CAPACITY);
	ws_arena_close(a);
}
END_TEST

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

START_TEST(capacity_one_million)
{
	const uint32_t cap = 1048576;
	ws_arena *a = test_arena_cap(cap);
	ws_handle *h = malloc(sizeof *h * cap);
	ck_assert_ptr_nonnull(h);
	for (uint32_t i = 0; i < cap; i++) {
		int rc = ws_event_create(a, false, (i & 1) != 0, &h[i]);
		if (rc != 0)
			ck_abort_msg("event #%u of %u: %d (%s)", i, cap, rc, errname(rc));
	}
	ws_handle x = 0;
	CK_RC(ws_event_create(a, false, false, &x), -ENOSPC);
	/* spot-check state and uniqueness */
	for (uint32_t i = 0; i < cap; i += 4099)
		ck_assert(ev_signaled(a, h[i]) == ((i & 1) != 0));
	ck_assert(ev_signaled(a, h[cap - 1]));
	ws_handle *sorted = malloc(sizeof *h * cap);
	memcpy(sorted, h, sizeof *h * cap);
	qsort(sorted, cap, sizeof *sorted, cmp_u32);
	ck_assert_uint_ne(sorted[0], 0);
	for (uint32_t i = 1; i < cap; i++)
		if (sorted[i] == sorted[i - 1])
			ck_abort_msg("handle %u given out twice", sorted[i]);
	free(sorted);
	CK_OK(ws_close(a, h[12345]));
	CK_OK(ws_mutex_create(a, 3, 1, &x));
	CK_RC(ws_sem_create(a, 0, 1, &x), -ENOSPC);
	free(h);
	ws_arena_close(a);
}
END_TEST

START_TEST(capacity_max_and_over)
{
	ws_arena *a = NULL;
	CK_OK(ws_arena_create(NULL, WS_MAX_CAPACITY, &a));
	ws_handle e = mk_event(a, false, true);
	ck_assert(ev_signaled(a, e));
	ws_arena_close(a);
	a = NULL;
	CK_RC(ws_arena_create(NULL, WS_MAX_CAPACITY + 1, &a), -EINVAL);
	CK_RC(ws_arena_create(NULL, UINT32_MAX, &a), -EINVAL);
	char name[80];
	test_arena_name(name, sizeof name, "over");
	CK_RC(ws_arena_create(name, UINT32_MAX, &a), -EINVAL);
	CK_RC(ws_arena_open(name, &a), -ENOENT);
}
END_TEST

/*
 * The same named arena mapped twice in one process sits at two addresses.
 * A waiter blocked through one mapping must be woken through the other:
 * this also catches FUTEX_PRIVATE_FLAG on a shared arena.
 */
START_TEST(two_mappings_wake_each_other)
{
	char name[80];
	test_arena_name(name, sizeof name, "twomap");
	ws_arena *a = NULL, *b = NULL;
	CK_OK(ws_arena_create(name, 0, &a));
	CK_OK(ws_arena_open(name, &b));
	ws_handle ev = mk_event(a, false, false);
	ws_handle sem = mk_sem(a, 0, 10);
	ws_handle mtx = mk_mutex(a, 5, 1);

	struct waiter w;
	waiter_init(&w, a, 1, false, &ev, 1);
	waiter_start(&w);
	waiter_wait_blocked(&w);
	CK_OK(ws_event_set(b, ev, NULL));
	CK_OK(waiter_join(&w));
	ck_assert_uint_eq(w.index, 0);
	ck_assert(!ev_signaled(b, ev));

	ws_handle all[2] = { sem, mtx };
	waiter_init(&w, b, 9, true, all, 2);
	waiter_start(&w);
	waiter_wait_blocked(&w);
	CK_OK(ws_sem_release(a, sem, 1, NULL));
	sleep_ms(20);
	ck_assert(!waiter_done(&w));
	CK_OK(ws_mutex_unlock(a, mtx, 5, NULL));
	CK_OK(waiter_join(&w));
	uint32_t c, o;
	mtx_state(a, mtx, &c, &o);
	ck_assert_uint_eq(o, 9);
	ck_assert_uint_eq(c, 1);
	ck_assert_uint_eq(sem_count(a, sem), 0);

	ws_arena_close(a);
	ws_arena_close(b);
	CK_OK(ws_arena_unlink(name));
}
END_TEST

START_TEST(backend_name)
{
	const char *b = ws_futex_backend();
	ck_assert_ptr_nonnull(b);
	ck_assert_msg(strcmp(b, "futex_waitv") == 0 || strcmp(b, "futex_wait_multiple") == 0,
		      "unexpected backend \"%s\"", b);
	const char *forced = getenv("WINSYNC_BACKEND");
	if (forced && strcmp(forced, "waitv") == 0)
		ck_assert_str_eq(b, "futex_waitv");
	if (forced && strcmp(forced, "multiple") == 0)
		ck_assert_str_eq(b, "futex_wait_multiple");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("arena");
	TCase *tc = tcase_create("arena");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, private_arena_basic);
	tcase_add_test(tc, private_arenas_are_independent);
	tcase_add_test(tc, close_null_arena_is_harmless);
	tcase_add_test(tc, named_create_open_same_handles);
	tcase_add_test(tc, named_valid_names);
	tcase_add_test(tc, concurrent_create_one_wins);
	tcase_add_test(tc, open_during_create);
	tcase_add_test(tc, bad_names_einval);
	tcase_add_test(tc, null_arena_pointer_einval);
	tcase_add_test(tc, create_existing_eexist);
	tcase_add_test(tc, open_missing_enoent);
	tcase_add_test(tc, unlink_semantics);
	tcase_add_test(tc, named_persists_until_unlink);
	tcase_add_test(tc, named_mode_0600);
	tcase_add_test(tc, capacity_small);
	tcase_add_test(tc, capacity_default);
	tcase_add_test(tc, capacity_one_million);
	tcase_add_test(tc, capacity_max_and_over);
	tcase_add_test(tc, two_mappings_wake_each_other);
	tcase_add_test(tc, backend_name);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
