/*
 * test_dt_smap_crash.c -- enumerated crash points of sorted map
 * operations.
 *
 * The template heap (prog_dt_smap_crash --setup) holds a string-keyed map
 * whose next put at the end splits a leaf, the full root and adds a level,
 * and an i64-keyed map of two leaves. The workload (prog_dt_smap_crash
 * --work: that put, a plain insert, replaces and a remove with
 * UH_FREE_OLD of string values made in the block, a block that empties
 * and frees the first leaf, one that empties a leaf so the root
 * collapses, a block of three operations) is run once without the hook
 * to count its persist barriers N; then for every k in 1..N on a fresh
 * copy of the template with UH_CRASH_AT=k (SIGKILL right before its k-th
 * barrier):
 *   live:   heapd keeps running and reaps the dead session (every k);
 *   frozen: heapd is SIGSTOPped once the workload is set up, SIGKILLed
 *           after the crash and started again, so start-up recovery
 *           repairs (odd k, to stay within ~30 s; UH_DT_SMAP_CRASH_FULL=1
 *           for every k).
 * After each crash: restart heapd, prog_dt_smap_crash --check
 * (uh_smap_check on both maps; content = model of the acknowledged ops,
 * or of one more: the op in flight all or nothing), restart heapd again
 * and require that this second recovery freed 0 objects and nulled 0
 * references.
 *
 * UH_CRASH_ENUM_MAX=k limits the run to k crash points. Deterministic.
 */
#include <stdio.h>

#include "crash_campaign.h"

/* The template's first map has two levels; its key count is every run's
 * --n. */
static int on_setup(const char *out, char *n, size_t n_size)
{
	uint64_t keys = 0, ha = 0;

	if (th_find_u64(out, "n", &keys) != 0)
		return -1;
	printf("setup: %s", out);
	TH_CHECK(th_find_u64(out, "height_a", &ha) == 0 && ha == 2);
	snprintf(n, n_size, "%llu", (unsigned long long)keys);
	return 0;
}

/* The ops did split the root (a new level) and collapse one. */
static void on_work_out(const char *out)
{
	uint64_t ha = 0, hb = 0;

	TH_CHECK(th_find_u64(out, "height_a", &ha) == 0 && ha == 3);
	TH_CHECK(th_find_u64(out, "height_b", &hb) == 0 && hb == 1);
}

int main(void)
{
	static const struct cc_template t = {
		.suite = "test_dt_smap_crash", .prog = "prog_dt_smap_crash", .ack_name = "ack.smap",
		.heapd_args = "--size 32M", .full_env = "UH_DT_SMAP_CRASH_FULL",
		.on_setup = on_setup, .on_work_out = on_work_out,
	};

	return cc_template_main(&t);
}
