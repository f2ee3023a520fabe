/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "futex.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "arch/x86_64/syscall.h"
#include "os/os.h"
#include "stats.h"

#define FUTEX_WAKE            1
#define FUTEX_WAIT_MULTIPLE   31
#define FUTEX_PRIVATE_FLAG    128
#define FUTEX2_SIZE_U32       0x02
#define FUTEX_BITSET_ANY      0xffffffffu

enum backend { BACKEND_UNKNOWN, BACKEND_WAITV, BACKEND_MULTIPLE, BACKEND_NONE };

static _Atomic int backend = BACKEND_UNKNOWN;

/* The kernel's struct futex_waitv. */
struct kernel_waitv {
	uint64_t val;
	uint64_t uaddr;
	uint32_t flags;
	uint32_t reserved;
};

/* The entry of FUTEX_WAIT_MULTIPLE: 16 bytes on x86_64. */
struct kernel_wait_multiple {
	uint64_t uaddr;
	uint32_t val;
	uint32_t bitset;
};

struct kernel_timespec {
	long long tv_sec;
	long long tv_nsec;
};

/* Both probes pass a count of 0, which an existing call rejects with EINVAL. */
static bool have_waitv(void)
{
	return ws_syscall5(WS_NR_futex_waitv, 0, 0, 0, 0, 0) != -ENOSYS;
}

static bool have_wait_multiple(void)
{
	return ws_syscall6(WS_NR_futex, 0, FUTEX_WAIT_MULTIPLE | FUTEX_PRIVATE_FLAG,
			   0, 0, 0, 0) != -ENOSYS;
}

static int choose(void)
{
	const char *forced;
	int ret = ws_os_init();

	if (ret)
		return ret;
	forced = ws_os_getenv("WINSYNC_BACKEND");
	if (forced && *forced) {
		if (!strcmp(forced, "waitv"))
			return have_waitv() ? BACKEND_WAITV : BACKEND_NONE;
		if (!strcmp(forced, "multiple"))
			return have_wait_multiple() ? BACKEND_MULTIPLE : BACKEND_NONE;
		return -EINVAL;
	}
	if (have_waitv())
		return BACKEND_WAITV;
	return have_wait_multiple() ? BACKEND_MULTIPLE : BACKEND_NONE;
}

int ws_futex_init(void)
{
	int chosen = atomic_load_explicit(&backend, memory_order_acquire);

	if (chosen == BACKEND_UNKNOWN) {
		chosen = choose();
		if (chosen < 0)
			return chosen;
		atomic_store_explicit(&backend, chosen, memory_order_release);
	}
	return chosen == BACKEND_NONE ? -ENOSYS : 0;
}

const char *ws_futex_backend_name(void)
{
	switch (atomic_load_explicit(&backend, memory_order_acquire)) {
	case BACKEND_WAITV:
		return "futex_waitv";
	case BACKEND_MULTIPLE:
		return "futex_wait_multiple";
	default:
		return NULL;
	}
}

static int wait_waitv(const struct ws_futex_word *words, unsigned int count,
		      const struct timespec *deadline, int clock)
{
	struct kernel_waitv entries[WS_FUTEX_MAX_WAIT];
	struct kernel_timespec timeout;
	long long ret;

	for (unsigned int i = 0; i < count; i++) {
		entries[i].val = words[i].expected;
		entries[i].uaddr = (uint64_t)(uintptr_t)words[i].addr;
		entries[i].flags = FUTEX2_SIZE_U32 | (words[i].shared ? 0 : FUTEX_PRIVATE_FLAG);
		entries[i].reserved = 0;
	}
	if (deadline) {
		timeout.tv_sec = deadline->tv_sec;
		timeout.tv_nsec = deadline->tv_nsec;
	}
	ret = ws_syscall5(WS_NR_futex_waitv, (long long)(uintptr_t)entries, count, 0,
			  deadline ? (long long)(uintptr_t)&timeout : 0,
			  clock == WS_CLOCK_REALTIME ? WS_CLOCK_REALTIME : WS_CLOCK_MONOTONIC);
	return ret < 0 ? (int)ret : 0;
}

/* FUTEX_WAIT_MULTIPLE takes a relative timeout, like FUTEX_WAIT. */
static int wait_multiple(const struct ws_futex_word *words, unsigned int count,
			 const struct timespec *deadline, int clock)
{
	struct kernel_wait_multiple entries[WS_FUTEX_MAX_WAIT];
	struct kernel_timespec timeout;
	struct timespec now;
	bool shared = false;
	long long ret;

	if (deadline) {
		ret = ws_os_clock_now(clock, &now);
		if (ret)
			return (int)ret;
		timeout.tv_sec = deadline->tv_sec - now.tv_sec;
		timeout.tv_nsec = deadline->tv_nsec - now.tv_nsec;
		if (timeout.tv_nsec < 0) {
			timeout.tv_nsec += 1000000000;
			timeout.tv_sec--;
		}
		if (timeout.tv_sec < 0)
			return -ETIMEDOUT;
	}
	for (unsigned int i = 0; i < count; i++) {
		entries[i].uaddr = (uint64_t)(uintptr_t)words[i].addr;
		entries[i].val = words[i].expected;
		entries[i].bitset = FUTEX_BITSET_ANY;
		shared |= words[i].shared;
	}
	ret = ws_syscall6(WS_NR_futex, (long long)(uintptr_t)entries,
			  FUTEX_WAIT_MULTIPLE | (shared ? 0 : FUTEX_PRIVATE_FLAG), count,
			  deadline ? (long long)(uintptr_t)&timeout : 0, 0, 0);
	return ret < 0 ? (int)ret : 0;
}

int ws_futex_wait(const struct ws_futex_word *words, unsigned int count,
		  const struct timespec *deadline, int clock)
{
	/* Nothing to watch: sleep on a word nobody wakes. */
	_Atomic uint32_t idle = 0;
	struct ws_futex_word idle_word = { &idle, 0, false };

	if (count == 0) {
		words = &idle_word;
		count = 1;
	}
	ws_stat_add(WS_STAT_FUTEX_WAITS);
	if (atomic_load_explicit(&backend, memory_order_relaxed) == BACKEND_MULTIPLE)
		return wait_multiple(words, count, deadline, clock);
	return wait_waitv(words, count, deadline, clock);
}

bool ws_futex_mixed_flags(void)
{
	return atomic_load_explicit(&backend, memory_order_relaxed) != BACKEND_MULTIPLE;
}

void ws_futex_wake(_Atomic uint32_t *addr, int count, bool shared)
{
	ws_stat_add(WS_STAT_FUTEX_WAKES);
	ws_syscall3(WS_NR_futex, (long long)(uintptr_t)addr,
		    FUTEX_WAKE | (shared ? 0 : FUTEX_PRIVATE_FLAG), count);
}
