/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OS layer of winsync.dll, a Windows DLL running under Wine on Linux.
 *
 * A Windows program under Wine is an ordinary Linux process, so the DLL
 * issues the few Linux system calls it needs itself: the `syscall`
 * instruction in a 64-bit program (arch/x86_64/syscall.h), `int 0x80` in a
 * 32-bit one (arch/i386/syscall.h; Wine's 32-bit processes are i386 Linux
 * processes, whose threads have glibc's i386 robust lists).  Before the first one, ws_os_init()
 * makes sure this is Wine on Linux: ntdll exports wine_get_version, and
 * wine_get_host_version names the host system.  On real Windows, or when the
 * check fails, every arena call fails with -ENOSYS and no system call is made.
 *
 * WINSYNC_WINE_CHECK=fail in the environment makes the check fail, so that
 * tests can see the refusal under Wine.
 *
 * Memory comes from VirtualAlloc, which Wine knows about, so that its own
 * allocator never maps over an arena.  Named (shared) arenas are not
 * supported here: -ENOTSUP.
 */
#include "os/os.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "abi.h"
#include "os/wine-tls.h"

enum host { HOST_UNKNOWN, HOST_WINE_LINUX, HOST_OTHER };

static _Atomic int host = HOST_UNKNOWN;
/* TLS slots (os/wine-tls.h) of the Linux thread id and of struct ws_thread, from ws_os_init. */
static DWORD tid_slot = TLS_OUT_OF_INDEXES;
static DWORD thread_slot = TLS_OUT_OF_INDEXES;

typedef const char *(CDECL *wine_get_version_fn)(void);
typedef void (CDECL *wine_get_host_version_fn)(const char **sysname, const char **release);

static int check_host(void)
{
	HMODULE ntdll = GetModuleHandleA("ntdll.dll");
	wine_get_version_fn get_version;
	wine_get_host_version_fn get_host_version;
	const char *sysname = NULL, *release = NULL;
	char forced[16];
	DWORD n;

	n = GetEnvironmentVariableA("WINSYNC_WINE_CHECK", forced, sizeof(forced));
	if (n > 0 && n < sizeof(forced) && !strcmp(forced, "fail"))
		return HOST_OTHER;
	if (!ntdll)
		return HOST_OTHER;
	get_version = (wine_get_version_fn)(void (*)(void))GetProcAddress(ntdll, "wine_get_version");
	get_host_version = (wine_get_host_version_fn)(void (*)(void))GetProcAddress(
		ntdll, "wine_get_host_version");
	if (!get_version || !get_host_version)
		return HOST_OTHER;
	get_host_version(&sysname, &release);
	/* The system call numbers of arch/<arch>/syscall.h are Linux's. */
	if (!sysname || strcmp(sysname, "Linux"))
		return HOST_OTHER;
	return HOST_WINE_LINUX;
}

#if defined(__i386__)
void *_Atomic ws_i386_vsyscall;

/*
 * The vDSO's system call entry (arch/i386/syscall.h), from the auxiliary
 * vector in /proc/self/auxv (a Windows program has no getauxval): until it is
 * found, and if it is not, the calls use int 0x80.
 */
static void find_vsyscall(void)
{
	static const char path[] = "/proc/self/auxv";
	uint32_t auxv[64];
	long long fd, n;

	fd = ws_syscall4(WS_NR_openat, -100 /* AT_FDCWD */, (long long)(uintptr_t)path,
			 0 /* O_RDONLY */, 0);
	if (fd < 0)
		return;
	n = ws_syscall3(WS_NR_read, fd, (long long)(uintptr_t)auxv, sizeof(auxv));
	ws_syscall1(WS_NR_close, fd);
	for (long long i = 0; i + 1 < n / 4; i += 2) {
		if (auxv[i] == 0) /* AT_NULL */
			break;
		if (auxv[i] == 32) { /* AT_SYSINFO */
			atomic_store_explicit(&ws_i386_vsyscall, (void *)(uintptr_t)auxv[i + 1],
					      memory_order_relaxed);
			break;
		}
	}
}
#endif

int ws_os_init(void)
{
	int h = atomic_load_explicit(&host, memory_order_acquire);

	if (h == HOST_UNKNOWN) {
		h = check_host();
		/* Racing first calls may both allocate: one slot is then unused. */
		if (h == HOST_WINE_LINUX && tid_slot == TLS_OUT_OF_INDEXES)
			tid_slot = TlsAlloc();
		if (h == HOST_WINE_LINUX && thread_slot == TLS_OUT_OF_INDEXES)
			thread_slot = TlsAlloc();
#if defined(__i386__)
		if (h == HOST_WINE_LINUX)
			find_vsyscall();
#endif
		atomic_store_explicit(&host, h, memory_order_release);
	}
	return h == HOST_WINE_LINUX ? 0 : -ENOSYS;
}

int ws_os_map_private(size_t size, void **base)
{
	/* Committed pages read as zero, as the arena expects. */
	void *p = VirtualAlloc(NULL, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);

	if (!p)
		return -ENOMEM;
	*base = p;
	return 0;
}

int ws_os_map_create(const char *name, size_t size, void **base,
		     void (*init)(void *base, void *ctx), void *ctx)
{
	(void)name, (void)size, (void)base, (void)init, (void)ctx;
	return -ENOTSUP;
}

int ws_os_map_open(const char *name, void **base, size_t *size)
{
	(void)name, (void)base, (void)size;
	return -ENOTSUP;
}

int ws_os_map_inspect(const char *name, void **base, size_t *size)
{
	(void)name, (void)base, (void)size;
	return -ENOTSUP;
}

void ws_os_unmap(void *base, size_t size)
{
	(void)size;
	VirtualFree(base, 0, MEM_RELEASE);
}

int ws_os_unlink(const char *name)
{
	(void)name;
	return -ENOTSUP;
}

/*
 * The Linux thread id (not Wine's GetCurrentThreadId): the robust locks
 * check it.  Kept in a TLS slot (tid_slot) read straight from the TEB.
 */
uint32_t ws_os_thread_id(void)
{
	uintptr_t tid = (uintptr_t)ws_wine_tls_get(tid_slot);

	if (!tid) {
		tid = (uintptr_t)ws_syscall1(WS_NR_gettid, 0);
		ws_wine_tls_set(tid_slot, (void *)tid);
	}
	return (uint32_t)tid;
}

uint32_t ws_os_process_id(void)
{
	return (uint32_t)ws_syscall1(WS_NR_getpid, 0);
}

/* What winsync keeps per thread, and a robust list head for threads without one. */
struct thread_block {
	struct ws_thread state;
	void *head_prev; /* glibc keeps a back link in front of its head: entries may write it */
	struct ws_robust_head head;
};

struct ws_thread *ws_os_thread(void)
{
	struct thread_block *b = ws_wine_tls_get(thread_slot);

	if (!b && thread_slot != TLS_OUT_OF_INDEXES) {
		b = calloc(1, sizeof(*b));
		ws_wine_tls_set(thread_slot, b);
	}
	return b ? &b->state : NULL;
}

/* None on this host: nothing here frees a thread's memory at its exit. */
void ws_os_memo_reserve(struct ws_thread *thread)
{
	(void)thread;
}

struct ws_thread *ws_os_thread_peek(void)
{
	struct thread_block *b = ws_wine_tls_get(thread_slot);

	return b ? &b->state : NULL;
}

void *ws_os_robust_head(void)
{
	struct thread_block *b = (struct thread_block *)ws_os_thread();
	struct ws_robust_head *head = NULL;
	long long len = 0;

	if (!b)
		return NULL;
	if (ws_syscall3(WS_NR_get_robust_list, 0, (long long)(uintptr_t)&head,
			(long long)(uintptr_t)&len) < 0)
		return NULL;
	if (!head) {
		/* Wine's threads are pthreads, which have one: this is for the exception. */
		b->head.next = &b->head;
		b->head.futex_offset = -WS_ROBUST_FUTEX_OFFSET;
		if (ws_syscall2(WS_NR_set_robust_list, (long long)(uintptr_t)&b->head,
				sizeof(b->head)) < 0)
			return NULL;
		head = (void *)&b->head;
		len = sizeof(b->head);
	}
	if (len != sizeof(*head) || head->futex_offset != -WS_ROBUST_FUTEX_OFFSET)
		return NULL;
	return head;
}

int ws_os_peek(const void *addr, void *out, size_t n)
{
	/* struct iovec: a pointer and a size_t, pointer-sized on both ABIs. */
	struct {
		void *base;
		uintptr_t len;
	} local = { out, n }, remote = { (void *)addr, n };
	long long ret = ws_syscall6(WS_NR_process_vm_readv, ws_syscall1(WS_NR_getpid, 0),
				    (long long)(uintptr_t)&local, 1, (long long)(uintptr_t)&remote,
				    1, 0);

	return ret == (long long)n ? 0 : -EFAULT;
}

int ws_os_cpus_allowed(void)
{
	DWORD_PTR process, system;
	int n = 0;

	if (!GetProcessAffinityMask(GetCurrentProcess(), &process, &system))
		return 1;
	for (; process; process &= process - 1)
		n++;
	return n ? n : 1;
}

int ws_os_clock_now(int clock, struct timespec *now)
{
	struct {
		long long tv_sec;
		long long tv_nsec;
	} ts;
	long long ret = ws_syscall2(WS_NR_clock_gettime,
				    clock == WS_CLOCK_REALTIME ? WS_CLOCK_REALTIME : WS_CLOCK_MONOTONIC,
				    (long long)(uintptr_t)&ts);

	if (ret < 0)
		return (int)ret;
	now->tv_sec = (time_t)ts.tv_sec;
	now->tv_nsec = (long)ts.tv_nsec;
	return 0;
}

const char *ws_os_getenv(const char *name)
{
	/* Wine hands the Unix environment to the Windows one, and the CRT reads it. */
	return getenv(name);
}
