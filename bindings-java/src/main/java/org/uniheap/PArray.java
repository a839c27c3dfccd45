package org.uniheap;

import java.util.AbstractList;
import java.util.RandomAccess;

/**
 * A persistent fixed-length array of one element type, as a fixed-size
 * {@link java.util.List} (set works; add and remove throw
 * UnsupportedOperationException), with typed accessors for numbers
 * ({@link #getLong(int)}, {@link #setLong(int, long)}, {@link #getDouble(int)},
 * {@link #setDouble(int, double)}). Created with {@link Heap#newArray(Class, long)}.
 * Elements read as the element type's Java class; a number set into a
 * numeric array is range-checked against it ({@link ValueRangeException}).
 *
 * @param <E> the element type (boxed)
 */
public final class PArray<E> extends AbstractList<E> implements RandomAccess, DataType {
    private final Heap heap;
    private final ProxyType type;
    private final long ref;
    private long length = -1;   // fixed: read once
    private int elem;           // element type code, 0 until read

    private PArray(Heap heap, ProxyType type, long ref) {
        this.heap = heap;
        this.type = type;
        this.ref = ref;
        heap.proxies.adopt(this, ref, type);   // pinned: the collector keeps it
    }

    static PObject make(Heap heap, ProxyType type, long ref) {
        return new PArray<>(heap, type, ref);
    }

    static <E> PArray<E> create(Heap heap, Class<E> elemType, long length) {
        int code = codeOf(elemType);
        if (length < 0)
            throw new IllegalArgumentException("array length must be >= 0, not " + length);
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        long ref;
        try {
            s.wrote = true;
            int rc = (int) Native.ARRAY_NEW.invokeExact(s.h, code, length, s.at + Session.OUT);
            if (rc != 0)
                throw Errors.of(rc, "new array");
            ref = s.outLong();
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        } finally {
            heap.release(b, s);
        }
        PArray<E> a = new PArray<>(heap, heap.classes.type(ProxyType.CLASS_ARRAY), ref);
        a.length = length;
        a.elem = code;
        return a;
    }

    private static int codeOf(Class<?> c) {
        if (c == boolean.class || c == Boolean.class)
            return Values.BOOL;
        if (c == byte.class || c == Byte.class)
            return Values.I8;
        if (c == short.class || c == Short.class)
            return Values.I16;
        if (c == int.class || c == Integer.class)
            return Values.I32;
        if (c == long.class || c == Long.class)
            return Values.I64;
        if (c == float.class || c == Float.class)
            return Values.F32;
        if (c == double.class || c == Double.class)
            return Values.F64;
        if (c == String.class)
            return Values.STRING;
        if (c == byte[].class)
            return Values.BYTES;
        if (PObject.class.isAssignableFrom(c))
            return Values.REF;
        throw new InvalidValueException(Errors.EINVAL, "array elements are boolean, byte, short, "
                + "int, long, float, double, String, byte[] or persistent objects, not " + c.getName());
    }

    /** The element type.
     * @throws UniheapException if the heap gives one this binding does not
     *         know (a newer libuniheap's, or damage) */
    public FieldType elementType() {
        return FieldType.of(elem());
    }

    private int elem() {
        int e = elem;
        if (e == 0) {
            e = (int) DataTypes.query(heap, ref, Native.ARRAY_ELEM_TYPE, "array element type");
            if (FieldType.of(e) == null)
                throw Values.unknown("array", "element type", e);
            elem = e;
        }
        return e;
    }

    @Override
    public int size() {
        return MapOps.intSize(longSize());
    }

    /** The length, beyond Integer.MAX_VALUE too. */
    public long longSize() {
        long n = length;
        if (n < 0)
            length = n = DataTypes.query(heap, ref, Native.ARRAY_LEN, "array length");
        return n;
    }

    @Override
    @SuppressWarnings("unchecked")
    public E get(int index) {
        return (E) SeqOps.get(heap, ref, Native.ARRAY_GET, index, "array get");
    }

    @Override
    @SuppressWarnings("unchecked")
    public E set(int index, E element) {
        return (E) SeqOps.set(heap, ref, Native.ARRAY_GET, Native.ARRAY_SET, index, element, elem(),
                longSize(), "array set");
    }

    /** Element index of an integer array, as a long. */
    public long getLong(int index) {
        Object v = get(index);
        if (v instanceof Number n && !(v instanceof Float || v instanceof Double))
            return n.longValue();
        if (v instanceof Boolean b)
            return b ? 1 : 0;
        throw new TypeMismatchException("getLong: this array holds " + elementType().heapName());
    }

    /** Set element index of an integer array (range-checked). */
    public void setLong(int index, long v) {
        SeqOps.set(heap, ref, null, Native.ARRAY_SET, index, v, elem(), longSize(), "array set");
    }

    /** Element index of a float array, as a double. */
    public double getDouble(int index) {
        Object v = get(index);
        if (v instanceof Double || v instanceof Float)
            return ((Number) v).doubleValue();
        throw new TypeMismatchException("getDouble: this array holds " + elementType().heapName());
    }

    /** Set element index of a float array. */
    public void setDouble(int index, double v) {
        SeqOps.set(heap, ref, null, Native.ARRAY_SET, index, v, elem(), longSize(), "array set");
    }

    /** {@code uniheap.array@4160[1, 2, ...]}, at most 16 elements. */
    @Override
    public String toString() {
        return DataTypes.describe(this, isLive() ? "<" + elementType().heapName() + ">" : "", this);
    }

    // ---- PObject (the rest: DataType) ----

    @Override
    public Heap heap() {
        return heap;
    }

    @Override
    public long ref() {
        return ref;
    }

    @Override
    public int classId() {
        return type.classId;
    }
}
