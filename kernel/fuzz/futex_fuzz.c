/* SPDX-License-Identifier: GPL-2.0 */
/*
 * futex_fuzz: a seeded fuzzer of the futex system calls of the winsync
 * kernel series (futex_wake, futex_wait, futex_requeue, futex_waitv, the
 * futex() ops FUTEX_WAKE, FUTEX_WAIT, FUTEX_CMP_REQUEUE and op 31,
 * FUTEX_WAIT_MULTIPLE), run in the QEMU guest on the debug kernel.
 *
 *   futex_fuzz [-s SEED] [-t SECONDS] [-j THREADS] [-f] [-v]
 *
 * -f: fail_futex is armed (its task-filter on): the fuzzing threads and the
 * children set their own make-it-fail, so injected faults reach only the
 * calls under test, never glibc's own futex waits (pthread_join() aborts
 * the process on an -EFAULT), and every call that reaches user memory may
 * return -EFAULT, also a futex() op with a timeout whose other arguments
 * are invalid (futex() copies the timeout before the op looks at them).
 *
 * Worker threads call the futex family with random and boundary arguments:
 * every flag bit, every size, misaligned, unmapped, read-only, PROT_NONE and
 * kernel addresses, values and masks that do not fit the size, NUMA nodes out
 * of range and -1, huge and negative counts, timeouts of every clock and sign,
 * vectors with duplicate addresses of mixed sizes. Meanwhile a kicker thread
 * wakes futexes and interrupts long waits with a signal, and the main thread
 * forks children that wait on shared futexes (some holding a robust lock) and
 * die by exit or SIGKILL. Every return is checked against the errors the call
 * documents, and against what must hold whatever the other arguments (an
 * unknown flag is -EINVAL, nr 0 wakes nobody, an index is in range).
 *
 * Each thread draws from its own generator seeded from SEED, so a thread's
 * sequence of calls is reproducible; their interleaving is not.
 * Prints a progress line every 30 s and at the end the calls made and the
 * results by call and kind. Exit status: 0 when every result was expected and
 * no thread hung (no progress for 60 s while being kicked), 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef __NR_futex_waitv
#define __NR_futex_waitv 449
#endif
#define NR_futex_wake 454
#define NR_futex_wait 455
#define NR_futex_requeue 456
#define OP_WAIT_MULTIPLE 31
#define F2_NUMA 0x04
#define F2_PRIVATE 0x80
#define F2_MPOL 0x08		/* mainline 6.16; not in the series: -EINVAL */
static unsigned int f2_valid = 0x87;	/* size, NUMA, PRIVATE: any other bit is -EINVAL */
#define WAITV_MAX 128

struct kts { int64_t tv_sec; long long tv_nsec; };	/* __kernel_timespec */
struct waitv { uint64_t val; uint64_t uaddr; uint32_t flags; uint32_t reserved; };
struct wblock { uint64_t uaddr; uint32_t val; uint32_t bitset; };	/* op 31 */

enum call { C_WAKE, C_WAIT, C_REQUEUE, C_WAITV, C_OP31, C_FWAKE, C_FWAIT, C_FCMPRQ, C_NR };
static const char *const call_name[C_NR] = {
	"futex_wake", "futex_wait", "futex_requeue", "futex_waitv",
	"FUTEX_WAIT_MULTIPLE", "FUTEX_WAKE", "FUTEX_WAIT", "FUTEX_CMP_REQUEUE",
};
#define NERR 140	/* errno 1..133; slot 0 counts successes */

/* Shared with the forked children: they count into it too. */
struct stats {
	uint64_t calls[C_NR];
	uint64_t res[C_NR][NERR];
	uint64_t unexpected;
	uint64_t children, killed, robust_deaths;
};
static struct stats *st;

/* The arena */
static uint8_t *rw;		/* 4 pages private anonymous */
static uint8_t *shm;		/* 1 page MAP_SHARED anonymous (shared with children) */
static uint8_t *memfd_map;	/* 1 page of a memfd, MAP_SHARED */
static uint8_t *ro;		/* 1 page read-only */
static uint8_t *none;		/* 1 page PROT_NONE */
static uint8_t *unmapped;	/* 1 page, unmapped again */
static long page;

static volatile int stop;
static int verbose;
static int faults;	/* -f: fail_futex injects faults into this thread's calls */
static int have_op31;

struct worker {
	pthread_t thr;
	int idx;
	struct waitv *waitv;		/* 130 entries of its own */
	struct wblock *blocks;		/* 130 entries of its own */
	struct waitv *requeue;		/* 2 entries of its own */
	uint64_t rng;
	volatile uint64_t progress;
	volatile int64_t in_call_since;	/* ms, 0 when not in a call */
	volatile int cur;
	int kicked;
};

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* splitmix64: small, seedable, good enough to pick arguments */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int below(uint64_t *s, unsigned int n)
{
	return (unsigned int)(rnd(s) % n);
}

static int chance(uint64_t *s, unsigned int percent)
{
	return below(s, 100) < percent;
}

/*
 * -f: fail_futex's task-filter injects faults into the calls of the threads
 * whose make-it-fail is set. Only while they make the calls under test:
 * glibc's own futex waits (a contended internal lock, pthread_join(), the
 * lock a thread takes to exit while pthread_kill() holds it) abort the
 * process on an -EFAULT. Plain system calls on a descriptor opened once, so
 * that arming and disarming take no glibc lock themselves.
 */
static __thread int fail_fd = -1;
static __thread const char *role = "main thread";

static void set_faults(int on)
{
	if (!faults)
		return;
	if (fail_fd < 0)
		fail_fd = open("/proc/thread-self/make-it-fail", O_WRONLY | O_CLOEXEC);
	if (fail_fd < 0 || pwrite(fail_fd, on ? "1" : "0", 1, 0) != 1) {
		static const char msg[] = "futex_fuzz: cannot write /proc/thread-self/make-it-fail\n";

		if (write(2, msg, sizeof(msg) - 1) < 0)
			_exit(2);
		_exit(2);
	}
}

/* Which thread aborted, and where (glibc aborts on futex errors it does not expect) */
static void on_abort(int sig)
{
	char buf[128];
	void *frames[32];
	int n = snprintf(buf, sizeof(buf), "futex_fuzz: SIGABRT in the %s, backtrace:\n", role);

	if (n > 0 && write(2, buf, (size_t)n) < 0)
		_exit(3);
	backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void note(enum call c, long ret, int err, int ok, const char *fmt, ...)
{
	__atomic_fetch_add(&st->calls[c], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&st->res[c][ret >= 0 ? 0 : (err > 0 && err < NERR ? err : NERR - 1)],
			   1, __ATOMIC_RELAXED);
	if (!ok) {
		va_list ap;

		__atomic_fetch_add(&st->unexpected, 1, __ATOMIC_RELAXED);
		set_faults(0);	/* stderr's lock */
		fprintf(stderr, "futex_fuzz: UNEXPECTED %s returned %ld (%s): ", call_name[c], ret,
			ret < 0 ? strerror(err) : "success");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
		set_faults(1);
	}
}

/* --- argument generators --------------------------------------------------- */

static uint8_t *region(uint64_t *s, int *readable)
{
	static const uint8_t *kernel_addr = (const uint8_t *)(uintptr_t)(~0UL << 12);
	unsigned int r = below(s, 100);

	*readable = 1;
	if (r < 35)
		return rw + page * below(s, 4);
	if (r < 55)
		return shm;
	if (r < 70)
		return memfd_map;
	*readable = 0;
	if (r < 78) {
		*readable = 2;	/* readable, not writable */
		return ro;
	}
	if (r < 86)
		return none;
	if (r < 93)
		return unmapped;
	if (r < 97)
		return NULL;
	return (uint8_t *)kernel_addr;
}

/* An address, and whether it can be read (1), read only (2) or not at all (0) */
static uint8_t *address(uint64_t *s, int *readable)
{
	static const unsigned int offs[] = { 0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64 };
	uint8_t *base = region(s, readable);
	unsigned int off;

	switch (below(s, 4)) {
	case 0:
		off = below(s, (unsigned int)page);
		break;
	case 1:
		off = (unsigned int)page - 1 - below(s, 16);	/* at the page end */
		break;
	default:
		off = offs[below(s, sizeof(offs) / sizeof(offs[0]))];
	}
	return base + off;
}

static unsigned int futex2_flags(uint64_t *s)
{
	unsigned int f = below(s, 4);

	if (chance(s, 30))
		f |= F2_NUMA;
	if (chance(s, 50))
		f |= F2_PRIVATE;
	if (chance(s, 8))
		f |= 1u << below(s, 32);	/* any bit: FUTEX2_MPOL, reserved ones */
	return f;
}

static uint64_t value(uint64_t *s)
{
	static const uint64_t v[] = {
		0, 1, 2, 0x7f, 0xff, 0x100, 0xffff, 0x10000, 0x7fffffff, 0xffffffff,
		0x100000000ULL, 0xffffffffffffffffULL, 0x8000000000000000ULL,
	};

	if (chance(s, 20))
		return rnd(s);
	return v[below(s, sizeof(v) / sizeof(v[0]))];
}

/* The widest mask that fits the size (the bitset is 32 bits wide) */
static unsigned long fit_mask(unsigned int size)
{
	return size == 0 ? 0xffUL : size == 1 ? 0xffffUL : 0xffffffffUL;
}

/* The current value of a futex of 2^size bytes, when it can be read */
static uint64_t current(const uint8_t *p, unsigned int size)
{
	uintptr_t a = (uintptr_t)p;

	if (a % (1u << size))
		return 0;
	switch (size) {
	case 0: return __atomic_load_n(p, __ATOMIC_RELAXED);
	case 1: return __atomic_load_n((const uint16_t *)p, __ATOMIC_RELAXED);
	case 2: return __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED);
	default:
#if UINTPTR_MAX > 0xffffffffUL
		return __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
#else
		return *(const volatile uint32_t *)p;
#endif
	}
}

/* The value to wait for: mostly the current one, so that the wait blocks */
static uint64_t wait_value(uint64_t *s, const uint8_t *p, int readable, unsigned int size)
{
	if (readable && chance(s, 70))
		return current(p, size);
	return value(s);
}

/* Scribble a node id after a NUMA futex: in range, -1, out of range */
static void set_node(uint64_t *s, uint8_t *p, int readable, unsigned int size)
{
	static const int64_t nodes[] = { 0, 1, -1, -1, 2, 63, 127, 255, 1000, -2 };
	uint8_t *n = p + (1u << size);
	int64_t node = nodes[below(s, sizeof(nodes) / sizeof(nodes[0]))];

	if (readable != 1 || !chance(s, 60) || (uintptr_t)n % (1u << size))
		return;
	if (((uintptr_t)p & (page - 1)) + 2 * (1u << size) > (uintptr_t)page)
		return;		/* do not write past the page of the futex */
	switch (size) {
	case 0: __atomic_store_n(n, (uint8_t)node, __ATOMIC_RELAXED); break;
	case 1: __atomic_store_n((uint16_t *)n, (uint16_t)node, __ATOMIC_RELAXED); break;
	case 2: __atomic_store_n((uint32_t *)n, (uint32_t)node, __ATOMIC_RELAXED); break;
	default:
#if UINTPTR_MAX > 0xffffffffUL
		__atomic_store_n((uint64_t *)n, (uint64_t)node, __ATOMIC_RELAXED);
#endif
		break;
	}
}

static int count(uint64_t *s)
{
	static const int v[] = { 0, 1, 1, 2, 3, INT_MAX, -1, INT_MIN, 128 };

	if (chance(s, 30))
		return (int)below(s, 10);
	return v[below(s, sizeof(v) / sizeof(v[0]))];
}

static int clock_id(uint64_t *s)
{
	static const int v[] = {
		CLOCK_MONOTONIC, CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_REALTIME,
		CLOCK_BOOTTIME, CLOCK_PROCESS_CPUTIME_ID, -1, 100,
	};

	return v[below(s, sizeof(v) / sizeof(v[0]))];
}

/*
 * A timeout: NULL (the kicker ends such waits), a valid one in the past or
 * up to 20 ms ahead, absolute on @clk or relative, or a bad one (negative,
 * nanoseconds out of range, huge), or a pointer that cannot be read.
 */
static void *timeout(uint64_t *s, struct kts *k, struct timespec *t, int clk, int absolute,
		     int kernel_ts)
{
	struct timespec now = { 0, 0 };
	int64_t sec;
	long long nsec;
	unsigned int r = below(s, 100);

	if (r < 15)
		return NULL;
	if (r < 20)
		return (void *)none;
	if (r < 23)
		return (void *)unmapped;
	if (absolute)
		clock_gettime(clk == CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC, &now);
	sec = now.tv_sec;
	nsec = now.tv_nsec + (long long)below(s, 20000000);
	if (nsec >= 1000000000LL)
		nsec -= 1000000000LL, sec++;
	if (r < 30)
		sec -= 1 + below(s, 100);	/* in the past */
	else if (r < 35)
		sec = -1 - (int64_t)below(s, 1000);	/* negative */
	else if (r < 40)
		nsec = 1000000000LL + below(s, 1000);	/* nsec out of range */
	else if (r < 43)
		nsec = -1;
	else if (r < 46)
		sec = INT32_MAX + (int64_t)below(s, 2);	/* the 2038 boundary */
	else if (r < 48)
		sec = INT64_MAX;
	if (kernel_ts) {
		k->tv_sec = sec;
		k->tv_nsec = nsec;
		return k;
	}
	t->tv_sec = (time_t)sec;
	t->tv_nsec = (long)nsec;
	return t;
}

/* --- the calls -------------------------------------------------------------- */

static int is(int err, const int *set)
{
	for (; *set; set++)
		if (err == *set)
			return 1;
	return 0;
}

static const int e_wake[] = { EINVAL, EFAULT, 0 };
static const int e_wait[] = { EAGAIN, ETIMEDOUT, EINTR, EINVAL, EFAULT, 0 };
static const int e_waitv[] = { EAGAIN, ETIMEDOUT, EINTR, EINVAL, EFAULT, ENOMEM, 0 };
static const int e_requeue[] = { EAGAIN, EINVAL, EFAULT, ENOMEM, 0 };
static const int e_op31[] = { EAGAIN, ETIMEDOUT, EINTR, EINVAL, EFAULT, ENOMEM, ENOSYS, 0 };
static const int e_fwake[] = { EINVAL, EFAULT, 0 };

static int bad_flags(unsigned int f)
{
	if (f & ~f2_valid)
		return 1;
	/* a u64 futex needs 64-bit arguments */
	return (f & 3) == 3 && sizeof(long) == 4;
}

static void do_wake(struct worker *w)
{
	uint64_t *s = &w->rng;
	int readable;
	uint8_t *p = address(s, &readable);
	unsigned int f = futex2_flags(s);
	unsigned long mask = chance(s, 70) ? fit_mask(f & 3) : (unsigned long)value(s);
	int nr = count(s);
	long ret;
	int ok;

	if (f & F2_NUMA)
		set_node(s, p, readable, f & 3);
	errno = 0;
	ret = syscall(NR_futex_wake, p, mask, nr, f);
	ok = ret >= 0 ? !bad_flags(f) && (nr ? ret <= (nr > 0 ? nr : 1) : ret == 0)
		      : is(errno, e_wake) && (!bad_flags(f) || errno == EINVAL);
	note(C_WAKE, ret, errno, ok, "addr %p mask %#lx nr %d flags %#x", p, mask, nr, f);
}

static void do_wait(struct worker *w)
{
	uint64_t *s = &w->rng;
	int readable;
	uint8_t *p = address(s, &readable);
	unsigned int f = futex2_flags(s);
	unsigned long val = (unsigned long)wait_value(s, p, readable, f & 3);
	unsigned long mask = chance(s, 60) ? fit_mask(f & 3) :
			     chance(s, 50) ? 0xffUL << (8 * below(s, 4)) : (unsigned long)value(s);
	int clk = clock_id(s);
	struct kts k;
	struct timespec t;
	void *to;
	long ret;
	int ok;

	if (f & F2_NUMA)
		set_node(s, p, readable, f & 3);
	to = timeout(s, &k, &t, clk, 1, 1);
	errno = 0;
	ret = syscall(NR_futex_wait, p, val, mask, f, to, clk);
	ok = ret == 0 ? !bad_flags(f)
		      : ret < 0 && is(errno, e_wait) && (!bad_flags(f) || errno == EINVAL);
	note(C_WAIT, ret, errno, ok, "addr %p val %#lx mask %#lx flags %#x clock %d to %p", p, val,
	     mask, f, clk, to);
}

static void do_requeue(struct worker *w)
{
	uint64_t *s = &w->rng;
	struct waitv *v = w->requeue;
	void *arg = v;
	unsigned int flags = chance(s, 90) ? 0 : 1u << below(s, 32);
	int nr_wake = count(s), nr_requeue = count(s);
	long ret;
	int i, ok, bad = 0;

	for (i = 0; i < 2; i++) {
		int readable;
		uint8_t *p = address(s, &readable);

		v[i].flags = i && chance(s, 70) ? v[0].flags : futex2_flags(s);
		v[i].uaddr = (uintptr_t)p;
		v[i].val = i ? value(s) : wait_value(s, p, readable, v[i].flags & 3);
		v[i].reserved = chance(s, 95) ? 0 : (uint32_t)rnd(s);
		bad |= bad_flags(v[i].flags) || v[i].reserved;
		if (v[i].flags & F2_NUMA)
			set_node(s, p, readable, v[i].flags & 3);
	}
	if (chance(s, 5))
		arg = chance(s, 50) ? NULL : (void *)none;
	bad |= flags != 0 || v[0].flags != v[1].flags;
	errno = 0;
	ret = syscall(NR_futex_requeue, arg, flags, nr_wake, nr_requeue);
	ok = ret >= 0 ? !bad && nr_wake >= 0 && nr_requeue >= 0
		      : is(errno, e_requeue) && (!bad || errno == EINVAL || arg != v);
	note(C_REQUEUE, ret, errno, ok, "flags %#x nr_wake %d nr_requeue %d e0 {%#llx %#llx %#x %#x} e1 {%#llx %#llx %#x %#x}",
	     flags, nr_wake, nr_requeue, (unsigned long long)v[0].uaddr,
	     (unsigned long long)v[0].val, v[0].flags, v[0].reserved,
	     (unsigned long long)v[1].uaddr, (unsigned long long)v[1].val, v[1].flags,
	     v[1].reserved);
}

static unsigned int vector_len(uint64_t *s)
{
	static const unsigned int v[] = { 0, 1, 2, 3, 8, 127, 128, 129, 1000, UINT_MAX };

	if (chance(s, 60))
		return 1 + below(s, 6);
	return v[below(s, sizeof(v) / sizeof(v[0]))];
}

static void do_waitv(struct worker *w)
{
	uint64_t *s = &w->rng;
	struct waitv *v = w->waitv;
	unsigned int n = vector_len(s), i, fill = n < 130 ? n : 130;
	unsigned int flags = chance(s, 90) ? 0 : 1u << below(s, 32);
	int clk = clock_id(s), bad = 0;
	struct kts k;
	struct timespec t;
	void *to, *arg = v;
	long ret;
	int ok;

	/* the timeout is read before the entries: a bad one is -EFAULT first */
	to = timeout(s, &k, &t, clk, 1, 1);
	for (i = 0; i < fill; i++) {
		int readable;
		uint8_t *p;

		if (i && chance(s, 20)) {	/* a duplicate address, maybe of another size */
			v[i] = v[below(s, i)];
			if (chance(s, 50))
				v[i].flags = (v[i].flags & ~3u) | below(s, 4);
			if (v[i].flags & F2_NUMA)
				set_node(s, (uint8_t *)(uintptr_t)v[i].uaddr, 0, v[i].flags & 3);
		} else {
			p = address(s, &readable);
			v[i].flags = chance(s, 80) ? (below(s, 4) | (chance(s, 50) ? F2_PRIVATE : 0) |
						      (chance(s, 20) ? F2_NUMA : 0))
						   : futex2_flags(s);
			v[i].uaddr = (uintptr_t)p;
			v[i].val = wait_value(s, p, readable, v[i].flags & 3);
			v[i].reserved = chance(s, 97) ? 0 : (uint32_t)rnd(s);
			if (v[i].flags & F2_NUMA)
				set_node(s, p, readable, v[i].flags & 3);
		}
		bad |= bad_flags(v[i].flags) || v[i].reserved;
	}
	if (chance(s, 3))
		arg = chance(s, 50) ? NULL : (void *)none;
	bad |= flags != 0 || n == 0 || n > WAITV_MAX;
	errno = 0;
	ret = syscall(__NR_futex_waitv, arg, n, flags, to, clk);
	ok = ret >= 0 ? !bad && (unsigned long)ret < n
		      : is(errno, e_waitv) &&
			(!bad || errno == EINVAL || arg != v ||
			 (errno == EFAULT && (to == none || to == unmapped)));
	note(C_WAITV, ret, errno, ok, "n %u flags %#x clock %d to %p arg %p", n, flags, clk, to, arg);
}

static void do_op31(struct worker *w)
{
	uint64_t *s = &w->rng;
	struct wblock *b = w->blocks;
	unsigned int n = vector_len(s), i, fill = n < 130 ? n : 130;
	int op = OP_WAIT_MULTIPLE | (chance(s, 50) ? FUTEX_PRIVATE_FLAG : 0) |
		 (chance(s, 5) ? FUTEX_CLOCK_REALTIME : 0);
	struct kts k;
	struct timespec t;
	void *to, *arg = b;
	long ret;
	int ok, bad = (op & FUTEX_CLOCK_REALTIME) || n == 0 || n > WAITV_MAX;

	for (i = 0; i < fill; i++) {
		int readable;
		uint8_t *p = address(s, &readable);

		if (i && chance(s, 20)) {
			b[i] = b[below(s, i)];
			continue;
		}
		b[i].uaddr = (uintptr_t)p;
		if (chance(s, 3))
			b[i].uaddr |= (uint64_t)(1 + below(s, 0xffff)) << 32;	/* upper half */
		b[i].val = (uint32_t)wait_value(s, p, readable, 2);
		b[i].bitset = chance(s, 90) ? 0xffffffffu : (uint32_t)value(s);
	}
	if (chance(s, 3))
		arg = chance(s, 50) ? NULL : (void *)none;
	to = timeout(s, &k, &t, CLOCK_MONOTONIC, 0, 0);
	errno = 0;
	ret = syscall(SYS_futex, arg, op, n, to, NULL, 0);
	ok = ret >= 0 ? !bad && (unsigned long)ret < n
		      : is(errno, e_op31) &&
			(errno != ENOSYS || (op & FUTEX_CLOCK_REALTIME)) &&
			(!(n == 0 || n > WAITV_MAX) || errno == EINVAL || errno == ENOSYS ||
			 /* futex() reads the timeout before the op looks at count */
			 (errno == EFAULT && to && (faults || to == none || to == unmapped)));
	note(C_OP31, ret, errno, ok, "op %#x n %u to %p arg %p", op, n, to, arg);
}

static void do_legacy(struct worker *w)
{
	uint64_t *s = &w->rng;
	int readable;
	uint8_t *p = address(s, &readable), *p2;
	int priv = chance(s, 50) ? FUTEX_PRIVATE_FLAG : 0;
	struct kts k;
	struct timespec t;
	void *to;
	long ret;
	int nr = count(s), nr2, ok, r2;
	uint32_t val;

	switch (below(s, 3)) {
	case 0:
		errno = 0;
		ret = syscall(SYS_futex, p, FUTEX_WAKE | priv, nr, NULL, NULL, 0);
		ok = ret >= 0 || is(errno, e_fwake);
		note(C_FWAKE, ret, errno, ok, "addr %p nr %d op %#x", p, nr, FUTEX_WAKE | priv);
		break;
	case 1:
		val = (uint32_t)wait_value(s, p, readable, 2);
		to = timeout(s, &k, &t, CLOCK_MONOTONIC, 0, 0);
		errno = 0;
		ret = syscall(SYS_futex, p, FUTEX_WAIT | priv, val, to, NULL, 0);
		ok = ret == 0 || (ret < 0 && is(errno, e_wait));
		note(C_FWAIT, ret, errno, ok, "addr %p val %#x to %p", p, val, to);
		break;
	default:
		p2 = address(s, &r2);
		val = (uint32_t)wait_value(s, p, readable, 2);
		nr2 = count(s);
		errno = 0;
		ret = syscall(SYS_futex, p, FUTEX_CMP_REQUEUE | priv, nr, (void *)(intptr_t)nr2, p2, val);
		ok = ret >= 0 || is(errno, e_requeue);
		note(C_FCMPRQ, ret, errno, ok, "addr %p addr2 %p nr %d nr2 %d val %#x", p, p2, nr, nr2, val);
		break;
	}
}

static void one_call(struct worker *w)
{
	unsigned int r = below(&w->rng, 100);

	w->in_call_since = now_ms();
	if (r < 20)
		w->cur = C_WAKE, do_wake(w);
	else if (r < 40)
		w->cur = C_WAIT, do_wait(w);
	else if (r < 50)
		w->cur = C_REQUEUE, do_requeue(w);
	else if (r < 70)
		w->cur = C_WAITV, do_waitv(w);
	else if (r < 85 && have_op31)
		w->cur = C_OP31, do_op31(w);
	else
		w->cur = C_FWAKE, do_legacy(w);
	w->in_call_since = 0;
	w->progress++;
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	char name[32];

	snprintf(name, sizeof(name), "worker %d", w->idx);
	role = name;
	set_faults(1);
	while (!stop)
		one_call(w);
	set_faults(0);	/* exiting takes a lock that pthread_kill() may hold */
	role = "exiting worker";
	return NULL;
}

/* --- the kicker: wakes futexes and interrupts waits that last -------------- */

static void on_signal(int sig)
{
	(void)sig;
}

static struct worker *workers;
static int nworkers;

static void wake_all(uint8_t *base, int priv)
{
	long off;

	/* FUTEX_WAKE of the words the fuzzer picks most: the first and the last */
	for (off = 0; off < 128; off += 4)
		syscall(SYS_futex, base + off, FUTEX_WAKE | priv, INT_MAX, NULL, NULL, 0);
	for (off = page - 64; off < page; off += 4)
		syscall(SYS_futex, base + off, FUTEX_WAKE | priv, INT_MAX, NULL, NULL, 0);
}

static void *kicker_fn(void *arg)
{
	int64_t last_sweep = 0;

	(void)arg;
	role = "kicker";
	while (!stop) {
		int64_t t = now_ms();
		int i;

		usleep(20000);
		for (i = 0; i < nworkers; i++) {
			int64_t since = workers[i].in_call_since;

			if (since && t - since > 200) {
				pthread_kill(workers[i].thr, SIGUSR1);
				workers[i].kicked++;
			}
		}
		if (t - last_sweep > 1000) {
			wake_all(shm, 0);
			wake_all(memfd_map, 0);
			wake_all(rw, FUTEX_PRIVATE_FLAG);
			last_sweep = t;
		}
	}
	return NULL;
}

/* --- children that wait on shared futexes and die ---------------------------- */

struct robust_head { void *list; long futex_offset; void *pending; };

static void worker_init(struct worker *w, int idx, uint64_t seed)
{
	uint8_t *m = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		perror("mmap"), exit(2);
	w->idx = idx;
	w->rng = seed;
	w->waitv = (struct waitv *)m;
	w->blocks = (struct wblock *)(m + 2 * page);
	w->requeue = (struct waitv *)(m + 3 * page + 512);
}

static void child(uint64_t seed)
{
	struct worker w;
	struct robust_head head;
	uint32_t *lock = (uint32_t *)(shm + 2048);	/* { next; u32 lock } */
	void **entry = (void **)(shm + 2048 - sizeof(void *));
	int i, n;

	worker_init(&w, 0, seed);
	role = "child";
	set_faults(1);
	n = 1 + (int)below(&w.rng, 20);

	if (chance(&w.rng, 40)) {
		/* hold a robust lock: the kernel must mark it dead and wake a waiter */
		uint32_t tid = (uint32_t)syscall(SYS_gettid), zero = 0;

		if (__atomic_compare_exchange_n(lock, &zero, tid | FUTEX_WAITERS, 0,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			*entry = &head.list;
			head.list = entry;
			head.futex_offset = (long)((uint8_t *)lock - (uint8_t *)entry);
			head.pending = NULL;
			syscall(SYS_set_robust_list, &head, sizeof(head));
			__atomic_fetch_add(&st->robust_deaths, 1, __ATOMIC_RELAXED);
		}
	} else if (chance(&w.rng, 50)) {
		/* wait on the robust lock (woken when its holder dies) */
		uint32_t v = __atomic_load_n(lock, __ATOMIC_RELAXED);
		struct timespec t = { 0, 50000000 };

		if (v && !(v & FUTEX_OWNER_DIED))
			syscall(SYS_futex, lock, FUTEX_WAIT, v, &t, NULL, 0);
		/* whoever finds the lock dead frees it */
		v = __atomic_load_n(lock, __ATOMIC_RELAXED);
		if (v & FUTEX_OWNER_DIED)
			__atomic_compare_exchange_n(lock, &v, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	}
	for (i = 0; i < n; i++)
		one_call(&w);
	_exit(0);
}

static void usage(void)
{
	fprintf(stderr, "usage: futex_fuzz [-s SEED] [-t SECONDS] [-j THREADS] [-f] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t seed = 1, child_rng;
	long seconds = 60;
	int opt, i, memfd, hung = 0;
	int64_t t0, next_report, deadline;
	pthread_t kicker;
	struct sigaction sa;
	uint64_t *last_progress;
	int64_t *last_change;

	while ((opt = getopt(argc, argv, "s:t:j:fv")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 't': seconds = strtol(optarg, NULL, 0); break;
		case 'j': nworkers = atoi(optarg); break;
		case 'f': faults = 1; break;
		case 'v': verbose = 1; break;
		default: usage();
		}
	}
	if (nworkers <= 0)
		nworkers = 4;
	if (nworkers > 32)
		nworkers = 32;
	page = sysconf(_SC_PAGESIZE);

	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	rw = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	shm = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	none = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unmapped = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memfd = (int)syscall(SYS_memfd_create, "futex_fuzz", 0);
	if (memfd < 0 || ftruncate(memfd, page))
		perror("memfd"), exit(2);
	memfd_map = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (st == MAP_FAILED || rw == MAP_FAILED || shm == MAP_FAILED || ro == MAP_FAILED ||
	    none == MAP_FAILED || unmapped == MAP_FAILED || memfd_map == MAP_FAILED)
		perror("mmap"), exit(2);
	munmap(unmapped, page);

	/* op 31 probe: -EINVAL for a count of 0 where it exists, -ENOSYS where not */
	errno = 0;
	have_op31 = syscall(SYS_futex, NULL, OP_WAIT_MULTIPLE, 0, NULL, NULL, 0) == -1 &&
		    errno == EINVAL;
	if (!have_op31)
		printf("futex_fuzz: this kernel has no FUTEX_WAIT_MULTIPLE (%s): not fuzzed\n",
		       strerror(errno));

	/* FUTEX2_MPOL: mainline 6.16 has it, the series refuses it */
	{
		static uint32_t probe;

		if (syscall(NR_futex_wake, &probe, 1, 1, 0x02 | F2_PRIVATE | F2_MPOL) == 0) {
			f2_valid |= F2_MPOL;
			printf("futex_fuzz: this kernel accepts FUTEX2_MPOL\n");
		}
	}

	{
		void *frame;

		backtrace(&frame, 1);	/* loads libgcc now, not in the handler */
	}
	signal(SIGABRT, on_abort);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: an interrupted wait returns EINTR */
	sigaction(SIGUSR1, &sa, NULL);

	printf("futex_fuzz: seed %llu, %ld s, %d threads, %ld-bit, pid %d%s\n",
	       (unsigned long long)seed, seconds, nworkers, (long)(8 * sizeof(long)), getpid(),
	       faults ? ", fail_futex armed for the fuzzing threads" : "");
	fflush(stdout);

	workers = calloc((size_t)nworkers, sizeof(*workers));
	last_progress = calloc((size_t)nworkers, sizeof(*last_progress));
	last_change = calloc((size_t)nworkers, sizeof(*last_change));
	t0 = now_ms();
	for (i = 0; i < nworkers; i++) {
		worker_init(&workers[i], i, seed * 0x100000001b3ULL + (uint64_t)i + 1);
		rnd(&workers[i].rng);
		last_change[i] = t0;
		if (pthread_create(&workers[i].thr, NULL, worker_fn, &workers[i]))
			perror("pthread_create"), exit(2);
	}
	if (pthread_create(&kicker, NULL, kicker_fn, NULL))
		perror("pthread_create"), exit(2);

	child_rng = seed ^ 0xc0ffee;
	next_report = t0 + 30000;
	deadline = t0 + seconds * 1000;
	while (now_ms() < deadline && !hung) {
		pid_t pid = fork();
		int64_t t;

		if (pid == 0)
			child(rnd(&child_rng));
		if (pid > 0) {
			int64_t until;

			st->children++;
			usleep(below(&child_rng, 50000));
			if (chance(&child_rng, 50) && kill(pid, SIGKILL) == 0)
				st->killed++;
			/* a child that forked while another thread held a lock may hang */
			until = now_ms() + 2000;
			while (waitpid(pid, NULL, WNOHANG) == 0) {
				if (now_ms() > until) {
					kill(pid, SIGKILL);
					waitpid(pid, NULL, 0);
					break;
				}
				usleep(10000);
			}
			{
				/* free the robust lock of a dead holder nobody freed */
				uint32_t *lock = (uint32_t *)(shm + 2048);
				uint32_t v = __atomic_load_n(lock, __ATOMIC_RELAXED);

				if (v & FUTEX_OWNER_DIED)
					__atomic_compare_exchange_n(lock, &v, 0, 0, __ATOMIC_SEQ_CST,
								    __ATOMIC_SEQ_CST);
			}
		} else {
			rnd(&child_rng);
			usleep(50000);
		}
		t = now_ms();
		for (i = 0; i < nworkers; i++) {
			if (workers[i].progress != last_progress[i]) {
				last_progress[i] = workers[i].progress;
				last_change[i] = t;
			} else if (t - last_change[i] > 60000) {
				fprintf(stderr, "futex_fuzz: HANG: thread %d made no call for 60 s, in %s, kicked %d times\n",
					i, call_name[workers[i].cur], workers[i].kicked);
				hung = 1;
			}
		}
		if (t >= next_report) {
			uint64_t calls = 0;
			int c;

			for (c = 0; c < C_NR; c++)
				calls += st->calls[c];
			printf("futex_fuzz: %lld s, %llu calls, %llu children, %llu unexpected\n",
			       (long long)(t - t0) / 1000, (unsigned long long)calls,
			       (unsigned long long)st->children, (unsigned long long)st->unexpected);
			fflush(stdout);
			next_report += 30000;
		}
	}
	stop = 1;
	pthread_join(kicker, NULL);
	for (i = 0; i < nworkers && !hung; i++) {
		/* a worker may be in a wait without a timeout: interrupt it */
		int64_t until = now_ms() + 60000;

		while (pthread_tryjoin_np(workers[i].thr, NULL) == EBUSY) {
			if (now_ms() > until) {
				fprintf(stderr, "futex_fuzz: HANG: thread %d does not return from %s\n",
					i, call_name[workers[i].cur]);
				hung = 1;
				break;
			}
			pthread_kill(workers[i].thr, SIGUSR1);
			usleep(10000);
		}
	}

	{
		uint64_t calls = 0;
		int c, e;

		for (c = 0; c < C_NR; c++)
			calls += st->calls[c];
		printf("futex_fuzz: %llu calls in %lld s (seed %llu); children %llu (%llu killed, %llu died holding a robust lock)\n",
		       (unsigned long long)calls, (long long)(now_ms() - t0) / 1000,
		       (unsigned long long)seed, (unsigned long long)st->children,
		       (unsigned long long)st->killed, (unsigned long long)st->robust_deaths);
		for (c = 0; c < C_NR; c++) {
			printf("  %-20s %9llu calls: ok %llu", call_name[c],
			       (unsigned long long)st->calls[c], (unsigned long long)st->res[c][0]);
			for (e = 1; e < NERR; e++)
				if (st->res[c][e])
					printf(", %s %llu", e == NERR - 1 ? "other" : strerrorname_np(e),
					       (unsigned long long)st->res[c][e]);
			printf("\n");
		}
		printf("futex_fuzz: %llu unexpected results, %s\n", (unsigned long long)st->unexpected,
		       hung ? "a thread HUNG" : "no hang");
	}
	fflush(stdout);
	if (hung)
		_exit(1);
	return st->unexpected ? 1 : 0;
}
