package org.uniheap.test;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.uniheap.Block;
import org.uniheap.Bytes;
import org.uniheap.BytesView;
import org.uniheap.Heap;
import org.uniheap.HeapClosedException;
import org.uniheap.PMap;
import org.uniheap.PSortedMap;
import org.uniheap.TypeMismatchException;

/**
 * Zero-copy views of bytes values (PMap.view, PSortedMap.view): the bytes
 * in place, no copy, read-only; valid() says whether they are still the
 * value's; after the heap closed every access throws, never a crash.
 */
class ViewTest extends HeapTest {
    private static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++)
            b[i] = (byte) (i * 31 + 7);
        return b;
    }

    private static <K> void viewIsTheValue(PMap<K, Object> m, K key) {
        for (int n : new int[] {0, 1, 100, 40_000}) {
            byte[] data = pattern(n);
            m.put(key, data);
            BytesView v = m.view(key);
            assertEquals(n, v.length());
            assertEquals(n, v.segment().byteSize());
            assertTrue(v.segment().isReadOnly());
            assertArrayEquals((byte[]) m.get(key), v.segment().toArray(JAVA_BYTE));
            assertArrayEquals(data, v.segment().toArray(JAVA_BYTE));
            assertTrue(v.valid());
        }
    }

    @Test
    void viewIsTheValueForEveryKeyType() {
        viewIsTheValue(heap.<String, Object>newMap(String.class), "k");
        viewIsTheValue(heap.<Bytes, Object>newMap(Bytes.class), Bytes.of((byte) 1, (byte) 2));
        viewIsTheValue(heap.<Long, Object>newMap(Long.class), 7L);
    }

    @Test
    void viewDoesNotCopy() {
        PMap<String, Object> m = heap.newMap(String.class);
        m.put("k", pattern(1000));
        BytesView a = m.view("k");
        BytesView b = m.view("k");
        assertEquals(a.segment().address(), b.segment().address());
        assertEquals(a.offset(), b.offset());
    }

    @Test
    void replacedByAnotherSessionIsNoLongerValid() {
        PMap<String, Object> m = heap.newMap(String.class);
        m.put("k", pattern(100));
        BytesView v = m.view("k");
        byte[] copy = v.segment().toArray(JAVA_BYTE);
        assertTrue(v.valid());
        assertArrayEquals(pattern(100), copy);

        Heap other = connect();
        @SuppressWarnings("unchecked")
        PMap<String, Object> seen = other.proxy(m.ref()).as(PMap.class);
        byte[] next = new byte[100];
        Arrays.fill(next, (byte) 'B');
        seen.put("k", next);   // frees the old value

        assertFalse(v.valid());
        assertEquals(100, v.segment().toArray(JAVA_BYTE).length);   // readable, whatever it shows
        BytesView w = m.view("k");
        assertArrayEquals(next, w.segment().toArray(JAVA_BYTE));
        assertTrue(w.valid());
        m.remove("k");
        assertFalse(w.valid());
    }

    @Test
    void missingKeyIsNull() {
        PMap<String, Object> m = heap.newMap(String.class, Map.of("a", new byte[] {1}));
        assertNull(m.view("missing"));
        PSortedMap<Long, Object> s = heap.newSortedMap(Long.class);
        assertNull(s.view(1L));
    }

    @Test
    void valueNotBytesThrows() {
        PMap<String, Object> m = heap.newMap(String.class);
        m.put("s", "text");
        m.put("i", 5L);
        m.put("n", null);
        m.put("r", heap.newMap(String.class));
        assertTrue(assertThrows(TypeMismatchException.class, () -> m.view("s"))
                .getMessage().contains("string"));
        assertTrue(assertThrows(TypeMismatchException.class, () -> m.view("i"))
                .getMessage().contains("i64"));
        assertTrue(assertThrows(TypeMismatchException.class, () -> m.view("n"))
                .getMessage().contains("null"));
        assertTrue(assertThrows(TypeMismatchException.class, () -> m.view("r"))
                .getMessage().contains("ref"));
        assertThrows(ClassCastException.class, () -> m.view(3L));   // wrong key type
        assertThrows(NullPointerException.class, () -> m.view(null));
    }

    @Test
    void sortedMapView() {
        PSortedMap<Long, Object> m = heap.newSortedMap(Long.class);
        m.put(1L, "one".getBytes());
        m.put(2L, pattern(5000));
        m.put(3L, 3);
        assertArrayEquals("one".getBytes(), m.view(1L).segment().toArray(JAVA_BYTE));
        BytesView v = m.view(2L);
        assertArrayEquals((byte[]) m.get(2L), v.segment().toArray(JAVA_BYTE));
        assertEquals(v.segment().address(), m.view(2L).segment().address());
        assertThrows(TypeMismatchException.class, () -> m.view(3L));
        assertThrows(ClassCastException.class, () -> m.view("1"));
        m.remove(2L);
        assertFalse(v.valid());
        assertNull(m.view(2L));
    }

    @Test
    void viewInBlockShowsTheBlocksValue() {
        PSortedMap<Long, Object> m = heap.newSortedMap(Long.class);
        m.put(1L, "one".getBytes());
        try (Block b = heap.begin()) {
            m.put(3L, "three".getBytes());   // new in this block
            assertArrayEquals("three".getBytes(), m.view(3L).segment().toArray(JAVA_BYTE));
            assertArrayEquals("one".getBytes(), m.view(1L).segment().toArray(JAVA_BYTE));
            b.commit();
        }
        BytesView v = m.view(3L);
        assertArrayEquals("three".getBytes(), v.segment().toArray(JAVA_BYTE));
        assertTrue(v.valid());
    }

    @Test
    void readOnly() {
        PMap<String, Object> m = heap.newMap(String.class);
        m.put("k", new byte[] {1, 2, 3});
        MemorySegment s = m.view("k").segment();
        assertTrue(s.isReadOnly());
        // The JDK's rule for read-only segments: writes throw IllegalArgumentException;
        // through a ByteBuffer, ReadOnlyBufferException (an UnsupportedOperationException).
        assertThrows(IllegalArgumentException.class, () -> s.set(JAVA_BYTE, 0, (byte) 9));
        assertThrows(IllegalArgumentException.class, () -> s.fill((byte) 0));
        assertThrows(IllegalArgumentException.class,
                () -> MemorySegment.copy(new byte[3], 0, s, JAVA_BYTE, 0, 3));
        assertThrows(UnsupportedOperationException.class, () -> s.asByteBuffer().put((byte) 9));
        assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) m.get("k"));
    }

    @Test
    void afterCloseAccessThrows() {
        Heap h = connect();
        PMap<String, Object> m = h.newMap(String.class);
        m.put("k", pattern(64));
        BytesView v = m.view("k");
        MemorySegment s = v.segment();
        h.close();
        assertThrows(IllegalStateException.class, () -> s.get(JAVA_BYTE, 0));
        assertThrows(IllegalStateException.class, () -> s.toArray(JAVA_BYTE));
        assertFalse(v.valid());
        assertEquals(64, v.length());   // the size is the segment's, not a read
        assertThrows(HeapClosedException.class, () -> m.view("k"));
    }
}
