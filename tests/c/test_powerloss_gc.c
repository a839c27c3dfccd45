/*
 * test_powerloss_gc.c -- simulated power loss (powerloss.h) across heapd's
 * online GC cycle (FORMAT.md 9.3), on a heap of durability pmem (cache-line
 * flushes; on tmpfs through PMEM2_FORCE_GRANULARITY and PMEM_IS_PMEM_FORCE,
 * set by ctest, or by this program when run by hand).
 *
 * The template is test_crash_gc_sweep's heap (prog_gc_sweep --setup: live
 * lists, a large live object, 6000 nodes and three large objects that
 * --drop makes garbage). The workload (prog_gc_sweep --sweep) drops them,
 * writes a mark, then runs one cycle, heapctl gc --wait, that sweeps the
 * garbage in two batches.
 * heapd's persists are traced (uhpmtrace): each batch's valid-bit
 * flushes (their cache lines carry the lock words the sweep holds and the
 * neighbouring objects' headers) and its barrier, the clock's, and the
 * libpmemobj transactions that give the large regions back. Crash states
 * are taken from the mark on (from_mark): at every barrier, and before
 * each barrier with random subsets of the lines flushed since (so a batch
 * whose valid bits reached the media in part), then recovered by heapd
 * and checked: uh_heap_check, every live object with its content
 * (prog_gc_sweep --check), and a second start whose recovery frees and
 * nulls nothing (the first one left no garbage, none locked away).
 *
 * UH_PL_STATES=n: the budget of states (default 120; every barrier state is
 * checked, subset states fill the rest); UH_PL_SEED=s picks the subsets
 * (default from the clock, printed); UH_GC_CRASH_GARBAGE=n garbage nodes.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "powerloss.h"

#define SUITE "test_powerloss_gc"
#define HEAPD_ARGS "--size 32M --durability pmem --gc-every off --gc-fill off"

static struct th_heapd d;
static char tmpl[700], ack[700], garbage[32];

static void work_argv(char **argv)
{
	char *a[] = { (char *)th_bin("prog_gc_sweep"), "--sweep", d.sock, NULL };
	memcpy(argv, a, sizeof(a));
}

static void check_argv(char **argv)
{
	char *a[] = { (char *)th_bin("prog_gc_sweep"), "--check", d.sock, NULL };
	memcpy(argv, a, sizeof(a));
}

static int make_template(void)
{
	static char out[8192];
	char *argv[] = { (char *)th_bin("prog_gc_sweep"), "--setup", d.sock, garbage, NULL };
	if (th_heapd_start(&d, HEAPD_ARGS) != 0)
		return -1;
	int rc = th_run_capture(argv, out, sizeof(out));
	printf("%s", out);
	th_heapd_stop(&d);
	snprintf(tmpl, sizeof(tmpl), "%s/template.uh", d.dir);
	return rc == 0 ? rename(d.heap, tmpl) : -1;
}

int main(int argc, char **argv)
{
	const char *env = getenv("UH_PL_STATES"), *senv = getenv("UH_PL_SEED");
	const char *g = getenv("UH_GC_CRASH_GARBAGE");
	uint64_t seed = senv ? strtoull(senv, NULL, 10) : (uint64_t)time(NULL);
	uint64_t t0 = th_now_ms();

	pl_ctest_env(argv);
	printf("%s: seed %llu (UH_PL_SEED=%llu reproduces the subsets)\n", SUITE,
	       (unsigned long long)seed, (unsigned long long)seed);
	snprintf(garbage, sizeof(garbage), "%ld", g ? atol(g) : 6000);
	if (make_template() != 0) {
		th_fail(__FILE__, __LINE__, "could not make the template heap");
		th_heapd_cleanup(&d);
		return th_summary(SUITE);
	}
	snprintf(ack, sizeof(ack), "%s/ack.gc", d.dir);
	struct pl_campaign c = { .name = "gc sweep", .d = &d, .template_path = tmpl,
				 .ack_path = ack, .work_argv = work_argv, .check_argv = check_argv,
				 .max_states = env ? atol(env) : 120, .seed = seed, .from_mark = 1 };
	long n = pl_run(&c);
	TH_CHECK(n > 0);
	TH_CHECK(c.barriers > 0);
	printf("%ld crash states of the GC cycle checked in %llu ms (cache-line model, "
	       "durability pmem)\n", n, (unsigned long long)(th_now_ms() - t0));
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
