package org.uniheap;

/**
 * libuniheap's counters ({@code uh_stats}), summed over the sessions of a
 * {@link Heap}.
 * @param allocs objects allocated
 * @param frees objects freed
 * @param commits outermost commits that wrote
 * @param emptyCommits outermost commits with nothing to write
 * @param aborts blocks rolled back, all causes
 * @param conflicts aborts because of another session
 * @param barriers persist barriers (fences or msync rounds)
 * @param flushes cache-line or range flushes
 * @param logBytes redo bytes written
 * @param arenaLeases arenas leased from heapd
 * @param lockWaits spins on a lock held by another session
 * @param abortsLocked aborts because an object stayed locked
 * @param abortsStale aborts because an object read had changed
 * @param abortsLogFull aborts because a block outgrew the log
 * @param abortsUser blocks rolled back by their owner
 * @param retries re-runs after a lost conflict
 * @param readWaits reads that waited for a committing writer
 * @param reattaches new sessions after heapd ended or restarted
 * @param reattachNs time spent re-attaching (waiting for heapd), in ns
 * @param optReads read-only calls outside blocks answered optimistically
 * @param optRetries tries of them lost to a concurrent change
 * @param optFallbacks of them that then ran in an implicit block
 * @param pins pins held now for the online garbage collector: one per
 *        reachable proxy not yet cleaned (released by a Cleaner once the
 *        JVM's own GC finds the proxy unreachable)
 * @param gcCycles collector cycles whose mark this heap's commits or pins
 *        took part in (the most any one session did, not a sum)
 * @param gcGreys references handed to the collector's mark (the write
 *        barrier of commits during a mark, and pins taken during one)
 * @param gcBusyWaits hand-overs that waited for the collector to drain
 */
public record HeapStats(long allocs, long frees, long commits, long emptyCommits, long aborts,
                        long conflicts, long barriers, long flushes, long logBytes, long arenaLeases,
                        long lockWaits, long abortsLocked, long abortsStale, long abortsLogFull,
                        long abortsUser, long retries, long readWaits, long reattaches,
                        long reattachNs, long optReads, long optRetries, long optFallbacks,
                        long pins, long gcCycles, long gcGreys, long gcBusyWaits) {
    /** Counters read: the first COUNT u64 of uh_stats. */
    static final int COUNT = 26;

    HeapStats(long[] c) {
        this(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12], c[13],
                c[14], c[15], c[16], c[17], c[18], c[19], c[20], c[21], c[22], c[23], c[24],
                c[25]);
    }
}
