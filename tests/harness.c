/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *errname(int e)
{
	switch (e) {
	case 0: return "0";
	case -EINVAL: return "-EINVAL";
	case -EBADF: return "-EBADF";
	case -ENOSPC: return "-ENOSPC";
	case -EOVERFLOW: return "-EOVERFLOW";
	case -EPERM: return "-EPERM";
	case -EOWNERDEAD: return "-EOWNERDEAD";
	case -ETIMEDOUT: return "-ETIMEDOUT";
	case -EEXIST: return "-EEXIST";
	case -ENOENT: return "-ENOENT";
	case -ENOSYS: return "-ENOSYS";
	case -EINTR: return "-EINTR";
	case -EAGAIN: return "-EAGAIN";
	case -ENOMEM: return "-ENOMEM";
	case -EACCES: return "-EACCES";
	case -ECANCELED: return "-ECANCELED";
	case -EUCLEAN: return "-EUCLEAN";
	case -EUSERS: return "-EUSERS";
	case -ENOTSUP: return "-ENOTSUP";
	case -ELOOP: return "-ELOOP";
	case -EFAULT: return "-EFAULT";
	default: return "?";
	}
}

void harness_probe_backend(void)
{
	ws_arena *a = NULL;
	int rc = ws_arena_create(NULL, 0, &a);
	const char *forced = getenv("WINSYNC_BACKEND");

	if (rc == -ENOSYS && forced && strcmp(forced, "multiple") == 0) {
		printf("SKIP: running kernel lacks FUTEX_WAIT_MULTIPLE (futex op 31); "
		       "backend forced by WINSYNC_BACKEND=multiple\n");
		fflush(stdout);
		exit(77);
	}
	if (rc == -ENOSYS && forced && strcmp(forced, "waitv") == 0) {
		printf("SKIP: running kernel lacks futex_waitv (syscall 449); "
		       "backend forced by WINSYNC_BACKEND=waitv\n");
		fflush(stdout);
		exit(77);
	}
	if (rc != 0) {
		fprintf(stderr, "FATAL: ws_arena_create(NULL, 0) failed: %d (%s)\n",
			rc, strerror(-rc));
		exit(1);
	}
	ws_arena_close(a);
	printf("winsync backend: %s (WINSYNC_BACKEND=%s)\n", ws_futex_backend(),
	       forced ? forced : "(unset)");
	fflush(stdout);
}

static pid_t runner_pid;

/* Unlink the named arenas that failed tests of this run left behind. */
static void cleanup_named_arenas(void)
{
	char tag[32];
	snprintf(tag, sizeof tag, "-r%d-", (int)runner_pid);
	DIR *d = opendir("/dev/shm");
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *n = strstr(de->d_name, "wstest-");
		if (n && strstr(n, tag) && ws_arena_unlink(n) == 0)
			fprintf(stderr, "note: removed leftover arena %s\n", n);
	}
	closedir(d);
}

/*
 * --help, before main() (whose signature every test program shares as
 * main(void)): glibc passes argc and argv to ELF constructors.  Checked
 * this early so that nothing runs, not even a program's own set-up.
 */
__attribute__((constructor)) static void harness_args(int argc, char **argv)
{
	if (argc < 2)
		return;
	FILE *out = strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? stderr : stdout;
	fprintf(out,
		"usage: %s [--help]\n"
		"A Check test program of winsync: runs its suite, prints Check's summary,\n"
		"exits 0 when every test passed, 1 when one failed, 77 when the forced\n"
		"futex backend is missing from the running kernel (a CTest skip).\n"
		"Environment:\n"
		"  WINSYNC_BACKEND=waitv|multiple  the futex backend (CTest runs both)\n"
		"  CK_RUN_SUITE, CK_RUN_CASE       run one suite or test case only\n"
		"  CK_DEFAULT_TIMEOUT=SEC          Check's per-test timeout\n"
		"  CK_FORK=no                      run the tests in this process (debuggers)\n"
		"  WINSYNC_ROBUST_SCALE=PERCENT    the robustness suites' work, in percent of the host's\n"
		"  WINSYNC_SEED, WINSYNC_FAULT_SCENARIO, WINSYNC_FAULT_POINT\n"
		"                                  test_fault: repeat one trial it printed\n",
		argv[0]);
	exit(out == stdout ? 0 : 2);
}

int harness_run(Suite *suite)
{
	runner_pid = getpid();
	harness_probe_backend();
	SRunner *sr = srunner_create(suite);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	cleanup_named_arenas();
	return failed == 0 ? 0 : 1;
}

ws_arena *test_arena_cap(uint32_t capacity)
{
	ws_arena *a = NULL;
	CK_OK(ws_arena_create(NULL, capacity, &a));
	ck_assert_ptr_nonnull(a);
	return a;
}

ws_arena *test_arena(void)
{
	return test_arena_cap(0);
}

void test_arena_name(char *buf, size_t size, const char *tag)
{
	static _Atomic unsigned counter;
	snprintf(buf, size, "wstest-%s-r%d-%d-%u", tag, (int)runner_pid, (int)getpid(),
		 atomic_fetch_add(&counter, 1));
}

/* ---- time ---- */

struct timespec ts_now(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return t;
}

struct timespec ts_add_ms(struct timespec t, long ms)
{
	long long ns = (long long)t.tv_nsec + (long long)ms * 1000000LL;
	t.tv_sec += ns / 1000000000LL;
	ns %= 1000000000LL;
	if (ns < 0) {
		ns += 1000000000LL;
		t.tv_sec--;
	}
	t.tv_nsec = ns;
	return t;
}

struct timespec deadline_ms(long ms) { return ts_add_ms(ts_now(CLOCK_MONOTONIC), ms); }
struct timespec deadline_rt_ms(long ms) { return ts_add_ms(ts_now(CLOCK_REALTIME), ms); }
struct timespec deadline_past(void) { return ts_add_ms(ts_now(CLOCK_MONOTONIC), -1000); }

int ts_cmp(struct timespec a, struct timespec b)
{
	if (a.tv_sec != b.tv_sec)
		return a.tv_sec < b.tv_sec ? -1 : 1;
	if (a.tv_nsec != b.tv_nsec)
		return a.tv_nsec < b.tv_nsec ? -1 : 1;
	return 0;
}

long ts_diff_ms(struct timespec later, struct timespec earlier)
{
	return (long)((later.tv_sec - earlier.tv_sec) * 1000LL +
		      (later.tv_nsec - earlier.tv_nsec) / 1000000LL);
}

uint32_t owner_of_tid(pid_t tid)
{
	return SELF_OWNER_BASE | (uint32_t)tid;
}

uint32_t self_owner(void)
{
	return owner_of_tid((pid_t)syscall(SYS_gettid));
}

void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

/* ---- waits ---- */

static int do_wait(ws_arena *a, const ws_handle *objs, uint32_t count, uint32_t owner,
		   ws_handle alert, const struct timespec *dl, bool all, uint32_t *index)
{
	struct ws_wait w = {
		.objects = objs, .count = count, .owner = owner,
		.alert = alert, .flags = 0, .deadline = dl,
	};
	return all ? ws_wait_all(a, &w, index) : ws_wait_any(a, &w, index);
}

int wait_any_ms(ws_arena *a, const ws_handle *objs, uint32_t count,
		uint32_t owner, ws_handle alert, long ms, uint32_t *index)
{
	struct timespec dl = deadline_ms(ms);
	return do_wait(a, objs, count, owner, alert, &dl, false, index);
}

int wait_all_ms(ws_arena *a, const ws_handle *objs, uint32_t count,
		uint32_t owner, ws_handle alert, long ms, uint32_t *index)
{
	struct timespec dl = deadline_ms(ms);
	return do_wait(a, objs, count, owner, alert, &dl, true, index);
}

int poll_any(ws_arena *a, const ws_handle *objs, uint32_t count, uint32_t owner,
	     uint32_t *index)
{
	struct timespec dl = deadline_past();
	return do_wait(a, objs, count, owner, 0, &dl, false, index);
}

int poll_all(ws_arena *a, const ws_handle *objs, uint32_t count, uint32_t owner,
	     uint32_t *index)
{
	struct timespec dl = deadline_past();
	return do_wait(a, objs, count, owner, 0, &dl, true, index);
}

int poll_one(ws_arena *a, ws_handle h, uint32_t owner)
{
	uint32_t idx = 999;
	int rc = poll_any(a, &h, 1, owner, &idx);
	if (rc == 0 || rc == -EOWNERDEAD)
		ck_assert_uint_eq(idx, 0);
	return rc;
}

/* ---- state readers ---- */

bool ev_signaled(ws_arena *a, ws_handle ev)
{
	bool s = false, m = false;
	CK_OK(ws_event_read(a, ev, &s, &m));
	return s;
}

uint32_t sem_count(ws_arena *a, ws_handle sem)
{
	uint32_t c = 0, m = 0;
	CK_OK(ws_sem_read(a, sem, &c, &m));
	return c;
}

int mtx_state(ws_arena *a, ws_handle m, uint32_t *count, uint32_t *owner)
{
	uint32_t c = 0xdeadbeef, o = 0xdeadbeef;
	int rc = ws_mutex_read(a, m, &c, &o);
	ck_assert_msg(rc == 0 || rc == -EOWNERDEAD, "ws_mutex_read: %d (%s)", rc, errname(rc));
	if (count)
		*count = c;
	if (owner)
		*owner = o;
	return rc;
}

ws_handle mk_event(ws_arena *a, bool manual, bool signaled)
{
	ws_handle h = 0;
	CK_OK(ws_event_create(a, manual, signaled, &h));
	ck_assert_uint_ne(h, 0);
	return h;
}

ws_handle mk_sem(ws_arena *a, uint32_t count, uint32_t max)
{
	ws_handle h = 0;
	CK_OK(ws_sem_create(a, count, max, &h));
	ck_assert_uint_ne(h, 0);
	return h;
}

ws_handle mk_mutex(ws_arena *a, uint32_t owner, uint32_t count)
{
	ws_handle h = 0;
	CK_OK(ws_mutex_create(a, owner, count, &h));
	ck_assert_uint_ne(h, 0);
	return h;
}

/* ---- threads ---- */

pthread_t spawn(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int rc = pthread_create(&t, NULL, fn, arg);
	ck_assert_msg(rc == 0, "pthread_create: %s", strerror(rc));
	return t;
}

void join(pthread_t t)
{
	int rc = pthread_join(t, NULL);
	ck_assert_msg(rc == 0, "pthread_join: %s", strerror(rc));
}

uint32_t new_owner(void)
{
	static _Atomic uint32_t next = 1000;
	return atomic_fetch_add(&next, 1);
}

/* GCC names the sanitizers with macros, Clang with __has_feature. */
#if defined(__has_feature)
#define HAS_FEATURE(x) __has_feature(x)
#else
#define HAS_FEATURE(x) 0
#endif

bool under_asan(void)
{
#if defined(__SANITIZE_ADDRESS__) || HAS_FEATURE(address_sanitizer)
	return true;
#else
	return false;
#endif
}

bool under_tsan(void)
{
#if defined(__SANITIZE_THREAD__) || HAS_FEATURE(thread_sanitizer)
	return true;
#else
	return false;
#endif
}

bool under_sanitizer(void)
{
	return under_asan() || under_tsan();
}

void waiter_init(struct waiter *w, ws_arena *a, uint32_t owner, bool all,
		 const ws_handle *objs, uint32_t count)
{
	memset(w, 0, sizeof(*w));
	w->arena = a;
	w->owner = owner;
	w->all = all;
	w->count = count;
	if (objs && count)
		memcpy(w->objects, objs, count * sizeof(*objs));
	w->timeout_ms = LONG_MS;
	w->rc = 12345;
	w->index = 0xdeadbeef;
}

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	atomic_store(&w->tid, (pid_t)syscall(SYS_gettid));
	atomic_store(&w->started, 1);
	clockid_t clk = (w->flags & WS_WAIT_REALTIME) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
	w->deadline = ts_add_ms(ts_now(clk), w->timeout_ms);
	struct ws_wait wt = {
		.objects = w->count ? w->objects : NULL,
		.count = w->count,
		.owner = w->owner,
		.alert = w->alert,
		.flags = w->flags,
		.deadline = w->forever ? NULL : &w->deadline,
	};
	uint32_t idx = 0xdeadbeef;
	int rc = w->all ? ws_wait_all(w->arena, &wt, &idx) : ws_wait_any(w->arena, &wt, &idx);
	w->returned_dl_clock = ts_now(clk);
	w->returned = ts_now(CLOCK_MONOTONIC);
	w->rc = rc;
	w->index = idx;
	if (w->after)
		w->after(w);
	atomic_store(&w->done, 1);
	while (!atomic_load(&w->release))
		sleep_ms(1);
	return NULL;
}

void waiter_start(struct waiter *w)
{
	atomic_store(&w->done, 0);
	atomic_store(&w->started, 0);
	atomic_store(&w->release, 0);
	atomic_store(&w->tid, 0);
	w->thread = spawn(waiter_main, w);
	while (!atomic_load(&w->started))
		sleep_ms(1);
}

bool waiter_done(struct waiter *w)
{
	return atomic_load(&w->done) != 0;
}

static void *bg_check_main(void *arg)
{
	struct bg_check *k = arg;

	k->rc = ws_arena_check(k->arena, k->report, sizeof k->report);
	atomic_store(&k->done, 1);
	return NULL;
}

void bg_check_start(struct bg_check *k, ws_arena *a)
{
	k->arena = a;
	k->rc = 0;
	k->report[0] = 0;
	atomic_store(&k->done, 0);
	k->thread = spawn(bg_check_main, k);
}

bool bg_check_wait(struct bg_check *k, long ms)
{
	struct timespec end = deadline_ms(ms);

	while (!atomic_load(&k->done)) {
		if (ts_cmp(ts_now(CLOCK_MONOTONIC), end) >= 0)
			return false;
		sleep_ms(1);
	}
	return true;
}

int bg_check_join(struct bg_check *k)
{
	join(k->thread);
	return k->rc;
}

bool waiter_wait_done(struct waiter *w, long ms)
{
	struct timespec end = deadline_ms(ms);
	while (!waiter_done(w)) {
		if (ts_cmp(ts_now(CLOCK_MONOTONIC), end) >= 0)
			return false;
		sleep_ms(2);
	}
	return true;
}

int waiter_join(struct waiter *w)
{
	atomic_store(&w->release, 1);
	join(w->thread);
	return w->rc;
}

/*
 * Is the thread asleep in a futex system call?  State 'S' in
 * /proc/self/task/TID/stat and, where the kernel provides it,
 * /proc/self/task/TID/syscall naming a futex wait: futex (202 on x86_64,
 * 240 and futex_time64 422 on i386) or futex_waitv (449 on both).  The number
 * is in the task's own ABI (test_mixed watches 32-bit peers from a 64-bit
 * test); the other ABI's calls of those numbers are none a test sleeps in.
 */
static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return (int)n;
}

static int task_in_futex(const char *dir)
{
	char path[96], buf[512];
	snprintf(path, sizeof path, "%s/stat", dir);
	if (read_file(path, buf, sizeof buf) < 0)
		return -1; /* thread gone */
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	if (p[2] == 'Z' || p[2] == 'X')
		return -1; /* exited */
	if (p[2] != 'S')
		return 0;
	snprintf(path, sizeof path, "%s/syscall", dir);
	if (read_file(path, buf, sizeof buf) < 0)
		return 1; /* no syscall file: trust the state */
	long nr = strtol(buf, NULL, 10);
	if (buf[0] < '0' || buf[0] > '9')
		return 0; /* "running" or "-1 ..." */
	return nr == 202 || nr == 240 || nr == 422 || nr == 449;
}

static int tid_in_futex(pid_t tid)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/self/task/%d", (int)tid);
	return task_in_futex(dir);
}

void wait_proc_blocked(pid_t pid)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/task/%d", (int)pid, (int)pid);
	struct timespec end = deadline_ms(60000);
	int stable = 0;
	for (;;) {
		int r = task_in_futex(dir);
		ck_assert_msg(r >= 0, "process %d vanished while waiting for it to block", (int)pid);
		stable = r ? stable + 1 : 0;
		if (stable >= 4) {
			sleep_ms(30);
			if (task_in_futex(dir) == 1)
				return;
			stable = 0;
		}
		ck_assert_msg(ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0,
			      "process %d never blocked in a futex wait", (int)pid);
		sleep_ms(3);
	}
}

void wait_tid_blocked(pid_t tid)
{
	struct timespec end = deadline_ms(60000);
	int stable = 0;
	for (;;) {
		int r = tid_in_futex(tid);
		ck_assert_msg(r >= 0, "thread %d vanished while waiting for it to block", (int)tid);
		stable = r ? stable + 1 : 0;
		if (stable >= 4) {
			/* settle, then confirm it is still asleep */
			sleep_ms(30);
			if (tid_in_futex(tid) == 1)
				return;
			stable = 0;
		}
		ck_assert_msg(ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0,
			      "thread %d never blocked in a futex wait", (int)tid);
		sleep_ms(3);
	}
}

/* true: blocked; false: the waiter returned first */
static bool waiter_try_blocked(struct waiter *w)
{
	pid_t tid = atomic_load(&w->tid);
	struct timespec end = deadline_ms(60000);
	int stable = 0;
	for (;;) {
		if (waiter_done(w))
			return false;
		int r = tid_in_futex(tid);
		stable = r == 1 ? stable + 1 : 0;
		if (stable >= 4) {
			sleep_ms(30);
			if (!waiter_done(w) && tid_in_futex(tid) == 1)
				return true;
			stable = 0;
		}
		ck_assert_msg(ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0,
			      "waiter never blocked in a futex wait");
		sleep_ms(3);
	}
}

void waiter_start_blocked(struct waiter *w)
{
	for (;;) {
		waiter_start(w);
		if (waiter_try_blocked(w))
			return;
		int rc = waiter_join(w);
		ck_assert_msg(rc == -ETIMEDOUT,
			      "waiter returned %d (%s) index %u instead of blocking", rc,
			      errname(rc), w->index);
		/* a slow machine (e.g. TCG): the deadline passed before the
		 * waiter was seen asleep; try again with a longer one */
		ck_assert_msg(w->timeout_ms < 100000, "waiter never seen blocked");
		w->timeout_ms *= 2;
		fprintf(stderr, "note: slow machine, retrying with a %ld ms deadline\n",
			w->timeout_ms);
	}
}

void waiter_wait_blocked(struct waiter *w)
{
	pid_t tid = atomic_load(&w->tid);
	struct timespec end = deadline_ms(60000);
	int stable = 0;
	for (;;) {
		ck_assert_msg(!waiter_done(w),
			      "waiter returned %d (%s) index %u instead of blocking",
			      w->rc, errname(w->rc), w->index);
		int r = tid_in_futex(tid);
		stable = r == 1 ? stable + 1 : 0;
		if (stable >= 4) {
			sleep_ms(30);
			if (!waiter_done(w) && tid_in_futex(tid) == 1)
				return;
			stable = 0;
		}
		ck_assert_msg(ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0,
			      "waiter never blocked in a futex wait");
		sleep_ms(3);
	}
}
