/*
 * bench_gc_mark.c -- the online GC's mark throughput: ns per live object
 * on a random graph of N objects (default 1M; BENCH_GC_N or the first
 * argument sets N). Never a test (no pass/fail).
 *
 * The graph is gc_graph.h's (every node reachable, a random edge each).
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
#include "gc_graph.h"

#define PROG "bench_gc_mark"
#define CYCLES 3

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
	uint64_t mib = gc_graph_heap_mib(n);
	char args[160];
	snprintf(args, sizeof(args), "--size %lluM --gc-every off --gc-fill off",
		 (unsigned long long)mib);
	struct th_heapd d = { 0 };
	if (th_heapd_start(&d, args) != 0) {
		fprintf(stderr, "%s: heapd (%s) did not start\n", PROG, args);
		return 1;
	}
	gc_graph_build(&d, PROG, n);
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
