/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The OS layer on Linux, through libc. */
#include "os/os.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SHM_PREFIX "/dev/shm/winsync-"

int ws_os_init(void)
{
	return 0;
}

int ws_os_map_private(size_t size, void **base)
{
	/* MAP_PRIVATE: a forked child gets its own copy, as private futexes expect. */
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	*base = p;
	return 0;
}

int ws_os_map_create(const char *name, size_t size, void **base,
		     void (*init)(void *base, void *ctx), void *ctx)
{
	char path[128], temp[160];
	void *p;
	int fd, ret;

	snprintf(path, sizeof(path), SHM_PREFIX "%s", name);
	snprintf(temp, sizeof(temp), "%s.%ld.creating", path, (long)syscall(SYS_gettid));
	fd = open(temp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	/* umask cannot widen 0600, but a stale umask of 0 must not either. */
	if (fchmod(fd, 0600) < 0 || ftruncate(fd, (off_t)size) < 0) {
		ret = -errno;
		goto fail_fd;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto fail_fd;
	}
	close(fd);
	init(p, ctx);
	if (renameat2(AT_FDCWD, temp, AT_FDCWD, path, RENAME_NOREPLACE) < 0) {
		ret = -errno;
		munmap(p, size);
		unlink(temp);
		return ret;
	}
	*base = p;
	return 0;
fail_fd:
	close(fd);
	unlink(temp);
	return ret;
}

int ws_os_map_open(const char *name, void **base, size_t *size)
{
	char path[128];
	struct stat st;
	void *p;
	int fd, ret;

	snprintf(path, sizeof(path), SHM_PREFIX "%s", name);
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ret = p == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	*base = p;
	*size = (size_t)st.st_size;
	return 0;
}

void ws_os_unmap(void *base, size_t size)
{
	munmap(base, size);
}

int ws_os_unlink(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), SHM_PREFIX "%s", name);
	return unlink(path) < 0 ? -errno : 0;
}

/* 0 means unknown: after fork() the child must look its id up again. */
static _Thread_local uint32_t cached_tid __attribute__((tls_model("initial-exec")));
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void forget_tid(void)
{
	cached_tid = 0;
}

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, forget_tid);
}

uint32_t ws_os_thread_id(void)
{
	if (!cached_tid) {
		pthread_once(&atfork_once, register_atfork);
		cached_tid = (uint32_t)syscall(SYS_gettid);
	}
	return cached_tid;
}

bool ws_os_thread_alive(uint32_t tid)
{
	/* kill() finds any thread by its id; EPERM still means it exists. */
	return kill((pid_t)tid, 0) == 0 || errno != ESRCH;
}

int ws_os_clock_now(int clock, struct timespec *now)
{
	clockid_t id = clock == WS_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC;

	return clock_gettime(id, now) < 0 ? -errno : 0;
}

const char *ws_os_getenv(const char *name)
{
	return getenv(name);
}
