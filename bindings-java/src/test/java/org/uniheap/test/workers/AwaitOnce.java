package org.uniheap.test.workers;

import java.time.Duration;
import java.util.OptionalLong;

import org.uniheap.Heap;
import org.uniheap.PObject;

/**
 * A waiter in another process, for the heapd restart test: connects
 * ($UNIHEAP_SOCKET), takes the token of root ROOT, prints "waiting", then
 * awaits a change (at most BOUND_S seconds) and prints "woken" or
 * "timeout".
 *
 * <p>Usage: AwaitOnce ROOT BOUND_S
 */
public final class AwaitOnce {
    private AwaitOnce() {
    }

    public static void main(String[] args) {
        try (Heap heap = Heap.connect()) {
            PObject cell = heap.roots().get(args[0]);
            long tok = heap.token(cell);
            System.out.println("waiting");
            OptionalLong r = heap.await(cell, tok, Duration.ofSeconds(Long.parseLong(args[1])));
            System.out.println(r.isPresent() ? "woken" : "timeout");
        }
    }
}
