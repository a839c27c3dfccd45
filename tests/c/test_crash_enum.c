/*
 * test_crash_enum.c -- enumerated crash points. The workload
 * (prog_crash_work, 20 blocks) is run once without the hook to count its
 * persist barriers N; then for every k in 1..N it is run on a fresh copy of
 * the same empty heap with UH_CRASH_AT=k, so libuniheap SIGKILLs it right
 * before its k-th barrier. Each k is run twice:
 *   live:   heapd keeps running and reaps the dead session itself;
 *   frozen: heapd is SIGSTOPped after the workload's setup, SIGKILLed
 *           after the crash and started again, so start-up recovery (not
 *           the reaper) repairs the log.
 * After each crash: restart heapd, run prog_crash_check --probe (oracle of
 * acknowledged blocks + invariants + no lock left), restart heapd once
 * more and require that this second recovery freed 0 objects and nulled 0
 * references (the first recovery left no garbage).
 *
 * UH_CRASH_ENUM_MAX=k limits the run to k crash points (debugging).
 */
#include <string.h>

#include "crash_campaign.h"

#define BLOCKS "20"

static struct th_heapd d;
static struct crash_campaign cc;

static void work_argv(char **argv, char *rfd, char *gfd)
{
	int n = 0;

	argv[n++] = (char *)th_bin("prog_crash_work");
	argv[n++] = "--socket";
	argv[n++] = d.sock;
	argv[n++] = "--ack";
	argv[n++] = cc.ack_path;
	argv[n++] = "--blocks";
	argv[n++] = BLOCKS;
	argv[n++] = "--prelease";
	if (rfd) {
		argv[n++] = "--ready-fd";
		argv[n++] = rfd;
		argv[n++] = "--go-fd";
		argv[n++] = gfd;
	}
	argv[n] = NULL;
}

/* Oracle of acknowledged blocks + invariants + no lock left; prints
 * expect_live, the objects recovery GC must find reachable. */
static void check_argv(char **argv)
{
	char *a[] = { (char *)th_bin("prog_crash_check"), "--socket", d.sock, "--ack-dir", d.dir,
		      "--probe", NULL };

	memcpy(argv, a, sizeof(a));
}

/* Make the empty template heap that every run starts from. */
static int make_template(void)
{
	if (th_heapd_start(&d, NULL) != 0)
		return -1;
	th_heapd_stop(&d);
	return cc_save_template(&cc, "ack.0");
}

int main(void)
{
	uint64_t t0 = th_now_ms();

	cc = (struct crash_campaign){ .d = &d, .heapd_down = th_heapd_stop,
				      .modes = CC_LIVE | CC_FROZEN, .work_argv = work_argv,
				      .check_argv = check_argv, .live_key = "expect_live" };
	if (make_template() != 0) {
		th_fail(__FILE__, __LINE__, "could not make the template heap");
		return th_summary("test_crash_enum");
	}
	long max = cc_run(&cc);
	printf("%ld crash points x 2 modes in %llu ms\n", max,
	       (unsigned long long)(th_now_ms() - t0));
	th_heapd_cleanup(&d);
	return th_summary("test_crash_enum");
}
