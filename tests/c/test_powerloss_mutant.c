/*
 * test_powerloss_mutant.c -- the power-loss campaign can fail: with a
 * persist of the commit protocol left out, it must report a state that
 * recovers wrong.
 *
 * UH_MUTANT (read by libuniheap, tests only) drops one persist of a
 * committing client's log replay, the step every version of the protocol
 * has (make the block's writes durable in place, then never replay it
 * again):
 *   apply-flush:   the flushes of the writes applied in place;
 *   apply-barrier: the barrier that makes them durable before the log is
 *                  marked applied.
 * Each mutant runs the allocator and root map workload (prog_pl_alloc)
 * under the power-loss campaign, which stops at the first failing state
 * and prints it (every subset state is tried: the campaign's budget is
 * unlimited here). The test fails if a mutant goes undetected;
 * test_powerloss runs the same workload without a mutant.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash_campaign.h"
#include "powerloss.h"

static const char *SUITE = "test_powerloss_mutant";
static struct th_heapd d;
static char tmpl[700], ack[700];

static void work(char **argv)
{
	cc_prog_argv(argv, "prog_pl_alloc", "--work", d.sock, ack, NULL, NULL, NULL);
}

static void check(char **argv)
{
	cc_prog_argv(argv, "prog_pl_alloc", "--check", d.sock, ack, NULL, NULL, NULL);
}

static long run(const char *mutant, long *states)
{
	struct pl_campaign c = { .name = mutant ? mutant : "no mutant", .d = &d,
				 .template_path = tmpl, .ack_path = ack, .work_argv = work,
				 .check_argv = check, .live_key = "live", .max_states = 1L << 30,
				 .seed = 1, .expect_failure = mutant != NULL };

	if (mutant)
		setenv("UH_MUTANT", mutant, 1);
	pl_run(&c);
	unsetenv("UH_MUTANT");
	*states = c.states;
	return c.failures;
}

int main(int argc, char **argv)
{
	static const char *mutants[] = { "apply-flush", "apply-barrier" };
	long states;

	if (!getenv("PMEM2_FORCE_GRANULARITY")) {	/* run by hand: as ctest does */
		setenv("PMEM2_FORCE_GRANULARITY", "CACHE_LINE", 1);
		setenv("PMEM_IS_PMEM_FORCE", "1", 1);
		execv("/proc/self/exe", argv);
	}
	if (th_heapd_start(&d, "--size 32M --durability pmem") != 0) {
		th_fail(__FILE__, __LINE__, "heapd did not start");
		return th_summary(SUITE);
	}
	th_heapd_stop(&d);
	snprintf(tmpl, sizeof(tmpl), "%s/template.uh", d.dir);
	snprintf(ack, sizeof(ack), "%s/ack", d.dir);
	if (rename(d.heap, tmpl) != 0) {
		th_fail(__FILE__, __LINE__, "template");
		return th_summary(SUITE);
	}
	for (size_t i = 0; i < sizeof(mutants) / sizeof(mutants[0]); i++) {
		long found = run(mutants[i], &states);
		printf("mutant %s: %s after %ld states\n", mutants[i],
		       found ? "reported" : "NOT reported", states);
		if (found)
			th_passed++;
		else
			th_fail(__FILE__, __LINE__, "mutant %s went undetected", mutants[i]);
	}
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
