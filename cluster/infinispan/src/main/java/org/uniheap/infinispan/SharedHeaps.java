package org.uniheap.infinispan;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import org.uniheap.Heap;

/**
 * One connection per heapd socket in a JVM, shared by every store (cache)
 * that names that socket: a Heap is thread-safe and maps the heap once, so a
 * second connection would only map it again. Counted: the last store to let
 * go closes it.
 */
final class SharedHeaps {
    private static final Map<String, Shared> OPEN = new HashMap<>();

    private record Shared(Heap heap, int users) {}

    private SharedHeaps() {}

    /** The connection for socket (null: the binding's default socket). */
    static synchronized Heap acquire(String socket) {
        String key = socket == null ? "" : socket;
        Shared s = OPEN.get(key);
        if (s == null || s.heap().isClosed())
            s = new Shared(socket == null ? Heap.connect() : Heap.connect(Path.of(socket)), 0);
        OPEN.put(key, new Shared(s.heap(), s.users() + 1));
        return s.heap();
    }

    static synchronized void release(Heap heap) {
        for (var e : OPEN.entrySet()) {
            if (e.getValue().heap() != heap)
                continue;
            int left = e.getValue().users() - 1;
            if (left > 0) {
                e.setValue(new Shared(heap, left));
            } else {
                OPEN.remove(e.getKey());
                heap.close();
            }
            return;
        }
    }
}
