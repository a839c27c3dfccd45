package org.uniheap;

/**
 * The language-neutral field types of the heap (uniheap.h {@code UH_T_*}),
 * with the Java type each reads as.
 */
public enum FieldType {
    /** {@code boolean}. */
    BOOL(1, "bool", boolean.class),
    /** {@code byte}. */
    I8(2, "i8", byte.class),
    /** {@code short}. */
    I16(3, "i16", short.class),
    /** {@code int}. */
    I32(4, "i32", int.class),
    /** {@code long}. */
    I64(5, "i64", long.class),
    /** {@code float}. */
    F32(6, "f32", float.class),
    /** {@code double}. */
    F64(7, "f64", double.class),
    /** A reference to any persistent object, or to one class ({@link PObject}). */
    REF(8, "ref", PObject.class),
    /** An immutable UTF-8 string ({@link String}). */
    STRING(9, "string", String.class),
    /** Immutable bytes ({@code byte[]}). */
    BYTES(10, "bytes", byte[].class),
    /** A string inside its object, of a fixed capacity ({@link Inline}). */
    INLINE_STRING(11, "inline string", String.class),
    /** Bytes inside their object, of a fixed capacity ({@link Inline}). */
    INLINE_BYTES(12, "inline bytes", byte[].class);

    private static final FieldType[] BY_CODE = new FieldType[13];

    static {
        for (FieldType t : values())
            BY_CODE[t.code] = t;
    }

    private final int code;
    private final String heapName;
    private final Class<?> javaType;

    FieldType(int code, String heapName, Class<?> javaType) {
        this.code = code;
        this.heapName = heapName;
        this.javaType = javaType;
    }

    /** The {@code UH_T_*} code. */
    public int code() {
        return code;
    }

    /** The heap's name of the type ({@code "i64"}, {@code "string"}, ...), as
     * {@code heapctl classes} and the other languages show it. */
    public String heapName() {
        return heapName;
    }

    /** The Java type a field of this type reads as. */
    public Class<?> javaType() {
        return javaType;
    }

    /** The type of a {@code UH_T_*} code; null for an unknown code. */
    public static FieldType of(int code) {
        return code > 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }

    static String nameOf(int code) {
        FieldType t = of(code);
        return t == null ? "type " + code : t.heapName;
    }

    boolean isInteger() {
        return code >= 1 && code <= 5;
    }

    boolean isFloat() {
        return code == 6 || code == 7;
    }

    static boolean isInline(int code) {
        return code == 11 || code == 12;
    }
}
