package org.uniheap.test;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.*;
import static org.uniheap.test.SizedValues.LENGTHS;
import static org.uniheap.test.SizedValues.bytes;
import static org.uniheap.test.SizedValues.string;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import org.junit.jupiter.api.Test;
import org.uniheap.Block;
import org.uniheap.Bytes;
import org.uniheap.BytesView;
import org.uniheap.Heap;
import org.uniheap.HeapClosedException;
import org.uniheap.HeapStats;
import org.uniheap.PMap;
import org.uniheap.PSortedMap;
import org.uniheap.TypeMismatchException;

/**
 * String and byte[] values of hash maps: up to 128 bytes (UTF-8 for a
 * String) kept inside the entry, longer ones objects of their own; both
 * read back the same through every read (get, iteration, the old value of
 * put and remove, view), inside a block and outside, and a value replaced
 * under a reader is read again, never torn.
 */
class MapInlineValuesTest extends HeapTest {
    /** Each length as a String under "s<n>" and as bytes under "b<n>". */
    private static <K> void fill(PMap<K, Object> m, Function<String, K> key, int seed) {
        for (int n : LENGTHS) {
            m.set(key.apply("s" + n), string(n, (char) ('a' + seed)));
            m.set(key.apply("b" + n), bytes(n, seed));
        }
    }

    private static <K> void assertFilled(Map<K, Object> m, Function<String, K> key, int seed) {
        for (int n : LENGTHS) {
            assertEquals(string(n, (char) ('a' + seed)), m.get(key.apply("s" + n)), "s" + n);
            assertArrayEquals(bytes(n, seed), (byte[]) m.get(key.apply("b" + n)), "b" + n);
        }
    }

    /** The map's entries, read by iteration, in a HashMap. */
    private static <K> Map<K, Object> iterated(PMap<K, Object> m) {
        Map<K, Object> seen = new HashMap<>();
        for (Map.Entry<K, Object> e : m.entrySet())
            assertNull(seen.put(e.getKey(), e.getValue()), "key seen twice: " + e.getKey());
        return seen;
    }

    private static <K> void roundTrip(PMap<K, Object> m, Function<String, K> key) {
        fill(m, key, 1);
        assertFilled(m, key, 1);
        assertEquals(2 * LENGTHS.length, m.size());
        assertFilled(iterated(m), key, 1);
        m.check();
    }

    @Test
    void roundTripForEveryKeyType() {
        roundTrip(heap.newMap(String.class), k -> k);
        roundTrip(heap.newMap(Bytes.class), Bytes::utf8);
        roundTrip(heap.newMap(Long.class), k -> (long) k.hashCode());
    }

    @Test
    void roundTripInsideABlock() {
        PMap<String, Object> m = heap.newMap(String.class);
        heap.atomic(() -> {
            fill(m, k -> k, 2);
            assertFilled(m, k -> k, 2);   // the block sees its own puts
        });
        assertFilled(m, k -> k, 2);
        assertFilled(elsewhere(m), k -> k, 2);   // and so does another connection
    }

    /** m through another connection to the heap. */
    @SuppressWarnings("unchecked")
    private PMap<String, Object> elsewhere(PMap<String, Object> m) {
        return connect().proxy(m.ref()).as(PMap.class);
    }

    @Test
    void aBlockRolledBackKeepsTheOldValues() {
        PMap<String, Object> m = heap.newMap(String.class);
        fill(m, k -> k, 1);
        try (Block b = heap.begin()) {
            fill(m, k -> k, 2);
            assertEquals(string(1, 'c'), m.put("s1", "x"));
            assertArrayEquals(bytes(128, 2), (byte[]) m.remove("b128"));
        }   // no commit: rolled back
        assertFilled(m, k -> k, 1);
        m.check();
    }

    /** N new keys with 128-byte values against N with 129-byte values: one
     * bytes object more per value, the entry holding the shorter ones. */
    @Test
    void shortValuesLiveInTheEntry() {
        int n = 200;
        long inline = allocsOfPuts(n, bytes(128, 3));
        long objects = allocsOfPuts(n, bytes(129, 3));
        assertEquals(n, objects - inline);
        assertEquals(n, allocsOfPuts(n, string(129, 'x')) - allocsOfPuts(n, string(128, 'x')));
    }

    private long allocsOfPuts(int n, Object value) {
        PMap<Long, Object> m = heap.newMap(Long.class);
        long before = heap.stats().allocs();
        for (long i = 0; i < n; i++)
            m.set(i, value);
        return heap.stats().allocs() - before;
    }

    @Test
    void replaceInlineObjectInlineReturnsEachOldValue() {
        PMap<String, Object> m = heap.newMap(String.class);
        assertNull(m.put("k", bytes(128, 1)));
        HeapStats start = heap.stats();
        assertArrayEquals(bytes(128, 1), (byte[]) m.put("k", bytes(5000, 2)));
        assertArrayEquals(bytes(5000, 2), (byte[]) m.put("k", bytes(1, 3)));
        assertArrayEquals(bytes(1, 3), (byte[]) m.put("k", string(128, 'a')));
        assertEquals(string(128, 'a'), m.put("k", string(129, 'b')));
        assertEquals(string(129, 'b'), m.put("k", string(0, 'c')));
        assertEquals("", m.put("k", 7L));     // an inline value replaced by a number
        assertEquals(7L, m.put("k", bytes(128, 4)));
        assertArrayEquals(bytes(128, 4), (byte[]) m.get("k"));
        HeapStats end = heap.stats();
        // one live value in the end as in the start: every replaced one was freed
        assertEquals(start.allocs() - start.frees(), end.allocs() - end.frees());
        assertEquals(1, m.size());
        m.check();
    }

    @Test
    void removeReturnsTheOldValue() {
        PMap<String, Object> m = heap.newMap(String.class);
        fill(m, k -> k, 5);
        HeapStats before = heap.stats();
        for (int n : LENGTHS) {
            assertEquals(string(n, 'f'), m.remove("s" + n));
            assertArrayEquals(bytes(n, 5), (byte[]) m.remove("b" + n));
            assertNull(m.remove("s" + n));
        }
        assertTrue(m.isEmpty());
        assertTrue(heap.stats().frees() - before.frees() >= 2 * LENGTHS.length);   // each entry at least
        heap.atomic(() -> {
            m.put("k", "inline");
            assertEquals("inline", m.remove("k"));   // read before the block frees it
        });
        assertFalse(m.containsKey("k"));
        m.check();
    }

    @Test
    void iterationWhileReplacingEachValueVisitsEachKeyOnce() {
        PMap<String, Object> m = heap.newMap(String.class);
        int n = 300;
        for (int i = 0; i < n; i++)
            m.set("k" + i, i % 2 == 0 ? string(128, 'a') : bytes(129, i));
        for (int round = 0; round < 2; round++) {   // inline -> object -> inline
            Set<String> seen = new HashSet<>();
            for (String k : m.keySet()) {
                assertTrue(seen.add(k), "visited twice: " + k);
                m.put(k, round == 0 ? string(129, 'b') : bytes(1, k.length()));
            }
            assertEquals(n, seen.size());
        }
        for (int i = 0; i < n; i++)
            assertArrayEquals(bytes(1, ("k" + i).length()), (byte[]) m.get("k" + i));
        m.check();
    }

    @Test
    void entrySetValueWritesInlineValues() {
        PMap<Long, Object> m = heap.newMap(Long.class);
        for (long i = 0; i < 50; i++)
            m.set(i, "v" + i);
        for (Map.Entry<Long, Object> e : m.entrySet())
            e.setValue(e.getValue() + "/2");
        Map<Long, Object> want = new HashMap<>();
        for (long i = 0; i < 50; i++)
            want.put(i, "v" + i + "/2");
        assertEquals(want, m);
    }

    @Test
    void viewOfAnInlineValue() {
        PMap<String, Object> m = heap.newMap(String.class);
        for (int n : LENGTHS) {
            m.put("b", bytes(n, 7));
            BytesView v = m.view("b");
            assertEquals(n, v.length());
            assertTrue(v.segment().isReadOnly());
            assertArrayEquals(bytes(n, 7), v.segment().toArray(JAVA_BYTE));
            assertTrue(v.valid());
        }
        m.put("s", string(10, 'a'));
        assertTrue(assertThrows(TypeMismatchException.class, () -> m.view("s"))
                .getMessage().contains("string"));
    }

    @Test
    void aStaleViewIsInvalidAndAClosedOneThrows() {
        Heap h = connect();
        PMap<String, Object> m = h.newMap(String.class);
        m.put("k", bytes(100, 1));
        BytesView v = m.view("k");
        PMap<String, Object> other = elsewhere(m);
        other.put("k", bytes(100, 2));   // frees the entry that held the value
        assertFalse(v.valid());
        assertEquals(100, v.segment().toArray(JAVA_BYTE).length);   // readable, whatever it shows
        BytesView w = m.view("k");
        assertArrayEquals(bytes(100, 2), w.segment().toArray(JAVA_BYTE));
        other.remove("k");
        assertFalse(w.valid());
        m.put("k", bytes(64, 3));
        BytesView x = m.view("k");
        h.close();
        assertThrows(IllegalStateException.class, () -> x.segment().get(JAVA_BYTE, 0));
        assertFalse(x.valid());
        assertThrows(HeapClosedException.class, () -> m.get("k"));
    }

    /** A reader of a key another connection keeps replacing sees whole
     * values only: each a run of one byte, of a length the writer used. */
    @Test
    void valuesReplacedUnderAReaderAreReadAgain() throws Exception {
        PMap<String, Object> m = heap.newMap(String.class);
        m.put("k", new byte[1]);
        PMap<String, Object> w = elsewhere(m);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        int[] lens = {1, 64, 128, 129};
        Thread writer = new Thread(() -> {
            try {
                for (int i = 0; !stop.get() && i < 200_000; i++) {
                    byte[] b = new byte[lens[i % lens.length]];
                    Arrays.fill(b, (byte) i);
                    w.set("k", b);
                }
            } catch (Throwable t) {
                failed.set(t);
            }
        });
        writer.start();
        List<String> bad = new ArrayList<>();
        try {
            for (int i = 0; i < 50_000 && bad.isEmpty(); i++) {
                byte[] b = (byte[]) m.get("k");
                if (!whole(b, lens))
                    bad.add(Arrays.toString(b));
                for (Object v : m.values())
                    if (!whole((byte[]) v, lens))
                        bad.add("iterated: " + Arrays.toString((byte[]) v));
            }
        } finally {
            stop.set(true);
            writer.join();
        }
        assertNull(failed.get());
        assertEquals(List.of(), bad);
    }

    private static boolean whole(byte[] b, int[] lens) {
        if (Arrays.stream(lens).noneMatch(n -> n == b.length))
            return false;
        for (byte x : b)
            if (x != b[0])
                return false;
        return true;
    }

    @Test
    void sortedMapsKeepTheirObjects() {
        PSortedMap<String, Object> m = heap.newSortedMap(String.class);
        for (int n : LENGTHS) {
            m.put("s" + n, string(n, 'a'));
            m.put("b" + n, bytes(n, 1));
        }
        for (int n : LENGTHS) {
            assertEquals(string(n, 'a'), m.get("s" + n));
            assertArrayEquals(bytes(n, 1), (byte[]) m.get("b" + n));
            assertArrayEquals(bytes(n, 1), m.view("b" + n).segment().toArray(JAVA_BYTE));
        }
        assertEquals(string(128, 'a'), m.remove("s128"));
        m.check();
    }
}
