package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.uniheap.PMap;
import org.uniheap.PObject;
import org.uniheap.PSortedMap;
import org.uniheap.RecordImage;
import org.uniheap.FreedObjectException;
import org.uniheap.InvalidValueException;
import org.uniheap.NotFoundException;
import org.uniheap.TypeMismatchException;
import org.uniheap.ValueRangeException;

/** PMap.fieldValues(key) and PSortedMap.fieldValues(key): the fields of the
 * record stored under a key in one call, as get(key).fieldValues(); and
 * setField(key, field, value), an inline field of that record written in
 * one call; and putRecord(key, type, values, freeOld), a new record stored
 * in one call; and PSortedMap.scanFieldValues(from, count), the records of
 * a key range; and recordImage(key), the record under a key copied into
 * one array with its inline fields' places, and scanImages(from, count),
 * the records of a key range so. */
class MapFieldValuesTest extends HeapTest {
    private static void assertSameValues(Object[] want, Object[] got) {
        assertNotNull(got);
        assertEquals(want.length, got.length);
        for (int i = 0; i < want.length; i++) {
            if (want[i] instanceof byte[] b)
                assertArrayEquals(b, (byte[]) got[i], "field " + i);
            else
                assertEquals(want[i], got[i], "field " + i);
        }
    }

    private InlineRec inline(String blob) {
        return heap.create(InlineRec.class, x -> {
            x.key(7);
            x.blob(blob.getBytes());
            x.flag((byte) -3);
            x.text("hé");
        });
    }

    @Test
    void sortedMapReadsAnInlineRecord() {
        PSortedMap<String, PObject> m = heap.newSortedMap(String.class);
        InlineRec r = inline("0123456789");
        m.put("k", r);
        Object[] v = m.fieldValues("k");
        assertSameValues(r.fieldValues(), v);
        assertEquals(List.of("key", "blob", "flag", "text"), r.fieldNames());
        assertEquals(7L, v[0]);
        assertArrayEquals("0123456789".getBytes(), (byte[]) v[1]);
        assertEquals((byte) -3, v[2]);
        assertEquals("hé", v[3]);
        assertNull(m.fieldValues("absent"));
    }

    @Test
    void hashMapReadsAnInlineRecord() {
        PMap<String, PObject> m = heap.newMap(String.class);
        InlineRec r = inline("abc");
        m.put("k", r);
        assertSameValues(r.fieldValues(), m.fieldValues("k"));
        assertNull(m.fieldValues("absent"));
    }

    @Test
    void outOfLineValuesAndRefsAsFieldValues() {
        PSortedMap<Long, PObject> m = heap.newSortedMap(Long.class);
        Person friend = heap.create(Person.class, p -> p.name("bo"));
        Person p = heap.create(Person.class, x -> {
            x.name("ada");
            x.tag(new byte[] {1, 2});
            x.friend(friend);
            x.age(36);
        });
        m.put(1L, p);
        Object[] v = m.fieldValues(1L);
        assertSameValues(p.fieldValues(), v);
        List<String> names = p.fieldNames();
        assertEquals("ada", v[names.indexOf("name")]);
        assertEquals(friend, v[names.indexOf("friend")]);
    }

    @Test
    void aValueThatIsNoRecordIsRefused() {
        PSortedMap<String, Object> m = heap.newSortedMap(String.class);
        m.put("n", 5L);
        m.put("s", "text");
        m.put("list", heap.newList(List.of(1L)));
        assertThrows(TypeMismatchException.class, () -> m.fieldValues("n"));
        assertThrows(TypeMismatchException.class, () -> m.fieldValues("s"));
        assertThrows(TypeMismatchException.class, () -> m.fieldValues("list"));
        assertThrows(ClassCastException.class, () -> m.fieldValues(5L));
        assertThrows(NullPointerException.class, () -> m.fieldValues(null));
    }

    @Test
    void insideABlockItSeesTheBlocksWrites() {
        PSortedMap<String, PObject> m = heap.newSortedMap(String.class);
        InlineRec r = inline("before");
        m.put("k", r);
        heap.atomic(() -> {
            r.blob("inside".getBytes());
            assertArrayEquals("inside".getBytes(), (byte[]) m.fieldValues("k")[1]);
            InlineRec n = inline("new");
            m.put("k2", n);
            assertArrayEquals("new".getBytes(), (byte[]) m.fieldValues("k2")[1]);
        });
        assertArrayEquals("inside".getBytes(), (byte[]) m.fieldValues("k")[1]);
    }

    @Test
    void setFieldWritesAnInlineFieldOfTheRecordUnderAKey() {
        PSortedMap<String, Object> m = heap.newSortedMap(String.class);
        InlineRec r = inline("before");
        m.put("k", r);
        m.put("n", 5L);
        assertTrue(m.setField("k", "blob", "after".getBytes()));
        assertArrayEquals("after".getBytes(), r.blob());
        assertTrue(m.setField("k", "text", "ok"));
        assertEquals("ok", r.text());
        assertFalse(m.setField("absent", "blob", new byte[1]));
        assertThrows(ValueRangeException.class, () -> m.setField("k", "blob", new byte[11]));
        assertThrows(InvalidValueException.class, () -> m.setField("k", "nope", new byte[1]));
        assertThrows(TypeMismatchException.class, () -> m.setField("k", "key", new byte[1]));
        assertThrows(TypeMismatchException.class, () -> m.setField("n", "blob", new byte[1]));
        assertThrows(TypeMismatchException.class, () -> m.setField("k", "blob", 5L));
        assertArrayEquals("after".getBytes(), r.blob());
        assertThrows(IllegalStateException.class, () -> heap.atomic(() -> {
            m.setField("k", "blob", "inside".getBytes());
            assertArrayEquals("inside".getBytes(), (byte[]) m.fieldValues("k")[1]);
            throw new IllegalStateException("roll back");
        }));
        assertArrayEquals("after".getBytes(), r.blob());
        PMap<Long, PObject> h = heap.newMap(Long.class);
        h.put(1L, r);
        assertTrue(h.setField(1L, "blob", "hash".getBytes()));
        assertArrayEquals("hash".getBytes(), (byte[]) h.fieldValues(1L)[1]);
    }

    @Test
    void putRecordStoresANewRecordInOneCall() {
        PSortedMap<String, PObject> m = heap.newSortedMap(String.class);
        m.putRecord("k", InlineRec.class, Map.of("blob", "abc".getBytes(), "text", "hé"), false);
        InlineRec r = m.get("k").as(InlineRec.class);
        assertArrayEquals("abc".getBytes(), r.blob());
        assertEquals("hé", r.text());
        assertEquals(0L, r.key());                 // not given: zero
        // replaced: the old record lives on, unless freeOld
        m.putRecord("k", InlineRec.class, Map.of("blob", "2".getBytes()), false);
        assertArrayEquals("abc".getBytes(), r.blob());
        InlineRec second = m.get("k").as(InlineRec.class);
        m.putRecord("k", InlineRec.class, Map.of("blob", "3".getBytes()), true);
        assertThrows(FreedObjectException.class, second::blob);
        assertArrayEquals("3".getBytes(), (byte[]) m.fieldValues("k")[1]);
        heap.free(r);
        // refused, nothing stored
        assertThrows(ValueRangeException.class,
                () -> m.putRecord("x", InlineRec.class, Map.of("blob", new byte[11]), false));
        assertThrows(TypeMismatchException.class,
                () -> m.putRecord("x", InlineRec.class, Map.of("key", 5L), false));
        assertThrows(TypeMismatchException.class,
                () -> m.putRecord("x", InlineRec.class, Map.of("text", new byte[1]), false));
        assertThrows(NotFoundException.class,
                () -> m.putRecord("x", InlineRec.class, Map.of("nope", new byte[1]), false));
        assertNull(m.get("x"));
        // in a block: rolled back with it
        assertThrows(IllegalStateException.class, () -> heap.atomic(() -> {
            m.putRecord("y", InlineRec.class, Map.of("text", "in"), false);
            assertEquals("in", m.fieldValues("y")[3]);
            throw new IllegalStateException("roll back");
        }));
        assertNull(m.get("y"));
        PMap<Long, PObject> h = heap.newMap(Long.class);
        h.putRecord(1L, InlineRec.class, Map.of("blob", "hash".getBytes()), true);
        assertArrayEquals("hash".getBytes(), (byte[]) h.fieldValues(1L)[1]);
    }

    @Test
    void scanFieldValuesReadsTheRecordsOfARange() {
        PSortedMap<String, PObject> m = heap.newSortedMap(String.class);
        for (int i = 0; i < 100; i++)   // several leaves
            m.putRecord(String.format("k%03d", i), InlineRec.class,
                    Map.of("blob", ("v" + i).getBytes(), "text", "t" + (i % 10)), false);
        List<Object[]> got = m.scanFieldValues("k010", 50);
        assertEquals(50, got.size());
        for (int i = 0; i < 50; i++)
            assertSameValues(m.fieldValues(String.format("k%03d", 10 + i)), got.get(i));
        assertEquals(100, m.scanFieldValues(null, 1000).size());
        assertEquals(List.of(), m.scanFieldValues("k5", 10));      // past the last key
        assertEquals(List.of(), m.scanFieldValues("k000", 0));
        assertArrayEquals("v99".getBytes(), (byte[]) m.scanFieldValues("k099", 5).get(0)[1]);
        // a record with out-of-line values and a reference, between inline ones
        Person p = heap.create(Person.class, x -> {
            x.name("ada");
            x.friend(heap.create(Person.class, f -> f.name("bo")));
        });
        m.put("k0105", p);
        got = m.scanFieldValues("k010", 3);
        assertSameValues(m.fieldValues("k010"), got.get(0));
        assertSameValues(p.fieldValues(), got.get(1));
        assertSameValues(m.fieldValues("k011"), got.get(2));
        // in a block: the block's writes
        heap.atomic(() -> {
            m.setField("k010", "blob", "inside".getBytes());
            m.remove("k011");
            List<Object[]> in = m.scanFieldValues("k010", 3);
            assertArrayEquals("inside".getBytes(), (byte[]) in.get(0)[1]);
            assertSameValues(m.fieldValues("k012"), in.get(2));
        });
        @SuppressWarnings("unchecked")
        PSortedMap<String, Object> any = (PSortedMap<String, Object>) (PSortedMap<String, ?>) m;
        any.put("k0101", 5L);
        assertThrows(TypeMismatchException.class, () -> m.scanFieldValues("k010", 3));
        assertThrows(ClassCastException.class, () -> m.scanFieldValues(5L, 3));
    }

    private static byte[] slice(RecordImage img, int field) {
        return java.util.Arrays.copyOfRange(img.array(), img.offset(field),
                img.offset(field) + img.length(field));
    }

    @Test
    void recordImageHoldsTheInlineFieldsInOneArray() {
        PSortedMap<String, PObject> m = heap.newSortedMap(String.class);
        m.put("k", inline("0123456789"));
        RecordImage img = m.recordImage("k");
        assertEquals("t.inline.JRec", img.className());
        assertEquals(List.of("key", "blob", "flag", "text"), img.fieldNames());
        assertEquals(1, img.fieldIndex("blob"));
        assertArrayEquals("0123456789".getBytes(), slice(img, 1));
        assertEquals(10, img.length(1));
        assertArrayEquals("hé".getBytes(java.nio.charset.StandardCharsets.UTF_8), slice(img, 3));
        assertThrows(TypeMismatchException.class, () -> img.offset(0));   // not inline
        assertThrows(TypeMismatchException.class, () -> img.length(2));
        assertThrows(NotFoundException.class, () -> img.fieldIndex("nope"));
        assertNull(m.recordImage("absent"));
        // the image is the caller's: later writes do not change it
        m.setField("k", "blob", "x".getBytes());
        assertArrayEquals("0123456789".getBytes(), slice(img, 1));
        assertArrayEquals("x".getBytes(), slice(m.recordImage("k"), 1));
        // an empty inline field, from putRecord
        m.putRecord("p", InlineRec.class, Map.of("text", "in"), true);
        RecordImage p = m.recordImage("p");
        assertEquals(0, p.length(1));
        assertArrayEquals("in".getBytes(), slice(p, 3));
        // in a block: the block's own writes
        heap.atomic(() -> {
            m.setField("k", "blob", "inside".getBytes());
            assertArrayEquals("inside".getBytes(), slice(m.recordImage("k"), 1));
        });
        // not a record
        @SuppressWarnings("unchecked")
        PSortedMap<String, Object> any = (PSortedMap<String, Object>) (PSortedMap<String, ?>) m;
        any.put("n", 5L);
        assertThrows(TypeMismatchException.class, () -> m.recordImage("n"));
        assertThrows(ClassCastException.class, () -> m.recordImage(5L));
    }

    private static void assertSameImage(RecordImage want, RecordImage got) {
        assertNotNull(got);
        assertEquals(want.className(), got.className());
        assertArrayEquals(want.array(), got.array());
    }

    @Test
    void scanImagesCopiesTheRecordsOfARange() {
        PSortedMap<String, PObject> m = heap.newSortedMap(String.class);
        for (int i = 0; i < 100; i++)   // several leaves
            m.putRecord(String.format("k%03d", i), InlineRec.class,
                    Map.of("blob", ("v" + i).getBytes(), "text", "t" + (i % 10)), false);
        List<RecordImage> got = m.scanImages("k010", 50);
        assertEquals(50, got.size());
        for (int i = 0; i < 50; i++)
            assertSameImage(m.recordImage(String.format("k%03d", 10 + i)), got.get(i));
        assertEquals(100, m.scanImages(null, 1000).size());
        assertEquals(List.of(), m.scanImages("k5", 10));      // past the last key
        assertEquals(List.of(), m.scanImages("k000", 0));
        assertArrayEquals("v99".getBytes(), slice(m.scanImages("k099", 5).get(0), 1));
        // each image is the caller's: a later write changes none
        m.setField("k010", "blob", "later".getBytes());
        assertArrayEquals("v10".getBytes(), slice(got.get(0), 1));
        // a record with out-of-line values, and one wider than the records
        // buffer (read by its key), between inline ones
        Person p = heap.create(Person.class, x -> {
            x.name("ada");
            x.friend(heap.create(Person.class, f -> f.name("bo")));
        });
        m.put("k0105", p);
        byte[] big = new byte[20000];
        for (int i = 0; i < 3; i++) {   // the third ends past the buffer's 48 KiB
            java.util.Arrays.fill(big, (byte) i);
            m.putRecord("k011" + (5 + i), WideInlineRec.class, Map.of("blob", big), true);
        }
        got = m.scanImages("k010", 7);
        assertEquals(7, got.size());
        assertSameImage(m.recordImage("k010"), got.get(0));
        assertSameImage(m.recordImage("k0105"), got.get(1));
        assertEquals(p.className(), got.get(1).className());
        assertSameImage(m.recordImage("k011"), got.get(2));
        for (int i = 0; i < 3; i++) {
            java.util.Arrays.fill(big, (byte) i);
            assertArrayEquals(big, slice(got.get(3 + i), 1));
        }
        assertSameImage(m.recordImage("k012"), got.get(6));
        // in a block: the block's writes
        heap.atomic(() -> {
            m.setField("k010", "blob", "inside".getBytes());
            m.remove("k011");
            List<RecordImage> in = m.scanImages("k010", 6);
            assertArrayEquals("inside".getBytes(), slice(in.get(0), 1));
            assertSameImage(m.recordImage("k0117"), in.get(4));
            assertSameImage(m.recordImage("k012"), in.get(5));
        });
        @SuppressWarnings("unchecked")
        PSortedMap<String, Object> any = (PSortedMap<String, Object>) (PSortedMap<String, ?>) m;
        any.put("k0101", 5L);
        assertThrows(TypeMismatchException.class, () -> m.scanImages("k010", 3));
        assertThrows(ClassCastException.class, () -> m.scanImages(5L, 3));
    }

    @Test
    void hashMapRecordImageAndOneWiderThanTheScratch() {
        PMap<Long, PObject> h = heap.newMap(Long.class);
        h.putRecord(1L, InlineRec.class, Map.of("blob", "hash".getBytes(), "text", "t"), true);
        assertArrayEquals("hash".getBytes(), slice(h.recordImage(1L), 1));
        assertNull(h.recordImage(2L));
        byte[] big = new byte[20000];
        for (int i = 0; i < big.length; i++)
            big[i] = (byte) i;
        PSortedMap<String, PObject> m = heap.newSortedMap(String.class);
        m.putRecord("w", WideInlineRec.class, Map.of("blob", big), true);
        RecordImage img = m.recordImage("w");
        assertArrayEquals(big, slice(img, 1));
        assertArrayEquals(m.get("w").as(WideInlineRec.class).blob(), slice(img, 1));
        // a field write past the scratch too
        byte[] other = java.util.Arrays.copyOf(big, 19999);
        other[0] = 42;
        assertTrue(m.setField("w", "blob", other));
        assertArrayEquals(other, slice(m.recordImage("w"), 1));
        assertArrayEquals(big, slice(img, 1));
    }
}
