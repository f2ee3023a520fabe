/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Named arenas are files in /dev/shm: ws_arena_open must refuse a file that
 * another user planted (it could be truncated under our mapping, or handed
 * to us prepared) and one of ours that others may write, and must not
 * follow links or block on special files.  ws_arena_create makes its file
 * mode 0600 whatever the umask, and never replaces an existing name.
 */
#define _GNU_SOURCE
#include "robust.h"

#include <fcntl.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char name[80], path[160];

static void new_name(const char *tag)
{
	test_arena_name(name, sizeof name, tag);
	snprintf(path, sizeof path, "/dev/shm/winsync-%s", name);
}

/* A valid arena's bytes, copied into a file of the given owner and mode. */
static int plant_copy(uid_t uid, gid_t gid, mode_t mode)
{
	char src[160];
	ws_arena *a = NULL;
	char srcname[80];
	int in, out;
	char buf[65536];
	ssize_t n;

	test_arena_name(srcname, sizeof srcname, "secsrc");
	CK_OK(ws_arena_create(srcname, 32, &a));
	ws_arena_close(a);
	snprintf(src, sizeof src, "/dev/shm/winsync-%s", srcname);
	in = open(src, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(in, 0);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ck_assert_int_ge(out, 0);
	while ((n = read(in, buf, sizeof buf)) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	close(in);
	ck_assert_int_eq(fchown(out, uid, gid), 0);
	ck_assert_int_eq(fchmod(out, mode), 0);
	close(out);
	CK_OK(ws_arena_unlink(srcname));
	return 0;
}

/* Another user's file, made by that user: a child that setuid()s to nobody. */
static int plant_as_nobody(void *arg)
{
	struct passwd *pw = getpwnam("nobody");
	int fd;

	(void)arg;
	CHILD_CHECK(pw != NULL, 20);
	CHILD_CHECK(setgid(pw->pw_gid) == 0 && setuid(pw->pw_uid) == 0, 21);
	umask(0);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	CHILD_CHECK(fd >= 0, 22);
	CHILD_CHECK(ftruncate(fd, 1 << 20) == 0, 23);
	close(fd);
	return 0;
}

START_TEST(another_users_file_is_refused)
{
	struct passwd *pw = getpwnam("nobody");
	ws_arena *a = NULL;
	struct stat st;
	int status;
	pid_t pid;

	if (geteuid() != 0 || !pw) {
		printf("SKIP another_users_file_is_refused: needs root and a user 'nobody'\n");
		return;
	}
	new_name("secother");
	pid = fork_child_fn(plant_as_nobody, NULL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "planting failed");
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_uid, pw->pw_uid);
	CK_RC(ws_arena_open(name, &a), -EACCES);
	ck_assert_ptr_null(a);
	/* Nor may create take the name over. */
	CK_RC(ws_arena_create(name, 0, &a), -EEXIST);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_uid, pw->pw_uid);
	ck_assert_int_eq(st.st_size, 1 << 20);
	/* Even a well-formed arena of another user's, mode 0600, is refused. */
	ck_assert_int_eq(unlink(path), 0);
	plant_copy(pw->pw_uid, pw->pw_gid, 0600);
	CK_RC(ws_arena_open(name, &a), -EACCES);
	ck_assert_int_eq(unlink(path), 0);
}
END_TEST

START_TEST(our_file_with_loose_mode_is_refused)
{
	static const mode_t modes[] = { 0666, 0644, 0640, 0604, 0660, 0700, 0400, 01600, 04600 };
	ws_arena *a = NULL;

	new_name("secmode");
	plant_copy(geteuid(), getegid(), 0600);
	/* The control: the same file with mode 0600 opens. */
	CK_OK(ws_arena_open(name, &a));
	ws_handle h = mk_event(a, false, true);
	ck_assert(ev_signaled(a, h));
	ws_arena_close(a);
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		ck_assert_int_eq(chmod(path, modes[i]), 0);
		a = NULL;
		int rc = ws_arena_open(name, &a);

		ck_assert_msg(rc == -EACCES, "mode %04o: ws_arena_open returned %d (%s)", modes[i], rc,
			      errname(rc));
		ck_assert_ptr_null(a);
	}
	ck_assert_int_eq(chmod(path, 0600), 0);
	CK_OK(ws_arena_open(name, &a));
	ws_arena_close(a);
	CK_OK(ws_arena_unlink(name));
}
END_TEST

START_TEST(create_makes_0600_whatever_the_umask)
{
	ws_arena *a = NULL;
	struct stat st;
	mode_t old = umask(0);

	new_name("secumask");
	CK_OK(ws_arena_create(name, 0, &a));
	umask(old);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_msg((st.st_mode & 07777) == 0600, "mode %04o", st.st_mode & 07777);
	ck_assert_uint_eq(st.st_uid, geteuid());
	ck_assert(S_ISREG(st.st_mode));
	CK_RC(ws_arena_create(name, 0, &a), -EEXIST);
	ws_arena_close(a);
	CK_OK(ws_arena_unlink(name));
}
END_TEST

/* A symlink to our own good arena, a FIFO, a directory: refused, and promptly. */
START_TEST(special_files_are_refused)
{
	ws_arena *a = NULL, *target = NULL;
	char tname[80], tpath[160];
	struct timespec t0;
	int rc;

	test_arena_name(tname, sizeof tname, "sectarget");
	snprintf(tpath, sizeof tpath, "/dev/shm/winsync-%s", tname);
	CK_OK(ws_arena_create(tname, 0, &target));

	new_name("seclink");
	ck_assert_int_eq(symlink(tpath, path), 0);
	/* The header's promise: whatever is not a regular file of ours is -EACCES. */
	rc = ws_arena_open(name, &a);
	ck_assert_msg(rc == -EACCES && !a, "a symlink: %d (%s), want -EACCES", rc, errname(rc));
	ck_assert_int_eq(unlink(path), 0);

	new_name("secfifo");
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	t0 = ts_now(CLOCK_MONOTONIC);
	CK_RC(ws_arena_open(name, &a), -EACCES);
	ck_assert_int_lt(ts_diff_ms(ts_now(CLOCK_MONOTONIC), t0), 5000);
	ck_assert_int_eq(unlink(path), 0);

	new_name("secdir");
	ck_assert_int_eq(mkdir(path, 0700), 0);
	rc = ws_arena_open(name, &a);
	ck_assert_msg(rc == -EACCES && !a, "a directory: %d (%s), want -EACCES", rc, errname(rc));
	ck_assert_int_eq(rmdir(path), 0);

	ws_arena_close(target);
	CK_OK(ws_arena_unlink(tname));
}
END_TEST

/*
 * Finding 9 of reliability v3: a same-user truncation of a shared arena's
 * file.  Every call that touches the truncated part gets a clean error (the
 * pages read as zeros, i.e. corruption) instead of SIGBUS.  In a child, so
 * that a SIGBUS shows as its death, not ours.
 */
static int use_truncated(void *arg)
{
	ws_handle *h = arg;
	ws_arena *a;
	uint32_t index, count, max;
	bool was;
	struct timespec past = { 0, 0 };
	struct ws_wait w = { .objects = h, .count = 3, .owner = 1, .deadline = &past };
	int fd, rc;
	char report[256];

	if (ws_arena_open(name, &a))
		return 10;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) < 0)
		return 11;
	close(fd);
	/* Each of these touches pages that are gone from the file: the objects are gone. */
	rc = ws_event_set(a, h[0], &was);
	if (rc != -EBADF && rc != -EUCLEAN)
		return 12;
	ws_sem_release(a, h[1], 1, NULL);
	ws_sem_read(a, h[1], &count, &max);
	ws_mutex_read(a, h[2], &count, &index);
	ws_wait_any(a, &w, &index);
	ws_wait_all(a, &w, &index);
	ws_event_create(a, true, false, &h[0]);
	ws_close(a, h[1]);
	/* Zeros read as an empty arena, or as an inconsistent one: either is an answer. */
	rc = ws_arena_check(a, report, sizeof report);
	if (rc != 0 && rc != -EUCLEAN)
		return 13;
	ws_arena_close(a);
	return 0;
}

START_TEST(truncated_arena_does_not_crash)
{
	ws_arena *a = NULL;
	ws_handle h[3];
	int status;

	new_name("sectrunc");
	CK_OK(ws_arena_create(name, 0, &a));
	CK_OK(ws_event_create(a, true, false, &h[0]));
	CK_OK(ws_sem_create(a, 0, 5, &h[1]));
	CK_OK(ws_mutex_create(a, 0, 0, &h[2]));
	pid_t pid = fork_child_fn(use_truncated, h);
	ck_assert_msg(reap_child(pid, 60000, &status), "the child hung");
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the child %s %d", WIFSIGNALED(status) ? "died of signal" : "exited with",
		      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	ws_arena_close(a);
	CK_OK(ws_arena_unlink(name));
}
END_TEST

/* ws_arena_set_flags knows two flags. */
START_TEST(set_flags_rejects_unknown_flags)
{
	ws_arena *a = test_arena();

	CK_RC(ws_arena_set_flags(NULL, 0), -EINVAL);
	CK_RC(ws_arena_set_flags(a, 4), -EINVAL);
	CK_RC(ws_arena_set_flags(a, WS_ARENA_NONBLOCK | 0x80000000u), -EINVAL);
	CK_RC(ws_arena_set_flags(a, WS_ARENA_SPIN | 4), -EINVAL);
	CK_RC(ws_arena_set_flags(a, ~0u), -EINVAL);
	CK_OK(ws_arena_set_flags(a, WS_ARENA_NONBLOCK));
	CK_OK(ws_arena_set_flags(a, WS_ARENA_SPIN));
	CK_OK(ws_arena_set_flags(a, WS_ARENA_NONBLOCK | WS_ARENA_SPIN));
	CK_OK(ws_arena_set_flags(a, 0));
	ws_arena_close(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("shm_security");
	TCase *tc = tcase_create("shm_security");

	tcase_add_test(tc, another_users_file_is_refused);
	tcase_add_test(tc, our_file_with_loose_mode_is_refused);
	tcase_add_test(tc, create_makes_0600_whatever_the_umask);
	tcase_add_test(tc, special_files_are_refused);
	tcase_add_test(tc, truncated_arena_does_not_crash);
	tcase_add_test(tc, set_flags_rejects_unknown_flags);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return harness_run(make_suite());
}
