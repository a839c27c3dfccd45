package org.uniheap;

import java.nio.charset.StandardCharsets;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@link Heap#roots()}: the heap's named durable roots as a Map from names
 * to objects. put and remove are one atomic step each (they read the
 * previous object in the same block); iteration takes a snapshot of the
 * roots. Null names and null objects are refused (remove a root instead).
 */
final class Roots extends AbstractMap<String, PObject> {
    private final Heap heap;

    Roots(Heap heap) {
        this.heap = heap;
    }

    private static byte[] name(Object name) {
        if (name == null)
            throw new NullPointerException("root names are not null");
        if (!(name instanceof String s))
            throw new ClassCastException("root names are String, not " + name.getClass().getName());
        if (s.indexOf('\0') >= 0)
            throw new InvalidValueException(Errors.EINVAL, "root name contains a NUL character");
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /* The reference of root name, 0 if none (a session held by the caller). */
    private static int getRef(Session s, byte[] name) {
        long n = s.cName(name);
        if (n == 0)
            throw new InvalidValueException(Errors.EINVAL, "root name of " + name.length
                    + " bytes: at most 1024");
        try {
            return (int) Native.ROOT_GET.invokeExact(s.h, n, s.at + Session.OUT);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    private long ref(Object key) {
        byte[] n = name(key);
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        try {
            int rc = getRef(s, n);
            if (rc == Errors.ENOTFOUND)
                return 0;
            if (rc != 0)
                throw Errors.of(rc, "root '" + key + "'");
            return s.outLong();
        } finally {
            heap.release(b, s);
        }
    }

    @Override
    public PObject get(Object key) {
        long r = ref(key);
        return r == 0 ? null : heap.wrapObject(r);
    }

    @Override
    public boolean containsKey(Object key) {
        return ref(key) != 0;
    }

    @Override
    public PObject put(String key, PObject value) {
        if (value == null)
            throw new NullPointerException("a root names an object: remove(name) deletes one");
        byte[] n = name(key);
        long v = heap.refOf(value);
        return change(key, n, v);
    }

    @Override
    public PObject remove(Object key) {
        return change(key, name(key), 0);
    }

    /* Set (v != 0) or delete root key; the previous object, or null. */
    private PObject change(Object key, byte[] n, long v) {
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        long[] old = {0};
        try {
            Steps.run(s, b == null, "root '" + key + "'", () -> {
                int rc = getRef(s, n);
                if (rc == 0)
                    old[0] = s.outLong();
                else if (rc != Errors.ENOTFOUND)
                    return rc;
                if (v == 0 && old[0] == 0)
                    return 0;
                try {
                    long cn = s.cName(n);
                    return v != 0 ? (int) Native.ROOT_SET.invokeExact(s.h, cn, v)
                            : (int) Native.ROOT_DEL.invokeExact(s.h, cn);
                } catch (Throwable t) {
                    throw Errors.rethrow(t);
                }
            });
        } finally {
            heap.release(b, s);
        }
        if (old[0] == 0)
            return null;
        try {
            return heap.wrapObject(old[0]);
        } catch (FreedObjectException e) {
            return null;   // the old object was freed since
        }
    }

    @Override
    public int size() {
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        try {
            int rc = (int) Native.ROOT_COUNT.invokeExact(s.h, s.at + Session.OUT);
            if (rc != 0)
                throw Errors.of(rc, "roots");
            return MapOps.intSize(s.outLong());
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        } finally {
            heap.release(b, s);
        }
    }

    /** The roots now: names and references. */
    private List<Map.Entry<String, Long>> snapshot() {
        List<Map.Entry<String, Long>> out = new ArrayList<>();
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        try {
            long r = Session.ROOT;
            s.scratch.set(JAVA_LONG, r, 0L);
            for (;;) {   // bound: the roots
                int rc = (int) Native.ROOT_NEXT.invokeExact(s.h, s.at + r, s.at + r + 8, s.at + r + 16,
                        s.at + r + 24);
                if (rc == Errors.ENOTFOUND)
                    break;
                if (rc != 0)
                    throw Errors.of(rc, "roots");
                long name = s.scratch.get(JAVA_LONG, r + 8);
                int len = (int) s.scratch.get(JAVA_LONG, r + 16);
                // libuniheap read the name, so it is mapped, maybe past
                // heap.seg in a heap that grew (Heap.reach).
                byte[] bytes = Native.at(name, len).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                out.add(Map.entry(new String(bytes, StandardCharsets.UTF_8), s.scratch.get(JAVA_LONG, r + 24)));
            }
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        } finally {
            heap.release(b, s);
        }
        return out;
    }

    @Override
    public Set<Map.Entry<String, PObject>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public Iterator<Map.Entry<String, PObject>> iterator() {
                Iterator<Map.Entry<String, Long>> it = snapshot().iterator();
                return new Iterator<>() {
                    private String last;

                    @Override
                    public boolean hasNext() {
                        return it.hasNext();
                    }

                    @Override
                    public Map.Entry<String, PObject> next() {
                        Map.Entry<String, Long> e = it.next();
                        last = e.getKey();
                        return new SimpleImmutableEntry<>(last, heap.wrapObject(e.getValue()));
                    }

                    @Override
                    public void remove() {
                        if (last == null)
                            throw new IllegalStateException("remove(): call next() first");
                        Roots.this.remove(last);
                        last = null;
                    }
                };
            }

            @Override
            public int size() {
                return Roots.this.size();
            }
        };
    }
}
