/*
 * test_dt_list_crash.c -- enumerated crash points of list (and array)
 * operations.
 *
 * prog_dt_list_crash --work runs a fixed sequence of list operations
 * (appends that grow the storage 8 -> 16 -> 32 -> 64, inserts and pops
 * that rebuild it or shift in place, pops and sets with UH_FREE_OLD,
 * groups of operations in one block; string elements of an array set with
 * UH_FREE_OLD, alone and in a block with a list append). It is run once
 * without the hook to count its persist barriers N; then for every k in
 * 1..N on a fresh copy of a small heap holding just the empty list and
 * array, with UH_CRASH_AT=k, so
 * libuniheap SIGKILLs it right before its k-th barrier. After each crash:
 * heapd is SIGKILLed and started again (start-up recovery repairs the
 * log, if heapd's reaper has not already) and its recovery must have
 * freed no object (garbage would be a leak of list.c: the block in
 * flight is undone through its log, not by GC), prog_dt_list_crash --check
 * requires the list to equal the model of the acknowledged operations,
 * plus the one in flight all or nothing, and a sound structure; then one
 * more heapd restart must free 0 objects, null 0 references, and find
 * exactly the live objects the model says (template + list and array
 * data).
 *
 * UH_CRASH_ENUM_MAX=k limits the run to k crash points (debugging).
 */
#include <string.h>

#include "crash_campaign.h"

static const char *SUITE = "test_dt_list_crash";
static struct th_heapd d;
static struct crash_campaign cc;
/* A small heap: it is copied and recovered three times per crash point. */
#define HEAPD_ARGS "--size 32M"

static void prog_argv(char **argv, const char *mode)
{
	char *a[] = { (char *)th_bin("prog_dt_list_crash"), "--socket", d.sock, (char *)mode,
		      "--ack", cc.ack_path, NULL };

	memcpy(argv, a, sizeof(a));
}

static void work_argv(char **argv, char *rfd, char *gfd)
{
	(void)rfd, (void)gfd;
	prog_argv(argv, "--work");
}

/* Prints data_objects: the live list and array data of the model. */
static void check_argv(char **argv)
{
	prog_argv(argv, "--check");
}

/* Heap with the empty list, copied as the template of every run. */
static int make_template(void)
{
	static char out[4096];
	uint64_t live = 0;

	if (th_heapd_start(&d, HEAPD_ARGS) != 0)
		return -1;
	char *argv[] = { (char *)th_bin("prog_dt_list_crash"), "--socket", d.sock, "--setup",
			 NULL };
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0) {
		th_fail(__FILE__, __LINE__, "setup exit %d:\n%s", rc, out);
		return -1;
	}
	if (cc_restart(&cc) != 0)
		return -1;
	rc = th_heapctl(&d, "status --json", out, sizeof(out));
	if (rc != 0 || th_find_u64(out, "live_objects", &live) != 0) {
		th_fail(__FILE__, __LINE__, "heapctl status --json (exit %d):\n%s", rc, out);
		return -1;
	}
	cc.base_live = live - 2;	/* the template, less list and array */
	th_heapd_kill(&d);
	return cc_save_template(&cc, "ack");
}

int main(void)
{
	uint64_t t0 = th_now_ms();

	/* heapd is SIGKILLed after each crash: start-up recovery runs (if its
	 * reaper has not already repaired the log) and must free nothing. */
	cc = (struct crash_campaign){ .d = &d, .heapd_args = HEAPD_ARGS,
				      .heapd_down = th_heapd_kill, .kill_restart = 1,
				      .modes = CC_LIVE, .work_argv = work_argv,
				      .check_argv = check_argv, .live_key = "data_objects" };
	printf("%s: deterministic workload (seed 0)\n", SUITE);
	if (make_template() != 0) {
		th_fail(__FILE__, __LINE__, "could not make the template heap");
		th_heapd_cleanup(&d);
		return th_summary(SUITE);
	}
	long max = cc_run(&cc);
	printf("%ld crash points in %llu ms\n", max, (unsigned long long)(th_now_ms() - t0));
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
