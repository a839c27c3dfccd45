/*
 * probe.c -- let a sacrificial child try a pool before heapd opens it.
 *
 * libpmemobj trusts its own metadata: on some damaged files (a changed
 * byte in the pool header, a lane's log or an allocator header)
 * pmemobj_open and pmemobj_check die by SIGSEGV or SIGFPE, or never
 * return, and a lane whose undo or redo log is damaged may pass both and
 * crash the first transaction that takes it. heapd must refuse such a
 * file with a message instead of dying, so before it opens a pool it
 * forks a child that
 *  1. runs pmemobj_check on it: a copy-on-write open (the file is not
 *     changed), libpmemobj's own recovery of its lanes, then its
 *     consistency check of the pool header, the lanes and every zone and
 *     chunk header;
 *  2. if that passes, opens the pool copy-on-write (ctl
 *     copy_on_write.at_open: changes stay in the child's private mapping,
 *     the file is byte-identical afterwards) and runs, on each of the
 *     HD_NLANES lanes heapd uses (PMEMOBJ_NLANES, core.h), a transaction
 *     that snapshots a range of the root object and allocates a small
 *     object, then commits, and one that frees it. A thread's first
 *     transaction gets lane 8 * n (mod the lane count) for the n-th
 *     thread, and the next free lane when that one is held; so HD_NLANES
 *     threads that each keep their transaction open until all are inside
 *     one hold every lane once. pmemobj_check reads the lanes but runs no
 *     transaction: a lane whose undo or redo log is damaged passes it and
 *     crashes here instead of in heapd;
 *  3. then takes every free chunk of the pool with allocations of an
 *     arena's and a log's size (the heap header's; fill_pool): a damaged
 *     chunk header that pmemobj_check let through crashes one of them
 *     here, not a later arena lease or attach in heapd.
 * A child that dies, hangs or finds the metadata inconsistent tells heapd
 * the file is damaged; one that cannot open the pool (in use, not a pool,
 * truncated) leaves the explanation to pmemobj_open, whose failures heapd
 * already words.
 *
 * The probe costs two copy-on-write opens, HD_NLANES short threads and
 * an allocation per free arena's size: about 12 ms of the child's time
 * on a 256 MiB heap (pmemobj_check 7 of them) and 6 ms more per GiB of
 * free pool for the fill (heapd starts in about 70 ms instead of 45 on a
 * 4 GiB heap, tmpfs), growing with the number of zones and chunks, not
 * with the data.
 * heapd waits on a pipe that closes when the child ends, so it goes on as
 * soon as the child is done. The probe runs before heapd starts any
 * thread, so fork is safe.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

/* How long the child may take. pmemobj_check reads the metadata only
 * (a few MiB even for a large pool), so this is far more than a sound
 * pool needs; a damaged one can make libpmemobj loop. */
#define PROBE_TIMEOUT_MS 30000

enum { PROBE_SOUND = 0, PROBE_INCONSISTENT = 1, PROBE_NO_OPEN = 2 };

/* How long the child waits for all lane threads to be inside their
 * transactions before it lets them commit anyway: a sound transaction takes
 * microseconds; a thread that finds no free lane (a pool with fewer lanes
 * than HD_NLANES) waits until the others end theirs. */
#define LANE_WAIT_MS 1000

struct lanes {
	PMEMobjpool *pop;
	PMEMoid root;
	size_t snap;		/* bytes of the root to snapshot, 0: none */
	size_t big[2];		/* an arena's and a log's bytes, 0: none (fill_pool) */
	pthread_mutex_t mu;
	pthread_cond_t ready_cv;	/* on CLOCK_MONOTONIC */
	pthread_cond_t release_cv;
	int ready;		/* threads inside their transaction (or failed to begin) */
	int release;		/* all may commit now */
};

/* One lane's trial: a transaction that snapshots part of the root and
 * allocates, held open until the child releases all, then committed, and
 * a second one on the same lane that frees what the first allocated. An
 * abort replays the undo log only; a commit publishes through the lane's
 * redo logs, which heapd's every attach, lease and reap does: a lane whose
 * redo log is damaged passes an aborted trial and crashes a commit. A full
 * pool or any other error just ends the trial: only a crash or a hang
 * counts. */
static void *try_lane(void *arg)
{
	struct lanes *l = arg;
	PMEMoid made = OID_NULL;
	int in_tx = pmemobj_tx_begin(l->pop, NULL, TX_PARAM_NONE) == 0;

	if (in_tx) {
		if (l->snap)
			pmemobj_tx_xadd_range(l->root, 0, l->snap, POBJ_XADD_NO_ABORT);
		made = pmemobj_tx_xalloc(64, 0, POBJ_XALLOC_NO_ABORT);
	}
	pthread_mutex_lock(&l->mu);
	l->ready++;
	pthread_cond_signal(&l->ready_cv);
	while (in_tx && !l->release)	/* bound: the child releases all */
		pthread_cond_wait(&l->release_cv, &l->mu);
	pthread_mutex_unlock(&l->mu);
	if (in_tx && pmemobj_tx_stage() == TX_STAGE_WORK)
		pmemobj_tx_commit();
	pmemobj_tx_end();
	if (!in_tx || pmemobj_tx_begin(l->pop, NULL, TX_PARAM_NONE) != 0)
		return NULL;
	if (!OID_IS_NULL(made))
		pmemobj_tx_xfree(made, POBJ_XFREE_NO_ABORT);
	if (pmemobj_tx_stage() == TX_STAGE_WORK)
		pmemobj_tx_commit();
	pmemobj_tx_end();
	return NULL;
}

/* Allocations fill_pool makes at most: a 64 GiB pool of 1 MiB arenas. */
#define FILL_MAX 65536

/* The pool's free chunks taken as heapd's leases take them: arena- then
 * log-size allocations until the pool is full (in the copy-on-write
 * mapping: nothing reaches the file). libpmemobj takes those sizes from
 * whole chunks, not from a run, so a damaged header of any free chunk,
 * which would crash a later lease or attach in heapd, crashes one of
 * them here. The atomic API, not a transaction each: the same chunk
 * search, at about half the cost (the lanes' transactions are tried
 * above). */
static void fill_pool(const struct lanes *l)
{
	for (int i = 0; i < 2; i++) {	/* bound: two sizes */
		PMEMoid o;
		for (int n = 0; l->big[i] && n < FILL_MAX; n++)	/* bound: FILL_MAX */
			if (pmemobj_alloc(l->pop, &o, l->big[i], 0, NULL, NULL) != 0)
				break;
	}
}

/* Run try_lane on each of heapd's lanes of a copy-on-write open of path.
 * Returns only if none crashed; a pool that does not open this way is
 * left to pmemobj_open. */
static void try_lanes(const char *path)
{
	int on = 1;
	if (pmemobj_ctl_set(NULL, "copy_on_write.at_open", &on) != 0)
		return;
	struct lanes l = { .pop = pmemobj_open(path, UH_LAYOUT_NAME) };
	if (!l.pop)
		return;
	size_t root_size = pmemobj_root_size(l.pop);
	if (root_size) {
		l.root = pmemobj_root(l.pop, root_size);
		l.snap = root_size < 64 ? root_size : 64;
	}
	const struct uh_hdr *h = root_size >= sizeof(*h) ? pmemobj_direct(l.root) : NULL;
	if (h && memcmp(h->magic, UH_MAGIC, 8) == 0) {
		/* The sizes heapd allocates, as far as they are sane: the
		 * header is checked properly after the open. */
		uint64_t sizes[2] = { h->arena_size, h->log_size };
		for (int i = 0; i < 2; i++)	/* bound: two sizes */
			if (sizes[i] > HD_PMEMOBJ_ALLOC_HDR && sizes[i] <= (1u << 30))
				l.big[i] = sizes[i] - HD_PMEMOBJ_ALLOC_HDR;
	}
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l.ready_cv, &ca);
	pthread_cond_init(&l.release_cv, NULL);
	pthread_mutex_init(&l.mu, NULL);

	pthread_t tid[HD_NLANES];
	int n = 0;
	while (n < HD_NLANES && pthread_create(&tid[n], NULL, try_lane, &l) == 0)
		n++;	/* bound: HD_NLANES */
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += LANE_WAIT_MS / 1000;
	pthread_mutex_lock(&l.mu);
	int rc = 0;
	while (l.ready < n && rc == 0)	/* bound: the timeout */
		rc = pthread_cond_timedwait(&l.ready_cv, &l.mu, &until);
	l.release = 1;
	pthread_cond_broadcast(&l.release_cv);
	pthread_mutex_unlock(&l.mu);
	for (int i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	fill_pool(&l);
}

static void probe_child(const char *path)
{
	int rc = pmemobj_check(path, UH_LAYOUT_NAME);

	if (rc == 1)
		try_lanes(path);
	_exit(rc == 1 ? PROBE_SOUND : rc == 0 ? PROBE_INCONSISTENT : PROBE_NO_OPEN);
}

/* Wait for the child at most PROBE_TIMEOUT_MS; kill it after that.
 * done is the read end of a pipe whose write end only the child holds
 * (-1 if there is none): it closes when the child ends, so the wait ends
 * then, not at the next poll. Returns its wait status, or -1 when it had
 * to be killed. */
static int wait_child(pid_t pid, int done)
{
	struct timespec t0, now;
	int st;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int ms = 1;; ms = ms < 50 ? ms * 2 : 50) {	/* bound: the timeout */
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return 0;	/* cannot happen for our own child: let open decide */
		clock_gettime(CLOCK_MONOTONIC, &now);
		long spent = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (spent >= PROBE_TIMEOUT_MS) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		struct pollfd p = { .fd = done, .events = POLLIN };
		if (poll(&p, 1, ms) > 0) {	/* the pipe closed: the child is ending */
			while (waitpid(pid, &st, 0) < 0)	/* bound: its end */
				if (errno != EINTR)
					return 0;
			return st;
		}
	}
}

static const char *REMEDY = "heapd will not open it; restore the file from a backup "
			    "(pmempool check, from pmdk-tools, tells what libpmemobj finds wrong)";

int hd_probe_pool(const char *path, char *err, size_t errlen)
{
	int done[2] = { -1, -1 };
	if (pipe(done) != 0)
		done[0] = done[1] = -1;	/* wait_child then only polls */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		probe_child(path);
	if (done[1] >= 0)
		close(done[1]);
	int st = pid < 0 ? 0 : wait_child(pid, done[0]);
	if (done[0] >= 0)
		close(done[0]);
	if (pid < 0)
		return 0;	/* no probe possible: the open itself will tell */
	if (st == -1)
		return hd_err(err, errlen, UH_EIO, "%s is damaged: libpmemobj did not finish "
			      "checking its metadata and lanes within %d s; %s", path,
			      PROBE_TIMEOUT_MS / 1000, REMEDY);
	if (WIFSIGNALED(st))
		return hd_err(err, errlen, UH_EIO, "%s is damaged: libpmemobj crashed (%s) "
			      "on its metadata (pool header, lanes or allocator headers); "
			      "%s", path, strsignal(WTERMSIG(st)), REMEDY);
	if (WIFEXITED(st) && WEXITSTATUS(st) == PROBE_INCONSISTENT)
		return hd_err(err, errlen, UH_EIO, "%s is damaged: libpmemobj's consistency "
			      "check fails on its metadata (pool header, lanes or allocator "
			      "headers); %s", path, REMEDY);
	return 0;
}
