package org.uniheap;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The live proxies of one {@link Heap}, for the online garbage collector:
 * every proxy of a persistent object (a record's, generated or generic, a
 * list's, an array's, a map's, a sorted map's) holds one pin of its
 * reference ({@link Pins}) from when it is made until the JVM finds it
 * unreachable; then this JVM's unpin thread releases the pin. heapd's
 * collector keeps every object a pin names, so an object stays readable
 * while Java code can reach a proxy of it, whether the heap still refers to
 * it or not.
 *
 * <p>Canonical proxies. A proxy is made once per object and type while it
 * is reachable: reading the same reference again (a map get, a getter, a
 * list element) returns the proxy already made, found by reference in a
 * table of weak references. A proxy made and dropped in a tight loop over a
 * few objects thus costs a table lookup, not a pin, an unpin and a
 * reference for the JVM's collector to process each time (measured with
 * ProxyLoop: a Cleaner per proxy made a map get of a record four times
 * slower, and its thread fell so far behind a loop of getters that the
 * session ran out of pins). A proxy of the same
 * object through another type ({@code as()}) is a proxy of its own, with a
 * pin of its own, kept in {@code others}. In front of the table, a
 * direct-mapped array of recently used entries ({@code recent}, indexed by
 * a hash of the reference) answers a repeated read with two loads and no
 * boxing; the table answers the rest.
 *
 * <p>Invariants. Each entry is the weak reference to one proxy, and holds
 * its pin's id and session, never the proxy. An entry stays strongly
 * reachable until released: from {@code byRef} or {@code others} while
 * its proxy lives, from the JVM's pending list and {@link #QUEUE} once the
 * proxy died (the JVM clears a weak reference and queues it in one step,
 * so an entry whose proxy is gone may leave the table: it is queued).
 * Released exactly once, by the unpin thread. {@code recent} only
 * caches: an entry there is also in {@code byRef} or {@code others}, or
 * its proxy is gone (then {@code find} sees null and a new proxy takes
 * the slot).
 */
final class Proxies {
    private static final ReferenceQueue<Object> QUEUE = new ReferenceQueue<>();

    static {
        Thread t = new Thread(Proxies::releaseLoop, "uniheap-unpin");
        t.setDaemon(true);
        t.start();
    }

    private static final int RECENT_BITS = 12;
    private final AtomicReferenceArray<Entry> recent = new AtomicReferenceArray<>(1 << RECENT_BITS);
    private final ConcurrentHashMap<Long, Entry> byRef = new ConcurrentHashMap<>();
    private final Set<Entry> others = ConcurrentHashMap.newKeySet();
    private final Heap heap;

    Proxies(Heap heap) {
        this.heap = heap;
    }

    /** A pinned proxy's weak reference, its pin and its place in the table. */
    private static final class Entry extends WeakReference<Object> {
        final Proxies owner;
        final long bits;
        final Long ref;
        final ProxyType type;
        final Pins pins;
        final int id;

        Entry(Object proxy, Proxies owner, Long ref, ProxyType type, Pins pins, int id) {
            super(proxy, QUEUE);
            this.owner = owner;
            this.bits = ref;
            this.ref = ref;
            this.type = type;
            this.pins = pins;
            this.id = id;
        }

        void release() {
            owner.recent.compareAndSet(slot(bits), this, null);
            if (!owner.byRef.remove(ref, this))
                owner.others.remove(this);
            pins.unpin(id);
        }
    }

    private static void releaseLoop() {
        for (;;) {   // bound: the JVM's life (a daemon thread)
            try {
                ((Entry) QUEUE.remove()).release();
            } catch (InterruptedException e) {
                // not ours to end: go on releasing
            } catch (Throwable t) {
                // one failed release must not stop the others
            }
        }
    }

    private static int slot(long ref) {
        return (int) ((ref * 0x9E37_79B9_7F4A_7C15L) >>> (64 - RECENT_BITS));
    }

    /** The live proxy of ref made through type, or null. */
    Object find(long ref, ProxyType type) {
        int i = slot(ref);
        Entry e = recent.getAcquire(i);
        if (e == null || e.bits != ref) {
            e = byRef.get(ref);
            if (e == null)
                return null;
            recent.setRelease(i, e);
        }
        return e.type == type ? e.get() : null;
    }

    /**
     * Pin ref for proxy, which is being made (every proxy constructor
     * calls this), and make it the proxy {@link #find} returns.
     * @throws FreedObjectException if the object was freed (then nothing
     *         is pinned); ConflictException inside a block that read it
     *         before another session freed it
     */
    void adopt(Object proxy, long ref, ProxyType type) {
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        int id;
        try {
            int rc = s.pin(ref);
            if (rc == Errors.EFREED)
                throw heap.freed(ref);
            if (rc != 0)
                throw Errors.of(rc, "pin the object at offset " + (ref & ProxyBase.OFFSET_MASK));
            id = s.pinOut();
        } finally {
            heap.release(b, s);
        }
        Entry e = new Entry(proxy, this, ref, type, s.pins, id);
        for (;;) {   // bound: each round another thread changed the slot
            Entry old = byRef.putIfAbsent(e.ref, e);
            if (old == null) {
                recent.setRelease(slot(ref), e);
                return;
            }
            if (old.get() != null) {
                others.add(e);   // ref has a live proxy already (another type, or a race)
                return;
            }
            if (byRef.replace(e.ref, old, e)) {
                recent.setRelease(slot(ref), e);
                return;          // old is queued: the unpin thread releases it
            }
        }
    }
}
