/*
 * bench_notify.c -- what change notifications cost a commit (FORMAT.md
 * 8.9), and how fast a waiter wakes, in one run; never a test.
 *
 * The commit: a bank transfer between two of 1000 accounts (read both
 * balances, write both, one uh_run block), timed over a fixed number of
 * transfers, with
 *   - no waiter anywhere: the commit adds to no counter and reads
 *     hdr->waiters once (a line it has just written): no system call;
 *   - 1 waiter, a thread sleeping on an account the transfers write: each
 *     commit that writes it wakes it, and it waits again;
 *   - 100 waiters, threads sleeping on other objects: each commit makes
 *     a FUTEX_WAKE call per object it wrote (nobody there to wake).
 * Rows alternate (0, 1, 100, 0, 1, 100, ...) and each prints its median of
 * three; the ratio is against the no-waiter median of the same run.
 *
 * Wake latency, C to C in one process pair of threads, each with its
 * session: one thread commits a field carrying the monotonic clock, the
 * other wakes in uh_wait and notes now - then (p50, p99 of 20k wakes).
 * tests/notify and bench/notify measure it across processes and languages.
 *
 * BENCH_SCALE=<f> scales the transfer and wake counts.
 */
#include <pthread.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "harness.h"

#define ACCOUNTS 1000
#define WAITERS_MAX 100

static const char *PROG = "bench_notify";
static uint32_t acct_cls;
static uh_off acct[ACCOUNTS];
static uh_off other[WAITERS_MAX];

struct waiter {
	uh_heap *h;
	uh_off obj;
	volatile int stop;
	long wakes;
	pthread_t t;
};

static void *waiter_main(void *p)
{
	struct waiter *w = p;
	while (!w->stop) {	/* bound: until stopped (uh_wait_cancel) */
		uint64_t tok;
		if (uh_change_token(w->h, w->obj, &tok) != 0)
			break;
		if (uh_wait(w->h, w->obj, tok, -1, NULL) == 1)
			w->wakes++;
	}
	return NULL;
}

static void waiters_start(uh_heap *h, struct waiter *w, int n, int on_account)
{
	for (int i = 0; i < n; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		bench_must(PROG, uh_session_open(h, UH_READONLY, &w[i].h), "session");
		w[i].obj = on_account ? acct[0] : other[i];
		pthread_create(&w[i].t, NULL, waiter_main, &w[i]);
	}
	th_sleep_ms(50);	/* into their waits */
}

static long waiters_stop(struct waiter *w, int n)
{
	long wakes = 0;
	for (int i = 0; i < n; i++) {
		w[i].stop = 1;
		uh_wait_cancel(w[i].h);
		pthread_join(w[i].t, NULL);
		wakes += w[i].wakes;
		uh_disconnect(w[i].h);
	}
	return wakes;
}

struct xfer { uh_off a, b; };

static int transfer(uh_heap *h, void *arg)
{
	struct xfer *x = arg;
	int64_t va, vb;
	int rc = uh_get_i64(h, x->a, 0, &va);
	if (!rc) rc = uh_get_i64(h, x->b, 0, &vb);
	if (!rc) rc = uh_set_i64(h, x->a, 0, va - 1);
	if (!rc) rc = uh_set_i64(h, x->b, 0, vb + 1);
	return rc;
}

/* ns per transfer over n transfers; account 0 is in every other one. */
static double transfers(uh_heap *h, long n)
{
	uint64_t rng = 88172645463325252ull;
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		th_xorshift64(&rng);
		struct xfer x = { acct[i % 2 ? 0 : 1 + rng % (ACCOUNTS - 2)],
				  acct[1 + (rng >> 20) % (ACCOUNTS - 1)] };
		if (x.a == x.b)
			x.b = acct[ACCOUNTS - 1] == x.a ? acct[2] : acct[ACCOUNTS - 1];
		bench_must(PROG, uh_run(h, transfer, &x, 0), "transfer");
	}
	return (double)(bench_now_ns() - t0) / (double)n;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void commit_cost(uh_heap *h, long n)
{
	static struct waiter w[WAITERS_MAX];
	const int counts[3] = { 0, 1, 100 };
	double t[3][3];
	long wakes[3] = { 0 };

	for (int round = 0; round < 3; round++)
		for (int c = 0; c < 3; c++) {
			waiters_start(h, w, counts[c], counts[c] == 1);
			t[c][round] = transfers(h, n);
			wakes[c] += waiters_stop(w, counts[c]);
		}
	printf("commit cost, bank transfer (%ld transfers per row, median of 3, memory class, "
	       "tmpfs)\n", n);
	double base = 0;
	for (int c = 0; c < 3; c++) {
		qsort(t[c], 3, sizeof(double), cmp_d);
		if (c == 0)
			base = t[c][1];
		printf("  %3d waiter%s %-22s %8.0f ns/transfer  %.2fx  (wakes seen: %ld)\n",
		       counts[c], counts[c] == 1 ? " " : "s",
		       c == 0 ? "" : c == 1 ? "(on a written account)" : "(on other objects)",
		       t[c][1], t[c][1] / base, wakes[c]);
	}
}

struct lat {
	uh_heap *h;
	uh_off cell;
	long n;
	uint64_t *ns;
	volatile int ready;
};

static void *lat_waiter(void *p)
{
	struct lat *l = p;
	int64_t seen = 0;
	long got = 0;
	while (got < l->n) {	/* bound: n wakes (each write below is awaited) */
		uint64_t tok;
		int64_t v, t;
		if (uh_change_token(l->h, l->cell, &tok) != 0 || uh_get_i64(l->h, l->cell, 0, &v) != 0)
			break;
		if (v != seen) {
			uh_get_i64(l->h, l->cell, 1, &t);
			l->ns[got++] = bench_now_ns() - (uint64_t)t;
			seen = v;
			__atomic_store_n(&l->ready, 1, __ATOMIC_RELEASE);
			continue;
		}
		__atomic_store_n(&l->ready, 1, __ATOMIC_RELEASE);
		if (uh_wait(l->h, l->cell, tok, 10000000000ll, NULL) != 1)
			break;
	}
	return NULL;
}

static void wake_latency(uh_heap *h, long n)
{
	static const uh_field_spec f[] = { { "seq", UH_T_I64, 0 }, { "ts", UH_T_I64, 0 } };
	struct lat l = { .n = n };
	uint32_t cls;
	pthread_t t;

	l.ns = calloc((size_t)n, sizeof(*l.ns));
	bench_must(PROG, uh_class_register(h, "BenchNotifyCell", f, 2, &cls), "class");
	bench_must(PROG, uh_alloc(h, cls, &l.cell), "alloc");
	bench_must(PROG, uh_session_open(h, UH_READONLY, &l.h), "session");
	pthread_create(&t, NULL, lat_waiter, &l);
	for (long i = 1; i <= n; i++) {
		/* Wait until the waiter took the last value (it then waits). */
		while (!__atomic_load_n(&l.ready, __ATOMIC_ACQUIRE))
			;
		__atomic_store_n(&l.ready, 0, __ATOMIC_RELAXED);
		/* ... and is asleep in it, so that the figure is a wake-up. */
		struct timespec gap = { 0, 200000 };
		nanosleep(&gap, NULL);
		bench_must(PROG, uh_begin(h), "begin");
		bench_must(PROG, uh_set_i64(h, l.cell, 1, (int64_t)bench_now_ns()), "ts");
		bench_must(PROG, uh_set_i64(h, l.cell, 0, i), "seq");
		bench_must(PROG, uh_commit(h), "commit");
	}
	pthread_join(t, NULL);
	qsort(l.ns, (size_t)n, sizeof(*l.ns), cmp_u64);
	printf("wake latency, C thread to C thread (two sessions, %ld wakes): p50 %.1f us, "
	       "p99 %.1f us\n", n, l.ns[n / 2] / 1e3, l.ns[n * 99 / 100] / 1e3);
	uh_disconnect(l.h);
	free(l.ns);
}

int main(void)
{
	static const uh_field_spec f[] = { { "balance", UH_T_I64, 0 } };
	static struct th_heapd d;
	double scale = bench_scale_env();
	uh_heap *h;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0)
		return 1;
	bench_must(PROG, uh_class_register(h, "BenchAccount", f, 1, &acct_cls), "class");
	for (int i = 0; i < ACCOUNTS; i++)
		bench_must(PROG, uh_alloc(h, acct_cls, &acct[i]), "alloc");
	for (int i = 0; i < WAITERS_MAX; i++)
		bench_must(PROG, uh_alloc(h, acct_cls, &other[i]), "alloc");
	commit_cost(h, bench_scaled(200000, scale));
	wake_latency(h, bench_scaled(20000, scale));
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return 0;
}
