package org.uniheap;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.AbstractMap;
import java.util.Map;
import java.util.NoSuchElementException;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
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
    private static final int FREE_OLD = 1;         // UH_FREE_OLD

    static int keyKind(Heap heap, long ref, boolean sorted) {
        long kind = DataTypes.query(heap, ref, sorted ? Native.SMAP_KEY_KIND : Native.MAP_KEY_KIND, "map");
        if (kind != Keys.STRING && kind != Keys.BYTES && kind != Keys.I64)
            throw Values.unknown(sorted ? "sorted map" : "map", "key kind", (int) kind);
        return (int) kind;
    }

    static long size(Heap heap, long ref, boolean sorted) {
        return DataTypes.query(heap, ref, sorted ? Native.SMAP_LEN : Native.MAP_LEN, "map size");
    }

    /**
     * What a lookup makes of the value it found (type, bits and where, as
     * {@link Values#from(Heap, int, long, int)} takes them), once the
     * session is given back: the Java value, or {@link Values#CHANGED} when
     * a string or bytes value was freed before it was read (the lookup then
     * runs again).
     */
    @FunctionalInterface
    interface Reader {
        Object read(Heap heap, int type, long bits, int where);
    }

    /** The value of key, or MISSING. */
    static Object get(Heap heap, long ref, boolean sorted, int kind, Object key) {
        return get(heap, ref, sorted, kind, key, Values::from);
    }

    /** What reader makes of the value of key, or MISSING. get() and view()
     * share this lookup, retries included. */
    static Object get(Heap heap, long ref, boolean sorted, int kind, Object key, Reader reader) {
        for (int tries = 0; tries < Blobs.READ_TRIES; tries++) {   // bound: a writer replacing it each time
            BlockState b = heap.current();
            Session s = heap.acquire(b);
            int type, where;
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
                where = s.valueWhere(Session.OUT);
            } catch (Throwable t) {
                throw Errors.rethrow(t);
            } finally {
                heap.release(b, s);
            }
            Object v = reader.read(heap, type, bits, where);
            if (v != Values.CHANGED)
                return v;
            if (b != null)
                throw replaced();
        }
        throw new ConflictException("map get: the value kept changing while being read");
    }

    /**
     * The field values of the record stored under key ({@link
     * PObject#fieldValues()} of get(key)), or null when key is absent: one
     * uh_map_get_record / uh_smap_get_record, the lookup and the copy of
     * the whole record at one instant, decoded here; no proxy is made.
     * @throws TypeMismatchException when the value is not a record
     */
    static Object[] getFields(Heap heap, long ref, boolean sorted, int kind, Object key) {
        for (int tries = 0; tries < Blobs.READ_TRIES; tries++) {   // bound: a writer replacing a value each time
            BlockState b = heap.current();
            Session s = heap.acquire(b);
            Fetched f;
            MemorySegment payload;
            ProxyType t;
            try {
                Keys.put(s, kind, key);
                if ((f = fetch(s, ref, sorted)) == null)
                    return null;
                t = heap.classes.known(f.cls);
                // Nothing to call: decoded from the scratch, in place (a slice
                // of it would be one more allocation per read).
                if (t != null && t.flat)
                    return ProxyBase.decode(heap, t, f.payload, ProxyBase.PAYLOAD_AT - f.from);
                payload = MemorySegment.ofArray(words(f.payload, f.from, f.len));
            } finally {
                heap.release(b, s);
            }
            if (t == null)
                t = heap.classes.type(f.cls);
            Object[] v = ProxyBase.decode(heap, t, payload, ProxyBase.PAYLOAD_AT);
            if (v != null)
                return v;
            if (b != null)
                throw replaced();
        }
        throw new ConflictException("map get: the record's values kept changing while being read");
    }

    /**
     * The record stored under key copied into a new array ({@link
     * RecordImage}), or null when key is absent: one uh_map_get_record /
     * uh_smap_get_record (the lookup and the copy at one instant) and one
     * copy out of the scratch; no proxy, no value decoded.
     * @throws TypeMismatchException when the value is not a record
     */
    static RecordImage getImage(Heap heap, long ref, boolean sorted, int kind, Object key) {
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        Fetched f;
        byte[] bytes;
        try {
            Keys.put(s, kind, key);
            if ((f = fetch(s, ref, sorted)) == null)
                return null;
            bytes = bytes(f.payload, f.from, f.len);
        } finally {
            heap.release(b, s);
        }
        return new RecordImage(heap.classes.type(f.cls), bytes);
    }

    /** len bytes from {@code from} of seg, copied into longs (8-aligned, as decode reads). */
    static long[] words(MemorySegment seg, long from, long len) {
        long[] words = new long[(int) ((len + 7) / 8)];
        MemorySegment.copy(seg, from, MemorySegment.ofArray(words), 0, len);
        return words;
    }

    /** len bytes from {@code from} of seg, copied into an array of their own. */
    static byte[] bytes(MemorySegment seg, long from, long len) {
        byte[] b = new byte[(int) len];
        MemorySegment.copy(seg, JAVA_BYTE, from, b, 0, (int) len);
        return b;
    }

    /** A record's payload as fetch copied it: len bytes from {@code from} of payload, of class cls. */
    private record Fetched(MemorySegment payload, long from, long len, int cls) {}

    /**
     * The record under the key in s's scratch, copied at one instant by one
     * uh_map_get_record / uh_smap_get_record: into the scratch, or, when it
     * is longer, into a buffer of its own (a second call); null when the
     * key is absent (also when it went between the two calls).
     * @throws TypeMismatchException when the value is not a record
     */
    private static Fetched fetch(Session s, long ref, boolean sorted) {
        int rc = getRecord(s, ref, sorted, s.at + Session.DATA, Session.DATA_CAP);
        MemorySegment payload = s.scratch;
        long from = Session.DATA;
        if (rc == Errors.ERANGE && s.scratch.get(JAVA_LONG, Session.OUT) > Session.DATA_CAP) {
            payload = Arena.ofAuto().allocate(s.scratch.get(JAVA_LONG, Session.OUT), 8);
            from = 0;
            rc = getRecord(s, ref, sorted, payload.address(), payload.byteSize());
        }
        if (rc == Errors.ENOTFOUND)
            return null;
        if (rc != 0)   // UH_ETYPE: the value is not a record
            throw Errors.of(rc, "map get of a record");
        return new Fetched(payload, from, s.scratch.get(JAVA_LONG, Session.OUT),
                s.scratch.get(JAVA_INT, Session.OUT + 8));
    }

    /**
     * Replace inline field {@code field} of the record stored under key with
     * value (a byte[], Bytes, or a String as its UTF-8): one
     * uh_map_set_inline / uh_smap_set_inline, the lookup and the write in
     * the calling thread's block or in one of their own. False when key is
     * absent.
     */
    static boolean setInline(Heap heap, long ref, boolean sorted, int kind, Object key, String field,
                             Object value) {
        byte[] data = value instanceof byte[] b ? b : value instanceof Bytes by ? by.raw()
                : value instanceof String str ? str.getBytes(StandardCharsets.UTF_8) : null;
        if (data == null)
            throw new TypeMismatchException(Errors.ETYPE, "an inline field takes a byte[], Bytes or String, not "
                    + (value == null ? "null" : value.getClass().getName()));
        byte[] name = field.getBytes(StandardCharsets.UTF_8);
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        int n = name.length + 1 + data.length;
        try (Arena a = n > Session.DATA_CAP ? Arena.ofConfined() : null) {
            s.wrote = true;
            Keys.put(s, kind, key);
            // The name (a C string), then the value: staged, copied at once
            // to the scratch's DATA, or past it to memory of their own.
            byte[] img = a != null ? new byte[n] : s.staging(n);
            System.arraycopy(name, 0, img, 0, name.length);
            img[name.length] = 0;
            System.arraycopy(data, 0, img, name.length + 1, data.length);
            MemorySegment buf = a != null ? a.allocate(n) : s.scratch;
            long base = a != null ? 0 : Session.DATA;
            MemorySegment.copy(img, 0, buf, JAVA_BYTE, base, n);
            long at = buf.address() + base;
            long dst = at + name.length + 1;
            int rc = sorted
                    ? (int) Native.SMAP_SET_INLINE.invokeExact(s.h, ref, s.at + Session.KEY, at, dst, (long) data.length)
                    : (int) Native.MAP_SET_INLINE.invokeExact(s.h, ref, s.at + Session.KEY, at, dst, (long) data.length);
            if (rc == Errors.ENOTFOUND)
                return false;
            if (rc != 0)
                throw Errors.of(rc, "set field " + field + " of the record under a map key");
            return true;
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        } finally {
            heap.release(b, s);
        }
    }

    /**
     * A new record of class t under key, its inline fields named in values
     * set (a byte[], Bytes, or a String as its UTF-8): one
     * uh_map_put_record / uh_smap_put_record, the allocation, the writes
     * and the put in the calling thread's block or in one of their own;
     * freeOld frees the object the key held (UH_FREE_OLD).
     */
    static void putRecord(Heap heap, long ref, boolean sorted, int kind, Object key, ProxyType t,
                          Map<String, ?> values, boolean freeOld) {
        int n = values.size();
        int[] idx = new int[n];
        byte[][] data = new byte[n][];
        long bytes = 16L * n;
        int i = 0;
        for (Map.Entry<String, ?> e : values.entrySet()) {   // bound: the values
            idx[i] = t.fieldIndex(e.getKey());
            int type = t.types[idx[i]];
            Object v = e.getValue();
            data[i] = type == FieldType.INLINE_BYTES.code() && v instanceof byte[] b ? b
                    : type == FieldType.INLINE_BYTES.code() && v instanceof Bytes by ? by.raw()
                    : type == FieldType.INLINE_STRING.code() && v instanceof String str
                            ? str.getBytes(StandardCharsets.UTF_8) : null;
            if (data[i] == null)
                throw new TypeMismatchException(Errors.ETYPE, "putRecord: field " + e.getKey() + " of "
                        + t.name + " is not an inline field of the value's type (byte[] or Bytes for "
                        + "@Inline bytes, String for @Inline String), given "
                        + (v == null ? "null" : v.getClass().getName()));
            bytes += (data[i].length + 7) & ~7L;
            i++;
        }
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        try (Arena a = bytes > Session.DATA_CAP ? Arena.ofConfined() : null) {
            s.wrote = true;
            Keys.put(s, kind, key);
            // n uh_inline_value {u32 field, u32 len, ptr data}, then the bytes
            // (each 8-aligned), staged in an array and copied at once.
            MemorySegment dst = a != null ? a.allocate(bytes, 16) : s.scratch;
            long base = a != null ? 0 : Session.DATA;
            long vals = dst.address() + base;
            byte[] img = a != null ? new byte[(int) bytes] : s.staging((int) bytes);
            int at = 16 * n;
            for (int k = 0; k < n; k++) {
                int h = 16 * k, len = data[k].length;
                putLong(img, h, idx[k] & 0xffff_ffffL | (long) len << 32);
                putLong(img, h + 8, vals + at);
                System.arraycopy(data[k], 0, img, at, len);
                at += (len + 7) & ~7;
            }
            MemorySegment.copy(img, 0, dst, JAVA_BYTE, base, at);
            int flags = FREE_OLD_VALUE | (freeOld ? FREE_OLD : 0);
            int rc = sorted
                    ? (int) Native.SMAP_PUT_RECORD.invokeExact(s.h, ref, s.at + Session.KEY, t.classId, vals, n, flags)
                    : (int) Native.MAP_PUT_RECORD.invokeExact(s.h, ref, s.at + Session.KEY, t.classId, vals, n, flags);
            if (rc != 0)
                throw Errors.of(rc, "put a new " + t.name + " under a map key");
        } catch (Throwable e) {
            throw Errors.rethrow(e);
        } finally {
            heap.release(b, s);
        }
    }

    /** v little-endian at b[at..at+8). */
    private static void putLong(byte[] b, int at, long v) {
        for (int i = 0; i < 8; i++, v >>>= 8)
            b[at + i] = (byte) v;
    }

    private static int getRecord(Session s, long ref, boolean sorted, long dst, long cap) {
        try {
            return sorted
                    ? (int) Native.SMAP_GET_RECORD.invokeExact(s.h, ref, s.at + Session.KEY, dst, cap,
                            s.at + Session.OUT, s.at + Session.OUT + 8)
                    : (int) Native.MAP_GET_RECORD.invokeExact(s.h, ref, s.at + Session.KEY, dst, cap,
                            s.at + Session.OUT, s.at + Session.OUT + 8);
        } catch (Throwable e) {
            throw Errors.rethrow(e);
        }
    }

    private static ConflictException replaced() {
        return new ConflictException("a map value read in this block was replaced by another "
                + "session: run the block again");
    }

    /**
     * Put key -> value; with wantOld, return the previous value (MISSING if
     * none). A String or bytes value goes into a hash map through
     * uh_map_put_bytes, which keeps a short one in the entry; without
     * wantOld that one call is the whole step.
     */
    static Object put(Heap heap, long ref, boolean sorted, int kind, Object key, Object value,
                      boolean wantOld) {
        byte[] data = sorted ? null : Values.bytesOf(value);
        boolean string = value instanceof String;
        if (data != null && !wantOld) {
            putBytes(heap, ref, kind, key, string, data);
            return MISSING;
        }
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        Object[] oldValue = {MISSING};
        long[] raw = {0, 0};   // a previous value to convert once s is given back
        try {
            Steps.run(s, b == null, "map put", () -> {
                if (data == null)
                    Values.to(heap, s, Session.OUT2, value, 0, "map value");
                Keys.put(s, kind, key);
                if (wantOld) {
                    int rc = call(sorted ? Native.SMAP_GET : Native.MAP_GET, s, ref);
                    if (rc == 0) {
                        oldValue[0] = keep(heap, s, Session.OUT, raw);
                    } else if (rc != Errors.ENOTFOUND) {
                        return rc;
                    }
                }
                return data != null ? s.mapPutBytes(ref, string, data, FREE_OLD_VALUE)
                        : putValue(s, ref, sorted);
            });
        } finally {
            if (sorted)
                heap.sortedWrites.add(1);
            heap.release(b, s);
        }
        return raw[0] != 0 ? Values.from(heap, (int) raw[0], raw[1]) : oldValue[0];
    }

    /* The uh_value in OUT2 under the key in KEY. */
    private static int putValue(Session s, long ref, boolean sorted) {
        try {
            return sorted
                    ? (int) Native.SMAP_PUT.invokeExact(s.h, ref, s.at + Session.KEY, s.at + Session.OUT2, FREE_OLD_VALUE)
                    : (int) Native.MAP_PUT.invokeExact(s.h, ref, s.at + Session.KEY, s.at + Session.OUT2, FREE_OLD_VALUE);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /* A hash map's String or bytes value, no old value wanted: one
     * uh_map_put_bytes, in the calling thread's block or atomic on its own. */
    private static void putBytes(Heap heap, long ref, int kind, Object key, boolean string, byte[] data) {
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        try {
            s.wrote = true;
            Keys.put(s, kind, key);
            int rc = s.mapPutBytes(ref, string, data, FREE_OLD_VALUE);
            if (rc != 0)
                throw Errors.of(rc, "map put");
        } finally {
            heap.release(b, s);
        }
    }

    /* An old value about to be replaced: a string or bytes value, inline
     * ones included, is copied now (the step frees it, or the entry holding
     * it, when it commits); anything else is left in raw to convert once
     * the session is given back (wrapping a reference may need the class
     * table, hence a session). A type this binding does not know throws
     * here, before the step commits: nothing changes. */
    private static Object keep(Heap heap, Session s, long off, long[] raw) {
        int type = Values.checkKnown(s.valueType(off), "map value");
        long bits = s.valueBits(off);
        if (!Values.isBlob(type)) {
            raw[0] = type;
            raw[1] = bits;
            return null;
        }
        Object v = Values.from(heap, type, bits, s.valueWhere(off));
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
            if (sorted)
                heap.sortedWrites.add(1);
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
     *
     * <p>A sorted map is read a batch of entries per call
     * (uh_smap_next_n: what as many single steps would return, from one
     * leaf read at one instant), 4 entries first, then twice as many each
     * call up to {@link Session#BATCH_MAX}, so that a short scan reads
     * little ahead. The batch's keys are copied out of the mapping during
     * the call, as a single step's are; keys become Java objects and
     * values are read (strings and bytes copied, objects wrapped) as the
     * entries are handed out, as a single step would read them after its
     * call. Entries read ahead are dropped, and the scan goes on from the
     * last entry handed out, when the cursor's thread has put to or removed
     * from a sorted map since they were read: a thread sees its own writes
     * as single steps would show them. A hash map is read one entry per
     * call.
     */
    static final class Cursor<K, V> implements java.util.Iterator<Map.Entry<K, V>> {
        private static final int FIRST_BATCH = 4;
        private static final Object GONE = new Object();
        /* The map's proxy: its pin keeps the map while a scan of it is
         * reachable, even when nothing else holds the proxy. */
        @SuppressWarnings("unused")
        private final DataType map;
        private final Heap heap;
        private final long ref;
        private final boolean sorted;
        private final int kind;
        private final Object from;
        private final boolean reverse;
        /* sorted: the bound libuniheap ends the scan at, or null */
        private final Object to;
        private final boolean toIncl;
        private final long[] it = new long[8];
        private boolean started, ended;
        private Map.Entry<K, V> next;
        /* The entries of the last call: n of them, pos handed out. */
        private int n, pos;
        private int batch = FIRST_BATCH;
        /* heap.sortedWrites when the entries were read */
        private int writes;
        /* The last key handed out; restart: scan again from it (skipping it). */
        private Object last, skip;
        private boolean restart;
        private final int[] types = new int[Session.BATCH_MAX];
        private final long[] bits = new long[Session.BATCH_MAX];
        /* the values' reserved words: where an inline value lies */
        private final int[] wheres = new int[Session.BATCH_MAX];
        private final long[] i64s = new long[Session.BATCH_MAX];
        private final int[] keyAt = new int[Session.BATCH_MAX];
        private final int[] keyLen = new int[Session.BATCH_MAX];
        private byte[] keyBytes = new byte[256];

        Cursor(DataType map, Heap heap, long ref, boolean sorted, int kind, Object from,
               boolean reverse) {
            this(map, heap, ref, sorted, kind, from, reverse, null, false);
        }

        Cursor(DataType map, Heap heap, long ref, boolean sorted, int kind, Object from,
               boolean reverse, Object to, boolean toIncl) {
            this.map = map;
            this.heap = heap;
            this.ref = ref;
            this.sorted = sorted;
            this.kind = kind;
            this.from = from;
            this.reverse = reverse;
            this.to = to;
            this.toIncl = toIncl;
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
                if (pos < n && heap.sortedWrites.get() != writes) {
                    n = pos = 0;   // this thread wrote since: read on from the last entry
                    restart = true;
                }
                if (pos == n && !fetch()) {
                    ended = true;
                    return null;
                }
                int i = pos++;
                Object key = kind == Keys.I64 ? (Object) i64s[i]
                        : Keys.of(kind, keyBytes, keyAt[i], keyLen[i]);
                if (skip != null) {
                    boolean again = skip.equals(key);
                    skip = null;
                    if (again)
                        continue;
                }
                Object v = value(types[i], bits[i], wheres[i]);
                if (v == Values.CHANGED || v == GONE) {   // replaced meanwhile: take the new value
                    if (v == Values.CHANGED && heap.current() != null)
                        throw replaced();
                    v = get(heap, ref, sorted, kind, key);   // a dangling reference throws here
                    if (v == MISSING)
                        continue;   // and removed since
                }
                last = key;
                return new AbstractMap.SimpleImmutableEntry<>((K) key, (V) v);
            }
        }

        /* A value of the last call, read now: CHANGED when a string or
         * bytes value was freed since, GONE when the object a reference
         * names is no longer there (freed since, or a dangling reference:
         * a lookup of the key tells which). */
        private Object value(int type, long b, int where) {
            if (type != Values.REF || b == 0)
                return Values.from(heap, type, b, where);
            try {
                return heap.wrapValue(b);
            } catch (FreedObjectException e) {
                return GONE;
            }
        }

        /* The next entries into the arrays; false at the end. */
        private boolean fetch() {
            BlockState b = heap.current();
            Session s = heap.acquire(b);
            try {
                MemorySegment m = s.scratch;
                if (!started || restart)
                    start(s);
                for (int i = 0; i < 8; i++)
                    m.set(JAVA_LONG, Session.ITER + 8L * i, it[i]);
                writes = heap.sortedWrites.get();
                int rc;
                if (sorted && to != null) {   // the bound's order is libuniheap's to decide
                    Keys.put(s, kind, to);
                    rc = (int) Native.SMAP_NEXT_UNTIL.invokeExact(s.h, ref, s.at + Session.ITER,
                            s.at + Session.KEY, toIncl ? 2 : 0, s.at + Session.BATCH_KEYS,
                            s.at + Session.BATCH_VALS, batch, s.at + Session.OUT);
                } else if (sorted) {
                    rc = (int) Native.SMAP_NEXT_N.invokeExact(s.h, ref, s.at + Session.ITER,
                            s.at + Session.BATCH_KEYS, s.at + Session.BATCH_VALS, batch,
                            s.at + Session.OUT);
                } else {
                    rc = (int) Native.MAP_NEXT.invokeExact(s.h, ref, s.at + Session.ITER,
                            s.at + Session.BATCH_KEYS, s.at + Session.BATCH_VALS);
                    m.set(JAVA_INT, Session.OUT, 1);
                }
                if (rc == Errors.ENOTFOUND)
                    return false;
                if (rc != 0)
                    throw Errors.of(rc, "map iteration");
                for (int i = 0; i < 8; i++)
                    it[i] = m.get(JAVA_LONG, Session.ITER + 8L * i);
                int got = m.get(JAVA_INT, Session.OUT);
                if (got < 1 || got > batch)
                    throw new UniheapException("map iteration: libuniheap returned " + got
                            + " entries for at most " + batch);
                copyOut(s, got);
                n = got;
                pos = 0;
                if (batch < Session.BATCH_MAX)
                    batch = Math.min(2 * batch, Session.BATCH_MAX);
                return true;
            } catch (Throwable t) {
                throw Errors.rethrow(t);
            } finally {
                heap.release(b, s);
            }
        }

        /* Keys and raw values of the call: a key's bytes lie in the mapping,
         * or (a hash-map key, a key kept inline in a sorted map's leaf) in
         * libuniheap's buffer for this call: copied before the next one. */
        private void copyOut(Session s, int got) {
            MemorySegment m = s.scratch;
            int used = 0;
            for (int j = 0; j < got; j++) {
                long k = Session.BATCH_KEYS + 32L * j;
                long v = Session.BATCH_VALS + 16L * j;
                types[j] = m.get(JAVA_INT, v);
                wheres[j] = m.get(JAVA_INT, v + 4);
                bits[j] = m.get(JAVA_LONG, v + 8);
                if (kind == Keys.I64) {
                    i64s[j] = m.get(JAVA_LONG, k + 24);
                    continue;
                }
                long data = m.get(JAVA_LONG, k + 8);
                int len = (int) m.get(JAVA_LONG, k + 16);
                if (keyBytes.length - used < len)
                    keyBytes = java.util.Arrays.copyOf(keyBytes, Math.max(2 * keyBytes.length, used + len));
                Keys.copyBytes(heap, data, len, keyBytes, used);
                keyAt[j] = used;
                keyLen[j] = len;
                used += len;
            }
        }

        private void start(Session s) throws Throwable {
            started = true;
            if (!sorted)
                return;   // a zeroed uh_iter starts a hash map iteration
            Object at = from;
            if (restart) {
                restart = false;
                batch = FIRST_BATCH;
                if (last != null)
                    at = skip = last;
            }
            long k = 0;
            if (at != null) {
                Keys.put(s, kind, at);
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
