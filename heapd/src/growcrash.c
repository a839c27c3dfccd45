/*
 * growcrash.c -- the test hook of growth's crash points (FORMAT.md 1.1).
 *
 * UNIHEAP_GROW_CRASH_AT=k SIGKILLs heapd right before the k-th crash point
 * of growth work since it started, counted over every growth and every
 * arena placed in an extension:
 *   grow.c    fallocated  the file is longer, its length not yet synced
 *             synced      the length durable, heapd's view not yet over it
 *             mapped      the view covers it, cur_size not yet published
 *             publish_tx  inside the publish transaction, cur_size stored
 *             published   the transaction committed
 *   chunks.c  ext_zeroed  an arena's chunks zeroed and persisted, their
 *                         bits set in the open transaction
 *   arenas.c  ext_header  its header and bitmap persisted, the directory
 *                         entry not yet written
 *             ext_placed  the arena's transaction committed
 *   logs.c    log_linked  a log extent's transaction committed, the link
 *                         in the extension it records not yet written
 *             log_trimmed the same for a trim's cleared link
 * UNIHEAP_GROW_CRASH_WHERE=name kills heapd at the first point of that
 * name instead (tests/c/test_grow_attach.c: log_linked).
 * Any k > 0 arms the hook: each point passed is then logged (event=
 * grow_crash_point point=N where=...), so a run with a k it never reaches
 * counts the points of its work (tests/c/test_crash_grow.c). Unset, the
 * hook costs one getenv per point, and points are rare (a handful per
 * growth, three per arena placed in an extension).
 *
 * Invariant: a kill here is as a crash would be: every store before it is
 * in the page cache, nothing after it happened. Caller holds hd->mu (all
 * growth work runs under it), which guards the counter.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

void hd_grow_crash_point(struct hd *hd, const char *where)
{
	const char *at = getenv("UNIHEAP_GROW_CRASH_AT"), *name = getenv("UNIHEAP_GROW_CRASH_WHERE");
	uint64_t k = at ? strtoull(at, NULL, 10) : 0;
	if (name && strcmp(name, where) == 0) {
		hd_log("info", "grow_crash_point", "where=%s crash=1", where);
		kill(getpid(), SIGKILL);
	}
	if (!k)
		return;
	uint64_t n = ++hd->grow_points;
	hd_log("info", "grow_crash_point", "point=%llu where=%s%s", (unsigned long long)n, where,
	       n == k ? " crash=1" : "");
	if (n == k)
		kill(getpid(), SIGKILL);
}
