package org.uniheap.test;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.uniheap.Bytes;
import org.uniheap.ClassMismatchException;
import org.uniheap.PArray;
import org.uniheap.PList;
import org.uniheap.PMap;
import org.uniheap.PObject;
import org.uniheap.PSortedMap;
import org.uniheap.Persistent;
import org.uniheap.TypeMismatchException;
import org.uniheap.ValueRangeException;

/**
 * Java, C and Python on one heap. The C side is tests/c/prog_py_xlang.c
 * (the Python binding's cross-language program), the Python side the
 * Python binding and src/test/python/java_xlang.py.
 */
class XlangTest extends HeapTest {
    private static final String[] LABELS = {"point-0", "pünkt ✓", ""};
    /** The lengths of prog_py_xlang.c's inline-values map: up to 128 bytes
     * a hash map keeps a value in its entry, 129 is an object. */
    private static final int[] INL_LENS = {0, 1, 128, 129};

    /** n UTF-8 bytes: 'é' (2 bytes) n / 2 times, then "x" if n is odd
     * (prog_py_xlang.c's inl_text). */
    private static String inlText(int n) {
        return "é".repeat(n / 2) + (n % 2 == 1 ? "x" : "");
    }

    /** n bytes, byte i being i * 7 mod 256 (prog_py_xlang.c's inl_bytes). */
    private static byte[] inlBytes(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++)
            b[i] = (byte) (i * 7);
        return b;
    }

    /** "s<n>" -> inlText(n), "b<n>" -> inlBytes(n) for n in INL_LENS:
     * the inline-values map every side of the test makes and checks. */
    private static Map<String, Object> inlineValues() {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int n : INL_LENS) {
            m.put("s" + n, inlText(n));
            m.put("b" + n, inlBytes(n));
        }
        return m;
    }

    /** m holds inlineValues(), by get and by iteration. */
    private static void assertInlineValues(Map<String, Object> m) {
        Map<String, Object> want = inlineValues();
        assertEquals(want.size(), m.size());
        for (Map.Entry<String, Object> e : want.entrySet())
            assertValue(e.getValue(), m.get(e.getKey()), e.getKey());
        int n = 0;
        for (Map.Entry<String, Object> e : m.entrySet()) {
            assertValue(want.get(e.getKey()), e.getValue(), "iterated " + e.getKey());
            n++;
        }
        assertEquals(want.size(), n);
    }

    private static void assertValue(Object want, Object got, String what) {
        if (want instanceof byte[] b)
            assertArrayEquals(b, (byte[]) got, what);
        else
            assertEquals(want, got, what);
    }

    private Procs.Result prog(String cmd) throws Exception {
        return Procs.run(heapd, List.of(Heapd.binary("prog_py_xlang").toString(), cmd,
                heapd.socket.toString()), 60);
    }

    @Test
    void cObjectsThroughGenericProxies() throws Exception {
        Procs.Result r = prog("create");
        assertEquals(0, r.exit(), r.output());
        PObject p0 = heap.roots().get("xlang.points");
        assertEquals("xlang.Point", p0.className());
        assertEquals(List.of("x", "y", "w", "label", "next"), p0.fieldNames());
        java.util.ArrayList<PObject> points = new java.util.ArrayList<>();
        for (PObject p = p0; p != null; p = (PObject) p.getField("next"))
            points.add(p);
        assertEquals(3, points.size());
        for (int i = 0; i < 3; i++) {
            PObject pt = points.get(i);
            assertEquals((long) i + 1, pt.getField("x"));
            assertEquals(-10L * (i + 1), pt.getField("y"));
            assertEquals(1.5 * (i + 1), pt.getField("w"));
            assertEquals(LABELS[i], pt.getField("label"));
        }
        String text = points.get(1).toString();
        assertTrue(text.startsWith("xlang.Point@") && text.contains("label=\"pünkt ✓\""), text);

        PObject kinds = heap.roots().get("xlang.kinds");
        assertEquals(true, kinds.getField("flag"));
        assertEquals((byte) -128, kinds.getField("tiny"));
        assertEquals((short) 32767, kinds.getField("small"));
        assertEquals(Integer.MIN_VALUE, kinds.getField("mid"));
        assertEquals(Long.MAX_VALUE, kinds.getField("big"));
        assertEquals(0.5f, kinds.getField("ratio"));
        assertArrayEquals(new byte[] {0, 1, (byte) 0xff, 0}, (byte[]) kinds.getField("raw"));

        @SuppressWarnings("unchecked")
        PMap<String, Object> index = (PMap<String, Object>) heap.roots().get("xlang.index");
        assertEquals(String.class, index.keyType());
        assertEquals(p0, index.get("origin"));
        assertEquals(3L, index.get("count"));
        assertEquals("points", index.get("name"));
        assertEquals(0.25, index.get("ratio"));
        assertEquals(true, index.get("yes"));

        // update everything, in one block, as prog_py_xlang verify expects
        heap.atomic(() -> {
            for (PObject pt : points) {
                pt.setField("x", (Long) pt.getField("x") + 100);
                pt.setField("w", (Double) pt.getField("w") * 2);
                pt.setField("label", pt.getField("label") + "/py");
            }
            points.get(2).setField("next", points.get(0));
            kinds.setField("flag", false);
            kinds.setField("tiny", 127);
            kinds.setField("mid", Integer.MAX_VALUE);
            kinds.setField("ratio", -2.25);
            kinds.setField("raw", "py\0bytes".getBytes(StandardCharsets.UTF_8));
            kinds.setField("big", Long.MIN_VALUE);
            index.put("count", 4L);
            index.put("py", "from python");
            index.remove("yes");
            // range checks follow C's field types
            assertThrows(ValueRangeException.class, () -> kinds.setField("small", 32768));
            assertThrows(TypeMismatchException.class, () -> kinds.setField("raw", "not bytes"));
        });
        r = prog("verify");
        assertEquals(0, r.exit(), r.output());
        assertTrue(r.output().contains("verify:") && r.output().contains(" 0 failed"), r.output());
    }

    /** xlang.Point as C declares it, but y an int: a mismatch. */
    @Persistent("xlang.Point")
    interface WrongPoint extends PObject {
        long x();
        int y();
        double w();
        String label();
        PObject next();
    }

    /** xlang.Point with C's very layout: the same class. */
    @Persistent("xlang.Point")
    interface Point extends PObject {
        long x();
        void x(long v);
        long y();
        double w();
        String label();
        void label(String v);
        PObject next();
        void next(PObject v);
    }

    @Test
    void mismatchingDeclarationLeavesTheHeapAlone() throws Exception {
        assertEquals(0, prog("create").exit());
        String before = heapd.heapctl("--json", "classes");
        ClassMismatchException e = assertThrows(ClassMismatchException.class, () -> heap.create(WrongPoint.class));
        assertTrue(e.getMessage().contains("'y'"), e.getMessage());
        assertEquals(before, heapd.heapctl("--json", "classes"));
        assertThrows(ClassMismatchException.class, () -> heap.root("xlang.points", WrongPoint.class));
        // C's objects still read generically
        assertEquals(1L, heap.roots().get("xlang.points").getField("x"));
    }

    @Test
    void sameLayoutInJavaIsTheSameClass() throws Exception {
        assertEquals(0, prog("create").exit());
        Point mine = heap.create(Point.class, p -> {
            p.x(7);
            p.label("java's");
        });
        Point first = heap.root("xlang.points", Point.class);
        assertEquals(first.classId(), mine.classId());
        assertInstanceOf(Point.class, heap.proxy(mine.ref()));
        mine.next(first);
        assertEquals(1, first.x());
        assertEquals("point-0", first.label());
    }

    @Test
    void javaObjectsReadFromPythonAndC() throws Exception {
        heap.atomic(() -> {
            Person alice = heap.create(Person.class), bob = heap.create(Person.class);
            alice.name("Alice");
            alice.age(30);
            alice.score(97.5);
            alice.active(true);
            alice.tag(new byte[] {0, 'A', 0});
            alice.friend(bob);
            alice.level((byte) -5);
            alice.rank((short) 1000);
            alice.weight(0.5f);
            alice.id(1L << 40);
            bob.name("B\u00f8b \uD83D\uDC0D");
            bob.age(40);
            bob.score(-1.25);
            bob.tag(new byte[0]);
            bob.friend(alice);
            bob.level((byte) 127);
            bob.rank((short) -32768);
            bob.weight(-2.0f);
            bob.id(-1);
            heap.roots().put("pyx.alice", alice);
            PMap<String, Object> m = heap.newMap(String.class);
            m.put("alice", alice);
            m.put("bob", bob);
            m.put("n", 42L);
            m.put("pi", 3.5);
            m.put("s", "text \u2713");
            m.put("b", new byte[] {0, (byte) 0xff});
            m.put("t", true);
            m.put("none", null);
            heap.roots().put("pyx.map", m);
            PMap<Long, Object> im = heap.newMap(Long.class);
            for (long i = -5; i < 100; i++)
                im.set(i, i * i);
            heap.roots().put("pyx.imap", im);
            PSortedMap<Bytes, Object> sm = heap.newSortedMap(Bytes.class);
            List<Integer> order = new java.util.ArrayList<>(java.util.stream.IntStream.range(0, 50).boxed().toList());
            java.util.Collections.shuffle(order, new java.util.Random(3));
            for (int i : order)
                sm.put(Bytes.utf8(String.format("k%03d", i)), (long) i);
            heap.roots().put("pyx.smap", sm);
            heap.roots().put("pyx.list", heap.newList(Arrays.asList(1L, "two", 3.0, null, alice)));
            PArray<Integer> arr = heap.newArray(int.class, 5);
            for (int i = 0; i < 5; i++)
                arr.set(i, i % 2 == 0 ? i : -i);
            heap.roots().put("pyx.arr", arr);
            heap.roots().put("pyx.inline", heap.newMap(String.class, inlineValues()));
        });
        Procs.Result c = prog("check-py");
        assertEquals(0, c.exit(), c.output());
        assertTrue(c.output().contains("check-py:") && c.output().contains(" 0 failed"), c.output());

        Procs.Result py = Procs.run(heapd, Procs.python(Procs.javaTestScript("java_xlang.py"), "check-java"), 60);
        assertEquals(0, py.exit(), py.output());
        assertTrue(py.output().contains("check-java:") && py.output().contains(" 0 failed"), py.output());
        Person alice = heap.root("pyx.alice", Person.class);
        assertEquals(inlText(128) + "/py", heap.roots().get("pyx.inline").as(PMap.class).get("s128"));
        assertEquals(31, alice.age());
        assertEquals("Alice/py", alice.name());
        assertEquals("from python", heap.roots().get("pyx.map").as(PMap.class).get("py"));
    }

    /** C's hash map of string and bytes values put with uh_map_put_bytes
     * (inline up to 128 bytes): get, iteration, view, the old value of a
     * remove and of a put, and a value put back. */
    @Test
    void cInlineMapValues() throws Exception {
        assertEquals(0, prog("create").exit());
        @SuppressWarnings("unchecked")
        PMap<String, Object> m = heap.roots().get("xlang.inline").as(PMap.class);
        assertInlineValues(m);
        assertArrayEquals(inlBytes(128), m.view("b128").segment().toArray(JAVA_BYTE));
        assertEquals(inlText(128), m.remove("s128"));
        assertArrayEquals(inlBytes(1), (byte[]) m.put("b1", inlBytes(129)));
        m.put("s128", inlText(128));
        m.put("b1", inlBytes(1));
        assertInlineValues(m);
        m.check();
    }

    @Test
    void pythonObjectsThroughGenericProxies() throws Exception {
        Procs.Result py = Procs.run(heapd, Procs.python(Procs.javaTestScript("java_xlang.py"), "create-py"), 60);
        assertEquals(0, py.exit(), py.output());
        PObject g = heap.roots().get("pyj.gadget");
        assertEquals("py.Gadget", g.className());
        assertEquals("gizmo", g.getField("name"));
        assertEquals(3, g.getField("size"));
        assertEquals(1.25, g.getField("weight"));
        assertEquals(Arrays.asList(1L, "two", null), g.getField("parts"));
        assertEquals(g, g.getField("owner"));
        g.setField("size", 4);
        assertThrows(ValueRangeException.class, () -> g.setField("size", 1L << 33));
        assertEquals(4, g.getField("size"));
        @SuppressWarnings("unchecked")
        Map<String, Object> inl = heap.roots().get("pyj.inline").as(PMap.class);
        assertInlineValues(inl);
    }
}
