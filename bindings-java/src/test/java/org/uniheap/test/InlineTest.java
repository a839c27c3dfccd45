package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Map;

import org.junit.jupiter.api.Test;
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
}
