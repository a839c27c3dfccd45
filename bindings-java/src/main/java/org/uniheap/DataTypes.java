package org.uniheap;

import java.lang.invoke.MethodHandle;
import java.util.AbstractMap;
import java.util.Iterator;
import java.util.Map;

/** What the data-type proxies share: creation, entry iterators, toString. */
final class DataTypes {
    private DataTypes() {
    }

    /** A new map or sorted map (newFn(h, kind, &out)); its reference. */
    static long create(Heap heap, String what, MethodHandle newFn, int arg) {
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        try {
            s.wrote = true;
            int rc = (int) newFn.invokeExact(s.h, arg, s.at + Session.OUT);
            if (rc != 0)
                throw Errors.of(rc, what);
            return s.outLong();
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        } finally {
            heap.release(b, s);
        }
    }

    /** fn(h, ref, &out): a length or a kind; the u64 written (u32 ones in
     * its low half). */
    static long query(Heap heap, long ref, MethodHandle fn, String what) {
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        try {
            s.scratch.set(java.lang.foreign.ValueLayout.JAVA_LONG, Session.OUT, 0L);
            int rc = (int) fn.invokeExact(s.h, ref, s.at + Session.OUT);
            if (rc != 0)
                throw Errors.of(rc, what);
            return s.outLong();
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        } finally {
            heap.release(b, s);
        }
    }

    /** The entries of an iterator, with Iterator.remove and Entry.setValue
     * writing through to the map. */
    static <K, V> Iterator<Map.Entry<K, V>> entries(Map<K, V> map, Iterator<Map.Entry<K, V>> c) {
        return new Iterator<>() {
            private K last;
            private boolean canRemove;

            @Override
            public boolean hasNext() {
                return c.hasNext();
            }

            @Override
            public Map.Entry<K, V> next() {
                Map.Entry<K, V> e = c.next();
                last = e.getKey();
                canRemove = true;
                return new AbstractMap.SimpleEntry<>(e) {
                    private static final long serialVersionUID = 1L;

                    @Override
                    public V setValue(V value) {
                        super.setValue(value);
                        return map.put(getKey(), value);
                    }
                };
            }

            @Override
            public void remove() {
                if (!canRemove)
                    throw new IllegalStateException("remove(): call next() first");
                canRemove = false;
                map.remove(last);
            }
        };
    }

    /** {@code name@offset{k=v, ...}}, at most 16 entries. */
    static String describe(PObject p, Iterator<? extends Map.Entry<?, ?>> it) {
        StringBuilder sb = new StringBuilder(p.className()).append('@')
                .append(p.ref() & ProxyBase.OFFSET_MASK);
        if (!p.isLive())
            return sb.append(p.heap().isClosed() ? " (heap closed)" : " (freed)").toString();
        sb.append('{');
        for (int n = 0; it.hasNext(); n++) {
            if (n == 16) {
                sb.append(", ...");
                break;
            }
            Map.Entry<?, ?> e = it.next();
            if (n > 0)
                sb.append(", ");
            sb.append(show(e.getKey())).append('=').append(show(e.getValue()));
        }
        return sb.append('}').toString();
    }

    /** {@code name@offset<kind>[e0, e1, ...]}, at most 16 elements. */
    static String describe(PObject p, String kind, java.util.List<?> list) {
        StringBuilder sb = new StringBuilder(p.className()).append('@')
                .append(p.ref() & ProxyBase.OFFSET_MASK);
        if (!p.isLive())
            return sb.append(p.heap().isClosed() ? " (heap closed)" : " (freed)").toString();
        sb.append(kind).append('[');
        int n = list.size();
        for (int i = 0; i < n && i < 16; i++)
            sb.append(i > 0 ? ", " : "").append(show(list.get(i)));
        return sb.append(n > 16 ? ", ...]" : "]").toString();
    }

    static String show(Object v) {
        if (v instanceof byte[] b)
            return Bytes.wrap(b).toString();
        if (v instanceof PObject p)
            return p.className() + "@" + (p.ref() & ProxyBase.OFFSET_MASK);
        return String.valueOf(v);
    }

    /** The object's header still names it (a data type's payload size varies). */
    static boolean isLive(Heap heap, long ref, ProxyType type) {
        return headerIs(heap, ref, type.hdrMask, type.hdrOf(ref));
    }

    /** The header word of the object at ref, under mask, is hdr (its valid
     * bit, class and generation); false once the heap closed. */
    static boolean headerIs(Heap heap, long ref, long mask, long hdr) {
        if (heap.isClosed())
            return false;
        try {
            heap.reach(ref);
            long w = (long) ProxyBase.LONG_AT.getAcquire(heap.seg, (ref & ProxyBase.OFFSET_MASK) + 8);
            return (w & mask) == hdr;
        } catch (IllegalStateException e) {
            return false;
        }
    }
}
