/*
 * test_inline_crash.c -- enumerated crash points of inline field writes
 * (FORMAT.md 3.2): a record's inline values rewritten in place.
 *
 * The template heap holds one record of class crash.Inline (an i64 and
 * four inline fields; prog_inline_crash --setup). The workload
 * (prog_inline_crash --work: 24 blocks, each setting the i64 and
 * rewriting one inline field, every third two more, with values that grow
 * and shrink) is run once without the hook to count its persist barriers
 * N; then for every k in 1..N on a fresh copy of the template with
 * UH_CRASH_AT=k (SIGKILL right before its k-th barrier), twice:
 *   live:   heapd keeps running and reaps the dead session;
 *   frozen: heapd is SIGSTOPped once the workload is set up, SIGKILLed
 *           after the crash and started again: start-up recovery repairs.
 *           For odd k only; UH_INLINE_CRASH_FULL=1 runs it for all k.
 * After each crash: restart heapd, prog_inline_crash --check (the record
 * equals the model of the acknowledged ops, or of one more: the op in
 * flight all or nothing, each value with zeros up to its capacity),
 * restart heapd again and require that this second recovery freed 0
 * objects and nulled 0 references.
 */
#include <stdlib.h>
#include <string.h>

#include "crash_campaign.h"

static const char *SUITE = "test_inline_crash";
static struct th_heapd d;
static struct crash_campaign cc;

static void prog_argv(char **argv, const char *mode, char *rfd, char *gfd)
{
	cc_prog_argv(argv, "prog_inline_crash", mode, d.sock, cc.ack_path, NULL, rfd, gfd);
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
	char *argv[] = { (char *)th_bin("prog_inline_crash"), "--setup", "--socket", NULL, NULL };

	/* A small heap: it is copied for every crash point. */
	if (th_heapd_start(&d, "--size 32M") != 0)
		return -1;
	argv[3] = d.sock;
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0) {
		fprintf(stderr, "setup: exit %d:\n%s", rc, out);
		return -1;
	}
	th_heapd_stop(&d);
	return cc_save_template(&cc, "ack.inline");
}

int main(void)
{
	int full = getenv("UH_INLINE_CRASH_FULL") != NULL;
	uint64_t t0 = th_now_ms();

	/* heapd killed, not stopped, before a fresh heap: the file is replaced
	 * anyway. */
	cc = (struct crash_campaign){ .d = &d, .heapd_down = th_heapd_kill,
				      .modes = CC_LIVE | CC_FROZEN, .frozen_odd = !full,
				      .work_argv = work_argv, .check_argv = check_argv };
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
