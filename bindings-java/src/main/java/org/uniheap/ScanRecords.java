package org.uniheap;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The field values of the records of a sorted map's key range
 * ({@link PSortedMap#scanFieldValues}): a leaf's records per downcall
 * (uh_smap_next_records copies each one's whole payload into the session's
 * record buffer), decoded as {@link MapOps#getFields} decodes one; no proxy,
 * no block. A record whose class keeps a value out of line is decoded once
 * the session is given back; one past the buffer is read by its key.
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

    /** A record the loop could not decode with the session held. */
    private record Later(int index, int cls, long[] words, Object key) {
    }

    static List<Object[]> scan(Heap heap, long ref, int kind, Object from, int count) {
        List<Object[]> out = new ArrayList<>(Math.min(count, 128));
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
                    ProxyType t = heap.classes.known(cls);
                    if (copied && t != null && t.flat) {   // nothing to call: decoded in the buffer, no slice made
                        out.add(ProxyBase.decode(heap, t, buf, ProxyBase.PAYLOAD_AT - at));
                        continue;
                    }
                    if (later == null)
                        later = new ArrayList<>();
                    long[] words = null;
                    if (copied) {   // 8-aligned, as decode reads
                        words = new long[(int) ((len + 7) / 8)];
                        MemorySegment.copy(buf, at, MemorySegment.ofArray(words), 0, len);
                    }
                    later.add(new Later(out.size(), cls, words, key(heap, kind, m, r)));
                    out.add(null);
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
            finish(heap, ref, kind, b != null, out, later);
        return out;
    }

    /* The records left for after the session was given back: decoded from
     * their copy, or read by key (past the buffer, or outside a block an
     * out-of-line value freed since the copy: the key's record now); one
     * removed since is left out. */
    private static void finish(Heap heap, long ref, int kind, boolean inBlock, List<Object[]> out,
                               List<Later> later) {
        boolean gone = false;
        for (Later l : later) {
            Object[] v = null;
            if (l.words != null) {
                v = ProxyBase.decode(heap, heap.classes.type(l.cls), MemorySegment.ofArray(l.words),
                        ProxyBase.PAYLOAD_AT);
                if (v == null && inBlock)
                    throw new ConflictException("a record read in this block was changed by "
                            + "another session: run the block again");
            }
            if (v == null)
                v = MapOps.getFields(heap, ref, true, kind, l.key);
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
