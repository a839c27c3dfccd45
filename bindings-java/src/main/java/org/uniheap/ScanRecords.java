package org.uniheap;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The records of a sorted map's key range, as their field values
 * ({@link PSortedMap#scanFieldValues}) or as images ({@link
 * PSortedMap#scanImages}): a leaf's records per downcall
 * (uh_smap_next_records copies each one's whole payload into the session's
 * record buffer), each made from that copy as {@link MapOps#getFields} or
 * {@link MapOps#getImage} makes one; no proxy, no block. What cannot be
 * made with the session held (an unknown class, out-of-line values to
 * read) is made once the session is given back; a record past the buffer
 * is read by its key.
 */
final class ScanRecords {
    private ScanRecords() {
    }

    /* uh_scan_record: uh_key (32 bytes), ref, class_id, status, at, len. */
    private static final long REC_SIZE = 64, REC_REF = 32, REC_CLASS = 40, REC_STATUS = 44,
            REC_AT = 48, REC_LEN = 56;
    private static final int MAX = 32;    // records per call (one leaf's)
    /** Where the uh_scan_record array goes: DATA, unused by the call. */
    private static final long RECS = Session.DATA;

    /**
     * What a scan makes of each record. now runs with the session held and
     * calls nothing; keep copies what later needs; later and byKey run
     * after the session was given back.
     */
    private interface Maker<T> {
        /** The record of known class t (null if not known yet) from its copy, or null for later. */
        T now(Heap heap, ProxyType t, MemorySegment buf, long at, long len);

        /** The copy later makes the record from. */
        Object keep(MemorySegment buf, long at, long len);

        /** The record of class cls from keep's copy, or null when it changed since (out-of-line values freed). */
        T later(Heap heap, int cls, Object copy);

        /** The key's record now, or null when the key is gone. */
        T byKey(Heap heap, long ref, int kind, Object key);
    }

    private static final Maker<Object[]> FIELDS = new Maker<>() {
        public Object[] now(Heap heap, ProxyType t, MemorySegment buf, long at, long len) {
            // flat: nothing to call, decoded in the buffer, no slice made
            return t != null && t.flat ? ProxyBase.decode(heap, t, buf, ProxyBase.PAYLOAD_AT - at) : null;
        }

        public Object keep(MemorySegment buf, long at, long len) {
            return MapOps.words(buf, at, len);
        }

        public Object[] later(Heap heap, int cls, Object copy) {
            return ProxyBase.decode(heap, heap.classes.type(cls), MemorySegment.ofArray((long[]) copy),
                    ProxyBase.PAYLOAD_AT);
        }

        public Object[] byKey(Heap heap, long ref, int kind, Object key) {
            return MapOps.getFields(heap, ref, true, kind, key);
        }
    };

    private static final Maker<RecordImage> IMAGES = new Maker<>() {
        public RecordImage now(Heap heap, ProxyType t, MemorySegment buf, long at, long len) {
            return t != null ? new RecordImage(t, (byte[]) keep(buf, at, len)) : null;
        }

        public Object keep(MemorySegment buf, long at, long len) {
            return MapOps.bytes(buf, at, len);
        }

        public RecordImage later(Heap heap, int cls, Object copy) {
            return new RecordImage(heap.classes.type(cls), (byte[]) copy);
        }

        public RecordImage byKey(Heap heap, long ref, int kind, Object key) {
            return MapOps.getImage(heap, ref, true, kind, key);
        }
    };

    /** A record the loop could not make with the session held. */
    private record Later(int index, int cls, Object copy, Object key) {
    }

    static List<Object[]> scan(Heap heap, long ref, int kind, Object from, int count) {
        return run(heap, ref, kind, from, count, FIELDS);
    }

    static List<RecordImage> images(Heap heap, long ref, int kind, Object from, int count) {
        return run(heap, ref, kind, from, count, IMAGES);
    }

    private static <T> List<T> run(Heap heap, long ref, int kind, Object from, int count, Maker<T> mk) {
        List<T> out = new ArrayList<>(Math.min(count, 128));
        if (count <= 0)
            return out;
        List<Later> later = null;
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        try {
            MemorySegment m = s.scratch, buf = s.records();
            long k = 0;
            if (from != null) {
                Keys.put(s, kind, from);
                k = s.at + Session.KEY;
            }
            int rc = (int) Native.SMAP_SCAN.invokeExact(s.h, ref, k, 0, s.at + Session.ITER);
            while (rc == 0 && out.size() < count) {   // bound: count (each call gives >= 1 or ends)
                int want = Math.min(count - out.size(), MAX);
                rc = (int) Native.SMAP_NEXT_RECORDS.invokeExact(s.h, ref, s.at + Session.ITER, 0L, 0,
                        buf.address(), buf.byteSize(), s.at + RECS, want, s.at + Session.OUT);
                int n = rc == 0 ? m.get(JAVA_INT, Session.OUT) : 0;
                for (int i = 0; i < n; i++) {   // bound: want
                    long r = RECS + REC_SIZE * i;
                    int cls = m.get(JAVA_INT, r + REC_CLASS);
                    long at = m.get(JAVA_LONG, r + REC_AT), len = m.get(JAVA_LONG, r + REC_LEN);
                    boolean copied = m.get(JAVA_INT, r + REC_STATUS) == 0;
                    T v = copied ? mk.now(heap, heap.classes.known(cls), buf, at, len) : null;
                    if (v == null) {
                        if (later == null)
                            later = new ArrayList<>();
                        later.add(new Later(out.size(), cls, copied ? mk.keep(buf, at, len) : null,
                                key(heap, kind, m, r)));
                    }
                    out.add(v);
                }
            }
            if (rc != 0 && rc != Errors.ENOTFOUND)
                throw Errors.of(rc, "sorted map scan of records");
        } catch (Throwable e) {
            throw Errors.rethrow(e);
        } finally {
            heap.release(b, s);
        }
        if (later != null)
            finish(heap, ref, kind, b != null, out, later, mk);
        return out;
    }

    /* The records left for after the session was given back: made from
     * their copy, or read by key (past the buffer, or outside a block an
     * out-of-line value freed since the copy: the key's record now); one
     * removed since is left out. */
    private static <T> void finish(Heap heap, long ref, int kind, boolean inBlock, List<T> out,
                                   List<Later> later, Maker<T> mk) {
        boolean gone = false;
        for (Later l : later) {
            T v = null;
            if (l.copy != null) {
                v = mk.later(heap, l.cls, l.copy);
                if (v == null && inBlock)
                    throw new ConflictException("a record read in this block was changed by "
                            + "another session: run the block again");
            }
            if (v == null)
                v = mk.byKey(heap, ref, kind, l.key);
            out.set(l.index, v);
            gone |= v == null;
        }
        if (gone)
            out.removeIf(x -> x == null);
    }

    /* The key of record r of the call (its uh_key). */
    private static Object key(Heap heap, int kind, MemorySegment m, long r) {
        if (kind == Keys.I64)
            return m.get(JAVA_LONG, r + 24);
        int len = (int) m.get(JAVA_LONG, r + 16);
        byte[] b = new byte[len];
        Keys.copyBytes(heap, m.get(JAVA_LONG, r + 8), len, b, 0);
        return Keys.of(kind, b, 0, len);
    }
}
