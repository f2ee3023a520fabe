/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "os/guard.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Shared arenas one process maps at once: a slot each, read by the handler without locks. */
#define GUARDED_MAX 64

static struct {
	_Atomic uintptr_t base;   /* 0: free */
	_Atomic uintptr_t end;
} guarded[GUARDED_MAX];

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static bool installed;
static struct sigaction previous;

static void chain(int sig, siginfo_t *info, void *context)
{
	if (previous.sa_flags & SA_SIGINFO) {
		previous.sa_sigaction(sig, info, context);
	} else if (previous.sa_handler == SIG_DFL || previous.sa_handler == SIG_IGN) {
		/* As without us: the faulting access runs again and the default action kills. */
		signal(SIGBUS, SIG_DFL);
	} else {
		previous.sa_handler(sig);
	}
}

static void on_sigbus(int sig, siginfo_t *info, void *context)
{
	uintptr_t addr = (uintptr_t)info->si_addr;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	int saved = errno;

	for (int i = 0; i < GUARDED_MAX; i++) {
		uintptr_t base = atomic_load_explicit(&guarded[i].base, memory_order_acquire);
		uintptr_t end = atomic_load_explicit(&guarded[i].end, memory_order_acquire);

		if (!base || addr < base || addr >= end)
			continue;
		/* Zeros where the file ended: the access goes on and reads corruption. */
		if (mmap((void *)(addr & ~(page - 1)), page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
			errno = saved;
			return;
		}
		break;
	}
	errno = saved;
	chain(sig, info, context);
}

static int install(void)
{
	struct sigaction sa;
	int ret = 0;

	pthread_mutex_lock(&install_lock);
	if (!installed) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_sigbus;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGBUS, &sa, &previous) == 0)
			installed = true;
		else
			ret = -errno;
	}
	pthread_mutex_unlock(&install_lock);
	return ret;
}

int ws_guard_mapping(void *base, size_t size)
{
	int ret = install();

	if (ret)
		return ret;
	ret = -ENOMEM;
	pthread_mutex_lock(&install_lock);
	for (int i = 0; i < GUARDED_MAX; i++) {
		if (atomic_load_explicit(&guarded[i].base, memory_order_relaxed))
			continue;
		/* The end first: the handler only trusts a slot whose base is set. */
		atomic_store_explicit(&guarded[i].end, (uintptr_t)base + size, memory_order_release);
		atomic_store_explicit(&guarded[i].base, (uintptr_t)base, memory_order_release);
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&install_lock);
	return ret;
}

void ws_unguard_mapping(void *base)
{
	pthread_mutex_lock(&install_lock);
	for (int i = 0; i < GUARDED_MAX; i++) {
		if (atomic_load_explicit(&guarded[i].base, memory_order_relaxed) == (uintptr_t)base) {
			atomic_store_explicit(&guarded[i].base, 0, memory_order_release);
			break;
		}
	}
	pthread_mutex_unlock(&install_lock);
}
