package org.uniheap;

import java.lang.foreign.MemorySegment;
import java.util.function.ToIntFunction;

/**
 * The libuniheap calls of a record proxy's fields ({@link ProxyBase}): its
 * reads inside a block (validated against the block's snapshot), the read
 * of all its fields at one instant, and every write. A direct read outside
 * a block needs none of these: ProxyBase loads the field from the mapping.
 *
 * <p>Each call runs on the calling thread's block session, or on a session
 * borrowed for that one call and given back before it returns. A read
 * inside a block is only called with that block (never null). A write
 * marks its session as having written, so the block commits as a writer.
 */
final class FieldIO {
    private FieldIO() {
    }

    static long readI64(BlockState b, ProxyBase p, int index) {
        return read(b, p, index, s -> s.getI64(p.ref, index)).outLong();
    }

    static double readF64(BlockState b, ProxyBase p, int index) {
        return read(b, p, index, s -> s.getF64(p.ref, index)).outDouble();
    }

    static long readRef(BlockState b, ProxyBase p, int index) {
        return read(b, p, index, s -> s.getRef(p.ref, index)).outLong();
    }

    /* One read call on the block's session; the session, for its result. */
    private static Session read(BlockState b, ProxyBase p, int index, ToIntFunction<Session> call) {
        Session s = p.heap.acquire(b);
        int rc = call.applyAsInt(s);
        if (rc != 0)
            throw Errors.of(rc, p.what(index));
        return s;
    }

    /** The bytes p's fields span (ProxyType.spanLo, spanLen) as of one
     * instant: one uh_read, in b's snapshot inside a block. */
    static long[] readFields(BlockState b, ProxyBase p) {
        long[] words = new long[p.type.spanLen / 8];
        Session s = p.heap.acquire(b);
        try {
            int rc = s.read(p.ref, p.type.spanLo, words);
            if (rc == Errors.EFREED)
                throw p.gone();
            if (rc != 0)
                throw Errors.of(rc, "the fields of the " + p.type.name + " at offset " + p.offset);
            return words;
        } finally {
            p.heap.release(b, s);
        }
    }

    /** The field values of p, whose class keeps no value out of line
     * (ProxyType.flat), as of one instant: one uh_read into the
     * session's scratch, decoded there before the session is given back
     * (decoding such a class calls nothing), so the span is copied once,
     * into the values, rather than first into a long[] as readFields does. */
    static Object[] readFlat(BlockState b, ProxyBase p) {
        ProxyType t = p.type;
        if (t.spanLen > Session.DATA_CAP)   // past the scratch: through a long[] of its own
            return ProxyBase.decode(p.heap, t, MemorySegment.ofArray(readFields(b, p)), t.spanLo);
        Session s = p.heap.acquire(b);
        try {
            int rc = s.readData(p.ref, t.spanLo, t.spanLen);
            if (rc == Errors.EFREED)
                throw p.gone();
            if (rc != 0)
                throw Errors.of(rc, "the fields of the " + t.name + " at offset " + p.offset);
            return ProxyBase.decode(p.heap, t, s.scratch, t.spanLo - Session.DATA);   // in place: no slice
        } finally {
            p.heap.release(b, s);
        }
    }

    /** An inline field's value (uh_get_inline: one instant, in b's
     * snapshot inside a block), at most cap bytes. */
    static byte[] readInline(BlockState b, ProxyBase p, int index, int cap) {
        Session s = p.heap.acquire(b);
        try {
            int[] rc = new int[1];
            byte[] v = s.getInline(p.ref, index, cap, rc);
            if (rc[0] != 0)
                throw Errors.of(rc[0], p.what(index));
            return v;
        } finally {
            p.heap.release(b, s);
        }
    }

    /** An inline field written in place (uh_set_inline). */
    static void writeInline(ProxyBase p, int index, byte[] data) {
        write(p, index, s -> s.setInline(p.ref, index, data));
    }

    static void writeI64(ProxyBase p, int index, long v) {
        write(p, index, s -> s.setI64(p.ref, index, v));
    }

    static void writeF64(ProxyBase p, int index, double v) {
        write(p, index, s -> s.setF64(p.ref, index, v));
    }

    static void writeRef(ProxyBase p, int index, PObject v) {
        long r = v == null ? 0 : p.heap.refOf(v);
        write(p, index, s -> s.setRef(p.ref, index, r));
    }

    /* One write call on the block's session, or on one borrowed for it. */
    private static void write(ProxyBase p, int index, ToIntFunction<Session> call) {
        BlockState b = p.heap.current();
        Session s = p.heap.acquire(b);
        try {
            s.wrote = true;
            int rc = call.applyAsInt(s);
            if (rc != 0)
                throw Errors.of(rc, p.what(index));
        } finally {
            p.heap.release(b, s);
        }
    }

    /** A string or bytes field owns its value: the new value replaces and
     * frees the old one in one step. */
    static void writeBlob(ProxyBase p, int index, boolean string, byte[] data) {
        BlockState b = p.heap.current();
        Session s = p.heap.acquire(b);
        try {
            Steps.run(s, b == null, p.what(index), () -> {
                int rc = s.getRef(p.ref, index);
                long old = s.outLong(), now = 0;
                if (rc == 0 && data != null) {
                    rc = s.newBlob(string, data);
                    now = s.outLong();
                }
                if (rc == 0)
                    rc = s.setRef(p.ref, index, now);
                if (rc == 0 && old != 0 && old != now)
                    rc = s.free(old);
                return rc;
            });
        } finally {
            p.heap.release(b, s);
        }
    }
}
