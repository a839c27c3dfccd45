package org.uniheap;

/**
 * The pins of one session for the online garbage collector, as the unpin
 * thread reaches them ({@link Proxies} takes a pin per proxy on the
 * session its thread holds: its block's, or one borrowed for the call; a
 * pin may hand the reference to the collector's ring, which only the
 * session's user thread writes). The release comes from the unpin thread
 * at any time: libuniheap makes uh_unpin safe against the session's other
 * calls (a per-handle spin lock).
 *
 * <p>Invariant: once the session is disconnected ({@link #close()}, under
 * this object's lock) no unpin reaches libuniheap, which has freed the
 * handle; the session's pins went with it. A proxy made after its heap
 * closed never pins (making it throws {@link HeapClosedException} first).
 */
final class Pins {
    /** Times a block or an allocation that found the heap full runs again
     * after {@link #reclaim}. */
    static final int RECLAIMS = 2;

    private final long h;
    private boolean open = true;   // guarded by this

    Pins(long h) {
        this.h = h;
    }

    /** Release a pin of this session (any thread); a no-op once the
     * session is gone. */
    synchronized void unpin(int id) {
        if (!open)
            return;
        try {
            int rc = (int) Native.UNPIN.invokeExact(h, id);
            assert rc == 0 : "uh_unpin " + id + ": " + rc;
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /** The session is about to be disconnected: no unpin from now on. */
    synchronized void close() {
        open = false;
    }

    /**
     * The heap is full, and the JVM may hold proxies that nothing reaches
     * any more but that still pin their objects (a young collection may
     * not have run since they died: a loop of blocks that each replace an
     * object fills a small heap long before the JVM's heap). Collect the
     * JVM's garbage and let the unpin thread release those pins: the
     * caller's next allocation then finds heapd able to reclaim the
     * objects. Waits until this heap's pins stop falling: at most about
     * half a second.
     */
    static void reclaim(Heap heap) {
        System.gc();
        long last = heap.stats().pins();
        int still = 0;
        for (int i = 0; i < 50 && still < 5; i++) {   // bound: 50 rounds of 10 ms
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            long now = heap.stats().pins();
            still = now < last ? 0 : still + 1;
            last = now;
        }
    }
}
