/*
 * powerloss.h -- simulated power loss: crash states rebuilt from a
 * persistence trace (common/pmtrace.h), each recovered by heapd
 * and checked.
 *
 * A campaign runs its workload once, to the end, on a copy of a template
 * heap, with heapd and the workload recording every flush and barrier
 * (libuniheap's uh_flush/uh_barrier; heapd's libpmemobj persists through
 * the LD_PRELOAD library uhpmtrace) and the workload recording each
 * acknowledgement. Then it replays the trace over a shadow image that
 * starts as the template and receives only what was flushed and then
 * fenced by a barrier of the same thread (or persisted by msync), and
 * takes crash states from it:
 *   - at every barrier and msync: the shadow with everything fenced so far;
 *   - before every barrier: the shadow plus a subset of the cache lines
 *     flushed since their thread's last barrier (all subsets when there
 *     are at most four such lines, random ones otherwise), each line with
 *     the bytes it had when it was flushed (cache-line granularity, the
 *     pmem model: a clwb may reach the media any time before the fence);
 *   - during every msync (heapd on a file that is not pmem): a subset of
 *     its pages (page granularity).
 * Nothing else reaches the shadow: a store that was never flushed is lost.
 * The shadow's length is the template's until an fsync of the heap file
 * (a growth, FORMAT.md 1.1) records a longer one: from that record on,
 * states have the new length, zero past the old end where nothing landed.
 * A power loss between the growth's posix_fallocate and its fsync may
 * leave the longer file too; that state is not built apart, because
 * nothing is flushed into the new part before the size is published
 * (after the fsync), so it equals, byte for byte, the state at the fsync
 * but for other threads' flushes in between: a file longer than
 * cur_size with zeros past it, which heapd's open trims either way.
 * States are told apart by their bytes; a repeat is not counted again.
 * The campaign knows nothing of the commit protocol: it sees barriers.
 *
 * Each state is written to the heap file and must: let heapd start
 * (recovery), pass uh_heap_check, pass the workload's checker against the
 * acknowledgements recorded before the crash point (content = model of
 * acknowledged operations, the one in flight all or nothing, no lock
 * left), and survive a second start whose recovery frees and nulls
 * nothing (and, with live_key, finds exactly the checker's live count).
 *
 * Debugging: UH_PL_DUMP=1 prints the trace, UH_PL_KEEP=path keeps a copy
 * of the first failing state, UH_PL_TIMES=1 prints where each check's
 * time went.
 */
#ifndef UH_TESTS_POWERLOSS_H
#define UH_TESTS_POWERLOSS_H

#include <stdint.h>

#include "harness.h"

struct pl_campaign {
	const char *name;
	struct th_heapd *d;		/* its dir holds heap, trace, template */
	const char *template_path;	/* the heap every run starts from */
	const char *ack_path;		/* the workload appends, the checker reads */
	void (*work_argv)(char **argv);	/* argv (16 slots) of the workload */
	void (*check_argv)(char **argv);	/* argv (16 slots) of the checker */
	const char *live_key;		/* NULL, or the checker's live count key */
	uint64_t base_live;
	long max_states;		/* subset states fill up to this many; the
					 * states at barriers are all checked */
	uint64_t seed;
	/* 1: only the states after the workload's first mark (pl_mark) are
	 * checked: what comes before (heapd's start on the template) is
	 * other campaigns' business. */
	int from_mark;
	/* 1: a mutant run: failing states are detections, not test
	 * failures, and the campaign stops at the first failing state. */
	int expect_failure;
	/* results */
	long barriers, candidates, states, failed, failures;
};

/* Run the workload traced, then check its crash states. Returns the
 * number of states checked (failures are counted by the harness and in
 * c->failed). */
long pl_run(struct pl_campaign *c);

/* Write the ack marker the power-loss campaign reads back: the same bytes
 * the workload appended to its ack file. A no-op without $UH_PMTRACE. */
void pl_mark(const void *bytes, size_t len);

/* Run by hand, a power-loss test starts itself again with the environment
 * ctest gives it (PMEM2_FORCE_GRANULARITY=CACHE_LINE, PMEM_IS_PMEM_FORCE=1:
 * heaps of durability pmem on tmpfs take the cache-line flush path);
 * under ctest it returns at once. */
void pl_ctest_env(char **argv);

#endif
