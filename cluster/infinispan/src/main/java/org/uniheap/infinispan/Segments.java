package org.uniheap.infinispan;

import java.util.concurrent.atomic.AtomicReferenceArray;

import org.uniheap.Bytes;
import org.uniheap.Heap;
import org.uniheap.PMap;
import org.uniheap.PObject;
import org.uniheap.PSortedMap;

/**
 * A cache's entries in the heap: one durable root (a hash map from segment
 * number to that segment's sorted map of marshalled key -> EntryCodec
 * record). A segment's map is created on its first write and dropped whole
 * when the node loses the segment, so rebalancing costs one map per segment,
 * not one step per entry of the other segments.
 *
 * Invariants: the root and every segment map are published in the block that
 * creates them (a crash leaves either nothing or a reachable map); the Java
 * cache of segment maps only ever holds maps that the root names, since a
 * segment is dropped from the cache before the root lets it go.
 */
final class Segments {
    private final Heap heap;
    private final PMap<Long, PObject> index;
    private final AtomicReferenceArray<PSortedMap<Bytes, byte[]>> cache;

    Segments(Heap heap, String rootName, int segments) {
        this.heap = heap;
        this.index = openIndex(heap, rootName);
        this.cache = new AtomicReferenceArray<>(segments);
    }

    @SuppressWarnings("unchecked")
    private static PMap<Long, PObject> openIndex(Heap heap, String rootName) {
        return heap.atomic(() -> {
            PObject r = heap.roots().get(rootName);
            if (r == null) {
                PMap<Long, PObject> m = heap.newMap(Long.class);
                heap.roots().put(rootName, m);
                return m;
            }
            if (!(r instanceof PMap<?, ?> m) || m.keyType() != Long.class)
                throw new IllegalStateException("uniheap store: root " + rootName
                        + " is a " + r.className() + ", not a segment index");
            return (PMap<Long, PObject>) m;
        });
    }

    int count() {
        return cache.length();
    }

    /** The segment's map, or null when it has none (and create is false). */
    @SuppressWarnings("unchecked")
    PSortedMap<Bytes, byte[]> map(int segment, boolean create) {
        PSortedMap<Bytes, byte[]> m = cache.get(segment);
        if (m != null)
            return m;
        Long key = (long) segment;
        PObject found = index.get(key);
        if (found == null) {
            if (!create)
                return null;
            found = heap.atomic(() -> {
                PObject again = index.get(key);
                if (again != null)
                    return again;
                PSortedMap<Bytes, byte[]> fresh = heap.newSortedMap(Bytes.class);
                index.set(key, fresh);
                return fresh;
            });
        }
        m = (PSortedMap<Bytes, byte[]>) found;
        return cache.compareAndSet(segment, null, m) ? m : cache.get(segment);
    }

    /** Every segment with a map (ascending). */
    int[] present() {
        return index.keySet().stream().mapToInt(Long::intValue).filter(s -> s < count())
                .sorted().toArray();
    }

    /**
     * Drop a segment: its entries (each removal a step of its own, so a big
     * segment needs no big block), then the map itself with its root entry in
     * one block. A crash halfway leaves a smaller segment, never a dangling one.
     */
    void drop(int segment) {
        PSortedMap<Bytes, byte[]> m = map(segment, false);
        if (m == null)
            return;
        cache.set(segment, null);
        m.clear();
        heap.atomic(() -> {
            index.remove((long) segment);
            heap.free(m);
        });
    }

    /** Empty every segment, keeping the maps. */
    void clearAll() {
        for (int s : present()) {
            PSortedMap<Bytes, byte[]> m = map(s, false);
            if (m != null)
                m.clear();
        }
    }
}
