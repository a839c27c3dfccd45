package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.uniheap.FreedObjectException;
import org.uniheap.Heap;
import org.uniheap.PObject;
import org.uniheap.TypeMismatchException;
import org.uniheap.ValueRangeException;

/** Inline string and bytes fields (@Inline): layout, round trips in and
 * out of blocks, the refusal of a value past the capacity, fieldValues. */
class InlineTest extends HeapTest {
    @Test
    void roundTripsAndLayout() {
        InlineRec r = heap.create(InlineRec.class, x -> {
            x.key(7);
            x.blob("0123456789".getBytes());
            x.text("hé");
        });
        assertArrayEquals("0123456789".getBytes(), r.blob());
        assertEquals("hé", r.text());
        InlineRec fresh = heap.create(InlineRec.class);
        assertArrayEquals(new byte[0], fresh.blob());
        assertEquals("", fresh.text());
        r.blob(new byte[] {1, 2, 3});
        assertArrayEquals(new byte[] {1, 2, 3}, r.blob());
        Map<String, Object> m = r.fieldMap();
        assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) m.get("blob"));
        assertEquals("hé", m.get("text"));
        assertEquals(7L, m.get("key"));
    }

    @Test
    void blocksSeeTheirWritesAndRollBack() {
        InlineRec r = heap.create(InlineRec.class, x -> x.blob("before".getBytes()));
        assertThrows(IllegalStateException.class, () -> heap.atomic(() -> {
            r.blob("inside".getBytes());
            assertArrayEquals("inside".getBytes(), r.blob());
            assertArrayEquals("inside".getBytes(), (byte[]) r.fieldValues()[1]);
            throw new IllegalStateException("roll back");
        }));
        assertArrayEquals("before".getBytes(), r.blob());
    }

    @Test
    void tooLongIsRefusedNamingFieldCapacityLength() {
        InlineRec r = heap.create(InlineRec.class, x -> x.blob("keep".getBytes()));
        ValueRangeException e = assertThrows(ValueRangeException.class, () -> r.blob(new byte[11]));
        assertTrue(e.getMessage().contains("blob") && e.getMessage().contains("10")
                && e.getMessage().contains("11"), e.getMessage());
        assertArrayEquals("keep".getBytes(), r.blob());
        assertThrows(ValueRangeException.class, () -> r.text("ééé"));
        assertThrows(TypeMismatchException.class, () -> r.blob(null));
        PObject p = r;
        p.setField("blob", "set".getBytes());
        assertArrayEquals("set".getBytes(), (byte[]) p.getField("blob"));
    }

    /** A record of inline fields only is read whole in the session's scratch:
     * the same values as its getters, from this connection and another, in
     * and outside a block; a freed one throws; one wider than the scratch
     * reads the same. */
    @Test
    void fieldValuesOfARecordOfInlineFieldsOnly() {
        InlineRec r = heap.create(InlineRec.class, x -> {
            x.key(-3);
            x.blob("0123456789".getBytes());
            x.flag((byte) 4);
            x.text("hé");
        });
        Object[] v = r.fieldValues();
        assertEquals(-3L, v[0]);
        assertArrayEquals("0123456789".getBytes(), (byte[]) v[1]);
        assertEquals((byte) 4, v[2]);
        assertEquals("hé", v[3]);
        Heap other = connect();
        InlineRec there = other.proxy(r.ref()).as(InlineRec.class);
        assertArrayEquals("0123456789".getBytes(), (byte[]) there.fieldValues()[1]);
        assertEquals("hé", other.atomic(() -> there.fieldValues()[3]));
        heap.free(r);
        assertThrows(FreedObjectException.class, r::fieldValues);
        assertThrows(FreedObjectException.class, there::fieldValues);

        byte[] big = new byte[20000];
        for (int i = 0; i < big.length; i++)
            big[i] = (byte) (i * 31);
        WideInlineRec w = heap.create(WideInlineRec.class, x -> {
            x.key(9);
            x.blob(big);
        });
        assertEquals(9L, w.fieldValues()[0]);
        assertArrayEquals(big, (byte[]) w.fieldValues()[1]);
        assertArrayEquals(big, (byte[]) heap.atomic(() -> w.fieldValues()[1]));
    }
}
