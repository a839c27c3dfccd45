/*
 * test_powerloss.c -- simulated power loss (powerloss.h) over the crash
 * tests' workloads, on heaps of durability pmem (cache-line flushes; on
 * tmpfs through PMEM2_FORCE_GRANULARITY and PMEM_IS_PMEM_FORCE, set by
 * ctest):
 *   bank:  prog_crash_work, 10 blocks: transfers, records allocated and
 *          freed, root map churn (sets, deletes, table rebuilds); arenas
 *          leased while it runs, so heapd's transactions sit between its
 *          barriers;
 *   list:  prog_dt_list_crash (growth, shifts, pops with frees, an array);
 *   map:   prog_dt_map_crash (a resize and its migration steps, values
 *          put inline in their entries and replaced);
 *   smap:  prog_dt_smap_crash (splits, removes, a root change);
 *   alloc: prog_pl_alloc (objects across the size classes and large ones,
 *          each published as a root, then freed: the allocator and the
 *          return of large regions);
 *   handoff: prog_pl_handoff (two sessions take turns writing the same
 *          field and freeing each other's objects: the lazy logs of
 *          FORMAT.md 8.4).
 * Each workload gets a budget of states (UH_PL_STATES each, default 210);
 * every barrier state is checked, subset states fill the rest.
 * UH_PL_SEED=s picks the subsets (default from the clock, printed);
 * UH_PL_ONLY=name runs one workload.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crash_campaign.h"
#include "powerloss.h"

static const char *SUITE = "test_powerloss";
static struct th_heapd d;
static char tmpl[700], ack[700];

#define HEAPD_ARGS "--size 32M --durability pmem"

static void bank_work(char **argv)
{
	char *a[] = { (char *)th_bin("prog_crash_work"), "--socket", d.sock, "--ack", ack,
		      "--blocks", "10", NULL };
	memcpy(argv, a, sizeof(a));
}

static void bank_check(char **argv)
{
	char *a[] = { (char *)th_bin("prog_crash_check"), "--socket", d.sock, "--ack-dir", d.dir,
		      "--probe", NULL };
	memcpy(argv, a, sizeof(a));
}

static const char *prog;	/* the dt workload of the current campaign */
static char nkeys[32];		/* its --n, when its setup printed n=... */

static void dt_work(char **argv)
{
	cc_prog_argv(argv, prog, "--work", d.sock, ack, nkeys[0] ? nkeys : NULL, NULL, NULL);
}

static void dt_check(char **argv)
{
	cc_prog_argv(argv, prog, "--check", d.sock, ack, nkeys[0] ? nkeys : NULL, NULL, NULL);
}

/* A fresh heap of durability pmem, set up by prog --setup (NULL: none),
 * saved as the template. */
static int make_template(const char *setup_prog)
{
	static char out[8192];
	char *argv[] = { (char *)th_bin(setup_prog ? setup_prog : "heapd"), "--setup", "--socket",
			 d.sock, NULL };

	th_heapd_cleanup(&d);
	if (th_heapd_start(&d, HEAPD_ARGS) != 0)
		return -1;
	uint64_t n;
	nkeys[0] = '\0';
	if (setup_prog && th_run_capture(argv, out, sizeof(out)) != 0) {
		fprintf(stderr, "%s --setup:\n%s", setup_prog, out);
		return -1;
	}
	if (setup_prog && th_find_u64(out, "n", &n) == 0)
		snprintf(nkeys, sizeof(nkeys), "%llu", (unsigned long long)n);
	th_heapd_stop(&d);
	snprintf(tmpl, sizeof(tmpl), "%s/template.uh", d.dir);
	return rename(d.heap, tmpl);
}

static long campaign(const char *name, const char *setup_prog, const char *ack_name,
		     void (*work)(char **), void (*check)(char **), const char *live_key,
		     uint64_t seed, long budget)
{
	const char *only = getenv("UH_PL_ONLY");

	if (only && strcmp(only, name))
		return 0;
	if (make_template(setup_prog) != 0) {
		th_fail(__FILE__, __LINE__, "%s: could not make the template heap", name);
		return 0;
	}
	snprintf(ack, sizeof(ack), "%s/%s", d.dir, ack_name);
	struct pl_campaign c = { .name = name, .d = &d, .template_path = tmpl, .ack_path = ack,
				 .work_argv = work, .check_argv = check, .live_key = live_key,
				 .max_states = budget, .seed = seed };
	return pl_run(&c);
}

int main(int argc, char **argv)
{
	const char *env = getenv("UH_PL_STATES"), *senv = getenv("UH_PL_SEED");
	long budget = env ? atol(env) : 210, total = 0;
	uint64_t seed = senv ? strtoull(senv, NULL, 10) : (uint64_t)time(NULL);
	uint64_t t0 = th_now_ms();

	pl_ctest_env(argv);
	printf("%s: seed %llu (UH_PL_SEED=%llu reproduces the subsets)\n", SUITE,
	       (unsigned long long)seed, (unsigned long long)seed);
	total += campaign("bank", NULL, "ack.0", bank_work, bank_check, "expect_live", seed, budget);
	prog = "prog_dt_list_crash";
	total += campaign("list", prog, "ack", dt_work, dt_check, NULL, seed, budget);
	prog = "prog_dt_map_crash";
	total += campaign("map", prog, "ack.map", dt_work, dt_check, NULL, seed, budget);
	prog = "prog_dt_smap_crash";
	total += campaign("smap", prog, "ack.smap", dt_work, dt_check, NULL, seed, budget);
	prog = "prog_pl_alloc";
	total += campaign("alloc", prog, "ack.alloc", dt_work, dt_check, "live", seed, budget);
	prog = "prog_pl_handoff";
	total += campaign("handoff", prog, "ack.handoff", dt_work, dt_check, "live", seed, budget);
	printf("%ld crash states checked in %llu ms (cache-line model, durability pmem)\n", total,
	       (unsigned long long)(th_now_ms() - t0));
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
