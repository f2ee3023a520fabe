/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Uncontended operations make no system call at all: a set with nobody
 * waiting, a wait on a signaled object, an unlock or a release with no
 * waiter, a poll, the reads.  A forked child installs a seccomp filter that
 * traps every system call but the few it needs to report and exit; a SIGSYS
 * handler counts the traps.  A positive control shows the filter does catch
 * a system call, so this test can fail.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

/* The filter's architecture, the register of a call's result, the clock call. */
#if defined(__x86_64__)
#define AUDIT_ARCH_SELF AUDIT_ARCH_X86_64
#define REG_RESULT REG_RAX
#define SYS_CLOCK SYS_clock_gettime
#elif defined(__i386__)
#define AUDIT_ARCH_SELF AUDIT_ARCH_I386
#define REG_RESULT REG_EAX
#define SYS_CLOCK SYS_clock_gettime64 /* glibc's 32-bit clock_gettime without a vDSO */
#else
#error "test_syscalls.c knows the x86_64 and i386 system calls only"
#endif

static volatile sig_atomic_t traps;
static volatile sig_atomic_t last_nr;

static void on_sigsys(int sig, siginfo_t *si, void *uc_)
{
	(void)sig;
	ucontext_t *uc = uc_;
	traps++;
	last_nr = si->si_syscall;
	uc->uc_mcontext.gregs[REG_RESULT] = -ENOSYS;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 1)
		n = sizeof buf - 1;
	if (n > 0) {
		ssize_t w = syscall(SYS_write, 2, buf, (size_t)n);
		(void)w;
	}
}

/* Install the filter; extra_allowed (or -1) is one more permitted call. */
static int install_filter(int extra_allowed)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) != 0)
		return -1;
	unsigned extra = extra_allowed < 0 ? SYS_exit : (unsigned)extra_allowed;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_SELF, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigreturn, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, extra, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof f / sizeof f[0], .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
		return -1;
	return 0;
}

static int run_child(int (*fn)(void *), void *arg)
{
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		syscall(SYS_exit_group, fn(arg));
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st), "child killed by signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return WEXITSTATUS(st);
}

/* ---- positive control ---- */

static int control_child(void *arg)
{
	(void)arg;
	if (install_filter(-1) != 0)
		return 100;
	long r = syscall(SYS_getppid);
	if (traps != 1 || last_nr != SYS_getppid || r != -1)
		return 1;
	return 0;
}

START_TEST(filter_catches_a_syscall)
{
	int rc = run_child(control_child, NULL);
	ck_assert_msg(rc != 100, "could not install the seccomp filter");
	ck_assert_msg(rc == 0, "the seccomp filter did not count getppid (status %d)", rc);
}
END_TEST

/* Does clock_gettime go through the vDSO here?  (Not under every
 * clocksource, e.g. in some VMs.)  If not, it is exempted below. */
static int clock_child(void *arg)
{
	(void)arg;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t); /* resolve the vDSO symbol first */
	if (install_filter(-1) != 0)
		return 100;
	clock_gettime(CLOCK_MONOTONIC, &t);
	clock_gettime(CLOCK_REALTIME, &t);
	return traps ? 1 : 0;
}

static int clock_needs_syscall(void)
{
	int rc = run_child(clock_child, NULL);
	ck_assert_msg(rc != 100, "could not install the seccomp filter");
	if (rc)
		printf("NOTE: clock_gettime is a system call here (no vDSO clock); "
		       "it is allowed in the filter\n");
	return rc;
}

/* ---- the uncontended operations ---- */

struct objs {
	ws_arena *a;
	ws_handle ev_auto, ev_man, ev_off, sem, mtx, mtx2, alert, s2, e2;
	struct timespec past, future;
};

static int setup(struct objs *o, const char *name)
{
	memset(o, 0, sizeof *o);
	if (ws_arena_create(name, 0, &o->a) != 0)
		return -1;
	if (ws_event_create(o->a, false, false, &o->ev_auto) ||
	    ws_event_create(o->a, true, false, &o->ev_man) ||
	    ws_event_create(o->a, false, false, &o->ev_off) ||
	    ws_sem_create(o->a, 0, 100, &o->sem) ||
	    ws_mutex_create(o->a, 0, 0, &o->mtx) ||
	    ws_mutex_create(o->a, 0, 0, &o->mtx2) ||
	    ws_event_create(o->a, false, false, &o->alert) ||
	    ws_sem_create(o->a, 5, 5, &o->s2) ||
	    ws_event_create(o->a, true, true, &o->e2))
		return -1;
	o->past = deadline_past();
	o->future = deadline_ms(3600 * 1000);
	return 0;
}

static int wait1(struct objs *o, bool all, const ws_handle *h, uint32_t n, uint32_t owner,
		 ws_handle alert, const struct timespec *dl, uint32_t *idx)
{
	struct ws_wait w = { .objects = h, .count = n, .owner = owner, .alert = alert,
			     .deadline = dl };
	return all ? ws_wait_all(o->a, &w, idx) : ws_wait_any(o->a, &w, idx);
}

static int failures;

#define OP(expr, expect)                                                              \
	do {                                                                          \
		int before_ = traps;                                                  \
		int rc_ = (expr);                                                     \
		if (rc_ != (expect)) {                                                \
			say("  %s returned %d, expected %d\n", #expr, rc_, (expect)); \
			failures++;                                                   \
		}                                                                     \
		if (traps != before_) {                                               \
			say("  SYSCALL: %s made %d system call(s), last nr %d\n", #expr,  \
			    (int)(traps - before_), (int)last_nr);                    \
			failures++;                                                   \
		}                                                                     \
	} while (0)

static void ops_signal_and_take(struct objs *o)
{
	uint32_t idx, c, m;
	bool s, man, was;
	/* sets with nobody waiting */
	OP(ws_event_set(o->a, o->ev_auto, &was), 0);
	OP(ws_event_set(o->a, o->ev_auto, &was), 0);
	OP(ws_event_set(o->a, o->ev_man, NULL), 0);
	/* waits on signaled objects: no deadline, past and future deadlines */
	OP(wait1(o, false, &o->ev_auto, 1, 1, 0, NULL, &idx), 0);
	OP(wait1(o, false, &o->ev_man, 1, 1, 0, &o->past, &idx), 0);
	OP(wait1(o, false, &o->ev_man, 1, 1, 0, &o->future, &idx), 0);
	OP(wait1(o, true, &o->ev_man, 1, 1, 0, NULL, &idx), 0);
	/* reset, pulse with nobody waiting */
	OP(ws_event_reset(o->a, o->ev_man, &was), 0);
	OP(ws_event_pulse(o->a, o->ev_auto, &was), 0);
	OP(ws_event_pulse(o->a, o->ev_man, NULL), 0);
	/* semaphores: release with no waiter, waits */
	OP(ws_sem_release(o->a, o->sem, 3, &c), 0);
	OP(wait1(o, false, &o->sem, 1, 1, 0, &o->past, &idx), 0);
	OP(wait1(o, true, &o->sem, 1, 1, 0, &o->future, &idx), 0);
	/* mutexes: acquire, recursion, unlock with no waiter */
	OP(wait1(o, false, &o->mtx, 1, 7, 0, NULL, &idx), 0);
	OP(wait1(o, false, &o->mtx, 1, 7, 0, &o->past, &idx), 0);
	OP(ws_mutex_unlock(o->a, o->mtx, 7, &c), 0);
	OP(ws_mutex_unlock(o->a, o->mtx, 7, &c), 0);
	/* wait_all over several objects, all signaled */
	ws_handle set[4] = { o->sem, o->mtx, o->s2, o->e2 };
	OP(wait1(o, true, set, 4, 8, 0, &o->future, &idx), 0);
	OP(ws_mutex_unlock(o->a, o->mtx, 8, NULL), 0);
	/* wait_any over several, lowest signaled is not first */
	ws_handle any[3] = { o->ev_off, o->ev_auto, o->s2 };
	OP(wait1(o, false, any, 3, 8, 0, NULL, &idx), 0);
	/* the alert */
	OP(ws_event_set(o->a, o->alert, NULL), 0);
	OP(wait1(o, false, &o->ev_off, 1, 1, o->alert, NULL, &idx), 0);
	/* kill with no waiter, then the abandoned acquire */
	OP(wait1(o, false, &o->mtx2, 1, 9, 0, NULL, &idx), 0);
	OP(ws_mutex_kill(o->a, o->mtx2, 9), 0);
	OP(wait1(o, false, &o->mtx2, 1, 10, 0, NULL, &idx), -EOWNERDEAD);
	OP(ws_mutex_unlock(o->a, o->mtx2, 10, NULL), 0);
	/* reads */
	OP(ws_sem_read(o->a, o->sem, &c, &m), 0);
	OP(ws_mutex_read(o->a, o->mtx, &c, &m), 0);
	OP(ws_event_read(o->a, o->ev_man, &s, &man), 0);
}

static void ops_poll_unsignaled(struct objs *o)
{
	uint32_t idx;
	OP(wait1(o, false, &o->ev_off, 1, 1, 0, &o->past, &idx), -ETIMEDOUT);
	OP(wait1(o, true, &o->ev_off, 1, 1, 0, &o->past, &idx), -ETIMEDOUT);
}

struct job {
	const char *name;  /* arena name or NULL */
	int allow;         /* extra syscall allowed, or -1 */
	void (*ops)(struct objs *);
};

static int ops_child(void *arg)
{
	struct job *j = arg;
	struct objs o;
	if (setup(&o, j->name) != 0)
		return 101;
	if (install_filter(j->allow) != 0)
		return 100;
	failures = 0;
	j->ops(&o);
	return failures ? 1 : 0;
}

static void run_ops(void (*ops)(struct objs *), bool named)
{
	char name[80];
	struct job j = { NULL, clock_needs_syscall() ? SYS_CLOCK : -1, ops };
	if (named) {
		test_arena_name(name, sizeof name, "sys");
		j.name = name;
	}
	int rc = run_child(ops_child, &j);
	if (named)
		ws_arena_unlink(name);
	ck_assert_msg(rc != 100, "could not install the seccomp filter");
	ck_assert_msg(rc != 101, "setup failed");
	ck_assert_msg(rc == 0, "uncontended operations made system calls (see above)");
}

START_TEST(uncontended_private)
{
	run_ops(ops_signal_and_take, false);
}
END_TEST

START_TEST(uncontended_shared)
{
	run_ops(ops_signal_and_take, true);
}
END_TEST

START_TEST(poll_unsignaled)
{
	run_ops(ops_poll_unsignaled, false);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("syscalls");
	TCase *tc = tcase_create("syscalls");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, filter_catches_a_syscall);
	tcase_add_test(tc, uncontended_private);
	tcase_add_test(tc, uncontended_shared);
	tcase_add_test(tc, poll_unsignaled);
	suite_add_tcase(s, tc);
	return s;
}

static int probe_child(void *arg)
{
	(void)arg;
	return install_filter(-1) == 0 ? 0 : 100;
}

int main(void)
{
	/* a kernel built without seccomp filters cannot run this program */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		syscall(SYS_exit_group, probe_child(NULL));
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) == 100) {
		printf("SKIP: seccomp filters are not available in this kernel\n");
		return 77;
	}
	return harness_run(make_suite());
}
