/*
 * test_powerloss_grow.c -- simulated power loss (powerloss.h) across a
 * growth of the heap (FORMAT.md 1.1), on a heap of durability pmem
 * (cache-line flushes; on tmpfs through PMEM2_FORCE_GRANULARITY and
 * PMEM_IS_PMEM_FORCE, set by ctest, or by this program when run by hand).
 *
 * The template is a 16M heap that may grow to 256M, with the first blocks
 * of the fill in it (UH_PL_GROW_PREFILL, default 10: the growth comes a
 * few blocks later). The workload (prog_grow_crash fill) publishes blocks of 200 records, each
 * acknowledged once committed, until past a quarter of the pool in arenas
 * leases go to the extension: heapd grows the file on demand
 * (posix_fallocate, fsync, map, one transaction that publishes cur_size)
 * and places arenas there (chunks zeroed and persisted, header and bitmap
 * persisted, then one transaction sets the chunk bits and the directory
 * entry); the client's blocks then land in the extension.
 *
 * The file's length, in the model: a growth's posix_fallocate and fsync
 * are file-system operations, not stores; once fsync returns, the new
 * length is durable (the trace records it, pmtrace_preload.c), and the
 * states from there on have it, zero past the old end where no flush
 * landed. Before that fsync a power loss may leave either length; the
 * states keep the old one. The other choice needs no state of its own:
 * heapd flushes nothing into the new part before it publishes cur_size
 * (after the fsync), and no client can reach it before that, so a longer
 * file at that moment is the state at the fsync (a file longer than
 * cur_size, zeros past it), which is checked, up to other threads'
 * flushes in between, which the states around them cover.
 *
 * heapd's persists are traced (uhpmtrace) with the client's. Crash states
 * are taken from the first acknowledgement on (from_mark): at every
 * barrier, at the fsync that makes the length durable, and before each
 * barrier with random subsets of the lines flushed since; each is
 * recovered by heapd (its open trims a file longer than cur_size) and
 * checked: uh_heap_check, every acknowledged block whole (prog_grow_crash
 * check), a second start whose recovery frees and nulls nothing. The test
 * also checks that the workload did grow the heap (the traced run's log);
 * an arena is placed in the extension at once, and the blocks after the
 * growth land there.
 *
 * UH_PL_STATES=n: the budget of states (default 80; every barrier state is
 * checked, subset states fill the rest); UH_PL_SEED=s picks the subsets
 * (default from the clock, printed); UH_PL_GROW_BLOCKS=n blocks of the
 * workload (default 4), UH_PL_GROW_PREFILL=n blocks in the template.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "powerloss.h"

#define SUITE "test_powerloss_grow"
#define HEAPD_ARGS "--size 16M --max-size 256M --durability pmem --gc-every off --gc-fill off"
#define MIB (1ull << 20)

static struct th_heapd d;
static char tmpl[700], ack[700], blocks[32];

static void work_argv(char **argv)
{
	char *a[] = { (char *)th_bin("prog_grow_crash"), "fill", d.sock, ack, "0", blocks, NULL };
	memcpy(argv, a, sizeof(a));
}

static void check_argv(char **argv)
{
	char *a[] = { (char *)th_bin("prog_grow_crash"), "check", d.sock, ack, NULL };
	memcpy(argv, a, sizeof(a));
}

/* The template: the fill's first blocks (acknowledged to a file of its
 * own, not the campaign's), so that the workload's growth comes after a
 * few blocks and the states it yields are spent near it. */
static int make_template(const char *prefill)
{
	static char out[8192];
	char pre[700];
	if (th_heapd_start(&d, HEAPD_ARGS) != 0)
		return -1;
	snprintf(pre, sizeof(pre), "%s/ack.template", d.dir);
	char *argv[] = { (char *)th_bin("prog_grow_crash"), "fill", d.sock, pre, "-1000000",
			 (char *)prefill, NULL };
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc)
		fprintf(stderr, "template fill: exit %d: %s", rc, out);
	th_heapd_stop(&d);
	if (rc)
		return -1;
	snprintf(tmpl, sizeof(tmpl), "%s/template.uh", d.dir);
	return rename(d.heap, tmpl);
}

/* The traced run grew the heap: heapd's log (appended by every start,
 * and no recovery grows) holds its growth line. */
static void check_workload_grew(void)
{
	size_t len;
	char *log = th_read_file(d.log, &len);
	char *g = log ? strstr(log, "event=grow ") : NULL;
	uint64_t from = 0;
	TH_CHECK(g && th_find_u64(g, "from", &from) == 0 && from == 16 * MIB);
	free(log);
}

int main(int argc, char **argv)
{
	const char *env = getenv("UH_PL_STATES"), *senv = getenv("UH_PL_SEED");
	const char *b = getenv("UH_PL_GROW_BLOCKS"), *p = getenv("UH_PL_GROW_PREFILL");
	uint64_t seed = senv ? strtoull(senv, NULL, 10) : (uint64_t)time(NULL);
	uint64_t t0 = th_now_ms();

	pl_ctest_env(argv);
	printf("%s: seed %llu (UH_PL_SEED=%llu reproduces the subsets)\n", SUITE,
	       (unsigned long long)seed, (unsigned long long)seed);
	char prefill[32];
	snprintf(blocks, sizeof(blocks), "%ld", b ? atol(b) : 4);
	snprintf(prefill, sizeof(prefill), "%ld", p ? atol(p) : 10);
	if (make_template(prefill) != 0) {
		th_fail(__FILE__, __LINE__, "could not make the template heap");
		th_heapd_cleanup(&d);
		return th_summary(SUITE);
	}
	snprintf(ack, sizeof(ack), "%s/ack.grow", d.dir);
	struct pl_campaign c = { .name = "growth", .d = &d, .template_path = tmpl,
				 .ack_path = ack, .work_argv = work_argv, .check_argv = check_argv,
				 .max_states = env ? atol(env) : 80, .seed = seed, .from_mark = 1 };
	long n = pl_run(&c);
	TH_CHECK(n > 0);
	TH_CHECK(c.barriers > 0);
	check_workload_grew();
	printf("%ld crash states across a growth checked in %llu ms (cache-line model, "
	       "durability pmem)\n", n, (unsigned long long)(th_now_ms() - t0));
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
