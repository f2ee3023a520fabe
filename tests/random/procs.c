/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Actors, processes and deaths.  The parent creates the arena, the shared
 * memory (a memfd its children inherit) and the pool, runs some actors
 * itself and starts children (this program again, with --child) that run
 * the others.  Its main thread is the coordinator: it checks the arena,
 * kicks waits without deadline, sends suspension signals, kills children,
 * ends threads inside calls, stops children, and notices calls that never
 * return.  Threads are ended only in children: a thread ended inside libc
 * could leave this process's allocator locked.
 */
#include "rt.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static ws_arena *proc_arena;    /* this process's pointer to the shared arena */
static int shm_fd = -1;
static const char *self_path;

#define TICK_NS 2000000ull
#define MAX_CHILDREN 8

int rt_actor_alloc(void)
{
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < RT_MAX_ACTORS; i++) {
			struct rt_actor *a = &rt_shm->actors[i];
			int expected = pass == 0 ? A_FREE : A_DEAD;

			if (pass == 1 && !atomic_load(&a->folded))
				continue;
			if (!atomic_compare_exchange_strong(&a->state, &expected, A_INIT))
				continue;
			/* Field by field: other threads may be reading the slot. */
			atomic_store(&a->tid, 0);
			atomic_store(&a->kick, 0);
			atomic_store(&a->forever, 0);
			for (int k = 0; k < RT_OWN_MAX; k++)
				atomic_store(&a->own[k], 0);
			atomic_store(&a->ops, 0);
			atomic_store(&a->ring_next, 0);
			for (int x = 0; x < RT_CALLS; x++)
				for (int y = 0; y < RT_RCS; y++)
					atomic_store(&a->hist[x][y], 0);
			atomic_store(&a->serial, atomic_fetch_add(&rt_shm->next_serial, 1) + 1);
			atomic_store(&a->pid, (int32_t)getpid());
			for (int k = 0; k < RT_OWNERS; k++)
				atomic_store(&a->owners[k], RT_OWNER_BASE + a->serial * 4 + (uint32_t)k);
			atomic_store(&a->last_acq, 0);
			atomic_store(&a->pending_acq, 0);
			atomic_store(&a->folded, 0);
			return i;
		}
	}
	return -1;
}

int rt_actor_setup(struct rt_ctx *c, int slot, ws_arena *arena, bool parent)
{
	struct rt_actor *a = &rt_shm->actors[slot];
	struct rt_oprec *op;
	ws_handle kick = 0;
	int rc;

	memset(c, 0, sizeof *c);
	c->slot = slot;
	c->me = a;
	c->arena = c->cur = arena;
	atomic_store(&a->tid, (int32_t)syscall(SYS_gettid));
	/* Owner ids are normally thread ids; where threads die, ids nobody else has. */
	if (!rt_shm->mode.kills && (a->serial & 1))
		a->owners[0] = (uint32_t)atomic_load(&a->tid);
	rt_rng_init(&c->rng, rt_shm->seed, a->serial);
	atomic_store(&a->state, A_RUNNING);
	if (parent && rt_shm->mode.nonblock_pct) {
		op = rt_begin(c, C_ARENA_OPEN);
		rc = ws_arena_open(rt_shm->arena_name, &c->nb);
		rt_end(c, op, rc);
		if (!rt_expect(c, op, rc, B(RC_OK), "open a NONBLOCK pointer")) {
			c->nb = NULL;
		} else {
			op = rt_begin(c, C_ARENA_SET_FLAGS);
			op->a[0] = WS_ARENA_NONBLOCK;
			rc = ws_arena_set_flags(c->nb, WS_ARENA_NONBLOCK);
			rt_end(c, op, rc);
			rt_expect(c, op, rc, B(RC_OK), "set NONBLOCK");
		}
	}
	/* A full arena (the close mode's) may have no room for it: waits then have deadlines. */
	rc = rt_create_call(c, RT_EVENT, 0, 0, false, &kick, &op);
	if (!rt_expect(c, op, rc, B(RC_OK) | B(RC_ENOSPC), "the actor's kick event"))
		return rc ? rc : -EINVAL;
	atomic_store(&a->kick, kick);
	return 0;
}

static void *actor_main(void *arg)
{
	int slot = (int)(intptr_t)arg;
	struct rt_ctx *c = calloc(1, sizeof *c);
	bool parent = getpid() == (pid_t)rt_shm->parent_pid;

	if (!c)
		abort();
	if (rt_actor_setup(c, slot, proc_arena, parent) == 0) {
		rt_actor_run(c);
		rt_actor_finish(c);
		c->cur = c->arena;
		if (atomic_load(&c->me->kick) &&
		    rt_close_call(c, atomic_load(&c->me->kick), B(RC_OK), "close of the kick at the end"))
			atomic_store(&c->me->kick, 0);
	}
	if (c->nb) {
		struct rt_oprec *op = rt_begin(c, C_ARENA_CLOSE);

		ws_arena_close(c->nb);
		rt_end(c, op, 0);
	}
	atomic_store(&c->me->state, A_DONE);
	free(c);
	return NULL;
}

static int start_actor(pthread_t *thread)
{
	pthread_attr_t attr;
	int slot = rt_actor_alloc();
	pthread_t t;

	if (slot < 0) {
		fprintf(stderr, "winsync-random: no free actor slot\n");
		return -1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1 << 20);
	if (!thread)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(thread ? thread : &t, &attr, actor_main, (void *)(intptr_t)slot)) {
		atomic_store(&rt_shm->actors[slot].state, A_FREE);
		pthread_attr_destroy(&attr);
		return -1;
	}
	pthread_attr_destroy(&attr);
	return slot;
}

static int map_shm(int fd)
{
	struct stat st;
	void *p;

	if (fstat(fd, &st))
		return -errno;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	rt_shm = p;
	rt_shm_size = (size_t)st.st_size;
	rt_pool = (struct rt_pool_obj *)(rt_shm + 1);
	return 0;
}

/* A thread the coordinator ends: no unwinding, as a kill would. */
static void die_now(int sig)
{
	(void)sig;
	syscall(SYS_exit, 0);
}

int rt_child_main(int argc, char **argv)
{
	int slots[16], serials[16], n;

	if (argc < 4 || map_shm(atoi(argv[2])))
		return 2;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != (pid_t)rt_shm->parent_pid)
		_exit(0);
	n = atoi(argv[3]);
	if (n > 16)
		n = 16;
	rt_suspend_setup();
	signal(SIGUSR2, die_now);
	if (ws_arena_open(rt_shm->arena_name, &proc_arena)) {
		fprintf(stderr, "winsync-random child: cannot open %s\n", rt_shm->arena_name);
		_exit(3);
	}
	for (int i = 0; i < n; i++) {
		slots[i] = start_actor(NULL);
		serials[i] = slots[i] >= 0 ? (int)rt_shm->actors[slots[i]].serial : -1;
	}
	while (!atomic_load(&rt_shm->stop)) {
		usleep(5000);
		for (int i = 0; i < n; i++) {
			struct rt_actor *a = slots[i] >= 0 ? &rt_shm->actors[slots[i]] : NULL;
			int state = a ? atomic_load(&a->state) : A_DEAD;

			/* Ended by the coordinator (and its death counted): a new actor. */
			if (!a || (int)a->serial != serials[i] || state == A_DEAD) {
				slots[i] = start_actor(NULL);
				serials[i] = slots[i] >= 0 ? (int)rt_shm->actors[slots[i]].serial : -1;
			}
		}
	}
	for (int waited = 0; waited < 60000; waited += 5) {
		bool busy = false;

		for (int i = 0; i < n; i++) {
			struct rt_actor *a = slots[i] >= 0 ? &rt_shm->actors[slots[i]] : NULL;
			int state = a && (int)a->serial == serials[i] ? atomic_load(&a->state) : A_DEAD;

			busy |= state == A_INIT || state == A_RUNNING;
		}
		if (!busy)
			_exit(0);
		usleep(5000);
	}
	_exit(4);
}

struct child {
	pid_t pid;
	bool stopped;
	uint64_t cont_at;
};

/*
 * Two threads of the parent coordinate: the main thread controls processes
 * (signals, stops, kills, continues, reaping, calls that hang) and makes no
 * call into the arena, so that nothing can keep it from continuing a stopped
 * child; the service thread makes the coordinator's calls (checks, kicks,
 * the objects of dead actors) through a NONBLOCK pointer.  Deaths go from
 * the one to the other through a single-producer, single-consumer ring.
 */
#define DEAD_RING 256

struct coord {
	struct rt_ctx c;                  /* the service thread's */
	struct rt_rng rng;                /* the main thread's */
	struct child kids[MAX_CHILDREN];
	int nkids;
	_Atomic uint32_t dead_head, dead_tail;
	_Atomic int dead_ring[DEAD_RING]; /* slot | tell << 16 */
	_Atomic bool queued[RT_MAX_ACTORS];
	int dead[RT_MAX_ACTORS];          /* the service thread's list */
	bool tell[RT_MAX_ACTORS], slacked[RT_MAX_ACTORS];
	int ndead;
	_Atomic int service_stop;
	struct { int slot; pid_t pid, tid; uint64_t since; } ending[16];
	int nending;
	uint32_t hung_reported[RT_MAX_ACTORS];
};

static pid_t spawn_child(void)
{
	char fd[16], n[16];
	pid_t pid;

	snprintf(fd, sizeof fd, "%d", shm_fd);
	snprintf(n, sizeof n, "%u", rt_shm->mode.child_actors);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		execl(self_path, self_path, "--child", fd, n, (char *)NULL);
		_exit(5);
	}
	return pid;
}

/* Main thread: an actor is gone; the service thread does the rest. */
static void queue_dead(struct coord *k, int slot)
{
	struct rt_actor *a = &rt_shm->actors[slot];
	int state = atomic_load(&a->state);
	uint32_t head = atomic_load(&k->dead_head);

	if (state == A_DEAD || state == A_DONE || state == A_FREE || atomic_load(&k->queued[slot]))
		return;
	while (head - atomic_load(&k->dead_tail) >= DEAD_RING)
		usleep(1000);
	atomic_store(&a->state, A_DYING);
	atomic_store(&k->queued[slot], true);
	atomic_store(&k->dead_ring[head % DEAD_RING], slot | (int)rt_pct(&k->rng, 50) << 16);
	atomic_store(&k->dead_head, head + 1);
}

/*
 * A dead actor: slack for the call it died in, its objects closed, its owner
 * ids told dead half of the time (else the kernel's robust list must do).
 * False if a call met another's critical section (NONBLOCK): try again later.
 */
static bool finish_dead(struct coord *k, int slot)
{
	struct rt_actor *a = &rt_shm->actors[slot];
	struct rt_ctx *c = &k->c;
	uint32_t next = atomic_load(&a->ring_next);

	if (!k->slacked[slot]) {
		if (next && __atomic_load_n(&a->ring[(next - 1) % RT_RING].rc, __ATOMIC_ACQUIRE) ==
			    RT_PENDING)
			rt_pool_slack(&a->ring[(next - 1) % RT_RING]);
		k->slacked[slot] = true;
	}
	for (int i = 0; i <= RT_OWN_MAX; i++) {
		_Atomic ws_handle *slotp = i < RT_OWN_MAX ? &a->own[i] : &a->kick;
		ws_handle h = atomic_load(slotp);
		struct rt_oprec *op;
		int rc;

		if (!h)
			continue;
		op = rt_begin(c, C_CLOSE);
		op->a[0] = h;
		c->cur = c->arena;
		rc = rt_counted_close(c->arena, h);
		rt_end(c, op, rc);
		if (rc == -EAGAIN)
			return false;
		rt_expect(c, op, rc, B(RC_OK) | B(RC_EBADF), "close of a dead actor's object");
		atomic_store(slotp, 0);
	}
	if (k->tell[slot]) {
		for (int i = 0; i < RT_OWNERS; i++) {
			struct rt_oprec *op = rt_begin(c, C_OWNER_DIED);
			int rc;

			op->a[0] = a->owners[i];
			rc = ws_owner_died(c->arena, a->owners[i]);
			rt_end(c, op, rc);
			if (rc == -EAGAIN)
				return false;
			rt_expect(c, op, rc, B(RC_OK), "owner died, for a dead actor");
		}
		atomic_fetch_add(&rt_shm->dead_owners_told, 1);
	}
	rt_abandon_rule_set(a, k->tell[slot]);
	atomic_store(&a->state, A_DEAD);
	rt_fold_actor(a);
	return true;
}

/* Service thread: takes the deaths queued and finishes what it can. */
static void process_dead(struct coord *k)
{
	int kept = 0;
	uint32_t tail = atomic_load(&k->dead_tail);

	while (tail != atomic_load(&k->dead_head)) {
		int v = atomic_load(&k->dead_ring[tail % DEAD_RING]), slot = v & 0xffff;

		k->tell[slot] = v >> 16;
		k->slacked[slot] = false;
		k->dead[k->ndead++] = slot;
		atomic_store(&k->dead_tail, ++tail);
	}
	for (int i = 0; i < k->ndead; i++) {
		int slot = k->dead[i];

		if (finish_dead(k, slot))
			atomic_store(&k->queued[slot], false);
		else
			k->dead[kept++] = slot;
	}
	k->ndead = kept;
}

static int running_actor_of(struct coord *k, pid_t pid)
{
	int found[RT_MAX_ACTORS], n = 0;

	for (int i = 0; i < RT_MAX_ACTORS; i++) {
		struct rt_actor *a = &rt_shm->actors[i];

		if (a->pid == pid && atomic_load(&a->state) == A_RUNNING && atomic_load(&a->ops) > 50)
			found[n++] = i;
	}
	return n ? found[rt_below(&k->rng, (uint32_t)n)] : -1;
}

static void kill_child(struct coord *k, int i)
{
	pid_t pid = k->kids[i].pid;
	int status;

	for (int s = 0; s < RT_MAX_ACTORS; s++) {
		struct rt_actor *a = &rt_shm->actors[s];
		int state = atomic_load(&a->state);

		if (a->pid == pid && (state == A_INIT || state == A_RUNNING || state == A_DYING))
			atomic_store(&a->state, A_DYING);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	for (int s = 0; s < RT_MAX_ACTORS; s++) {
		struct rt_actor *a = &rt_shm->actors[s];

		if (a->pid == pid && atomic_load(&a->state) == A_DYING)
			queue_dead(k, s);
	}
	for (int e = 0; e < k->nending;) {
		if (k->ending[e].pid == pid)
			k->ending[e] = k->ending[--k->nending];
		else
			e++;
	}
	atomic_fetch_add(&rt_shm->proc_deaths, 1);
	k->kids[i].pid = atomic_load(&rt_shm->stop) ? 0 : spawn_child();
}

/*
 * ThreadSanitizer cannot see the hand-over of a critical section that a
 * dead thread left (the kernel marks the death): under it only whole
 * processes die.
 */
#if defined(__SANITIZE_THREAD__)
#define END_THREADS false
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define END_THREADS false
#endif
#endif
#ifndef END_THREADS
#define END_THREADS true
#endif

static void end_thread(struct coord *k, int i)
{
	int slot = running_actor_of(k, k->kids[i].pid);
	struct rt_actor *a;

	if (slot < 0 || k->nending == 16)
		return;
	a = &rt_shm->actors[slot];
	atomic_store(&a->state, A_DYING);
	k->ending[k->nending].slot = slot;
	k->ending[k->nending].pid = a->pid;
	k->ending[k->nending].tid = atomic_load(&a->tid);
	k->ending[k->nending].since = rt_now_ns();
	k->nending++;
	syscall(SYS_tgkill, a->pid, atomic_load(&a->tid), SIGUSR2);
}

/* Threads told to end: once gone, their deaths are processed. */
static void check_ending(struct coord *k)
{
	for (int e = 0; e < k->nending;) {
		char path[64];

		snprintf(path, sizeof path, "/proc/%d/task/%d", (int)k->ending[e].pid,
			 (int)k->ending[e].tid);
		if (access(path, F_OK) == 0 && rt_now_ns() - k->ending[e].since < 10000000000ull) {
			e++;
			continue;
		}
		queue_dead(k, k->ending[e].slot);
		atomic_fetch_add(&rt_shm->thread_deaths, 1);
		k->ending[e] = k->ending[--k->nending];
	}
}

static void kick_waiters(struct coord *k, bool all)
{
	struct rt_ctx *c = &k->c;

	for (int i = 0; i < RT_MAX_ACTORS; i++) {
		struct rt_actor *a = &rt_shm->actors[i];
		ws_handle kick = atomic_load(&a->kick);
		struct rt_oprec *op;
		int rc;

		if (i == c->slot || !kick || atomic_load(&a->state) != A_RUNNING ||
		    (!all && !atomic_load(&a->forever)))
			continue;
		op = rt_begin(c, C_EVENT_SET);
		op->a[0] = kick;
		rc = ws_event_set(c->cur, kick, NULL);
		rt_end(c, op, rc);
		rt_expect(c, op, rc, B(RC_OK) | B(RC_EBADF) | B(RC_EAGAIN), "kick");
	}
}

/* A call running for far longer than its deadline allows. */
static void check_hung(struct coord *k)
{
	uint64_t now = rt_now_ns() - rt_shm->start_ns;

	for (int i = 0; i < RT_MAX_ACTORS; i++) {
		struct rt_actor *a = &rt_shm->actors[i];
		uint32_t next = atomic_load(&a->ring_next);
		struct rt_oprec *op;
		uint64_t limit, t;
		int32_t timeout;

		if (atomic_load(&a->state) != A_RUNNING || !next || k->hung_reported[i] == next)
			continue;
		op = &a->ring[(next - 1) % RT_RING];
		if (__atomic_load_n(&op->rc, __ATOMIC_ACQUIRE) != RT_PENDING)
			continue;
		t = __atomic_load_n(&op->t_ns, __ATOMIC_RELAXED);
		timeout = __atomic_load_n(&op->timeout_us, __ATOMIC_RELAXED);
		limit = 15000000000ull + (timeout > 0 ? (uint64_t)timeout * 1000u : 0);
		if (now < t || now - t < limit)
			continue;
		k->hung_reported[i] = next;
		rt_lock(&rt_shm->print_lock);
		fprintf(stderr, "\nactor serial %u has been in %s for %.1f s:\n", a->serial,
			rt_call_name((enum rt_call)op->call), (double)(now - op->t_ns) / 1e9);
		rt_print_ring(a, 2);
		rt_unlock(&rt_shm->print_lock);
		rt_fail(NULL, "a call did not return", "%s of actor serial %u, %.1f s after it began",
			rt_call_name((enum rt_call)op->call), a->serial, (double)(now - op->t_ns) / 1e9);
	}
}

static void reap_children(struct coord *k)
{
	for (int i = 0; i < k->nkids; i++) {
		int status;
		pid_t pid = k->kids[i].pid;

		if (!pid || waitpid(pid, &status, WNOHANG) != pid)
			continue;
		if (!atomic_load(&rt_shm->stop) || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			rt_fail(NULL, "a child process ended by itself",
				"child %d: %s %d", (int)pid, WIFSIGNALED(status) ? "signal" : "exit code",
				WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		for (int s = 0; s < RT_MAX_ACTORS; s++) {
			struct rt_actor *a = &rt_shm->actors[s];
			int state = atomic_load(&a->state);

			if (a->pid == pid && (state == A_INIT || state == A_RUNNING))
				queue_dead(k, s);
		}
		k->kids[i].pid = 0;
	}
}

/* Poisson-ish: true with `per10s` events per 10 seconds on average, per tick. */
static bool happens(struct rt_rng *r, uint32_t per10s)
{
	return per10s && rt_below(r, 5000) < per10s;
}

/* The service thread: the coordinator's calls into the arena, never blocking (NONBLOCK). */
static void *service_main(void *arg)
{
	struct coord *k = arg;
	uint64_t next_check = 0, next_kick = 0;

	while (!atomic_load(&k->service_stop)) {
		uint64_t now = rt_now_ns();
		struct timespec tick = { 0, (long)TICK_NS };

		nanosleep(&tick, NULL);
		process_dead(k);
		if (now >= next_check && !atomic_load(&rt_shm->stop)) {
			rt_misc_op(&k->c, K_CHECK);
			next_check = now + 300000000ull;
		}
		if (now >= next_kick) {
			/* At the end, everyone's kick: waits without deadline end. */
			kick_waiters(k, atomic_load(&rt_shm->stop));
			next_kick = now + (atomic_load(&rt_shm->stop) ? 5000000ull : 50000000ull);
		}
	}
	return NULL;
}

/* The main thread: processes and signals only. */
static void coordinate(struct coord *k, uint64_t end_ns)
{
	const struct rt_mode *m = &rt_shm->mode;
	uint64_t next_hung = 0;

	while (!atomic_load(&rt_shm->stop)) {
		uint64_t now = rt_now_ns();
		struct timespec tick = { 0, (long)TICK_NS };

		if (now >= end_ns)
			break;
		nanosleep(&tick, NULL);
		reap_children(k);
		check_ending(k);
		if (now >= next_hung) {
			check_hung(k);
			next_hung = now + 100000000ull;
		}
		for (int i = 0; i < k->nkids; i++) {
			struct child *kid = &k->kids[i];

			if (kid->stopped && now >= kid->cont_at) {
				kill(kid->pid, SIGCONT);
				kid->stopped = false;
				atomic_fetch_sub(&rt_shm->stopped_children, 1);
				atomic_fetch_add(&rt_shm->stop_epoch, 1);
			}
			if (!kid->pid || kid->stopped)
				continue;
			if (happens(&k->rng, m->kills)) {
				if (rt_pct(&k->rng, 50) || !END_THREADS)
					kill_child(k, i);
				else
					end_thread(k, i);
			} else if (happens(&k->rng, m->stops)) {
				atomic_fetch_add(&rt_shm->stopped_children, 1);
				atomic_fetch_add(&rt_shm->stop_epoch, 1);
				kill(kid->pid, SIGSTOP);
				kid->stopped = true;
				kid->cont_at = now + rt_range(&k->rng, 50, 1500) * 1000000ull;
				atomic_fetch_add(&rt_shm->stops_done, 1);
			}
		}
		for (int i = 0; m->signals && i < RT_MAX_ACTORS; i++) {
			struct rt_actor *a = &rt_shm->actors[i];
			uint32_t n = m->signals / 5000 + happens(&k->rng, m->signals % 5000);

			while (i != k->c.slot && atomic_load(&a->state) == A_RUNNING && n--)
				rt_signal_thread(a->pid, atomic_load(&a->tid));
		}
	}
}

/* The end: everyone stops, kicked out of waits; children exit; parent actors join. */
static bool wind_down(struct coord *k, pthread_t *threads, int nthreads, pthread_t service)
{
	uint64_t deadline = rt_now_ns() + 60000000000ull;
	bool done = false;

	atomic_store(&rt_shm->stop, 1);
	for (int i = 0; i < k->nkids; i++) {
		if (k->kids[i].stopped) {
			kill(k->kids[i].pid, SIGCONT);
			k->kids[i].stopped = false;
			atomic_fetch_sub(&rt_shm->stopped_children, 1);
			atomic_fetch_add(&rt_shm->stop_epoch, 1);
		}
	}
	while (!done && rt_now_ns() < deadline) {
		struct timespec t = { 0, 5000000 };

		nanosleep(&t, NULL);
		reap_children(k);
		check_ending(k);
		check_hung(k);
		done = k->nending == 0;
		for (int i = 0; i < k->nkids; i++)
			done &= k->kids[i].pid == 0;
		for (int i = 0; i < RT_MAX_ACTORS; i++) {
			int state = atomic_load(&rt_shm->actors[i].state);

			if (i != k->c.slot && rt_shm->actors[i].pid == rt_shm->parent_pid &&
			    (state == A_INIT || state == A_RUNNING))
				done = false;
			if (atomic_load(&k->queued[i]))
				done = false;
		}
	}
	if (!done) {
		rt_lock(&rt_shm->print_lock);
		for (int i = 0; i < RT_MAX_ACTORS; i++) {
			struct rt_actor *a = &rt_shm->actors[i];
			int state = atomic_load(&a->state);

			if (state == A_INIT || state == A_RUNNING)
				rt_print_ring(a, 2);
		}
		rt_unlock(&rt_shm->print_lock);
		rt_fail(NULL, "the run did not end: an actor or a child is stuck", "after 60 s");
		for (int i = 0; i < k->nkids; i++)
			if (k->kids[i].pid)
				kill(k->kids[i].pid, SIGKILL);
		return false;
	}
	atomic_store(&k->service_stop, 1);
	pthread_join(service, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	return true;
}

/*
 * The run's arena name.  A process id alone is not enough: a run that was
 * killed (or failed and kept its arena) leaves the name behind, and a later
 * process with the same id, in a container where ids are small and reused,
 * would find it taken.  The clock's nanoseconds tell runs apart.
 */
void rt_name_run(unsigned attempt)
{
	snprintf(rt_shm->arena_name, sizeof rt_shm->arena_name, "wsrand-%d-%x-%u", (int)getpid(),
		 (unsigned)rt_now_ns(), attempt);
}

/*
 * Removes the run's arena and every named arena its actors made under its
 * prefix (misc.c): an actor killed between create and unlink leaves one.
 * Linux keeps a named arena as /dev/shm/winsync-NAME (os/linux.c).
 */
static void unlink_run_arenas(void)
{
	size_t n = strlen(rt_shm->arena_name);
	struct dirent *e;
	DIR *d;

	ws_arena_unlink(rt_shm->arena_name);
	d = opendir("/dev/shm");
	if (!d)
		return;
	while ((e = readdir(d))) {
		const char *name = e->d_name;

		if (strncmp(name, "winsync-", 8))
			continue;
		name += 8;
		if (!strncmp(name, rt_shm->arena_name, n) && name[n] == '-')
			ws_arena_unlink(name);
	}
	closedir(d);
}

int rt_run(const char *self)
{
	const struct rt_mode *m;
	struct coord *k = calloc(1, sizeof *k);
	pthread_t threads[16], service;
	int nthreads = 0, rc, coord_slot;
	ws_arena *nb = NULL;
	struct rt_oprec *op;

	self_path = self;
	if (!k)
		return 2;
	m = &rt_shm->mode;
	rc = ws_arena_create(rt_shm->arena_name, m->capacity, &proc_arena);
	for (unsigned attempt = 1; rc == -EEXIST && attempt < 4; attempt++) {
		rt_name_run(attempt);
		rc = ws_arena_create(rt_shm->arena_name, m->capacity, &proc_arena);
	}
	if (rc == -ENOSYS) {
		printf("SKIP: the futex backend forced by WINSYNC_BACKEND is missing\n");
		free(k);
		return 77;
	}
	if (rc) {
		fprintf(stderr, "winsync-random: ws_arena_create(%s): %s\n", rt_shm->arena_name,
			rt_errname(rc));
		free(k);
		return 2;
	}
	rt_suspend_setup();
	signal(SIGPIPE, SIG_IGN);
	coord_slot = rt_actor_alloc();
	if (rt_actor_setup(&k->c, coord_slot, proc_arena, false) ||
	    rt_pool_create(&k->c, m->pool_events, m->pool_sems, m->pool_mutexes, &k->c.rng)) {
		unlink_run_arenas();
		free(k);
		return 2;
	}
	/* Mid-run the coordinator never waits for anyone's critical section. */
	op = rt_begin(&k->c, C_ARENA_OPEN);
	rc = ws_arena_open(rt_shm->arena_name, &nb);
	rt_end(&k->c, op, rc);
	if (rc || ws_arena_set_flags(nb, WS_ARENA_NONBLOCK)) {
		unlink_run_arenas();
		free(k);
		return 2;
	}
	k->c.arena = k->c.cur = k->c.nb = nb;
	k->c.force_nb = true;
	rt_rng_init(&k->rng, rt_shm->seed, 0);
	if (pthread_create(&service, NULL, service_main, k)) {
		unlink_run_arenas();
		free(k);
		return 2;
	}
	for (uint32_t i = 0; i < m->children && i < MAX_CHILDREN; i++)
		k->kids[k->nkids++].pid = spawn_child();
	for (uint32_t i = 0; i < m->parent_actors && i < 16; i++)
		if (start_actor(&threads[nthreads]) >= 0)
			nthreads++;
	fprintf(stderr, "winsync-random: mode %s, seed %llu, %.1f s, %u+%u×%u actors, capacity %u, "
		"backend %s\n", m->name, (unsigned long long)rt_shm->seed, rt_shm->seconds,
		m->parent_actors, m->children, m->child_actors, m->capacity, ws_futex_backend());
	coordinate(k, rt_shm->start_ns + (uint64_t)(rt_shm->seconds * 1e9));
	if (!wind_down(k, threads, nthreads, service)) {
		/* Kept, for winsync-stat's wait chains; the name is the run's own. */
		fprintf(stderr, "winsync-random: the arena %s is kept\n", rt_shm->arena_name);
		rt_print_summary(stdout);
		fflush(NULL);
		_exit(1);
	}
	/* Everyone is gone: the final checks, blocking. */
	k->c.arena = k->c.cur = proc_arena;
	k->c.force_nb = false;
	process_dead(k);
	for (int i = 0; i < RT_MAX_ACTORS; i++) {
		struct rt_actor *a = &rt_shm->actors[i];
		int state = atomic_load(&a->state);

		if (i != k->c.slot && (state == A_DONE || state == A_DEAD))
			rt_fold_actor(a);
	}
	rt_pool_final(&k->c);
	rt_misc_op(&k->c, K_CHECK);
	op = rt_begin(&k->c, C_ARENA_CLOSE);
	ws_arena_close(nb);
	rt_end(&k->c, op, 0);
	rt_fold_actor(k->c.me);
	ws_arena_close(proc_arena);
	unlink_run_arenas();
	rt_print_summary(stdout);
	free(k);
	return atomic_load(&rt_shm->violations) ? 1 : 0;
}

/* The shared memory of a run, inherited by the children through exec. */
int rt_shm_create(size_t pool);
int rt_shm_create(size_t pool)
{
	size_t size = sizeof(struct rt_shm) + pool * (sizeof(struct rt_pool_obj) + sizeof(uint32_t));

	shm_fd = (int)syscall(SYS_memfd_create, "winsync-random", 0);
	if (shm_fd < 0 || ftruncate(shm_fd, (off_t)size))
		return -errno;
	return map_shm(shm_fd);
}
