package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Function;

import org.junit.jupiter.api.Test;
import org.uniheap.Bytes;
import org.uniheap.FieldType;
import org.uniheap.PArray;
import org.uniheap.PList;
import org.uniheap.PMap;
import org.uniheap.PObject;
import org.uniheap.PSortedMap;
import org.uniheap.TypeMismatchException;
import org.uniheap.ValueRangeException;

/**
 * Every data type through its java.util interface, against a model: the
 * same random operations on HashMap/TreeMap/ArrayList and on the
 * persistent one, compared step by step.
 */
class CollectionsTest extends HeapTest {
    private final Random rnd = new Random(42);

    private Object randomValue() {
        return switch (rnd.nextInt(10)) {
            case 0 -> null;
            case 1 -> rnd.nextBoolean();
            case 2 -> (byte) rnd.nextInt();
            case 3 -> (short) rnd.nextInt();
            case 4 -> rnd.nextInt();
            case 5 -> rnd.nextLong();
            case 6 -> rnd.nextFloat();
            case 7 -> rnd.nextDouble();
            case 8 -> "v" + rnd.nextInt(1000) + (rnd.nextBoolean() ? "✓" : "");
            default -> rnd.nextInt(100) * 1000L;
        };
    }

    /** Values compare by content (byte[] aside, which the model avoids). */
    private <K> void mapModel(Map<K, Object> m, Function<Integer, K> key, int ops) {
        Map<K, Object> model = new HashMap<>();
        for (int i = 0; i < ops; i++) {
            K k = key.apply(rnd.nextInt(200));
            switch (rnd.nextInt(6)) {
                case 0, 1 -> {
                    Object v = randomValue();
                    assertEquals(model.put(k, v), m.put(k, v), "put " + k);
                }
                case 2 -> assertEquals(model.remove(k), m.remove(k), "remove " + k);
                case 3 -> assertEquals(model.get(k), m.get(k), "get " + k);
                case 4 -> assertEquals(model.containsKey(k), m.containsKey(k), "containsKey " + k);
                default -> assertEquals(model.size(), m.size());
            }
        }
        assertEquals(model, m);
        assertEquals(m, model);
        assertEquals(model.hashCode(), m.hashCode());
        assertEquals(model.keySet(), m.keySet());
        assertEquals(new HashMap<>(model), new HashMap<>(m));
    }

    @Test
    void hashMapStringKeys() {
        PMap<String, Object> m = heap.newMap(String.class);
        mapModel(m, i -> "k" + i + (i % 7 == 0 ? "ü" : ""), 3000);
        m.check();
        assertEquals(String.class, m.keyType());
    }

    @Test
    void hashMapLongAndBytesKeys() {
        PMap<Long, Object> l = heap.newMap(Long.class);
        mapModel(l, i -> (long) (i - 100) * 1_000_000_007L, 2000);
        PMap<Bytes, Object> b = heap.newMap(Bytes.class);
        mapModel(b, i -> Bytes.of((byte) (int) i, (byte) 0, (byte) (i >> 3)), 2000);
        l.check();
        b.check();
    }

    @Test
    void mapValuesKeepTheirJavaTypes() {
        PMap<String, Object> m = heap.newMap(String.class);
        Account a = heap.create(Account.class);
        Object[] values = {true, (byte) -1, (short) 2, 3, 4L, 5.5f, 6.5, "s", a, null};
        for (int i = 0; i < values.length; i++)
            m.put("k" + i, values[i]);
        m.put("bytes", new byte[] {1, 2});
        for (int i = 0; i < values.length; i++)
            assertEquals(values[i], m.get("k" + i), "k" + i);
        assertArrayEquals(new byte[] {1, 2}, (byte[]) m.get("bytes"));
        assertTrue(m.containsKey("k9"));      // a stored null
        assertFalse(m.containsKey("absent"));
        assertInstanceOf(Account.class, m.get("k8"));
        assertThrows(TypeMismatchException.class, () -> m.put("bad", new ArrayList<>()));
        assertThrows(ClassCastException.class, () -> m.get(5L));
        assertThrows(NullPointerException.class, () -> m.put(null, 1));
    }

    @Test
    void mapIteratorsWriteThrough() {
        PMap<String, Object> m = heap.newMap(String.class, Map.of("a", 1L, "b", 2L, "c", 3L, "d", 4L));
        for (Iterator<Map.Entry<String, Object>> it = m.entrySet().iterator(); it.hasNext();) {
            Map.Entry<String, Object> e = it.next();
            if (e.getKey().equals("b"))
                it.remove();
            else
                e.setValue((Long) e.getValue() * 10);
        }
        assertEquals(Map.of("a", 10L, "c", 30L, "d", 40L), m);
        m.keySet().removeIf(k -> k.equals("c"));
        assertEquals(Map.of("a", 10L, "d", 40L), m);
        m.clear();
        assertTrue(m.isEmpty());
        assertFalse(m.entrySet().iterator().hasNext());
    }

    @Test
    void stringValuesAreFreedWhenReplaced() {
        PMap<String, Object> m = heap.newMap(String.class);
        m.put("k", "one");
        var before = heap.stats();
        assertEquals("one", m.put("k", "two"));     // allocates "two", frees "one"
        var after = heap.stats();
        assertEquals(before.allocs() - before.frees(), after.allocs() - after.frees());
        assertEquals("two", m.remove("k"));
        assertTrue(heap.stats().frees() > after.frees());
    }

    @Test
    void sortedMapAgainstTreeMap() {
        PSortedMap<String, Object> m = heap.newSortedMap(String.class);
        TreeMap<String, Object> model = new TreeMap<>(m.comparator());
        String[] pool = {"a", "b", "ab", "é", "z", "Z", "\uffff", "😀", "", "m", "mm", "n"};
        for (int i = 0; i < 1500; i++) {
            String k = pool[rnd.nextInt(pool.length)] + rnd.nextInt(30);
            switch (rnd.nextInt(4)) {
                case 0, 1 -> assertEquals(model.put(k, (long) i), m.put(k, (long) i));
                case 2 -> assertEquals(model.remove(k), m.remove(k));
                default -> assertEquals(model.get(k), m.get(k));
            }
        }
        compareNavigable(model, m, pool);
        m.check();
    }

    @Test
    void sortedMapLongAndBytes() {
        PSortedMap<Long, Object> m = heap.newSortedMap(Long.class);
        TreeMap<Long, Object> model = new TreeMap<>();
        for (int i = 0; i < 800; i++) {
            long k = rnd.nextInt(2000) - 1000;
            if (rnd.nextInt(3) == 0)
                assertEquals(model.remove(k), m.remove(k));
            else
                assertEquals(model.put(k, "v" + i), m.put(k, "v" + i));
        }
        assertNull(m.comparator());
        assertEquals(model, m);
        assertEquals(new ArrayList<>(model.keySet()), new ArrayList<>(m.keySet()));
        for (long k = -1100; k < 1100; k += 37) {
            assertEquals(model.ceilingKey(k), m.ceilingKey(k));
            assertEquals(model.floorKey(k), m.floorKey(k));
            assertEquals(model.higherKey(k), m.higherKey(k));
            assertEquals(model.lowerKey(k), m.lowerKey(k));
        }
        assertEquals(model.subMap(-500L, 500L), m.subMap(-500L, 500L));
        assertEquals(new ArrayList<>(model.descendingMap().subMap(500L, false, -500L, true).keySet()),
                new ArrayList<>(m.descendingMap().subMap(500L, false, -500L, true).keySet()));

        PSortedMap<Bytes, Object> b = heap.newSortedMap(Bytes.class);
        TreeMap<Bytes, Object> bm = new TreeMap<>();
        for (int i = 0; i < 300; i++) {
            Bytes k = Bytes.of((byte) rnd.nextInt(), (byte) rnd.nextInt(4));
            b.put(k, (long) i);
            bm.put(k, (long) i);
        }
        assertEquals(new ArrayList<>(bm.keySet()), new ArrayList<>(b.keySet()));   // unsigned order
        assertEquals(new ArrayList<>(bm.descendingKeySet()), new ArrayList<>(b.descendingKeySet()));
    }

    private static void compareNavigable(NavigableMap<String, Object> model, NavigableMap<String, Object> m,
                                         String[] pool) {
        assertEquals(model, m);
        assertEquals(new ArrayList<>(model.keySet()), new ArrayList<>(m.keySet()));
        assertEquals(new ArrayList<>(model.descendingKeySet()), new ArrayList<>(m.descendingKeySet()));
        assertEquals(model.firstEntry(), m.firstEntry());
        assertEquals(model.lastEntry(), m.lastEntry());
        for (String p : pool) {
            for (String k : new String[] {p, p + "1", p + "5"}) {
                assertEquals(model.ceilingKey(k), m.ceilingKey(k), "ceiling " + k);
                assertEquals(model.floorKey(k), m.floorKey(k), "floor " + k);
                assertEquals(model.higherKey(k), m.higherKey(k), "higher " + k);
                assertEquals(model.lowerKey(k), m.lowerKey(k), "lower " + k);
                assertEquals(model.headMap(k), m.headMap(k), "head " + k);
                assertEquals(model.tailMap(k, false), m.tailMap(k, false), "tail " + k);
            }
        }
        NavigableMap<String, Object> ms = m.subMap("b", true, "n", false), mo = model.subMap("b", true, "n", false);
        assertEquals(mo, ms);
        assertEquals(mo.size(), ms.size());
        assertEquals(new ArrayList<>(mo.descendingMap().keySet()), new ArrayList<>(ms.descendingMap().keySet()));
        assertEquals(mo.descendingMap().firstKey(), ms.descendingMap().firstKey());
        assertEquals(mo.descendingMap().headMap("m", true), ms.descendingMap().headMap("m", true));
        assertThrows(IllegalArgumentException.class, () -> ms.put("zz", 1L));
        assertThrows(IllegalArgumentException.class, () -> ms.subMap("a", "c"));
        assertNull(ms.get("zz"));
        // poll through a view
        Map.Entry<String, Object> first = mo.pollFirstEntry();
        assertEquals(first, ms.pollFirstEntry());
        assertEquals(model, m);
    }

    @Test
    void emptySortedMap() {
        PSortedMap<String, Object> m = heap.newSortedMap(String.class);
        assertNull(m.firstEntry());
        assertThrows(NoSuchElementException.class, m::firstKey);
        assertNull(m.pollLastEntry());
        assertTrue(m.descendingMap().isEmpty());
    }

    @Test
    void listAgainstArrayList() {
        PList<Object> l = heap.newList();
        List<Object> model = new ArrayList<>();
        for (int i = 0; i < 1500; i++) {
            int n = model.size();
            switch (rnd.nextInt(6)) {
                case 0, 1 -> {
                    Object v = randomValue();
                    assertEquals(model.add(v), l.add(v));
                }
                case 2 -> {
                    if (n > 0) {
                        int at = rnd.nextInt(n);
                        Object v = randomValue();
                        assertEquals(model.set(at, v), l.set(at, v));
                    }
                }
                case 3 -> {
                    int at = rnd.nextInt(n + 1);
                    Object v = randomValue();
                    model.add(at, v);
                    l.add(at, v);
                }
                case 4 -> {
                    if (n > 0) {
                        int at = rnd.nextInt(n);
                        assertEquals(model.remove(at), l.remove(at));
                    }
                }
                default -> {
                    if (n > 0) {
                        int at = rnd.nextInt(n);
                        assertEquals(model.get(at), l.get(at));
                    }
                }
            }
        }
        assertEquals(model, l);
        assertEquals(l, model);
        assertEquals(model.hashCode(), l.hashCode());
        assertEquals(model.subList(1, 10), l.subList(1, 10));
        assertThrows(IndexOutOfBoundsException.class, () -> l.get(model.size()));
        assertThrows(IndexOutOfBoundsException.class, () -> l.get(-1));
        assertThrows(IndexOutOfBoundsException.class, () -> l.set(model.size() + 5, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> l.remove(model.size()));
    }

    @Test
    void arrays() {
        PArray<Long> a = heap.newArray(long.class, 10);
        assertEquals(10, a.size());
        assertEquals(FieldType.I64, a.elementType());
        assertEquals(0L, a.get(3));
        a.set(3, 42L);
        a.setLong(4, -1);
        assertEquals(42L, a.getLong(3));
        assertEquals(-1L, a.get(4));
        assertThrows(UnsupportedOperationException.class, () -> a.add(1L));
        assertThrows(IndexOutOfBoundsException.class, () -> a.get(10));

        PArray<Integer> ints = heap.newArray(int.class, 3);
        ints.setLong(0, Integer.MAX_VALUE);
        assertEquals(Integer.MAX_VALUE, ints.get(0));
        assertThrows(ValueRangeException.class, () -> ints.setLong(1, 1L << 40));
        PArray<Byte> bytes = heap.newArray(byte.class, 2);
        assertThrows(ValueRangeException.class, () -> bytes.setLong(0, 200));

        PArray<Double> d = heap.newArray(double.class, 2);
        d.setDouble(1, 2.5);
        assertEquals(List.of(0.0, 2.5), d);
        PArray<String> s = heap.newArray(String.class, 3);
        s.set(0, "x");
        assertEquals(java.util.Arrays.asList("x", null, null), s);
        assertThrows(TypeMismatchException.class, () -> ((PArray<Object>) (PArray<?>) s).set(1, 5L));
        PArray<PObject> refs = heap.newArray(PObject.class, 2);
        Account acc = heap.create(Account.class);
        refs.set(1, acc);
        assertEquals(acc, refs.get(1));
        assertEquals(FieldType.REF, refs.elementType());
        assertTrue(a.toString().matches("uniheap\\.array@\\d+<i64>\\[0, 0, 0, 42, -1, .*\\]"), a.toString());
        PList<Object> l = heap.newList(java.util.Arrays.asList(1L, "two", null));
        assertTrue(l.toString().matches("uniheap\\.list@\\d+\\[1, two, null\\]"), l.toString());
        PMap<String, Object> m = heap.newMap(String.class, Map.of("k", 1L));
        assertTrue(m.toString().matches("uniheap\\.map@\\d+\\{k=1\\}"), m.toString());
    }

    @Test
    void roots() {
        Map<String, PObject> roots = heap.roots();
        Account a = heap.create(Account.class);
        PMap<String, Object> m = heap.newMap(String.class);
        assertNull(roots.put("coll.a", a));
        assertEquals(a, roots.put("coll.a", m));
        assertEquals(m, roots.get("coll.a"));
        assertTrue(roots.containsKey("coll.a"));
        assertTrue(roots.keySet().contains("coll.a"));
        assertEquals(m, roots.remove("coll.a"));
        assertNull(roots.remove("coll.a"));
        assertNull(roots.get("coll.a"));
        assertThrows(NullPointerException.class, () -> roots.put("coll.x", null));
        int n = roots.size();
        assertEquals(n, roots.entrySet().size());
    }

    /* Sorted maps are scanned a batch of entries per libuniheap call: every
     * way of walking one must return what single steps (the successor of
     * the last entry, in the map as it is then) would. */
    private static <K> List<Map.Entry<K, Object>> take(Iterator<Map.Entry<K, Object>> it, int n) {
        List<Map.Entry<K, Object>> out = new ArrayList<>();
        while (out.size() < n && it.hasNext())
            out.add(it.next());
        return out;
    }

    private static <K> List<Map.Entry<K, Object>> take(NavigableMap<K, Object> m, int n) {
        return take(m.entrySet().iterator(), n);
    }

    private <K> void scansAsSteps(PSortedMap<K, Object> m, TreeMap<K, Object> model, List<K> starts) {
        assertEquals(take(model, Integer.MAX_VALUE), take(m, Integer.MAX_VALUE));
        assertEquals(take(model.descendingMap(), Integer.MAX_VALUE), take(m.descendingMap(), Integer.MAX_VALUE));
        for (K k : starts) {
            int n = 1 + rnd.nextInt(100);
            assertEquals(take(model.tailMap(k, true), n), take(m.tailMap(k, true), n), "tail " + k);
            assertEquals(take(model.tailMap(k, false), n), take(m.tailMap(k, false), n), "tail> " + k);
            assertEquals(take(model.headMap(k, true).descendingMap(), n),
                    take(m.headMap(k, true).descendingMap(), n), "head " + k);
            assertEquals(new ArrayList<>(model.tailMap(k, true).values()).subList(0,
                    Math.min(n, model.tailMap(k, true).size())),
                    take(m.tailMap(k, true).entrySet().iterator(), n).stream().map(Map.Entry::getValue).toList());
        }
    }

    @Test
    void sortedMapScansReturnWhatSingleStepsWould() {
        PSortedMap<String, Object> m = heap.newSortedMap(String.class);
        TreeMap<String, Object> model = new TreeMap<>(m.comparator());
        List<String> starts = new ArrayList<>();
        for (int i = 0; i < 1200; i++) {
            String k = "user" + rnd.nextInt(100_000) + (i % 7 == 0 ? "é😀" : "");
            Object v = i % 5 == 0 ? heap.create(Account.class, a -> a.owner(k)) : randomValue();
            model.put(k, v);
            m.set(k, v);
            if (i % 40 == 0)
                starts.add(k);
        }
        starts.add("");
        starts.add("user5");
        starts.add("zzz");
        scansAsSteps(m, model, starts);
        heap.atomic(() -> scansAsSteps(m, model, starts));

        PSortedMap<Long, Object> l = heap.newSortedMap(Long.class);
        TreeMap<Long, Object> lm = new TreeMap<>();
        for (long i = 0; i < 700; i++) {
            long k = rnd.nextLong() % 1_000_000;
            l.set(k, "v" + i);
            lm.put(k, "v" + i);
        }
        scansAsSteps(l, lm, List.of(Long.MIN_VALUE, -5000L, 0L, 777L, Long.MAX_VALUE));

        PSortedMap<Bytes, Object> b = heap.newSortedMap(Bytes.class);
        TreeMap<Bytes, Object> bm = new TreeMap<>();
        for (int i = 0; i < 500; i++) {
            Bytes k = Bytes.of((byte) rnd.nextInt(), (byte) rnd.nextInt(), (byte) i);
            b.set(k, (long) i);
            bm.put(k, (long) i);
        }
        scansAsSteps(b, bm, List.of(Bytes.of(), Bytes.of((byte) 0x80), Bytes.of((byte) 0xff, (byte) 0xff)));
    }

    /* Writes of the scanning thread to entries ahead of it show, in a block
     * and outside one, as they would to single steps. */
    private void scanWhileWriting(PSortedMap<String, Object> m, TreeMap<String, Object> model) {
        Iterator<Map.Entry<String, Object>> it = m.entrySet().iterator();
        String last = null;
        int step = 0;
        while (it.hasNext()) {
            Map.Entry<String, Object> e = it.next();
            Map.Entry<String, Object> want = last == null ? model.firstEntry() : model.higherEntry(last);
            assertEquals(want, e, "step " + step + " after " + last);
            last = e.getKey();
            String ahead = model.higherKey(last);
            if (ahead != null && step % 3 == 0) {       // replace a value read ahead
                m.put(ahead, (long) -step);
                model.put(ahead, (long) -step);
            }
            String gone = ahead == null ? null : model.higherKey(ahead);
            if (gone != null && step % 4 == 1) {        // remove an entry read ahead
                m.remove(gone);
                model.remove(gone);
            }
            if (step % 5 == 2) {                        // insert right behind the next one
                String added = last + "+";
                m.put(added, "new" + step);
                model.put(added, "new" + step);
            }
            if (step % 11 == 3) {                       // remove the current entry
                it.remove();
                model.remove(last);
            }
            step++;
        }
        assertEquals(model, m);
    }

    @Test
    void sortedMapScanSeesItsThreadsWrites() {
        PSortedMap<String, Object> m = heap.newSortedMap(String.class);
        TreeMap<String, Object> model = new TreeMap<>(m.comparator());
        for (int i = 0; i < 300; i++) {
            String k = String.format("k%05d", rnd.nextInt(100_000));
            m.set(k, (long) i);
            model.put(k, (long) i);
        }
        scanWhileWriting(m, model);
        TreeMap<String, Object> before = new TreeMap<>(model);
        heap.atomic(() -> {
            model.clear();
            model.putAll(before);   // a re-run starts afresh
            scanWhileWriting(m, model);
        });
        assertEquals(model, m);
        m.check();
    }

    /** The binding's copy of the built-in class ids (uniheap.h's
     * UH_CLASS_*) names the objects libuniheap makes: a proxy made from the
     * class id in an object's header is the data type that made it, and
     * string and bytes values read back as String and byte[]. */
    @Test
    void builtInClassIdsMatchLibuniheap() {
        PMap<String, Object> map = heap.newMap(String.class);
        PSortedMap<String, Object> smap = heap.newSortedMap(String.class);
        PList<Object> list = heap.newList();
        PArray<Long> array = heap.newArray(long.class, 1);
        assertInstanceOf(PMap.class, heap.proxy(map.ref()));
        assertInstanceOf(PSortedMap.class, heap.proxy(smap.ref()));
        assertInstanceOf(PList.class, heap.proxy(list.ref()));
        assertInstanceOf(PArray.class, heap.proxy(array.ref()));
        for (PObject o : List.<PObject>of(map, smap, list, array))
            assertEquals(o.classId(), heap.proxy(o.ref()).classId(), o.className());
        list.add("s");
        list.add(new byte[] {1, 2});
        assertEquals("s", list.get(0));
        assertArrayEquals(new byte[] {1, 2}, (byte[]) list.get(1));
    }
}
