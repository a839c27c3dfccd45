package org.uniheap;

import java.util.List;

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
