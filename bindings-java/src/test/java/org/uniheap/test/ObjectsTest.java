package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.uniheap.Block;
import org.uniheap.FreedObjectException;
import org.uniheap.PList;
import org.uniheap.PMap;
import org.uniheap.PObject;
import org.uniheap.TypeMismatchException;
import org.uniheap.ValueRangeException;

/** Fields of every type, references, cycles, graphs, generic access. */
class ObjectsTest extends HeapTest {
    @Test
    void newObjectIsZeroed() {
        Kinds k = heap.create(Kinds.class);
        assertFalse(k.flag());
        assertEquals(0, k.tiny());
        assertEquals(0, k.small());
        assertEquals(0, k.mid());
        assertEquals(0L, k.big());
        assertEquals(0f, k.ratio());
        assertEquals(0d, k.w());
        assertNull(k.label());
        assertNull(k.raw());
        assertNull(k.any());
        assertNull(k.next());
        assertNull(k.index());
    }

    @Test
    void everyFieldTypeAtItsBoundaries() {
        Kinds k = heap.create(Kinds.class);
        for (boolean v : new boolean[] {true, false}) {
            k.flag(v);
            assertEquals(v, k.flag());
        }
        for (byte v : new byte[] {Byte.MIN_VALUE, -1, 0, 1, Byte.MAX_VALUE}) {
            k.tiny(v);
            assertEquals(v, k.tiny());
        }
        for (short v : new short[] {Short.MIN_VALUE, -1, 0, 1, Short.MAX_VALUE}) {
            k.small(v);
            assertEquals(v, k.small());
        }
        for (int v : new int[] {Integer.MIN_VALUE, -1, 0, 1, Integer.MAX_VALUE}) {
            k.mid(v);
            assertEquals(v, k.mid());
        }
        for (long v : new long[] {Long.MIN_VALUE, -1, 0, 1, Long.MAX_VALUE}) {
            k.big(v);
            assertEquals(v, k.big());
        }
        for (float v : new float[] {Float.MIN_VALUE, -0f, Float.MAX_VALUE, Float.NEGATIVE_INFINITY, 1.5f}) {
            k.ratio(v);
            assertEquals(v, k.ratio());
        }
        k.ratio(Float.NaN);
        assertTrue(Float.isNaN(k.ratio()));
        for (double v : new double[] {Double.MIN_VALUE, -0d, Double.MAX_VALUE, Double.POSITIVE_INFINITY, Math.PI}) {
            k.w(v);
            assertEquals(v, k.w());
        }
        for (String v : new String[] {"", "a", "pünkt ✓", "snake 🐍", "x".repeat(100_000), null}) {
            k.label(v);
            assertEquals(v, k.label());
        }
        for (byte[] v : new byte[][] {{}, {0}, {0, 1, (byte) 0xff, 0}, new byte[70_000], null}) {
            k.raw(v);
            assertArrayEquals(v, k.raw());
        }
        // each field kept its value while the others changed
        k.big(42);
        k.label("kept");
        k.mid(7);
        assertEquals(42, k.big());
        assertEquals("kept", k.label());
        assertEquals(7, k.mid());
    }

    @Test
    void sameValuesInsideABlock() {
        Kinds k = heap.create(Kinds.class);
        heap.atomic(() -> {
            k.flag(true);
            k.tiny((byte) -5);
            k.small((short) 300);
            k.mid(-70000);
            k.big(1L << 40);
            k.ratio(0.25f);
            k.w(-2.5);
            k.label("in block");
            k.raw(new byte[] {9, 8});
            // a block reads its own writes
            assertTrue(k.flag());
            assertEquals(-5, k.tiny());
            assertEquals(300, k.small());
            assertEquals(-70000, k.mid());
            assertEquals(1L << 40, k.big());
            assertEquals(0.25f, k.ratio());
            assertEquals(-2.5, k.w());
            assertEquals("in block", k.label());
            assertArrayEquals(new byte[] {9, 8}, k.raw());
        });
        assertEquals("in block", k.label());
        assertEquals(1L << 40, k.big());
    }

    @Test
    void stringFieldOwnsItsValue() {
        Kinds k = heap.create(Kinds.class);
        long frees = heap.stats().frees();
        k.label("first");
        k.label("second");      // frees "first"
        k.label(null);          // frees "second"
        assertNull(k.label());
        assertEquals(frees + 2, heap.stats().frees());
    }

    @Test
    void referencesAndCycles() {
        Kinds a = heap.create(Kinds.class), b = heap.create(Kinds.class);
        a.next(b);
        b.next(a);
        a.any(b);
        assertEquals(b, a.next());
        assertEquals(a, a.next().next());
        assertEquals(b, a.any());
        assertInstanceOf(Kinds.class, a.any());
        Account acc = heap.create(Account.class);
        a.any(acc);
        assertInstanceOf(Account.class, a.any());
        a.next(null);
        assertNull(a.next());
    }

    @Test
    void collectionFields() {
        Kinds k = heap.create(Kinds.class);
        PMap<String, Object> m = heap.newMap(String.class);
        m.put("one", 1L);
        k.index(m);
        PList<Long> l = heap.newList(List.of(1L, 2L, 3L));
        k.items(l);
        assertEquals(1L, k.index().get("one"));
        assertEquals(List.of(1L, 2L, 3L), k.items());
    }

    @Test
    void largeGraph() {
        // a binary search tree of 20000 random keys, built in blocks
        Random rnd = new Random(7);
        List<Long> keys = new ArrayList<>();
        TreeNode root = heap.create(TreeNode.class, n -> n.value(500_000));
        for (int batch = 0; batch < 40; batch++) {
            heap.atomic(() -> {
                for (int i = 0; i < 500; i++) {
                    long v = rnd.nextInt(1_000_000);
                    keys.add(v);
                    insert(root, v);
                }
            });
        }
        heap.roots().put("objects.tree", root);
        long[] count = {0};
        long[] prev = {Long.MIN_VALUE};
        walk(heap.root("objects.tree", TreeNode.class), v -> {
            assertTrue(v >= prev[0]);
            prev[0] = v;
            count[0]++;
        });
        assertEquals(keys.size() + 1, count[0]);
        assertTrue(heap.check() >= count[0]);
    }

    private TreeNode insert(TreeNode at, long v) {
        for (;;) {
            if (v < at.value()) {
                if (at.left() == null) {
                    TreeNode n = heap.create(TreeNode.class);
                    n.value(v);
                    at.left(n);
                    return n;
                }
                at = at.left();
            } else {
                if (at.right() == null) {
                    TreeNode n = heap.create(TreeNode.class);
                    n.value(v);
                    at.right(n);
                    return n;
                }
                at = at.right();
            }
        }
    }

    private static void walk(TreeNode n, java.util.function.LongConsumer f) {
        java.util.ArrayDeque<TreeNode> stack = new java.util.ArrayDeque<>();
        while (n != null || !stack.isEmpty()) {
            while (n != null) {
                stack.push(n);
                n = n.left();
            }
            n = stack.pop();
            f.accept(n.value());
            n = n.right();
        }
    }

    @Test
    void inheritance() {
        Savings s = heap.create(Savings.class);
        s.owner("bea");
        s.balance(10);
        s.rate(0.5);
        s.deposit(5);           // Account's default method
        assertEquals(15, s.balance());
        assertEquals(List.of("owner", "balance", "rate"), s.fieldNames());
        assertEquals("jt.Savings", s.className());
        Account a = s;          // a Savings is an Account in Java
        assertEquals("bea", a.owner());
        assertNotEquals(heap.create(Account.class).classId(), s.classId());
    }

    @Test
    void genericAccessByName() {
        Kinds k = heap.create(Kinds.class);
        k.setField("big", 5L);
        k.setField("mid", 6);
        k.setField("tiny", (byte) 7);
        k.setField("w", 1.5);
        k.setField("ratio", 2);
        k.setField("flag", true);
        k.setField("label", "x");
        k.setField("raw", new byte[] {1});
        k.setField("next", k);
        assertEquals(5L, k.getField("big"));
        assertEquals(6, k.getField("mid"));
        assertEquals((byte) 7, k.getField("tiny"));
        assertEquals(1.5, k.getField("w"));
        assertEquals(2f, k.getField("ratio"));
        assertEquals(true, k.getField("flag"));
        assertEquals("x", k.getField("label"));
        assertArrayEquals(new byte[] {1}, (byte[]) k.getField("raw"));
        assertEquals(k, k.getField("next"));
        assertThrows(ValueRangeException.class, () -> k.setField("tiny", 128));
        assertThrows(ValueRangeException.class, () -> k.setField("mid", 1L << 40));
        assertThrows(TypeMismatchException.class, () -> k.setField("big", "5"));
        assertThrows(TypeMismatchException.class, () -> k.setField("label", 5));
        assertThrows(org.uniheap.NotFoundException.class, () -> k.getField("nope"));
        String s = k.toString();
        assertTrue(s.startsWith("jt.Kinds@"), s);
        assertTrue(s.contains("label=\"x\"") && s.contains("big=5"), s);
    }

    @Test
    void proxiesByReference() {
        Account a = heap.create(Account.class, x -> x.owner("ref"));
        PObject p = heap.proxy(a.ref());
        assertEquals(a, p);
        assertInstanceOf(Account.class, p);
        assertEquals(a.hashCode(), p.hashCode());
        assertTrue(p.isLive());
    }

    @Test
    void freedObjectsThrow() {
        Account a = heap.create(Account.class);
        Account same = heap.proxy(a.ref()).as(Account.class);
        heap.free(a);
        assertFalse(a.isLive());
        assertThrows(FreedObjectException.class, a::balance);
        assertThrows(FreedObjectException.class, () -> same.balance(3));
        assertThrows(FreedObjectException.class, () -> heap.proxy(a.ref()));
        assertThrows(FreedObjectException.class, () -> heap.free(a));
        assertTrue(a.toString().endsWith("(freed)"));
        // freed inside a block: at commit
        Account b = heap.create(Account.class);
        try (Block blk = heap.begin()) {
            heap.free(b);
            blk.commit();
        }
        assertThrows(FreedObjectException.class, b::owner);
    }

    @Test
    void readOnlyConnection() {
        Account a = heap.create(Account.class, x -> x.balance(9));
        heap.roots().put("objects.ro", a);
        var ro = connect(org.uniheap.Heap.Option.READ_ONLY);
        Account r = ro.root("objects.ro", Account.class);
        assertEquals(9, r.balance());
        assertThrows(org.uniheap.ReadOnlyException.class, () -> r.balance(10));
        assertThrows(org.uniheap.ReadOnlyException.class, () -> ro.create(Account.class));
        assertEquals(9, ro.atomic(() -> r.balance()));
    }
}
