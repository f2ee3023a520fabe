/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "futex.h"

#include <errno.h>
#include <string.h>

#include "abi.h"
#include "os/os.h"
#include "stats.h"

enum backend { BACKEND_UNKNOWN, BACKEND_WAITV, BACKEND_MULTIPLE, BACKEND_NONE };

static _Atomic int backend = BACKEND_UNKNOWN;

/* Both probes pass a count of 0, which an existing call rejects with EINVAL. */
static bool have_waitv(void)
{
	return ws_syscall5(WS_NR_futex_waitv, 0, 0, 0, 0, 0) != -ENOSYS;
}

static bool have_wait_multiple(void)
{
	return ws_syscall6(WS_NR_futex, 0, WS_FUTEX_WAIT_MULTIPLE | WS_FUTEX_PRIVATE_FLAG,
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
		/* The short names, or the names ws_futex_backend() returns. */
		if (!strcmp(forced, "waitv") || !strcmp(forced, "futex_waitv"))
			return have_waitv() ? BACKEND_WAITV : BACKEND_NONE;
		if (!strcmp(forced, "multiple") || !strcmp(forced, "futex_wait_multiple"))
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
		      const struct ws_deadline *until)
{
	struct ws_kernel_waitv entries[WS_FUTEX_WAITV_MAX];
	struct ws_kernel_timespec timeout;
	long long ret;

	for (unsigned int i = 0; i < count; i++) {
		entries[i].val = words[i].expected;
		entries[i].uaddr = (uint64_t)(uintptr_t)words[i].addr;
		entries[i].flags = WS_FUTEX2_SIZE_U32 | (words[i].shared ? 0 : WS_FUTEX2_PRIVATE);
		entries[i].reserved = 0;
	}
	if (until) {
		timeout.tv_sec = until->at.tv_sec;
		timeout.tv_nsec = until->at.tv_nsec;
	}
	ret = ws_syscall5(WS_NR_futex_waitv, (long long)(uintptr_t)entries, count, 0,
			  until ? (long long)(uintptr_t)&timeout : 0,
			  until ? until->clock : WS_CLOCK_MONOTONIC);
	return ret < 0 ? (int)ret : 0;
}

/*
 * FUTEX_WAIT_MULTIPLE's timeout is relative: a realtime deadline is slept
 * toward at most this long at a time, so that a change of the wall clock is
 * followed within it (futex_waitv follows it at once).
 */
#define MULTIPLE_REALTIME_SLICE_NS WS_NSEC_PER_SEC

static int wait_multiple(const struct ws_futex_word *words, unsigned int count,
			 const struct ws_deadline *until)
{
	struct ws_kernel_wait_multiple entries[WS_FUTEX_WAITV_MAX];
	struct ws_kernel_timespec timeout;
	struct timespec left;
	bool shared = false;
	long long ret;

	if (until) {
		ret = ws_deadline_left(until, &left);
		if (ret)
			return (int)ret;
		if (until->clock == WS_CLOCK_REALTIME && left.tv_sec >= 1) {
			left.tv_sec = MULTIPLE_REALTIME_SLICE_NS / WS_NSEC_PER_SEC;
			left.tv_nsec = 0;
		}
		timeout.tv_sec = left.tv_sec;
		timeout.tv_nsec = left.tv_nsec;
	}
	for (unsigned int i = 0; i < count; i++) {
		entries[i].uaddr = (uint64_t)(uintptr_t)words[i].addr;
		entries[i].val = words[i].expected;
		entries[i].bitset = WS_FUTEX_BITSET_ANY;
		shared |= words[i].shared;
	}
	ret = ws_syscall6(WS_NR_futex, (long long)(uintptr_t)entries,
			  WS_FUTEX_WAIT_MULTIPLE | (shared ? 0 : WS_FUTEX_PRIVATE_FLAG), count,
			  until ? (long long)(uintptr_t)&timeout : 0, 0, 0);
	return ret < 0 ? (int)ret : 0;
}

int ws_futex_wait(const struct ws_futex_word *words, unsigned int count,
		  const struct ws_deadline *until)
{
	/* Nothing to watch: sleep on a word nobody wakes. */
	_Atomic uint32_t idle = 0;
	struct ws_futex_word idle_word = { &idle, 0, false };

	if (until && until->forever)
		until = NULL;
	if (count == 0) {
		words = &idle_word;
		count = 1;
	}
	if (count > WS_FUTEX_WAITV_MAX)
		count = WS_FUTEX_WAITV_MAX;
	ws_stat_add(WS_STAT_FUTEX_WAITS);
	if (atomic_load_explicit(&backend, memory_order_relaxed) == BACKEND_MULTIPLE)
		return wait_multiple(words, count, until);
	return wait_waitv(words, count, until);
}

bool ws_futex_mixed_flags(void)
{
	return atomic_load_explicit(&backend, memory_order_relaxed) != BACKEND_MULTIPLE;
}

void ws_futex_wake(_Atomic uint32_t *addr, int count, bool shared)
{
	ws_stat_add(WS_STAT_FUTEX_WAKES);
	ws_syscall3(WS_NR_futex, (long long)(uintptr_t)addr,
		    WS_FUTEX_WAKE | (shared ? 0 : WS_FUTEX_PRIVATE_FLAG), count);
}
