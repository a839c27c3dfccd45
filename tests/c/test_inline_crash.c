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
#include "crash_campaign.h"

int main(void)
{
	static const struct cc_template t = {
		.suite = "test_inline_crash", .prog = "prog_inline_crash", .ack_name = "ack.inline",
		.heapd_args = "--size 32M", .full_env = "UH_INLINE_CRASH_FULL",
	};

	return cc_template_main(&t);
}
