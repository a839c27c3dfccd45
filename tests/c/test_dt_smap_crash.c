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
#include <stdlib.h>
#include <string.h>

#include "crash_campaign.h"

static const char *SUITE = "test_dt_smap_crash";
static struct th_heapd d;
static struct crash_campaign cc;
static char nkeys[32];

static void prog_argv(char **argv, const char *mode, char *rfd, char *gfd)
{
	cc_prog_argv(argv, "prog_dt_smap_crash", mode, d.sock, cc.ack_path, nkeys, rfd, gfd);
}

static void work_argv(char **argv, char *rfd, char *gfd)
{
	prog_argv(argv, "--work", rfd, gfd);
}

static void check_argv(char **argv)
{
	prog_argv(argv, "--check", NULL, NULL);
}

/* The ops did split the root (a new level) and collapse one. */
static void on_work_out(const char *out)
{
	uint64_t ha = 0, hb = 0;

	TH_CHECK(th_find_u64(out, "height_a", &ha) == 0 && ha == 3);
	TH_CHECK(th_find_u64(out, "height_b", &hb) == 0 && hb == 1);
}

static int make_template(void)
{
	static char out[4096];
	char *argv[] = { (char *)th_bin("prog_dt_smap_crash"), "--setup", "--socket", NULL, NULL };
	uint64_t n = 0, ha = 0;

	/* A small heap: it is copied for every crash point. */
	if (th_heapd_start(&d, "--size 32M") != 0)
		return -1;
	argv[3] = d.sock;
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0 || th_find_u64(out, "n", &n) != 0) {
		fprintf(stderr, "setup: exit %d:\n%s", rc, out);
		return -1;
	}
	printf("setup: %s", out);
	TH_CHECK(th_find_u64(out, "height_a", &ha) == 0 && ha == 2);
	snprintf(nkeys, sizeof(nkeys), "%llu", (unsigned long long)n);
	th_heapd_stop(&d);
	return cc_save_template(&cc, "ack.smap");
}

int main(void)
{
	int full = getenv("UH_DT_SMAP_CRASH_FULL") != NULL;
	uint64_t t0 = th_now_ms();

	/* heapd killed, not stopped, before a fresh heap: the file is replaced
	 * anyway. */
	cc = (struct crash_campaign){ .d = &d, .heapd_down = th_heapd_kill,
				      .modes = CC_LIVE | CC_FROZEN, .frozen_odd = !full,
				      .work_argv = work_argv, .check_argv = check_argv,
				      .on_work_out = on_work_out };
	printf("%s: seed 0 (deterministic)\n", SUITE);
	if (make_template() != 0) {
		th_fail(__FILE__, __LINE__, "could not make the template heap");
		th_heapd_cleanup(&d);
		return th_summary(SUITE);
	}
	long max = cc_run(&cc);
	printf("%ld crash points (live all, frozen %s) in %llu ms; op in flight found undone %ld, "
	       "done %ld times\n", max, full ? "all" : "odd", (unsigned long long)(th_now_ms() - t0),
	       cc.undone_done[0], cc.undone_done[1]);
	TH_CHECK(cc.barriers <= 0 || cc.undone_done[1] > 0);	/* some crash fell after a commit point */
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
