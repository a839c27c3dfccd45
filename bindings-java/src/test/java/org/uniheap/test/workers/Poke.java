package org.uniheap.test.workers;

import org.uniheap.Heap;
import org.uniheap.PObject;

/**
 * Another process's commit, for the wait tests: connects ($UNIHEAP_SOCKET),
 * sleeps DELAY_MS, sets field FIELD of root ROOT (an i64) to VALUE, prints
 * "poked".
 *
 * <p>Usage: Poke ROOT FIELD VALUE DELAY_MS
 */
public final class Poke {
    private Poke() {
    }

    public static void main(String[] args) throws Exception {
        try (Heap heap = Heap.connect()) {
            PObject cell = heap.roots().get(args[0]);
            Thread.sleep(Long.parseLong(args[3]));
            cell.setField(args[1], Long.parseLong(args[2]));
            System.out.println("poked");
        }
    }
}
