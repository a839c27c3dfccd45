/*
 * test_crash_chain.c -- enumerated crash points of blocks whose redo log
 * is a chain: the log area and two extents (FORMAT.md 8.1). The template
 * heap is made with --log-size 64K; each op of the workload
 * (prog_log_chain_crash --work) writes ~128 KiB of redo plus an ALLOC and
 * a FREE at the chain's end. The workload is run once without the hook to
 * count its persist barriers N; then for every k in 1..N on a fresh copy
 * of the template with UH_CRASH_AT=k (SIGKILL right before its k-th
 * barrier), twice:
 *   live:   heapd keeps running and reaps the dead session (its chain);
 *   frozen: heapd is SIGSTOPped once the workload is set up (its extents
 *           leased), SIGKILLed after the crash and started again:
 *           start-up recovery walks the chain.
 * After each crash: restart heapd, prog_log_chain_crash --check (every
 * element written by the acknowledged ops or by one more, all or nothing;
 * heap check), restart heapd again and require that this second recovery
 * freed 0 objects and nulled 0 references (no extent, no object leaked).
 *
 * UH_CRASH_ENUM_MAX=k limits the run to k crash points (debugging).
 */
#include <string.h>

#include "crash_campaign.h"

static const char *SUITE = "test_crash_chain";
static struct th_heapd d;
static struct crash_campaign cc;

#define HEAPD_ARGS "--size 32M --log-size 64K"

static void prog_argv(char **argv, const char *mode, char *rfd, char *gfd)
{
	cc_prog_argv(argv, "prog_log_chain_crash", mode, d.sock, cc.ack_path, NULL, rfd, gfd);
}

static void work_argv(char **argv, char *rfd, char *gfd)
{
	prog_argv(argv, "--work", rfd, gfd);
}

static void check_argv(char **argv)
{
	prog_argv(argv, "--check", NULL, NULL);
}

static int make_template(void)
{
	static char out[4096];
	char *argv[] = { (char *)th_bin("prog_log_chain_crash"), "--setup", "--socket", NULL,
			 NULL };

	if (th_heapd_start(&d, HEAPD_ARGS) != 0)
		return -1;
	argv[3] = d.sock;
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0) {
		fprintf(stderr, "setup: exit %d:\n%s", rc, out);
		return -1;
	}
	th_heapd_stop(&d);
	return cc_save_template(&cc, "ack.chain");
}

/* The uncrashed run must really have used extents. */
static void on_work_out(const char *out)
{
	uint64_t bytes = 0;

	TH_CHECK(th_find_u64(out, "log_bytes", &bytes) == 0);
	TH_CHECK(bytes > 2 * 65536);
}

int main(void)
{
	uint64_t t0 = th_now_ms();

	cc = (struct crash_campaign){ .d = &d, .heapd_down = th_heapd_kill,
				      .modes = CC_LIVE | CC_FROZEN, .work_argv = work_argv,
				      .check_argv = check_argv, .on_work_out = on_work_out };
	if (make_template() != 0) {
		th_fail(__FILE__, __LINE__, "could not make the template heap");
		th_heapd_cleanup(&d);
		return th_summary(SUITE);
	}
	long max = cc_run(&cc);
	printf("%ld crash points x 2 modes in %llu ms; op in flight found undone %ld, done %ld "
	       "times\n", max, (unsigned long long)(th_now_ms() - t0), cc.undone_done[0],
	       cc.undone_done[1]);
	TH_CHECK(cc.barriers <= 0 || cc.undone_done[1] > 0);	/* some crash fell after a commit point */
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
