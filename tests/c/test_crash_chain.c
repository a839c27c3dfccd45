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
#include "crash_campaign.h"

/* The uncrashed run must really have used extents. */
static void on_work_out(const char *out)
{
	uint64_t bytes = 0;

	TH_CHECK(th_find_u64(out, "log_bytes", &bytes) == 0);
	TH_CHECK(bytes > 2 * 65536);
}

int main(void)
{
	static const struct cc_template t = {
		.suite = "test_crash_chain", .prog = "prog_log_chain_crash", .ack_name = "ack.chain",
		.heapd_args = "--size 32M --log-size 64K", .on_work_out = on_work_out,
	};

	return cc_template_main(&t);
}
