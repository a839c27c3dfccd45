/*
 * bench_core.c -- the costs of libuniheap's core operations, from C, one
 * process, one thread, against a private heapd on tmpfs, in durability
 * modes memory and sync. Prints one table; never a test (no pass/fail).
 *
 * Rows: ns per allocation (inside blocks of 1000), per field get and per
 * field set outside a block, per empty / 1-field / 10-field block commit,
 * persist barriers per commit (uh_stats_get), recovery GC time for 1M live
 * objects (a chain reachable from one root; heapd restarted; the duration
 * from `heapctl status --json`), and heap bytes per 100-byte object
 * (arena bytes / objects).
 *
 * BENCH_SCALE=<f> scales every iteration count (e.g. 0.1 for a quick run).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "harness.h"

enum { M_MEMORY, M_SYNC, NMODES };
static const char *mode_name[NMODES] = { "memory", "sync" };

enum {
	R_ALLOC, R_GET, R_SET, R_EMPTY, R_BLOCK1, R_BLOCK10, R_BARRIERS1, R_BARRIERS10,
	R_GC_MS, R_GC_NS, R_BYTES, NROWS
};
static const char *row_name[NROWS] = {
	"alloc, 32-byte object (blocks of 1000)",
	"field get (i64, outside a block)",
	"field set (i64, outside a block)",
	"empty block commit",
	"1-field block commit",
	"10-field block commit",
	"persist barriers per 1-field commit",
	"persist barriers per 10-field commit",
	"recovery GC, 1M live objects (ms)",
	"recovery GC per live object",
	"heap bytes per 100-byte object",
};
static const char *row_unit[NROWS] = {
	"ns", "ns", "ns", "ns", "ns", "ns", "", "", "ms", "ns", "B",
};
static double result[NROWS][NMODES];
static double scale = 1.0;

#define FIELDS 10
#define CHAIN 1000000

static struct {
	uint32_t rec;	/* BenchRec: f0..f9 i64 */
	uint32_t node;	/* BenchNode: next ref, v i64 */
} cls;

static void must(int rc, const char *what)
{
	bench_must("bench_core", rc, what);
}

static void register_classes(uh_heap *h)
{
	uh_field_spec rec[FIELDS], node[2] = { { "next", UH_T_REF, 0 }, { "v", UH_T_I64, 0 } };
	static const char *names[FIELDS] = { "f0", "f1", "f2", "f3", "f4",
					     "f5", "f6", "f7", "f8", "f9" };

	for (int i = 0; i < FIELDS; i++)
		rec[i] = (uh_field_spec){ names[i], UH_T_I64, 0 };
	must(uh_class_register(h, "BenchRec", rec, FIELDS, &cls.rec), "register BenchRec");
	must(uh_class_register(h, "BenchNode", node, 2, &cls.node), "register BenchNode");
}

/* A chain of CHAIN nodes from root "chain", in blocks of 10000. */
static void build_chain(uh_heap *h)
{
	uh_off head = 0, n;

	for (long i = 0; i < CHAIN;) {
		must(uh_begin(h), "begin");
		for (long j = 0; j < 10000 && i < CHAIN; j++, i++) {
			must(uh_alloc(h, cls.node, &n), "alloc node");
			must(uh_set_ref(h, n, 0, head), "set next");
			must(uh_set_i64(h, n, 1, i), "set v");
			head = n;
		}
		must(uh_root_set(h, "chain", head), "root chain");
		must(uh_commit(h), "commit chain block");
	}
}

static int status_u64(struct th_heapd *d, const char *key, uint64_t *v)
{
	static char out[1 << 14];

	if (th_heapctl(d, "status --json", out, sizeof(out)) != 0)
		return -1;
	return th_find_u64(out, key, v);
}

/* Build 1M live objects, restart heapd, read its recovery time. */
static void bench_recovery(struct th_heapd *d, uh_heap **h, int m)
{
	uint64_t us = 0, live = 0;

	build_chain(*h);
	uh_disconnect(*h);
	if (th_heapd_restart(d) != 0 || status_u64(d, "duration_us", &us) != 0 ||
	    status_u64(d, "live_objects", &live) != 0) {
		fprintf(stderr, "bench_core: heapd restart / status failed\n");
		exit(1);
	}
	must(th_connect(d, 0, h), "reconnect");
	register_classes(*h);
	result[R_GC_MS][m] = (double)us / 1000.0;
	result[R_GC_NS][m] = live ? (double)us * 1000.0 / (double)live : 0;
	printf("  %s: recovery of %llu live objects took %llu us\n", mode_name[m],
	       (unsigned long long)live, (unsigned long long)us);
}

static void bench_alloc(uh_heap *h, int m)
{
	long n = bench_scaled(200000, scale);
	uh_off o;
	uint64_t t0 = bench_now_ns();

	for (long i = 0; i < n;) {
		must(uh_begin(h), "begin");
		for (int j = 0; j < 1000 && i < n; j++, i++)
			must(uh_alloc(h, cls.node, &o), "alloc");
		must(uh_commit(h), "commit");
	}
	result[R_ALLOC][m] = (double)(bench_now_ns() - t0) / (double)n;
}

static void bench_fields(uh_heap *h, uh_off o, int m)
{
	long ng = bench_scaled(2000000, scale), ns = bench_scaled(100000, scale);
	int64_t v, sum = 0;
	uint64_t t0 = bench_now_ns();

	for (long i = 0; i < ng; i++) {
		must(uh_get_i64(h, o, (uint32_t)(i % FIELDS), &v), "get");
		sum += v;
	}
	result[R_GET][m] = (double)(bench_now_ns() - t0) / (double)ng;
	t0 = bench_now_ns();
	for (long i = 0; i < ns; i++)
		must(uh_set_i64(h, o, (uint32_t)(i % FIELDS), i + sum), "set");
	result[R_SET][m] = (double)(bench_now_ns() - t0) / (double)ns;
}

/* nfields sets per block (0 = empty block); ns per block and barriers. */
static void bench_blocks(uh_heap *h, uh_off o, int nfields, int m, int row, int brow)
{
	long n = bench_scaled(nfields ? 100000 : 1000000, scale);
	uh_stats s0, s1;
	uint64_t t0;

	must(uh_stats_get(h, &s0), "stats");
	t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		must(uh_begin(h), "begin");
		for (int f = 0; f < nfields; f++)
			must(uh_set_i64(h, o, (uint32_t)f, i), "set in block");
		must(uh_commit(h), "commit");
	}
	result[row][m] = (double)(bench_now_ns() - t0) / (double)n;
	must(uh_stats_get(h, &s1), "stats");
	if (brow >= 0)
		result[brow][m] = (double)(s1.barriers - s0.barriers) / (double)n;
}

static void bench_bytes(struct th_heapd *d, uh_heap *h, int m)
{
	long n = bench_scaled(100000, scale);
	uint64_t before = 0, after = 0;
	char data[100];
	uh_off o;

	memset(data, 'x', sizeof(data));
	if (status_u64(d, "arena_bytes", &before) != 0)
		return;
	for (long i = 0; i < n;) {
		must(uh_begin(h), "begin");
		for (int j = 0; j < 1000 && i < n; j++, i++)
			must(uh_bytes_new(h, data, sizeof(data), &o), "bytes_new");
		must(uh_commit(h), "commit");
	}
	if (status_u64(d, "arena_bytes", &after) == 0)
		result[R_BYTES][m] = (double)(after - before) / (double)n;
}

static void run_mode(int m)
{
	struct th_heapd d = { 0 };
	char args[128];
	uh_heap *h = NULL;
	uh_off o;

	snprintf(args, sizeof(args), "--durability %s --size 512M", mode_name[m]);
	if (th_heapd_start(&d, args) != 0 || th_connect(&d, 0, &h) != 0) {
		fprintf(stderr, "bench_core: heapd (%s) did not start\n", args);
		exit(1);
	}
	register_classes(h);
	bench_recovery(&d, &h, m);
	bench_alloc(h, m);
	must(uh_begin(h), "begin");
	must(uh_alloc(h, cls.rec, &o), "alloc rec");
	must(uh_root_set(h, "rec", o), "root rec");
	must(uh_commit(h), "commit");
	bench_fields(h, o, m);
	bench_blocks(h, o, 0, m, R_EMPTY, -1);
	bench_blocks(h, o, 1, m, R_BLOCK1, R_BARRIERS1);
	bench_blocks(h, o, FIELDS, m, R_BLOCK10, R_BARRIERS10);
	bench_bytes(&d, h, m);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
}

static void print_table(void)
{
	printf("\n%-40s %12s %12s\n", "uniheap core (C, 1 thread, heap on tmpfs)", mode_name[0],
	       mode_name[1]);
	for (int r = 0; r < NROWS; r++) {
		printf("%-40s", row_name[r]);
		for (int m = 0; m < NMODES; m++) {
			double v = result[r][m];
			if (r == R_BARRIERS1 || r == R_BARRIERS10)
				printf(" %12.2f", v);
			else
				printf(" %9.1f %-2s", v, row_unit[r]);
		}
		putchar('\n');
	}
}

int main(void)
{
	scale = bench_scale_env();
	printf("bench_core: %s, scale %.2f\n", uh_version(), scale);
	for (int m = 0; m < NMODES; m++) {
		printf("mode %s ...\n", mode_name[m]);
		fflush(stdout);
		run_mode(m);
	}
	print_table();
	return 0;
}
