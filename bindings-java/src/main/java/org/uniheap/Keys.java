package org.uniheap;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Map keys: {@code String} (UTF-8), {@link Bytes} and {@code Long}, as
 * libuniheap's uh_key, and their order in sorted maps.
 */
final class Keys {
    private Keys() {
    }

    static final int STRING = 1, BYTES = 2, I64 = 3;
    private static final int MAX_LEN = 4096;   // UH_KEY_MAX_LEN
    private static final int VALID_UTF8 = 1;    // UH_KEY_VALID_UTF8

    /** Code point order: the order of the UTF-8 bytes sorted maps use
     * (String.compareTo, UTF-16 order, differs above U+FFFF). */
    static final Comparator<String> CODE_POINT_ORDER = new Comparator<>() {
        @Override
        public int compare(String a, String b) {
            int n = Math.min(a.length(), b.length());
            for (int i = 0; i < n; i++) {
                char x = a.charAt(i), y = b.charAt(i);
                if (x != y) {
                    if (Character.isSurrogate(x) || Character.isSurrogate(y))
                        return Integer.compare(a.codePointAt(i), b.codePointAt(i));
                    return Character.compare(x, y);
                }
            }
            return Integer.compare(a.length(), b.length());
        }

        @Override
        public String toString() {
            return "code point order";
        }
    };

    /** The key kind of a key class. */
    static int kindOf(Class<?> keyType) {
        if (keyType == String.class)
            return STRING;
        if (keyType == Bytes.class)
            return BYTES;
        if (keyType == Long.class || keyType == long.class)
            return I64;
        throw new InvalidValueException(Errors.EINVAL, "map keys are String, Bytes or Long, not "
                + keyType.getName());
    }

    static String kindName(int kind) {
        return switch (kind) {
            case STRING -> "String";
            case BYTES -> "Bytes";
            case I64 -> "Long";
            default -> "kind " + kind;
        };
    }

    /**
     * Write key as the uh_key of s.
     * @throws NullPointerException for a null key
     * @throws ClassCastException for a key of another class than the map's
     */
    static void put(Session s, int kind, Object key) {
        if (key == null)
            throw new NullPointerException("persistent maps have no null keys");
        MemorySegment m = s.scratch;
        // uh_key {u32 kind, u32 flags, ptr data, size_t len, i64 i}, its four
        // words written with one copy. flags: UH_KEY_VALID_UTF8 for a String's
        // bytes (getBytes(UTF_8) replaces what is not valid), so libuniheap
        // does not check them again.
        long[] w = s.keyWords;
        w[0] = kind | (long) (kind == STRING ? VALID_UTF8 : 0) << 32;
        if (kind == I64 && key instanceof Long l) {
            w[1] = 0;
            w[2] = 0;
            w[3] = l;
            MemorySegment.copy(w, 0, m, JAVA_LONG, Session.KEY, 4);
            return;
        }
        byte[] b;
        if (kind == STRING && key instanceof String str)
            b = str.getBytes(StandardCharsets.UTF_8);
        else if (kind == BYTES && key instanceof Bytes by)
            b = by.raw();
        else
            throw new ClassCastException("this map's keys are " + kindName(kind) + ", not "
                    + key.getClass().getName() + (key instanceof byte[] ? " (wrap it: Bytes.of(...))" : ""));
        if (b.length > MAX_LEN)
            throw new InvalidValueException(Errors.EINVAL, "a key has at most " + MAX_LEN
                    + " bytes, this one " + b.length);
        MemorySegment.copy(b, 0, m, JAVA_BYTE, Session.KEYBUF, b.length);
        w[1] = s.at + Session.KEYBUF;
        w[2] = b.length;
        w[3] = 0;
        MemorySegment.copy(w, 0, m, JAVA_LONG, Session.KEY, 4);
    }

    /**
     * The len bytes of a uh_key libuniheap returned (its data address)
     * into dst at at: they lie in the mapping, or (a hash-map key, a key
     * kept inline in a sorted map's leaf) in libuniheap's buffer for the
     * call, which the thread's next call reuses.
     */
    static void copyBytes(Heap heap, long data, int len, byte[] dst, int at) {
        try {
            long off = data - heap.base;
            if (off >= 0 && off <= heap.seg.byteSize() - len)
                MemorySegment.copy(heap.seg, JAVA_BYTE, off, dst, at, len);
            else
                MemorySegment.copy(Native.at(data, len), JAVA_BYTE, 0, dst, at, len);
        } catch (IllegalStateException e) {
            throw heap.closedError();
        }
    }

    /** A String or Bytes key of kind from UTF-8 or raw bytes. */
    static Object of(int kind, byte[] b, int off, int len) {
        return kind == STRING ? new String(b, off, len, StandardCharsets.UTF_8)
                : Bytes.wrap(java.util.Arrays.copyOfRange(b, off, off + len));
    }

    /** Order of two keys of one kind, as a sorted map orders them. */
    @SuppressWarnings("unchecked")
    static int compare(int kind, Object a, Object b) {
        return switch (kind) {
            case STRING -> CODE_POINT_ORDER.compare((String) a, (String) b);
            case I64 -> Long.compare((Long) a, (Long) b);
            default -> ((Comparable<Object>) a).compareTo(b);
        };
    }
}
