package org.uniheap;

import java.lang.foreign.MemorySegment;
import java.util.AbstractMap;
import java.util.Map;
import java.util.NoSuchElementException;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The operations hash maps and sorted maps share, one libuniheap call each
 * (uh_map_* or uh_smap_*). A session is held only for the call and the
 * copy of its results; values become Java objects after it is given back.
 */
final class MapOps {
    private MapOps() {
    }

    /** get()'s answer for an absent key (null is a stored value). */
    static final Object MISSING = new Object();
    private static final int FREE_OLD_VALUE = 2;   // UH_FREE_OLD_VALUE
    private static final int MAX_RETRIES = 1000;

    static int keyKind(Heap heap, long ref, boolean sorted) {
        return (int) DataTypes.query(heap, ref, sorted ? Native.SMAP_KEY_KIND : Native.MAP_KEY_KIND, "map");
    }

    static long size(Heap heap, long ref, boolean sorted) {
        return DataTypes.query(heap, ref, sorted ? Native.SMAP_LEN : Native.MAP_LEN, "map size");
    }

    /**
     * What a lookup makes of the value it found, once the session is given
     * back: the Java value, or {@link Values#CHANGED} when a string or bytes
     * value was freed before it was read (the lookup then runs again).
     */
    @FunctionalInterface
    interface Reader {
        Object read(Heap heap, int type, long bits);
    }

    /** The value of key, or MISSING. */
    static Object get(Heap heap, long ref, boolean sorted, int kind, Object key) {
        return get(heap, ref, sorted, kind, key, Values::from);
    }

    /** What reader makes of the value of key, or MISSING. get() and view()
     * share this lookup, retries included. */
    static Object get(Heap heap, long ref, boolean sorted, int kind, Object key, Reader reader) {
        for (int tries = 0; tries < MAX_RETRIES; tries++) {   // bound: a writer replacing it each time
            BlockState b = heap.current();
            Session s = heap.acquire(b);
            int type;
            long bits;
            try {
                Keys.put(s, kind, key);
                int rc = sorted
                        ? (int) Native.SMAP_GET.invokeExact(s.h, ref, s.at + Session.KEY, s.at + Session.OUT)
                        : (int) Native.MAP_GET.invokeExact(s.h, ref, s.at + Session.KEY, s.at + Session.OUT);
                if (rc == Errors.ENOTFOUND)
                    return MISSING;
                if (rc != 0)
                    throw Errors.of(rc, "map get");
                type = s.valueType(Session.OUT);
                bits = s.valueBits(Session.OUT);
            } catch (Throwable t) {
                throw Errors.rethrow(t);
            } finally {
                heap.release(b, s);
            }
            Object v = reader.read(heap, type, bits);
            if (v != Values.CHANGED)
                return v;
            if (b != null)
                throw replaced();
        }
        throw new ConflictException("map get: the value kept changing while being read");
    }

    private static ConflictException replaced() {
        return new ConflictException("a map value read in this block was replaced by another "
                + "session: run the block again");
    }

    /** Put key -> value; with wantOld, return the previous value (MISSING if none). */
    static Object put(Heap heap, long ref, boolean sorted, int kind, Object key, Object value,
                      boolean wantOld) {
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        Object[] oldValue = {MISSING};
        long[] raw = {0, 0};   // a previous value to convert once s is given back
        try {
            Steps.run(s, b == null, "map put", () -> {
                Values.to(heap, s, Session.OUT2, value, 0, "map value");
                Keys.put(s, kind, key);
                int rc;
                if (wantOld) {
                    rc = call(sorted ? Native.SMAP_GET : Native.MAP_GET, s, ref);
                    if (rc == 0) {
                        oldValue[0] = keep(heap, s, Session.OUT, raw);
                    } else if (rc != Errors.ENOTFOUND) {
                        return rc;
                    }
                }
                try {
                    return sorted
                            ? (int) Native.SMAP_PUT.invokeExact(s.h, ref, s.at + Session.KEY, s.at + Session.OUT2, FREE_OLD_VALUE)
                            : (int) Native.MAP_PUT.invokeExact(s.h, ref, s.at + Session.KEY, s.at + Session.OUT2, FREE_OLD_VALUE);
                } catch (Throwable t) {
                    throw Errors.rethrow(t);
                }
            });
        } finally {
            heap.release(b, s);
        }
        return raw[0] != 0 ? Values.from(heap, (int) raw[0], raw[1]) : oldValue[0];
    }

    /* An old value about to be replaced: a string or bytes value is copied
     * now (the step frees it when it commits); anything else is left in raw
     * to convert once the session is given back (wrapping a reference may
     * need the class table, hence a session). */
    private static Object keep(Heap heap, Session s, long off, long[] raw) {
        int type = s.valueType(off);
        long bits = s.valueBits(off);
        if (type != Values.STRING && type != Values.BYTES) {
            raw[0] = type;
            raw[1] = bits;
            return null;
        }
        Object v = Values.from(heap, type, bits);
        if (v == Values.CHANGED)
            throw replaced();
        return v;
    }

    private static int call(java.lang.invoke.MethodHandle get, Session s, long ref) {
        try {
            return (int) get.invokeExact(s.h, ref, s.at + Session.KEY, s.at + Session.OUT);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /** Remove key; its value, or MISSING. */
    static Object remove(Heap heap, long ref, boolean sorted, int kind, Object key) {
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        Object[] old = {MISSING};
        long[] raw = {0, 0};
        try {
            Steps.run(s, b == null, "map remove", () -> {
                Keys.put(s, kind, key);
                int rc;
                try {
                    rc = sorted
                            ? (int) Native.SMAP_REMOVE.invokeExact(s.h, ref, s.at + Session.KEY, s.at + Session.OUT2, FREE_OLD_VALUE)
                            : (int) Native.MAP_REMOVE.invokeExact(s.h, ref, s.at + Session.KEY, s.at + Session.OUT2, FREE_OLD_VALUE);
                } catch (Throwable t) {
                    throw Errors.rethrow(t);
                }
                if (rc == Errors.ENOTFOUND)
                    return 0;   // nothing changed: the step commits empty
                if (rc == 0)   // a freed string stays readable until the step commits
                    old[0] = keep(heap, s, Session.OUT2, raw);
                return rc;
            });
        } finally {
            heap.release(b, s);
        }
        return raw[0] != 0 ? Values.from(heap, (int) raw[0], raw[1]) : old[0];
    }

    static void check(Heap heap, long ref, boolean sorted) {
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        try {
            int rc = sorted ? (int) Native.SMAP_CHECK.invokeExact(s.h, ref)
                    : (int) Native.MAP_CHECK.invokeExact(s.h, ref);
            if (rc != 0)
                throw Errors.of(rc, "map check");
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        } finally {
            heap.release(b, s);
        }
    }

    /**
     * The entries of a hash map (unspecified order) or of a sorted map from
     * a start key, either way. Outside a block it may see or miss
     * concurrent changes, never a torn entry; inside one, the block's
     * snapshot. The uh_iter state lives here, copied in and out of the
     * borrowed session's scratch around each call.
     */
    static final class Cursor<K, V> implements java.util.Iterator<Map.Entry<K, V>> {
        private final Heap heap;
        private final long ref;
        private final boolean sorted;
        private final int kind;
        private final Object from;
        private final boolean reverse;
        private final long[] it = new long[8];
        private boolean started, ended;
        private Map.Entry<K, V> next;

        Cursor(Heap heap, long ref, boolean sorted, int kind, Object from, boolean reverse) {
            this.heap = heap;
            this.ref = ref;
            this.sorted = sorted;
            this.kind = kind;
            this.from = from;
            this.reverse = reverse;
        }

        @Override
        public boolean hasNext() {
            if (next == null && !ended)
                next = advance();
            return next != null;
        }

        @Override
        public Map.Entry<K, V> next() {
            if (!hasNext())
                throw new NoSuchElementException();
            Map.Entry<K, V> e = next;
            next = null;
            return e;
        }

        @SuppressWarnings("unchecked")
        private Map.Entry<K, V> advance() {
            for (;;) {   // bound: the map's entries
                BlockState b = heap.current();
                Session s = heap.acquire(b);
                Object key;
                int type;
                long bits;
                try {
                    MemorySegment m = s.scratch;
                    if (!started)
                        start(s);
                    for (int i = 0; i < 8; i++)
                        m.set(JAVA_LONG, Session.ITER + 8L * i, it[i]);
                    int rc = sorted
                            ? (int) Native.SMAP_NEXT.invokeExact(s.h, ref, s.at + Session.ITER, s.at + Session.KEY, s.at + Session.OUT)
                            : (int) Native.MAP_NEXT.invokeExact(s.h, ref, s.at + Session.ITER, s.at + Session.KEY, s.at + Session.OUT);
                    if (rc == Errors.ENOTFOUND) {
                        ended = true;
                        return null;
                    }
                    if (rc != 0)
                        throw Errors.of(rc, "map iteration");
                    for (int i = 0; i < 8; i++)
                        it[i] = m.get(JAVA_LONG, Session.ITER + 8L * i);
                    key = Keys.from(heap, s);
                    type = s.valueType(Session.OUT);
                    bits = s.valueBits(Session.OUT);
                } catch (Throwable t) {
                    throw Errors.rethrow(t);
                } finally {
                    heap.release(b, s);
                }
                Object v = Values.from(heap, type, bits);
                if (v == Values.CHANGED) {   // replaced meanwhile: take the new value
                    if (b != null)
                        throw replaced();
                    v = get(heap, ref, sorted, kind, key);
                    if (v == MISSING)
                        continue;   // and removed since
                }
                return new AbstractMap.SimpleImmutableEntry<>((K) key, (V) v);
            }
        }

        private void start(Session s) throws Throwable {
            started = true;
            if (!sorted)
                return;   // a zeroed uh_iter starts a hash map iteration
            long k = 0;
            if (from != null) {
                Keys.put(s, kind, from);
                k = s.at + Session.KEY;
            }
            int rc = (int) Native.SMAP_SCAN.invokeExact(s.h, ref, k, reverse ? 1 : 0, s.at + Session.ITER);
            if (rc != 0)
                throw Errors.of(rc, "sorted map scan");
            for (int i = 0; i < 8; i++)
                it[i] = s.scratch.get(JAVA_LONG, Session.ITER + 8L * i);
        }
    }

    static int intSize(long n) {
        return n > Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) n;
    }
}
