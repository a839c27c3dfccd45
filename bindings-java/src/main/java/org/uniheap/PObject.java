package org.uniheap;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A proxy of a persistent object: a reference into a heap, never a copy
 * of the object. Every persistent class (a {@link Persistent} interface),
 * every data type ({@link PMap}, {@link PSortedMap}, {@link PList},
 * {@link PArray}) and the generic proxies of classes this JVM never
 * declared are PObjects.
 *
 * <p>Proxies are immutable and may be handed between threads. Using a
 * proxy of a freed object throws {@link FreedObjectException}; one of a
 * closed heap throws {@link HeapClosedException}.
 */
public interface PObject {
    /** The heap this proxy belongs to. */
    Heap heap();

    /** The persistent reference: the object's offset in the heap file
     * (bits 0..47) and its generation (bits 48..63). Other processes name
     * the object by it; {@link Heap#proxy(long)} turns it back into a proxy. */
    long ref();

    /** The class's name in the heap, e.g. {@code "bank.Account"} or
     * {@code "uniheap.map"}. */
    String className();

    /** The class's id in this heap (ids differ between heaps). */
    int classId();

    /** The names of the class's fields, in layout order (empty for data types). */
    List<String> fieldNames();

    /**
     * Read a field by name, boxed: {@code Boolean Byte Short Integer Long Float
     * Double String byte[]} or a proxy (null for a null reference).
     * @throws NotFoundException if the class has no such field
     */
    Object getField(String name);

    /**
     * Every field's value, in {@link #fieldNames()} order, all as of one
     * instant: never part of one commit and part of another, outside a
     * block too, which separate getter calls outside a block may give.
     * Inside a block: the block's snapshot and its own writes. Values are
     * boxed as {@link #getField(String)} gives them ({@code Long} for i64,
     * {@code String}, {@code byte[]}, a proxy, null). Empty for an object
     * without fields (and for data types).
     * <p>One libuniheap read of the bytes the fields span, then string and
     * bytes values are copied; outside a block, a value replaced under its
     * copy sends the read round again.
     * @throws FreedObjectException if the object has been freed
     * @throws ConflictException inside a block, if another session replaced
     *         a string or bytes value it read (run the block again); outside
     *         one, if such values kept changing over 1000 reads
     */
    Object[] fieldValues();

    /**
     * {@link #fieldValues()} by field name, in {@link #fieldNames()} order:
     * all fields as of one instant.
     * @throws FreedObjectException if the object has been freed
     */
    default Map<String, Object> fieldMap() {
        Object[] v = fieldValues();
        List<String> names = fieldNames();
        Map<String, Object> m = new LinkedHashMap<>(names.size() * 2);
        for (int i = 0; i < v.length; i++)
            m.put(names.get(i), v[i]);
        return m;
    }

    /**
     * Write a field by name. Numbers are range-checked against the field's
     * type ({@link ValueRangeException}); a value of the wrong kind throws
     * {@link TypeMismatchException}.
     * @throws NotFoundException if the class has no such field
     */
    void setField(String name, Object value);

    /**
     * This object through the declared persistent interface {@code type}:
     * the same object, checked to be of that class.
     * @throws TypeMismatchException if the object's class is not the one
     *         {@code type} declares
     * @throws ClassMismatchException if the heap's class has another layout
     */
    <T extends PObject> T as(Class<T> type);

    /** True while the object is live (not freed) and its heap open. */
    boolean isLive();
}
