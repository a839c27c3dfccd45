/*
 * bench_gc_mark.c -- the online GC's mark throughput: ns per live object
 * on a random graph of N objects (default 1M; BENCH_GC_N or the first
 * argument sets N). Never a test (no pass/fail).
 *
 * The graph: N records {next, other, v}; next chains each node to the one
 * made before it (so all N are reachable from one root), other names a
 * uniformly random earlier node (so the mark's accesses jump around the
 * heap as in a real object graph). Built in blocks of 10,000 allocations.
 * The client then detaches and `heapctl gc --wait` runs CYCLES cycles
 * (no garbage: the sweep only walks the bitmaps); each prints its mark
 * time, the objects it marked and ns per object, and heapd's CPU time
 * for the whole cycle (from /proc/PID/schedstat) per object, which a
 * loaded machine disturbs less than the wall-clock figure. heapd runs on
 * tmpfs, durability memory, with automatic cycles off. Last, heapd is
 * SIGKILLed and started again: the time until it serves and until its
 * recovery's mark is done, in each --recovery-gc mode.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "harness.h"

#define PROG "bench_gc_mark"
#define CYCLES 3
#define BLOCK 10000

struct build {
	uint32_t cls;
	uint64_t n, done;
	uh_off *nodes;
	uint64_t rng;
};

static int build_block(uh_heap *h, void *arg)
{
	struct build *b = arg;
	uint64_t end = b->done + BLOCK < b->n ? b->done + BLOCK : b->n;
	for (uint64_t i = b->done; i < end; i++) {
		uh_off n;
		int rc = uh_alloc(h, b->cls, &n);
		if (!rc && i > 0)
			rc = uh_set_ref(h, n, 0, b->nodes[i - 1]);
		if (!rc && i > 0)
			rc = uh_set_ref(h, n, 1, b->nodes[th_xorshift64(&b->rng) % i]);
		if (!rc)
			rc = uh_set_i64(h, n, 2, (int64_t)i);
		if (rc)
			return rc;
		b->nodes[i] = n;
	}
	return 0;
}

static void build_graph(struct th_heapd *d, uint64_t n)
{
	static const uh_field_spec f[] = {
		{ "next", UH_T_REF, 0 }, { "other", UH_T_REF, 0 }, { "v", UH_T_I64, 0 },
	};
	uh_heap *h;
	struct build b = { .n = n, .rng = 0x9e3779b97f4a7c15ull };
	if (th_connect(d, 0, &h) != 0)
		exit(1);
	bench_must(PROG, uh_class_register(h, "GcMarkNode", f, 3, &b.cls), "register");
	b.nodes = malloc(n * sizeof(*b.nodes));
	if (!b.nodes) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		exit(1);
	}
	uint64_t t0 = bench_now_ns();
	for (; b.done < n; b.done += BLOCK)	/* n / BLOCK blocks */
		bench_must(PROG, uh_run(h, build_block, &b, 0), "build");
	bench_must(PROG, uh_root_set(h, "bench.graph", b.nodes[n - 1]), "root");
	printf("built %llu objects in %.1f s\n", (unsigned long long)n,
	       (double)(bench_now_ns() - t0) / 1e9);
	free(b.nodes);
	uh_disconnect(h);
}

/* Nanoseconds all threads of pid have run on a CPU (first field of each
 * /proc/PID/task/TID/schedstat). */
static uint64_t cpu_ns(pid_t pid)
{
	char path[300];
	uint64_t sum = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *dir = opendir(path);
	struct dirent *e;
	while (dir && (e = readdir(dir)) != NULL) {	/* heapd's threads */
		unsigned long long v = 0;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid, e->d_name);
		FILE *f = fopen(path, "r");
		if (f && fscanf(f, "%llu", &v) == 1)
			sum += v;
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
	return sum;
}

/* heapd SIGKILLed and started again on the same heap: milliseconds until
 * its socket accepts (SERVING), and until its recovery's mark is done, by
 * default (an online cycle after serving, FORMAT.md 9.4) and with
 * --recovery-gc full (the mark before serving). */
static void restart_times(struct th_heapd *d)
{
	static const char *const modes[] = { "auto", "full" };
	char args[96];

	printf("%-6s %12s %12s\n", "start", "serving ms", "marked ms");
	for (int r = 0; r < 4; r++) {	/* auto, full, auto, full */
		const char *mode = modes[r % 2];
		snprintf(args, sizeof(args), "--gc-every off --gc-fill off --recovery-gc %s", mode);
		th_heapd_kill(d);
		uint64_t t0 = th_now_ms();
		if (th_heapd_start(d, args) != 0) {
			fprintf(stderr, "%s: heapd (%s) did not start again\n", PROG, args);
			return;
		}
		printf("%-6s %12llu %12llu\n", mode, (unsigned long long)(d->serving_ms - t0),
		       (unsigned long long)(th_now_ms() - t0));
	}
}

int main(int argc, char **argv)
{
	const char *ns = argc > 1 ? argv[1] : getenv("BENCH_GC_N");
	uint64_t n = ns ? strtoull(ns, NULL, 10) : 1000000;
	if (n < 2)
		n = 2;
	/* 48-byte slots; twice that for the arenas' slack and the logs. */
	uint64_t mib = (n * 48 * 2 >> 20) + 64;
	char args[160];
	snprintf(args, sizeof(args), "--size %lluM --gc-every off --gc-fill off",
		 (unsigned long long)mib);
	struct th_heapd d = { 0 };
	if (th_heapd_start(&d, args) != 0) {
		fprintf(stderr, "%s: heapd (%s) did not start\n", PROG, args);
		return 1;
	}
	build_graph(&d, n);
	static char out[16384];
	printf("%-6s %12s %12s %12s %10s %14s\n", "cycle", "marked", "mark ms", "sweep ms",
	       "ns/object", "cpu ns/object");
	for (int c = 0; c < CYCLES; c++) {
		uint64_t marked = 0, mark_ns = 0, sweep_ns = 0, cpu0 = cpu_ns(d.pid);
		int rc = th_heapctl(&d, "--json gc --wait", out, sizeof(out));
		if (rc != 0 || th_find_u64(out, "marked", &marked) ||
		    th_find_u64(out, "mark_ns", &mark_ns) || th_find_u64(out, "sweep_ns", &sweep_ns) ||
		    !marked) {
			fprintf(stderr, "%s: heapctl gc --wait failed (%d): %s", PROG, rc, out);
			break;
		}
		uint64_t cpu = cpu_ns(d.pid) - cpu0;
		printf("%-6d %12llu %12.1f %12.1f %10.1f %14.1f\n", c + 1,
		       (unsigned long long)marked, (double)mark_ns / 1e6, (double)sweep_ns / 1e6,
		       (double)mark_ns / (double)marked, (double)cpu / (double)marked);
	}
	restart_times(&d);
	th_heapd_cleanup(&d);
	return 0;
}
