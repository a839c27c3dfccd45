/*
 * test_dt_map_crash.c -- enumerated crash points of hash map operations.
 *
 * The template heap holds a map one entry short of a resize
 * (prog_dt_map_crash --setup). The workload (prog_dt_map_crash --work:
 * puts that start a resize, replaces and removes during the migration
 * steps, with and without UH_FREE_OLD, a block of three operations that
 * finishes the migration and frees the old table, then strings put
 * inline in their entries over every kind of value and back, inserted
 * and removed) is run once without
 * the hook to count its persist barriers N; then for every k in 1..N on a
 * fresh copy of the template with UH_CRASH_AT=k (SIGKILL right before its
 * k-th barrier), twice:
 *   live:   heapd keeps running and reaps the dead session;
 *   frozen: heapd is SIGSTOPped once the workload is set up, SIGKILLed
 *           after the crash and started again: start-up recovery repairs.
 *           For odd k only, to stay within ~30 s (each crash point costs
 *           three heapd starts); UH_DT_MAP_CRASH_FULL=1 runs it for all k.
 * After each crash: restart heapd, prog_dt_map_crash --check (uh_map_check
 * and content = model of the acknowledged ops, or of one more: the op in
 * flight all or nothing), restart heapd again and require that this
 * second recovery freed 0 objects and nulled 0 references.
 *
 * UH_CRASH_ENUM_MAX=k limits the run to k crash points (debugging).
 * Deterministic: no seed (seed 0 printed for the record).
 */
#include "crash_campaign.h"

int main(void)
{
	static const struct cc_template t = {
		.suite = "test_dt_map_crash", .prog = "prog_dt_map_crash", .ack_name = "ack.map",
		.heapd_args = "--size 32M", .full_env = "UH_DT_MAP_CRASH_FULL",
	};

	return cc_template_main(&t);
}
