/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The OS layer on Linux, through libc. */
#include "os/os.h"
#include "os/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define SHM_DIR    "/dev/shm"
#define SHM_PREFIX SHM_DIR "/winsync-"

#if defined(__i386__)
#include <sys/auxv.h>

void *_Atomic ws_i386_vsyscall;
#endif

/* CPUs the first thread to use winsync could run on (ws_os_cpus_allowed). */
static _Atomic int start_cpus;

static int thread_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return CPU_COUNT(&set);
}

int ws_os_init(void)
{
	int none = 0;

	atomic_compare_exchange_strong(&start_cpus, &none, thread_cpus());
#if defined(__i386__)
	/* The vDSO's sysenter entry: int 0x80 costs microseconds on some kernels (arch/i386). */
	__atomic_store_n(&ws_i386_vsyscall, (void *)getauxval(AT_SYSINFO), __ATOMIC_RELAXED);
#endif
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
	char path[128], proc[64];
	void *p;
	int fd, ret;

	snprintf(path, sizeof(path), SHM_PREFIX "%s", name);
	/* An unnamed file: nobody can open it, or guess its name, before it is complete. */
	fd = open(SHM_DIR, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* umask cannot widen 0600, but a stale umask of 0 must not either. */
	if (fchmod(fd, 0600) < 0 || ftruncate(fd, (off_t)size) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		close(fd);
		return ret;
	}
	ret = ws_guard_mapping(p, size);
	if (ret) {
		munmap(p, size);
		close(fd);
		return ret;
	}
	init(p, ctx);
	/* linkat never replaces: an existing name is -EEXIST. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	ret = linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
	close(fd);
	if (ret) {
		ws_unguard_mapping(p);
		munmap(p, size);
		return ret;
	}
	*base = p;
	return 0;
}

static int map_existing(const char *name, bool writable, void **base, size_t *size)
{
	char path[128];
	struct stat st;
	void *p;
	int fd, ret;

	snprintf(path, sizeof(path), SHM_PREFIX "%s", name);
	fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	/* A symlink, a directory, a socket: not a regular file of ours either. */
	if (fd < 0)
		return errno == ELOOP || errno == EISDIR || errno == ENXIO ? -EACCES : -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	/*
	 * Only a file of ours that only we can write: another user's file could
	 * be truncated under the mapping (SIGBUS) or handed to us prepared.
	 */
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 07777) != 0600) {
		close(fd);
		return -EACCES;
	}
	if (st.st_size <= 0) {
		close(fd);
		return -EINVAL;
	}
	p = mmap(NULL, (size_t)st.st_size, writable ? PROT_READ | PROT_WRITE : PROT_READ,
		 MAP_SHARED, fd, 0);
	ret = p == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	ret = ws_guard_mapping(p, (size_t)st.st_size);
	if (ret) {
		munmap(p, (size_t)st.st_size);
		return ret;
	}
	*base = p;
	*size = (size_t)st.st_size;
	return 0;
}

int ws_os_map_open(const char *name, void **base, size_t *size)
{
	return map_existing(name, true, base, size);
}

int ws_os_map_inspect(const char *name, void **base, size_t *size)
{
	return map_existing(name, false, base, size);
}

void ws_os_unmap(void *base, size_t size)
{
	ws_unguard_mapping(base);
	munmap(base, size);
}

int ws_os_unlink(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), SHM_PREFIX "%s", name);
	return unlink(path) < 0 ? -errno : 0;
}

_Thread_local struct ws_thread ws_os_thread_state __attribute__((tls_model("initial-exec")));
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

uint32_t ws_os_process_id(void)
{
	return (uint32_t)getpid();
}

struct ws_thread *ws_os_thread(void)
{
	return &ws_os_thread_state;
}

/*
 * The memo (memo.h) is malloc'd when the thread first registers in an
 * arena (a path that makes system calls anyway: an uncontended wait makes
 * none, test_syscalls) and freed by a key's destructor at its exit.  Not in
 * the TLS: Wine loads this library with dlopen, and its initial-exec TLS
 * comes from the 512 spare bytes glibc keeps for all such libraries.
 */
static pthread_key_t memo_key;
static pthread_once_t memo_once = PTHREAD_ONCE_INIT;
static bool memo_key_made;

static void free_memo(void *memo)
{
	if (ws_os_thread_state.memo == memo)
		ws_os_thread_state.memo = NULL;
	free(memo);
}

static void make_memo_key(void)
{
	memo_key_made = pthread_key_create(&memo_key, free_memo) == 0;
}

void ws_os_memo_reserve(struct ws_thread *thread)
{
	void *memo;

	if (thread->memo)
		return;
	pthread_once(&memo_once, make_memo_key);
	if (!memo_key_made)
		return;
	memo = aligned_alloc(WS_OS_MEMO_ALIGN, WS_OS_MEMO_BYTES);
	if (!memo)
		return;
	memset(memo, 0, WS_OS_MEMO_BYTES);
	if (pthread_setspecific(memo_key, memo)) {
		free(memo);
		return;
	}
	thread->memo = memo;
}

/* A head for threads that have none (glibc always registers one). */
static _Thread_local struct {
	void *prev; /* glibc keeps a prev link in front of its head: entries may write it */
	struct ws_robust_head head;
} own_head;

void *ws_os_robust_head(void)
{
	struct ws_robust_head *head = NULL;
	size_t len = 0;

	if (syscall(SYS_get_robust_list, 0, &head, &len) < 0)
		return NULL;
	if (!head) {
		own_head.head.next = &own_head.head;
		own_head.head.futex_offset = -WS_ROBUST_FUTEX_OFFSET;
		own_head.head.list_op_pending = NULL;
		if (syscall(SYS_set_robust_list, &own_head.head, sizeof(own_head.head)) < 0)
			return NULL;
		head = &own_head.head;
		len = sizeof(*head);
	}
	if (len != sizeof(*head) || head->futex_offset != -WS_ROBUST_FUTEX_OFFSET)
		return NULL;
	return head;
}

int ws_os_peek(const void *addr, void *out, size_t n)
{
	struct iovec local = { out, n }, remote = { (void *)addr, n };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

int ws_os_cpus_allowed(void)
{
	int now = thread_cpus(), start = atomic_load(&start_cpus);

	return now > start ? now : start;
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
