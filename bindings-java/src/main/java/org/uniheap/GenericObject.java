package org.uniheap;

/**
 * The proxy of an object whose class this JVM never declared (or declared
 * with another layout): fields by name from the heap's class table, with
 * {@link #getField(String)} and {@link #setField(String, Object)}.
 */
final class GenericObject extends ProxyBase {
    GenericObject(Init init) {
        super(init);
    }

    static PObject make(Heap heap, ProxyType type, long ref) {
        return new GenericObject(new Init(heap, type, ref));
    }
}
