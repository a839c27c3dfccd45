/*
 * bench_bank.c -- transfers per second on one uniheap heap with 1, 2 and 4
 * client processes, against the same bank on LMDB, in the same run, on
 * the same file system, in the same durability class. Prints one table;
 * never a test (no pass/fail).
 *
 * The bank: N accounts holding an i64 balance. A transfer picks two
 * distinct accounts (uniform, or zipfian with theta 0.99 over a fixed
 * permutation of the accounts), reads both balances and writes both, in
 * one uh_run() block (uniheap) or one write transaction (LMDB, see
 * bench_bank_lmdb.c). Each run does a fixed number of transfers split over
 * its K processes.
 *
 * Durability classes, compared like with like:
 *   memory: uniheap --durability memory vs LMDB MDB_NOSYNC|MDB_NOMETASYNC|
 *           MDB_WRITEMAP -- neither persists anything at commit;
 *   sync:   uniheap --durability sync vs LMDB's default -- both survive
 *           power loss (msync resp. fdatasync at every commit).
 * Both stores live in one directory: on /dev/shm (tmpfs) for every row,
 * and, for a short sync-class run, on a disk directory (this program's
 * build directory unless BANK_DISK_DIR says otherwise; BANK_DISK=0 skips).
 *
 * Processes: the parent holds no libuniheap handle and no LMDB env while
 * it forks; each worker is this program re-executed with "--worker", so
 * it connects (or opens the env) itself, says ready on a pipe, and blocks
 * until the parent closes the start pipe. The parent times from that
 * close to the last worker's exit. Workers send their uh_stats deltas
 * (aborts by cause, retries, persist barriers) back on a third pipe.
 *
 * BENCH_SCALE=<f> scales every transfer count (e.g. 0.1 for a quick run).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* pipe2 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "harness.h"

/* From bench_bank_lmdb.c (one program, two files: no header). */
int lmdb_bank_setup(const char *dir, unsigned flags, uint32_t n, int64_t initial);
int lmdb_bank_total(const char *dir, unsigned flags, uint32_t n, int64_t *total);
int lmdb_bank_worker(const char *dir, unsigned flags, long nops,
		     void (*pick)(void *ctx, uint32_t *a, uint32_t *b, int64_t *amount),
		     void *ctx, int ready_fd, int start_fd);

#define NACCOUNTS 1000u
#define INITIAL 1000000	/* per account; transfers move 1..100 */
#define ZIPF_THETA 0.99
#define PERM_STEP 7919u	/* prime, coprime to NACCOUNTS: rank -> account */
#define READY_TIMEOUT_MS 30000

enum { C_MEMORY, C_SYNC, NCLASSES };
static const struct {
	const char *name;	/* also uniheap's --durability */
	unsigned lmdb_flags;
	const char *lmdb_name;
} dclass[NCLASSES] = {
	{ "memory", MDB_NOSYNC | MDB_NOMETASYNC | MDB_WRITEMAP, "NOSYNC|NOMETASYNC|WRITEMAP" },
	{ "sync", 0, "default (fdatasync)" },
};

enum { D_UNIFORM, D_ZIPF, NDISTS };
static const char *dist_name[NDISTS] = { "uniform", "zipf.99" };

static const int procs[] = { 1, 2, 4 };
#define NPROCS ((int)(sizeof(procs) / sizeof(procs[0])))

/* What a worker sends back: one write of this struct (< PIPE_BUF, so the
 * K workers' records never interleave). */
struct bank_result {
	int32_t rc;		/* 0 = all transfers committed */
	int32_t pad;
	uint64_t commits, aborts, locked, stale, retries, barriers, lock_waits, read_waits;
	uint64_t giveups;
};

struct row {
	const char *fs;
	int cls, dist, k;
	long ops;		/* per repetition */
	int reps;
	double uh_tps, lmdb_tps;	/* medians over the repetitions */
	struct bank_result uh;	/* summed over workers and repetitions */
};

#define MAXROWS 32
static struct row rows[MAXROWS];
static int nrows;
static double scale = 1.0;
static int reps = 3;

/* ---- account choice ---- */

static double zipf_cdf[NACCOUNTS];

/* Cumulative probabilities of ranks 1..N with P(rank i) ~ 1/i^theta. */
static void zipf_init(void)
{
	double sum = 0, acc = 0;

	for (unsigned i = 0; i < NACCOUNTS; i++)
		sum += 1.0 / pow((double)(i + 1), ZIPF_THETA);
	for (unsigned i = 0; i < NACCOUNTS; i++) {
		acc += 1.0 / pow((double)(i + 1), ZIPF_THETA) / sum;
		zipf_cdf[i] = acc;
	}
	zipf_cdf[NACCOUNTS - 1] = 1.0;	/* rounding must not leave a gap */
}

struct picker {
	uint64_t rng;
	int zipf;
};

/* splitmix64: small, fast, good enough to pick accounts. */
static uint64_t next_u64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* First rank whose cumulative probability exceeds u (binary search). */
static uint32_t zipf_rank(double u)
{
	uint32_t lo = 0, hi = NACCOUNTS - 1;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (zipf_cdf[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static uint32_t pick_one(struct picker *p)
{
	uint64_t r = next_u64(&p->rng);

	if (!p->zipf)
		return (uint32_t)(r % NACCOUNTS);
	/* Hot ranks spread over the accounts, so hot objects are not
	 * neighbours in the heap (no accidental cache-line sharing). */
	return (uint32_t)(((uint64_t)zipf_rank((double)(r >> 11) * 0x1.0p-53) * PERM_STEP) %
			  NACCOUNTS);
}

static void pick_pair(void *ctx, uint32_t *a, uint32_t *b, int64_t *amount)
{
	struct picker *p = ctx;

	*a = pick_one(p);
	do
		*b = pick_one(p);
	while (*b == *a);
	*amount = 1 + (int64_t)(next_u64(&p->rng) % 100);
}

/* ---- uniheap side ---- */

struct xfer {
	uh_off a, b;
	int64_t amount;
};

/* The block body: read two balances, write both. Safe to re-run. */
static int xfer_block(uh_heap *h, void *arg)
{
	const struct xfer *x = arg;
	int64_t va, vb;
	int rc;

	if ((rc = uh_get_i64(h, x->a, 0, &va)) != 0 || (rc = uh_get_i64(h, x->b, 0, &vb)) != 0 ||
	    (rc = uh_set_i64(h, x->a, 0, va - x->amount)) != 0)
		return rc;
	return uh_set_i64(h, x->b, 0, vb + x->amount);
}

static int uh_fail(const char *what, int rc)
{
	fprintf(stderr, "bench_bank: %s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	return -1;
}

static void account_root(char *buf, size_t len, uint32_t i)
{
	snprintf(buf, len, "bank/%u", i);
}

/* Create NACCOUNTS accounts with roots bank/<i>, 100 per block. */
static int uh_bank_setup(const char *sock)
{
	uh_field_spec f = { "balance", UH_T_I64, 0 };
	uh_heap *h;
	uint32_t cls;
	int rc;

	if ((rc = uh_connect(sock, 0, &h)) != 0)
		return uh_fail("connect", rc);
	rc = uh_class_register(h, "BankAccount", &f, 1, &cls);
	for (uint32_t i = 0; rc == 0 && i < NACCOUNTS; i += 100) {
		rc = uh_begin(h);
		for (uint32_t j = i; rc == 0 && j < i + 100 && j < NACCOUNTS; j++) {
			char name[32];
			uh_off o;

			account_root(name, sizeof(name), j);
			if ((rc = uh_alloc(h, cls, &o)) == 0 && (rc = uh_set_i64(h, o, 0, INITIAL)) == 0)
				rc = uh_root_set(h, name, o);
		}
		rc = rc ? rc : uh_commit(h);
	}
	if (rc)
		uh_fail("account setup", rc);
	uh_disconnect(h);
	return rc ? -1 : 0;
}

/* Offsets of all accounts, from their roots. */
static int uh_accounts(uh_heap *h, uh_off *offs)
{
	for (uint32_t i = 0; i < NACCOUNTS; i++) {
		char name[32];
		int rc;

		account_root(name, sizeof(name), i);
		if ((rc = uh_root_get(h, name, &offs[i])) != 0)
			return uh_fail(name, rc);
	}
	return 0;
}

/* Sum of balances, read after every worker has exited (nothing moves). */
static int uh_bank_total(const char *sock, int64_t *total)
{
	static uh_off offs[NACCOUNTS];
	uh_heap *h;
	int rc;

	if ((rc = uh_connect(sock, UH_READONLY, &h)) != 0)
		return uh_fail("connect", rc);
	rc = uh_accounts(h, offs) ? UH_ENOTFOUND : 0;
	*total = 0;
	for (uint32_t i = 0; rc == 0 && i < NACCOUNTS; i++) {
		int64_t v;
		if ((rc = uh_get_i64(h, offs[i], 0, &v)) == 0)
			*total += v;
	}
	uh_disconnect(h);
	return rc ? -1 : 0;
}

static void stats_delta(struct bank_result *r, const uh_stats *s0, const uh_stats *s1)
{
	r->commits = s1->commits - s0->commits;
	r->aborts = s1->aborts - s0->aborts;
	r->locked = s1->aborts_locked - s0->aborts_locked;
	r->stale = s1->aborts_stale - s0->aborts_stale;
	r->retries = s1->retries - s0->retries;
	r->barriers = s1->barriers - s0->barriers;
	r->lock_waits = s1->lock_waits - s0->lock_waits;
	r->read_waits = s1->read_waits - s0->read_waits;
}

/* A worker's life on uniheap; fills r (rc -1 on any error). */
static void uh_worker(const char *sock, long nops, struct picker *p, int ready_fd,
		      int start_fd, struct bank_result *r)
{
	static uh_off offs[NACCOUNTS];
	uh_stats s0, s1;
	uh_heap *h;
	char c = 'r';
	int rc;

	r->rc = -1;
	if ((rc = uh_connect(sock, 0, &h)) != 0) {
		uh_fail("worker connect", rc);
		return;
	}
	if (uh_accounts(h, offs) != 0 || uh_stats_get(h, &s0) != 0 ||
	    write(ready_fd, &c, 1) != 1 || read(start_fd, &c, 1) != 0)
		goto out;
	for (long i = 0; i < nops; i++) {
		uint32_t a, b;
		struct xfer x;

		pick_pair(p, &a, &b, &x.amount);
		x.a = offs[a];
		x.b = offs[b];
		/* A block that lost 100 conflicts in a row is counted and run
		 * again: every run commits exactly its fixed number. */
		while ((rc = uh_run(h, xfer_block, &x, 0)) == UH_ECONFLICT)
			r->giveups++;
		if (rc) {
			uh_fail("transfer", rc);
			goto out;
		}
	}
	if (uh_stats_get(h, &s1) == 0) {
		stats_delta(r, &s0, &s1);
		r->rc = 0;
	}
out:
	uh_disconnect(h);
}

/* ---- worker process ---- */

/* argv: self --worker uh|lmdb <socket|dir> <lmdb flags> <dist> <nops>
 *       <seed> <ready_fd> <start_fd> <result_fd> */
static int worker_main(int argc, char **argv)
{
	struct bank_result r = { 0 };
	struct picker p;
	int ready_fd, start_fd, result_fd;
	long nops;

	if (argc != 11) {
		fprintf(stderr, "bench_bank: --worker wants 9 arguments, got %d\n", argc - 2);
		return 2;
	}
	p.zipf = atoi(argv[5]) == D_ZIPF;
	nops = atol(argv[6]);
	p.rng = strtoull(argv[7], NULL, 10);
	ready_fd = atoi(argv[8]);
	start_fd = atoi(argv[9]);
	result_fd = atoi(argv[10]);
	zipf_init();
	if (strcmp(argv[2], "uh") == 0)
		uh_worker(argv[3], nops, &p, ready_fd, start_fd, &r);
	else
		r.rc = lmdb_bank_worker(argv[3], (unsigned)strtoul(argv[4], NULL, 10), nops,
					pick_pair, &p, ready_fd, start_fd);
	if (write(result_fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
		return 1;
	return r.rc ? 1 : 0;
}

/* ---- parent: one run of K workers ---- */

static int make_pipe(int fds[2], int child_end)
{
	if (pipe2(fds, O_CLOEXEC) != 0) {
		fprintf(stderr, "bench_bank: pipe: %s\n", strerror(errno));
		return -1;
	}
	/* Only the workers' end survives their exec: the start pipe's
	 * write end must stay with the parent alone, or no EOF comes. */
	return fcntl(fds[child_end], F_SETFD, 0);
}

static int wait_ready(int fd, int k)
{
	for (int got = 0; got < k;) {
		struct pollfd pf = { fd, POLLIN, 0 };
		char c;

		if (poll(&pf, 1, READY_TIMEOUT_MS) != 1 || read(fd, &c, 1) != 1)
			return -1;
		got++;
	}
	return 0;
}

static void sum_result(struct bank_result *s, const struct bank_result *r)
{
	s->rc |= r->rc;
	s->commits += r->commits;
	s->aborts += r->aborts;
	s->locked += r->locked;
	s->stale += r->stale;
	s->retries += r->retries;
	s->barriers += r->barriers;
	s->lock_waits += r->lock_waits;
	s->read_waits += r->read_waits;
	s->giveups += r->giveups;
}

/*
 * Run ops transfers over k worker processes of system sys ("uh", "lmdb")
 * against path. @return transfers per second, or -1 (message printed);
 * sum gets the workers' counters added.
 */
static double run_workers(const char *sys, const char *path, unsigned flags, int dist, int k,
			  long ops, uint64_t seed, struct bank_result *sum)
{
	int ready[2], start[2], result[2], bad = 0;
	pid_t pids[8];
	uint64_t t0;

	if (make_pipe(ready, 1) || make_pipe(start, 0) || make_pipe(result, 1))
		return -1;
	for (int i = 0; i < k; i++) {
		char a[8][32];
		/* Re-exec this very program: a fresh process, no inherited
		 * handles, no harness atexit that would stop heapd. */
		char *argv[12] = { "/proc/self/exe", "--worker", (char *)sys, (char *)path };

		snprintf(a[0], 32, "%u", flags);
		snprintf(a[1], 32, "%d", dist);
		snprintf(a[2], 32, "%ld", ops / k + (i < ops % k));
		snprintf(a[3], 32, "%llu", (unsigned long long)(seed + (uint64_t)i * 7777));
		snprintf(a[4], 32, "%d", ready[1]);
		snprintf(a[5], 32, "%d", start[0]);
		snprintf(a[6], 32, "%d", result[1]);
		for (int j = 0; j < 7; j++)
			argv[4 + j] = a[j];
		argv[11] = NULL;
		pids[i] = th_spawn(argv, NULL);
		bad |= pids[i] < 0;
	}
	close(ready[1]);
	close(start[0]);
	close(result[1]);
	if (bad || wait_ready(ready[0], k) != 0) {
		fprintf(stderr, "bench_bank: %s workers did not get ready\n", sys);
		for (int i = 0; i < k; i++)
			if (pids[i] > 0)
				th_kill(pids[i]);
		return -1;
	}
	t0 = bench_now_ns();
	close(start[1]);	/* EOF: every worker starts now */
	for (int i = 0; i < k; i++)
		bad |= th_wait_exit(pids[i]) != 0;
	double secs = (double)(bench_now_ns() - t0) / 1e9;
	for (int i = 0; i < k; i++) {
		struct bank_result r;
		if (read(result[0], &r, sizeof(r)) != (ssize_t)sizeof(r)) {
			bad = 1;
			break;
		}
		sum_result(sum, &r);
	}
	close(ready[0]);
	close(result[0]);
	if (bad || sum->rc) {
		fprintf(stderr, "bench_bank: a %s worker failed (k=%d)\n", sys, k);
		return -1;
	}
	return (double)ops / secs;
}

/* ---- parent: one durability class in one directory ---- */

static int check_totals(const char *sock, const char *ldir, unsigned lflags)
{
	int64_t ut = 0, lt = 0, want = (int64_t)NACCOUNTS * INITIAL;

	if (uh_bank_total(sock, &ut) != 0 || lmdb_bank_total(ldir, lflags, NACCOUNTS, &lt) != 0)
		return -1;
	if (ut != want || lt != want)
		fprintf(stderr, "bench_bank: WARNING: total balance uniheap %lld, LMDB %lld, want %lld\n",
			(long long)ut, (long long)lt, (long long)want);
	return 0;
}

static long ops_of(long n)
{
	long v = (long)((double)n * scale);
	return v < 100 ? 100 : v;
}

static double median(double *v, int n)
{
	for (int i = 1; i < n; i++)	/* insertion sort: n <= 9 */
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * One row: reps repetitions of (uniheap run, LMDB run), interleaved so
 * that a change in machine load hits both alike; the medians are kept.
 * @return 0 or -1.
 */
static int run_row(struct row *r, const char *sock, const char *ldir, uint64_t seed)
{
	double u[9], l[9];

	for (int i = 0; i < r->reps; i++) {
		struct bank_result lsum = { 0 };
		uint64_t s = seed + 100000u * (uint64_t)i;

		u[i] = run_workers("uh", sock, 0, r->dist, r->k, r->ops, s, &r->uh);
		l[i] = run_workers("lmdb", ldir, dclass[r->cls].lmdb_flags, r->dist, r->k, r->ops, s,
				   &lsum);
		if (u[i] < 0 || l[i] < 0)
			return -1;
	}
	r->uh_tps = median(u, r->reps);
	r->lmdb_tps = median(l, r->reps);
	return 0;
}

/*
 * Every (dist, k) row of class c with both stores in base: ops transfers
 * per run. ndist limits the distributions (the disk run does uniform).
 */
static int run_class(const char *base, const char *fs, int c, int ndist, long ops)
{
	struct th_heapd d = { 0 };
	char args[96], ldir[600];
	int rc = -1;

	snprintf(d.dir, sizeof(d.dir), "%s/uh-%s", base, dclass[c].name);
	snprintf(ldir, sizeof(ldir), "%s/lmdb-%s", base, dclass[c].name);
	snprintf(args, sizeof(args), "--durability %s --size 64M", dclass[c].name);
	if (th_heapd_start(&d, args) != 0 || uh_bank_setup(d.sock) != 0 ||
	    lmdb_bank_setup(ldir, dclass[c].lmdb_flags, NACCOUNTS, INITIAL) != 0)
		goto out;
	for (int dist = 0; dist < ndist; dist++) {
		for (int i = 0; i < NPROCS; i++) {
			struct row *r = &rows[nrows];
			uint64_t seed = 1000003u * (uint64_t)(nrows + 1);

			*r = (struct row){ fs, c, dist, procs[i], ops, reps, 0, 0, { 0 } };
			printf("  %s %s %s %d proc ...\n", fs, dclass[c].name, dist_name[dist],
			       procs[i]);
			fflush(stdout);
			if (run_row(r, d.sock, ldir, seed) != 0)
				goto out;
			nrows++;
		}
	}
	rc = check_totals(d.sock, ldir, dclass[c].lmdb_flags);
out:
	if (rc)
		th_heapd_log_tail(&d, 2000);
	th_heapd_cleanup(&d);
	return rc;
}

/* ---- directories ---- */

static const char *fs_name(const char *dir)
{
	struct statfs s;

	if (statfs(dir, &s) != 0)
		return "?";
	switch ((unsigned long)s.f_type) {
	case 0x01021994ul: return "tmpfs";
	case 0xEF53ul: return "ext4";
	case 0x58465342ul: return "xfs";
	case 0x9123683Eul: return "btrfs";
	case 0x794c7630ul: return "overlay";
	default: return "disk";
	}
}

/* mkdtemp <parent>/uniheap-bank-XXXXXX into out. */
static int make_base(const char *parent, char *out, size_t len)
{
	snprintf(out, len, "%s/uniheap-bank-XXXXXX", parent);
	if (!mkdtemp(out)) {
		fprintf(stderr, "bench_bank: mkdtemp %s: %s\n", out, strerror(errno));
		return -1;
	}
	return 0;
}

/* Remove base and what run_class left in it (the LMDB directories; the
 * heap directories are gone with th_heapd_cleanup). */
static void remove_base(const char *base)
{
	static const char *files[] = { "data.mdb", "lock.mdb" };
	char p[700];

	for (int c = 0; c < NCLASSES; c++) {
		for (int f = 0; f < 2; f++) {
			snprintf(p, sizeof(p), "%s/lmdb-%s/%s", base, dclass[c].name, files[f]);
			unlink(p);
		}
		snprintf(p, sizeof(p), "%s/lmdb-%s", base, dclass[c].name);
		rmdir(p);
	}
	rmdir(base);
}

/* One set of classes in a fresh directory under parent. */
static int run_dir(const char *parent, int c0, int c1, int ndist, long ops)
{
	char base[256];
	const char *fs;
	int rc = 0;

	if (make_base(parent, base, sizeof(base)) != 0)
		return -1;
	fs = fs_name(base);
	for (int c = c0; c <= c1 && rc == 0; c++)
		rc = run_class(base, fs, c, ndist, ops);
	remove_base(base);
	return rc;
}

/* ---- table ---- */

static void print_row(const struct row *r)
{
	double n = (double)r->ops * r->reps;
	const struct bank_result *u = &r->uh;

	printf("%-6s %-6s %-8s %5d %11.0f %11.0f %6.2f %9.4f %8.4f %8.4f %8.4f %8.3f %8.3f %8.2f\n",
	       r->fs,
	       dclass[r->cls].name, dist_name[r->dist], r->k, r->uh_tps, r->lmdb_tps,
	       r->lmdb_tps > 0 ? r->uh_tps / r->lmdb_tps : 0, (double)u->aborts / n,
	       (double)u->locked / n, (double)u->stale / n, (double)u->retries / n,
	       (double)u->lock_waits / n, (double)u->read_waits / n, (double)u->barriers / n);
	if (u->giveups)
		printf("       (%llu uh_run calls gave up after 100 tries and were re-run)\n",
		       (unsigned long long)u->giveups);
}

/* The 1-minute load average: on a shared machine, other work takes CPUs
 * the 2- and 4-process rows would need to scale. */
static double load_avg(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double l = -1;

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

static void print_table(const char *tmp_parent, double load0)
{
	printf("\nbench_bank: %u accounts, transfer = read 2 balances + write both in one block/txn;"
	       " %ld CPUs online, load average %.2f at start, %.2f at end\n",
	       NACCOUNTS, sysconf(_SC_NPROCESSORS_ONLN), load0, load_avg());
	printf("files: heap and LMDB env side by side, on %s (%s) for the first rows, in the build"
	       " directory\n(or $BANK_DISK_DIR) for the disk rows\n",
	       tmp_parent, fs_name(tmp_parent));
	for (int c = 0; c < NCLASSES; c++)
		printf("class %-6s = uniheap --durability %-6s vs LMDB %s\n", dclass[c].name,
		       dclass[c].name, dclass[c].lmdb_name);
	printf("transfers/s: median of %d runs each (uniheap and LMDB runs interleaved); ratio ="
	       " uniheap/LMDB\n", reps);
	printf("aborts (locked: lock not freed in time, stale: a read object changed), retries,"
	       " lock/read waits\n(spin or sleep rounds), persist barriers: uniheap, per committed"
	       " transfer. LMDB never aborts\n(one writer at a time) and syncs twice per commit in"
	       " class sync (data, then meta page)\n\n");
	printf("%-6s %-6s %-8s %5s %11s %11s %6s %9s %8s %8s %8s %8s %8s %8s\n", "fs", "class",
	       "dist", "procs", "uniheap/s", "LMDB/s", "ratio", "aborts/tx", "locked", "stale",
	       "retry/tx", "lkwait", "rdwait", "barr/tx");
	for (int i = 0; i < nrows; i++)
		print_row(&rows[i]);
}

int main(int argc, char **argv)
{
	const char *disk = getenv("BANK_DISK_DIR");
	const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	uint64_t t0 = th_now_ms();
	double load0 = load_avg();

	if (argc > 1 && strcmp(argv[1], "--worker") == 0)
		return worker_main(argc, argv);
	scale = bench_scale_env();
	if (getenv("BANK_REPS") && atoi(getenv("BANK_REPS")) > 0)
		reps = atoi(getenv("BANK_REPS")) < 9 ? atoi(getenv("BANK_REPS")) : 9;
	printf("bench_bank: %s, scale %.2f\n", uh_version(), scale);
	fflush(stdout);
	if (run_dir(tmp, C_MEMORY, C_SYNC, NDISTS, ops_of(200000)) != 0)
		return 1;
	/* The disk rows are extra: a disk directory that does not work
	 * (e.g. a socket path too long for AF_UNIX) only loses them. */
	if (!(getenv("BANK_DISK") && strcmp(getenv("BANK_DISK"), "0") == 0) &&
	    run_dir(disk && *disk ? disk : TH_BIN_DIR, C_SYNC, C_SYNC, 1, ops_of(3000)) != 0)
		fprintf(stderr, "bench_bank: no disk rows (set BANK_DISK_DIR to a short disk"
			" path, or BANK_DISK=0)\n");
	print_table(tmp, load0);
	printf("\nwhole run: %.1f s\n", (double)(th_now_ms() - t0) / 1000.0);
	return 0;
}
