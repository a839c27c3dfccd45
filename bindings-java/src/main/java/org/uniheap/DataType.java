package org.uniheap;

import java.util.List;

/**
 * What the data-type proxies (PMap, PSortedMap, PList, PArray) answer as
 * PObjects: they have no fields, and their liveness is their header's.
 */
interface DataType extends PObject {
    @Override
    default String className() {
        return heap().className(classId());
    }

    @Override
    default List<String> fieldNames() {
        return List.of();
    }

    /** No fields: empty, once the object is known to be live. */
    @Override
    default Object[] fieldValues() {
        if (heap().isClosed())
            throw heap().closedError();
        if (!isLive())
            throw new FreedObjectException(Errors.EFREED, "the " + className() + " at offset "
                    + (ref() & ProxyBase.OFFSET_MASK) + " has been freed");
        return new Object[0];
    }

    @Override
    default Object getField(String name) {
        return heap().classes.type(classId()).fieldIndex(name);
    }

    @Override
    default void setField(String name, Object value) {
        heap().classes.type(classId()).fieldIndex(name);
    }

    @Override
    default <T extends PObject> T as(Class<T> cls) {
        if (cls.isInstance(this))
            return cls.cast(this);
        throw new TypeMismatchException("a " + className() + " is not a " + cls.getName());
    }

    @Override
    default boolean isLive() {
        return DataTypes.isLive(heap(), ref(), heap().classes.type(classId()));
    }
}
