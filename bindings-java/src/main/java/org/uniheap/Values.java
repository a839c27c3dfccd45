package org.uniheap;

import java.nio.charset.StandardCharsets;

/**
 * Java values <-> libuniheap's uh_value, the values of collections.
 *
 * <p>A value keeps its Java type across the heap: {@code Boolean Byte Short
 * Integer Long Float Double} travel as bool, i8, i16, i32, i64, f32, f64;
 * {@code String} and {@code byte[]} (or {@link Bytes}) become string and
 * bytes objects owned by the slot that holds them (a hash map keeps one of
 * up to 128 bytes in its entry instead: {@link MapOps#put}); proxies are
 * references; null is a null reference. Nothing else is stored.
 */
final class Values {
    private Values() {
    }

    static final int BOOL = 1, I8 = 2, I16 = 3, I32 = 4, I64 = 5, F32 = 6, F64 = 7, REF = 8,
            STRING = 9, BYTES = 10;
    /** A string or bytes value a hash map keeps in its entry (uniheap.h's
     * uh_value): the entry's reference, and where its bytes lie in it. */
    static final int ISTRING = 11, IBYTES = 12;

    /** True for a type code this binding decodes (BOOL..IBYTES). 0 is
     * uh_value's "none" (an empty slot), never a stored value. */
    static boolean known(int type) {
        return type >= BOOL && type <= IBYTES;
    }

    /**
     * The error for a type code from the heap that this binding does not
     * know: a newer libuniheap's type, or damage. Never decoded as
     * anything (a stored null is a null reference, string or bytes).
     * @param where what was being read ("bank.Account.x", "map value"), or null
     * @param noun what the code is ("value type", "map key kind")
     */
    static UniheapException unknown(String where, String noun, int code) {
        return new UniheapException((where == null ? "" : where + ": ") + noun + " " + code
                + " is not one this binding knows: upgrade the Java binding (a newer libuniheap "
                + "may have written it), or check the heap for damage (heapctl check)");
    }

    /** type, when {@link #known}; else {@link #unknown} is thrown. */
    static int checkKnown(int type, String where) {
        if (!known(type))
            throw unknown(where, "value type", type);
        return type;
    }

    /** True for a string or bytes value, in an object of its own or inline:
     * a value to copy before the step that frees it commits. */
    static boolean isBlob(int type) {
        return type >= STRING && type <= IBYTES;
    }

    /** A string or bytes value that changed while it was being copied. */
    static final Object CHANGED = new Object();

    /** True when storing o allocates (it must be inside a step). */
    static boolean allocates(Object o) {
        return o instanceof String || o instanceof byte[] || o instanceof Bytes;
    }

    /**
     * Write o as the uh_value at s.scratch[off]. want: the element type a
     * slot requires (arrays), 0 for any. A String or bytes is allocated
     * here, so call it inside a step.
     * @throws TypeMismatchException if o cannot be stored (there)
     */
    static void to(Heap heap, Session s, long off, Object o, int want, String what) {
        if (want != 0 && !known(want))
            throw unknown(what, "element type", want);
        int type;
        long bits;
        if (o == null) {
            if (want != 0 && want < REF)
                throw wrong(o, want, what);
            type = want == 0 ? REF : want;
            bits = 0;
        } else if (o instanceof Boolean b) {
            type = BOOL;
            bits = b ? 1 : 0;
        } else if (o instanceof Long || o instanceof Integer || o instanceof Short || o instanceof Byte) {
            type = o instanceof Long ? I64 : o instanceof Integer ? I32 : o instanceof Short ? I16 : I8;
            bits = ((Number) o).longValue();
            if (want == F32 || want == F64) {
                type = want;
                bits = Double.doubleToRawLongBits(bits);
            } else if (want > BOOL && want <= I64) {
                type = want;   // libuniheap range-checks
            }
        } else if (o instanceof Double || o instanceof Float) {
            type = want == F32 || want == F64 ? want : o instanceof Float ? F32 : F64;
            bits = Double.doubleToRawLongBits(((Number) o).doubleValue());
        } else if (o instanceof String str) {
            type = STRING;
            bits = blob(s, true, str.getBytes(StandardCharsets.UTF_8), what);
        } else if (o instanceof byte[] a) {
            type = BYTES;
            bits = blob(s, false, a, what);
        } else if (o instanceof Bytes by) {
            type = BYTES;
            bits = blob(s, false, by.raw(), what);
        } else if (o instanceof PObject p) {
            type = REF;
            bits = heap.refOf(p);
        } else {
            throw new TypeMismatchException(what + ": cannot store a " + o.getClass().getName()
                    + " in the heap: store null, Boolean, Byte, Short, Integer, Long, Float, "
                    + "Double, String, byte[], Bytes or a persistent object");
        }
        if (want != 0 && type != want && !(want == REF && (type == STRING || type == BYTES)))
            throw wrong(o, want, what);
        s.setValue(off, type, bits);
    }

    /** The bytes a String (its UTF-8), byte[] or Bytes value is stored as;
     * null for any other value. */
    static byte[] bytesOf(Object o) {
        return o instanceof String str ? str.getBytes(StandardCharsets.UTF_8)
                : o instanceof byte[] a ? a : o instanceof Bytes by ? by.raw() : null;
    }

    private static TypeMismatchException wrong(Object o, int want, String what) {
        return new TypeMismatchException(what + " holds " + FieldType.nameOf(want) + " values, not "
                + (o == null ? "null" : o.getClass().getName()));
    }

    private static long blob(Session s, boolean string, byte[] data, String what) {
        int rc = s.newBlob(string, data);
        if (rc != 0)
            throw Errors.of(rc, what);
        return s.outLong();
    }

    /** from() of a value that is never inline: a list's or an array's
     * (libuniheap stores inline values in hash maps only). */
    static Object from(Heap heap, int type, long bits) {
        return from(heap, type, bits, 0);
    }

    /** The Java value of a uh_value (type, bits, and where: its reserved
     * word) read from the heap; {@link #CHANGED} when a string or bytes
     * value was freed under the copy. An inline value gives what the same
     * value in an object of its own gives. A null reference, string or
     * bytes value is null.
     * @throws UniheapException for a type this binding does not know (a
     *         newer libuniheap's, or damage), never taken for null
     */
    static Object from(Heap heap, int type, long bits, int where) {
        return switch (type) {
            case BOOL -> bits != 0;
            case I8 -> (byte) bits;
            case I16 -> (short) bits;
            case I32 -> (int) bits;
            case I64 -> bits;
            case F32 -> (float) Double.longBitsToDouble(bits);
            case F64 -> Double.longBitsToDouble(bits);
            case REF -> bits == 0 ? null : heap.wrapValue(bits);
            case STRING -> {
                if (bits == 0)
                    yield null;
                byte[] b = Blobs.tryRead(heap, bits, ProxyType.CLASS_STRING, "string value");
                yield b == null ? CHANGED : new String(b, StandardCharsets.UTF_8);
            }
            case BYTES -> {
                if (bits == 0)
                    yield null;
                byte[] b = Blobs.tryRead(heap, bits, ProxyType.CLASS_BYTES, "bytes value");
                yield b == null ? CHANGED : b;
            }
            case ISTRING -> {
                byte[] b = Blobs.tryReadInline(heap, bits, where, "string value");
                yield b == null ? CHANGED : new String(b, StandardCharsets.UTF_8);
            }
            case IBYTES -> {
                byte[] b = Blobs.tryReadInline(heap, bits, where, "bytes value");
                yield b == null ? CHANGED : b;
            }
            default -> throw unknown(null, "value type", type);
        };
    }
}
