/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "robust.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static int read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

bool in_guest(void)
{
	static int cached = -1;
	char buf[4096];

	if (cached < 0)
		cached = read_small_file("/proc/cmdline", buf, sizeof buf) == 0 &&
			 strstr(buf, "winsync.job=") != NULL;
	return cached;
}

int robust_scale(void)
{
	const char *env = getenv("WINSYNC_ROBUST_SCALE");

	if (env && *env) {
		int v = atoi(env);

		return v > 0 ? v : 1;
	}
	if (in_guest())
		return 4;
	/* TSan's forks and shadow memory cost most: the nested recoveries at 25
	 * took 3 of its 11 minutes (2026-12-06); scripts/test.sh --long asks 25. */
	if (under_tsan())
		return 10;
	if (under_asan())
		return 40;
	return 100;
}

long scaled(long host, long min)
{
	long v = host * robust_scale() / 100;

	return v < min ? min : v;
}

long slow_factor(void)
{
	if (in_guest())
		return 20;
	if (under_sanitizer())
		return 3;
	return 1;
}

ws_arena *named_arena(char *name, size_t size, const char *tag, uint32_t capacity)
{
	ws_arena *a = NULL;

	test_arena_name(name, size, tag);
	CK_OK(ws_arena_create(name, capacity, &a));
	return a;
}

void drop_arena(ws_arena *arena, const char *name)
{
	ws_arena_close(arena);
	CK_OK(ws_arena_unlink(name));
}

pid_t fork_child_fn(int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

bool reap_child(pid_t pid, long ms, int *status)
{
	struct timespec end = deadline_ms(ms);

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return true;
		ck_assert_msg(r == 0, "waitpid(%d): %s", (int)pid, strerror(errno));
		if (ts_cmp(ts_now(CLOCK_MONOTONIC), end) >= 0)
			return false;
		sleep_ms(1);
	}
}

void kill_reap(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
}

bool wait_stopped(pid_t pid, long ms)
{
	struct timespec end = deadline_ms(ms);
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG | WUNTRACED);

		if (r == pid)
			return WIFSTOPPED(status);
		if (ts_cmp(ts_now(CLOCK_MONOTONIC), end) >= 0)
			return false;
		sleep_ms(1);
	}
}

bool stopped_or_ended(pid_t pid, long ms, int *status)
{
	struct timespec end = deadline_ms(ms);

	for (;;) {
		pid_t got = waitpid(pid, status, WUNTRACED | WNOHANG);

		ck_assert_int_ge(got, 0);
		if (got == pid)
			return WIFSTOPPED(*status);
		ck_assert_msg(ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0,
			      "child %d neither stopped nor ended in %ld ms", (int)pid, ms);
		sleep_ms(1);
	}
}

void *shared_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ck_assert_msg(p != MAP_FAILED, "mmap: %s", strerror(errno));
	return p;
}

void shared_free(void *p, size_t size)
{
	munmap(p, size);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	r->s = seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
	if (!r->s)
		r->s = 1;
}

uint32_t rng_next(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return (uint32_t)((r->s * 0x2545f4914f6cdd1dull) >> 32);
}

uint32_t rng_below(struct rng *r, uint32_t n)
{
	return (uint32_t)(((uint64_t)rng_next(r) * n) >> 32);
}

uint64_t test_seed(const char *what)
{
	const char *env = getenv("WINSYNC_SEED");
	uint64_t seed;

	if (env && *env) {
		seed = strtoull(env, NULL, 0);
	} else {
		struct timespec t = ts_now(CLOCK_REALTIME);

		seed = (uint64_t)t.tv_sec * 1000003u ^ (uint64_t)t.tv_nsec ^ (uint64_t)getpid() << 40;
	}
	printf("%s: seed %llu (repeat with WINSYNC_SEED=%llu)\n", what, (unsigned long long)seed,
	       (unsigned long long)seed);
	fflush(stdout);
	return seed;
}

const char *status_str(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, size, "status 0x%x", status);
	return buf;
}

/* 1: in futex or futex_waitv now, 0: not, -1: gone. */
static int task_asleep(const char *dir)
{
	char path[96], buf[512], *p;

	snprintf(path, sizeof path, "%s/stat", dir);
	if (read_small_file(path, buf, sizeof buf) < 0)
		return -1;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	if (p[2] == 'Z' || p[2] == 'X')
		return -1;
	if (p[2] != 'S')
		return 0;
	snprintf(path, sizeof path, "%s/syscall", dir);
	if (read_small_file(path, buf, sizeof buf) < 0)
		return 1;
	if (buf[0] < '0' || buf[0] > '9')
		return 0;
	/*
	 * The number is in the task's own ABI: futex is 202 on x86_64, 240 and
	 * futex_time64 422 on i386, futex_waitv 449 on both.  In the other ABI
	 * these are getegid32, mq_timedreceive and nothing, which no test
	 * sleeps in: one set serves 64-bit and 32-bit tasks alike.
	 */
	switch (atol(buf)) {
	case 202: case 240: case 422: case 449:
		return 1;
	default:
		return 0;
	}
}

static bool dir_asleep(const char *dir, long ms, bool must)
{
	struct timespec end = deadline_ms(ms);
	int seen = 0;

	for (;;) {
		int r = task_asleep(dir);

		if (r < 0) {
			ck_assert_msg(!must, "%s ended while waiting for it to sleep", dir);
			return false;
		}
		seen = r ? seen + 1 : 0;
		if (seen >= 2)
			return true;
		if (ts_cmp(ts_now(CLOCK_MONOTONIC), end) >= 0) {
			ck_assert_msg(!must, "%s never slept in a futex wait", dir);
			return false;
		}
		sleep_ms(1);
	}
}

void wait_asleep(pid_t tid)
{
	char dir[64];

	snprintf(dir, sizeof dir, "/proc/self/task/%d", (int)tid);
	dir_asleep(dir, 60000, true);
}

void waiter_asleep(struct waiter *w)
{
	char dir[64];
	struct timespec end = deadline_ms(60000);
	int seen = 0;

	snprintf(dir, sizeof dir, "/proc/self/task/%d", (int)atomic_load(&w->tid));
	for (;;) {
		ck_assert_msg(!waiter_done(w), "waiter returned %d (%s) instead of blocking", w->rc,
			      errname(w->rc));
		seen = task_asleep(dir) == 1 ? seen + 1 : 0;
		if (seen >= 2)
			return;
		ck_assert_msg(ts_cmp(ts_now(CLOCK_MONOTONIC), end) < 0, "waiter never slept");
		sleep_ms(1);
	}
}

bool proc_asleep(pid_t pid, long ms)
{
	return thread_asleep(pid, pid, ms);
}

int thread_asleep_now(pid_t pid, pid_t tid)
{
	char dir[64];

	snprintf(dir, sizeof dir, "/proc/%d/task/%d", (int)pid, (int)tid);
	return task_asleep(dir);
}

bool thread_asleep(pid_t pid, pid_t tid, long ms)
{
	char dir[64];

	snprintf(dir, sizeof dir, "/proc/%d/task/%d", (int)pid, (int)tid);
	return dir_asleep(dir, ms, false);
}

static void *bystander_main(void *arg)
{
	struct bystander *b = arg;

	CK_OK(ws_arena_check(b->a, NULL, 0));
	atomic_store(&b->tid, (pid_t)syscall(SYS_gettid));
	while (!atomic_load(&b->quit))
		sleep_ms(5);
	return NULL;
}

void bystander_start(struct bystander *b, ws_arena *a)
{
	b->a = a;
	atomic_store(&b->tid, 0);
	atomic_store(&b->quit, 0);
	ck_assert_int_eq(pthread_create(&b->thread, NULL, bystander_main, b), 0);
	while (!atomic_load(&b->tid))
		sleep_ms(1);
}

void bystander_stop(struct bystander *b)
{
	atomic_store(&b->quit, 1);
	pthread_join(b->thread, NULL);
}

int child_wait_one(const char *name, ws_handle h, uint32_t owner)
{
	ws_arena *a = NULL;
	uint32_t index = 9;

	if (ws_arena_open(name, &a))
		return 50;
	if (ws_wait_any(a, &(struct ws_wait){ .objects = &h, .count = 1, .owner = owner }, &index))
		return 53;
	return index == 0 ? 0 : 54;
}
