/*
 * test_powerloss_mutant.c -- the power-loss campaign can fail: with a
 * persist of the commit protocol left out, it must report a state that
 * recovers wrong.
 *
 * UH_MUTANT (read by libuniheap, tests only) drops one persist of the
 * commit protocol (FORMAT.md 8.4):
 *   apply-flush:   the flushes of the writes applied in place;
 *   apply-barrier: the barrier that makes them durable before the log may
 *                  be marked applied;
 *   lazy-flush:    the flush, at every barrier, of the logs other commits
 *                  left APPLIED without a barrier (lazy_logs).
 * The first two run the allocator and root map workload (prog_pl_alloc),
 * lazy-flush the two-session one (prog_pl_handoff), under the power-loss
 * campaign, which stops at the first failing state and prints it (every
 * subset state is tried: the campaign's budget is unlimited here). The
 * test fails if a mutant goes undetected; test_powerloss runs the same
 * workloads without a mutant.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash_campaign.h"
#include "powerloss.h"

static const char *SUITE = "test_powerloss_mutant";
static struct th_heapd d;
static char tmpl[700], ack[700];

static const char *prog;	/* the workload of the current mutant */

static void work(char **argv)
{
	cc_prog_argv(argv, prog, "--work", d.sock, ack, NULL, NULL, NULL);
}

static void check(char **argv)
{
	cc_prog_argv(argv, prog, "--check", d.sock, ack, NULL, NULL, NULL);
}

/* A fresh heap of durability pmem, set up by prog --setup, saved as the
 * template. */
static int make_template(void)
{
	char out[4096];
	char *argv[] = { (char *)th_bin(prog), "--setup", "--socket", d.sock, NULL };

	th_heapd_cleanup(&d);
	if (th_heapd_start(&d, "--size 32M --durability pmem") != 0)
		return -1;
	int rc = th_run_capture(argv, out, sizeof(out));
	th_heapd_stop(&d);
	snprintf(tmpl, sizeof(tmpl), "%s/template.uh", d.dir);
	snprintf(ack, sizeof(ack), "%s/ack", d.dir);
	return rc != 0 ? -1 : rename(d.heap, tmpl);
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
	static const char *mutants[][2] = { { "apply-flush", "prog_pl_alloc" },
					     { "apply-barrier", "prog_pl_alloc" },
					     { "lazy-flush", "prog_pl_handoff" } };
	long states;

	pl_ctest_env(argv);
	for (size_t i = 0; i < sizeof(mutants) / sizeof(mutants[0]); i++) {
		prog = mutants[i][1];
		if (make_template() != 0) {
			th_fail(__FILE__, __LINE__, "%s: could not make the template heap", prog);
			continue;
		}
		long found = run(mutants[i][0], &states);
		printf("mutant %s (%s): %s after %ld states\n", mutants[i][0], prog,
		       found ? "reported" : "NOT reported", states);
		if (found)
			th_passed++;
		else
			th_fail(__FILE__, __LINE__, "mutant %s went undetected", mutants[i][0]);
	}
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
