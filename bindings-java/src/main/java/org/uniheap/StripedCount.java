package org.uniheap;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A count per stripe of threads (picked by thread id), each stripe on
 * cache lines of its own: what a thread needs to know of its own actions
 * without a thread-local lookup, and without writing a cache line that
 * threads of other stripes write too. A thread reads its stripe, which
 * counts its own actions plus those of the threads that share the stripe.
 *
 * <p>The heap counts its open blocks this way (a thread whose stripe
 * counts 0 has no block open, so it needs no thread-local lookup before a
 * direct read; one shared counter bounced its line between the cores of
 * threads running blocks, twice a block and once a field read), and the
 * sorted-map writes of its threads (a cursor drops the entries it read
 * ahead when its thread wrote a sorted map since).
 */
final class StripedCount {
    /** ints between two stripes: 128 bytes, as adjacent-line prefetch pairs lines. */
    static final int SPACING = 32;
    private static final VarHandle COUNTS = MethodHandles.arrayElementVarHandle(int[].class);
    private final int[] counts;
    private final int mask;

    /** @param stripes a power of two */
    StripedCount(int stripes) {
        this.mask = stripes - 1;
        this.counts = new int[stripes * SPACING];
    }

    /** Stripes for a heap: about twice the processors (as SessionPool). */
    static int stripesFor(int processors) {
        return Integer.highestOneBit(Math.max(4, processors * 2 - 1) * 2);
    }

    private int at() {
        return ((int) Thread.currentThread().threadId() & mask) * SPACING;
    }

    /** The calling thread's stripe's count (a plain read: the calling
     * thread's own changes are all it needs to see). */
    int get() {
        return counts[at()];
    }

    /** True when the calling thread's stripe counts 0. */
    boolean none() {
        return counts[at()] == 0;
    }

    void add(int delta) {
        COUNTS.getAndAdd(counts, at(), delta);
    }
}
