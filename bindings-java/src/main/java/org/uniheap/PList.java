package org.uniheap;

import java.util.AbstractList;
import java.util.RandomAccess;

/**
 * A persistent growable list, as a {@link java.util.List}: elements null,
 * {@code Boolean}, numbers, {@code String}, {@code byte[]} or persistent
 * objects, each keeping its type ({@link Heap#newMap(Class)} lists them).
 * Random access by index; each operation is atomic and joins the calling
 * thread's block. A String or byte[] element belongs to its slot: set and
 * remove free the one they replace. equals and hashCode compare contents
 * (List contract); iterators read by index and see concurrent changes
 * (no ConcurrentModificationException from other processes' changes).
 *
 * @param <E> the element type
 */
public final class PList<E> extends AbstractList<E> implements RandomAccess, DataType {
    private final Heap heap;
    private final ProxyType type;
    private final long ref;

    private PList(Heap heap, ProxyType type, long ref) {
        this.heap = heap;
        this.type = type;
        this.ref = ref;
        heap.proxies.adopt(this, ref, type);   // pinned: the collector keeps it
    }

    static PObject make(Heap heap, ProxyType type, long ref) {
        return new PList<>(heap, type, ref);
    }

    static <E> PList<E> create(Heap heap) {
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        long ref;
        try {
            s.wrote = true;
            int rc = (int) Native.LIST_NEW.invokeExact(s.h, s.at + Session.OUT);
            if (rc != 0)
                throw Errors.of(rc, "new list");
            ref = s.outLong();
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        } finally {
            heap.release(b, s);
        }
        return new PList<>(heap, heap.classes.type(ProxyType.CLASS_LIST), ref);
    }

    @Override
    public int size() {
        return MapOps.intSize(longSize());
    }

    /** The number of elements, beyond Integer.MAX_VALUE too. */
    public long longSize() {
        return DataTypes.query(heap, ref, Native.LIST_LEN, "list size");
    }

    @Override
    @SuppressWarnings("unchecked")
    public E get(int index) {
        return (E) SeqOps.get(heap, ref, Native.LIST_GET, index, "list get");
    }

    @Override
    @SuppressWarnings("unchecked")
    public E set(int index, E element) {
        return (E) SeqOps.set(heap, ref, Native.LIST_GET, Native.LIST_SET, index, element, 0, -1, "list set");
    }

    @Override
    public boolean add(E element) {
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        try {
            Steps.run(s, b == null, "list append", () -> {
                Values.to(heap, s, Session.OUT2, element, 0, "list element");
                try {
                    return (int) Native.LIST_APPEND.invokeExact(s.h, ref, s.at + Session.OUT2);
                } catch (Throwable t) {
                    throw Errors.rethrow(t);
                }
            });
        } finally {
            heap.release(b, s);
        }
        modCount++;
        return true;
    }

    @Override
    public void add(int index, E element) {
        if (index < 0)
            throw SeqOps.outOfRange(index, "list insert");
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        try {
            Steps.run(s, b == null, "list insert", () -> {
                Values.to(heap, s, Session.OUT2, element, 0, "list element");
                try {
                    int rc = (int) Native.LIST_INSERT.invokeExact(s.h, ref, (long) index, s.at + Session.OUT2);
                    if (rc == Errors.ERANGE)
                        throw SeqOps.outOfRange(index, "list insert");
                    return rc;
                } catch (Throwable t) {
                    throw Errors.rethrow(t);
                }
            });
        } finally {
            heap.release(b, s);
        }
        modCount++;
    }

    @Override
    public E remove(int index) {
        if (index < 0)
            throw SeqOps.outOfRange(index, "list remove");
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        Object[] old = {null};
        long[] raw = {0, 0};
        try {
            Steps.run(s, b == null, "list remove", () -> {
                try {
                    int rc = (int) Native.LIST_POP.invokeExact(s.h, ref, (long) index, s.at + Session.OUT, 2);
                    if (rc == Errors.ERANGE)
                        throw SeqOps.outOfRange(index, "list remove");
                    if (rc == 0)
                        old[0] = SeqOps.keep(heap, s, raw, "list remove");
                    return rc;
                } catch (Throwable t) {
                    throw Errors.rethrow(t);
                }
            });
        } finally {
            heap.release(b, s);
        }
        modCount++;
        @SuppressWarnings("unchecked")
        E e = (E) (raw[0] != 0 ? Values.from(heap, (int) raw[0], raw[1]) : old[0]);
        return e;
    }

    /** {@code uniheap.list@4160[1, "two", ...]}, at most 16 elements. */
    @Override
    public String toString() {
        return DataTypes.describe(this, "", this);
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
