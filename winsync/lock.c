/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "lock.h"

#include <errno.h>

#include "futex.h"
#include "os/os.h"

#define LOCK_CONTENDED 0x80000000u
#define LOCK_HOLDER    0x3fffffffu
/* Critical sections are a few dozen instructions: spin briefly before sleeping. */
#define LOCK_SPINS     200
/* How long a sleeper waits before it checks that the holder still exists. */
#define LOCK_CHECK_NS  50000000

static void deadline_after(struct timespec *ts, long ns)
{
	ws_os_clock_now(WS_CLOCK_MONOTONIC, ts);
	ts->tv_nsec += ns;
	while (ts->tv_nsec >= 1000000000) {
		ts->tv_nsec -= 1000000000;
		ts->tv_sec++;
	}
}

void ws_lock(_Atomic uint32_t *word, bool shared)
{
	uint32_t self = ws_os_thread_id();
	uint32_t seen = 0;

	if (atomic_compare_exchange_strong_explicit(word, &seen, self, memory_order_acquire,
						    memory_order_relaxed))
		return;
	for (int i = 0; i < LOCK_SPINS; i++) {
		ws_os_relax();
		seen = atomic_load_explicit(word, memory_order_relaxed);
		if (!seen && atomic_compare_exchange_weak_explicit(word, &seen, self,
								   memory_order_acquire,
								   memory_order_relaxed))
			return;
	}
	for (;;) {
		struct ws_futex_word sleep_on;
		struct timespec deadline;

		seen = atomic_load_explicit(word, memory_order_relaxed);
		if (!seen) {
			/* Others may sleep here too: keep the flag so unlock wakes one. */
			if (atomic_compare_exchange_weak_explicit(word, &seen, self | LOCK_CONTENDED,
								  memory_order_acquire,
								  memory_order_relaxed))
				return;
			continue;
		}
		if (!(seen & LOCK_CONTENDED) &&
		    !atomic_compare_exchange_weak_explicit(word, &seen, seen | LOCK_CONTENDED,
							   memory_order_relaxed,
							   memory_order_relaxed))
			continue;
		seen |= LOCK_CONTENDED;
		sleep_on.addr = word;
		sleep_on.expected = seen;
		deadline_after(&deadline, LOCK_CHECK_NS);
		if (ws_futex_wait(&sleep_on, 1, shared, &deadline, WS_CLOCK_MONOTONIC) != -ETIMEDOUT)
			continue;
		if (!ws_os_thread_alive(seen & LOCK_HOLDER) &&
		    atomic_compare_exchange_strong_explicit(word, &seen, self | LOCK_CONTENDED,
							    memory_order_acquire,
							    memory_order_relaxed))
			return;
	}
}

void ws_unlock(_Atomic uint32_t *word, bool shared)
{
	if (atomic_exchange_explicit(word, 0, memory_order_release) & LOCK_CONTENDED)
		ws_futex_wake(word, 1, shared);
}
