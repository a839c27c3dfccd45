package org.uniheap;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The outermost blocks open on one heap, counted per stripe of threads
 * (picked by thread id), each stripe on cache lines of its own. A thread
 * whose stripe counts 0 has no block open, so it needs no thread-local
 * lookup before a direct read; a stripe that other threads share only
 * costs that lookup. Threads of different stripes never write the same
 * cache line here (one shared counter bounced its line between the cores
 * of threads running blocks, twice a block and once a field read).
 */
final class BlockCount {
    /** ints between two stripes: 128 bytes, as adjacent-line prefetch pairs lines. */
    static final int SPACING = 32;
    private static final VarHandle COUNTS = MethodHandles.arrayElementVarHandle(int[].class);
    private final int[] counts;
    private final int mask;

    /** @param stripes a power of two */
    BlockCount(int stripes) {
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

    /** True when no thread of the calling thread's stripe has a block open
     * (a plain read: the calling thread's own changes are all it needs). */
    boolean none() {
        return counts[at()] == 0;
    }

    void add(int delta) {
        COUNTS.getAndAdd(counts, at(), delta);
    }
}
