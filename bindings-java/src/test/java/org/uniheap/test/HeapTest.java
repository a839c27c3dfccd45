package org.uniheap.test;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.uniheap.Heap;

/**
 * Base of the tests that need a heap: one private heapd per test class (a
 * fresh heap and socket, always stopped), and {@link #heap} connected for
 * each test (closed after it, with every heap opened through
 * {@link #connect(Heap.Option...)}).
 */
public abstract class HeapTest {
    protected static Heapd heapd;
    protected Heap heap;
    private final List<Heap> opened = new ArrayList<>();

    @BeforeAll
    static void startHeapd() throws Exception {
        heapd = Heapd.start("128M");
    }

    @AfterAll
    static void stopHeapd() {
        if (heapd != null)
            heapd.close();
        heapd = null;
    }

    @BeforeEach
    void connectHeap() {
        heap = connect();
    }

    @AfterEach
    void closeHeaps() {
        for (Heap h : opened)
            h.close();
        opened.clear();
    }

    /** One more connection to this class's heapd, closed after the test. */
    protected Heap connect(Heap.Option... options) {
        Heap h = Heap.connect(heapd.socket, options);
        opened.add(h);
        return h;
    }
}
