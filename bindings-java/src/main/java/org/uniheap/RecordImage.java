package org.uniheap;

import java.util.List;

/**
 * A copy of a record's payload, read whole at one instant ({@link
 * PSortedMap#recordImage(Object)}, {@link PMap#recordImage(Object)}): its
 * bytes in one array that belongs to the caller, and where each inline
 * field's value lies in it. Nothing in it refers to the heap: it stays as
 * read whatever changes afterwards, and reading it calls nothing.
 *
 * <p>It is what {@link PSortedMap#fieldValues(Object)} decodes, without
 * making an array per value: a caller that hands the values on as slices
 * (offset and length into {@link #array()}) copies each byte once.
 * Only inline fields ({@link Inline}) are given by position; the other
 * fields of the record are in the array too, in the heap's format
 * ({@code schemas/FORMAT.md} 3.3).
 */
public final class RecordImage {
    private final ProxyType type;
    private final byte[] bytes;

    RecordImage(ProxyType type, byte[] bytes) {
        this.type = type;
        this.bytes = bytes;
    }

    /** The record's class name, as the heap's class table has it. */
    public String className() {
        return type.name;
    }

    /** The record's field names, in the class's order (the index of each is its position). */
    public List<String> fieldNames() {
        return type.fieldNames();
    }

    /**
     * The index of field name.
     * @throws NotFoundException if the class has no such field
     */
    public int fieldIndex(String name) {
        return type.fieldIndex(name);
    }

    /** The payload's bytes: the array itself, not a copy (it is the caller's). */
    public byte[] array() {
        return bytes;
    }

    /**
     * Where the value of inline field i starts in {@link #array()}.
     * @throws TypeMismatchException if field i is not an inline field
     * @throws IndexOutOfBoundsException if there is no field i
     */
    public int offset(int i) {
        return at(i) + 4;
    }

    /**
     * The length in bytes of the value of inline field i (for an inline
     * String, of its UTF-8).
     * @throws TypeMismatchException if field i is not an inline field
     * @throws IndexOutOfBoundsException if there is no field i
     */
    public int length(int i) {
        int at = at(i);
        byte[] b = bytes;
        int len = (b[at] & 0xff) | (b[at + 1] & 0xff) << 8 | (b[at + 2] & 0xff) << 16 | b[at + 3] << 24;
        if (len < 0 || len > type.refClass[i])
            throw new UniheapException("field " + type.whats[i] + " holds " + len
                    + " bytes, past its capacity " + type.refClass[i]);
        return len;
    }

    /** Where inline field i's length word lies in the payload. */
    private int at(int i) {
        int t = type.types[i];
        if (t != FieldType.INLINE_BYTES.code() && t != FieldType.INLINE_STRING.code())
            throw new TypeMismatchException(Errors.ETYPE, "field " + type.whats[i]
                    + " is not an inline field");
        return type.offsets[i] - ProxyBase.PAYLOAD_AT;
    }
}
