package org.uniheap;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

/**
 * Values.from, the decoding of a uh_value, on type codes alone: a type this
 * binding does not know is an error naming it, never a null; a stored null
 * (a null reference, string or bytes) is null. None of these reads the
 * heap, so no heap is given.
 */
class ValuesTest {
    /** No libuniheap type has these codes: 0 is uh_value's "none" (an
     * empty slot), 13 the first past UH_T_IBYTES, 99 and -1 far off. */
    private static final int[] UNKNOWN = {0, 13, 99, -1};

    @Test
    void unknownTypeIsAnErrorNamingIt() {
        for (int type : UNKNOWN) {
            UniheapException e = assertThrows(UniheapException.class, () -> Values.from(null, type, 0L));
            // the class the binding throws for other damage or format
            // problems it finds itself (ProxyBase: a field of unknown type)
            assertEquals(UniheapException.class, e.getClass());
            assertEquals(0, e.code());
            assertTrue(e.getMessage().startsWith("value type " + type
                    + " is not one this binding knows: upgrade the Java binding"), e.getMessage());
            assertTrue(e.getMessage().contains("heapctl check"), e.getMessage());
        }
        // whatever its bits and where: never taken for a null
        UniheapException e = assertThrows(UniheapException.class, () -> Values.from(null, 99, 42L, 7));
        assertTrue(e.getMessage().contains("value type 99"), e.getMessage());
    }

    @Test
    void storedNullIsNull() {
        assertNull(Values.from(null, Values.REF, 0L));
        assertNull(Values.from(null, Values.STRING, 0L));
        assertNull(Values.from(null, Values.BYTES, 0L));
        assertNull(Values.from(null, Values.REF, 0L, 0));
    }

    @Test
    void knownScalarsStillDecode() {
        assertEquals(Boolean.TRUE, Values.from(null, Values.BOOL, 1L));
        assertEquals((byte) -2, Values.from(null, Values.I8, -2L));
        assertEquals((short) 300, Values.from(null, Values.I16, 300L));
        assertEquals(7, Values.from(null, Values.I32, 7L));
        assertEquals(1L << 40, Values.from(null, Values.I64, 1L << 40));
        assertEquals(1.5f, Values.from(null, Values.F32, Double.doubleToRawLongBits(1.5)));
        assertEquals(2.25, Values.from(null, Values.F64, Double.doubleToRawLongBits(2.25)));
    }

    @Test
    void knownCodesMatchFieldType() {
        for (int type = -1; type <= 14; type++)
            assertEquals(FieldType.of(type) != null, Values.known(type), "type " + type);
    }
}
