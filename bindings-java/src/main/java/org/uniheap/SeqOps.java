package org.uniheap;

import java.lang.invoke.MethodHandle;

/**
 * What lists and arrays share: element get and set by index, one
 * libuniheap call each (uh_list_* or uh_array_*).
 */
final class SeqOps {
    private SeqOps() {
    }

    private static final int FREE_OLD_VALUE = 2;   // UH_FREE_OLD_VALUE

    static IndexOutOfBoundsException outOfRange(long index, String what) {
        return new IndexOutOfBoundsException(what + ": index " + index + " is out of range");
    }

    /** getFn(h, ref, index, &value). */
    static Object get(Heap heap, long ref, MethodHandle getFn, long index, String what) {
        if (index < 0)
            throw outOfRange(index, what);
        for (int tries = 0; tries < Blobs.READ_TRIES; tries++) {   // bound: a writer replacing it each time
            BlockState b = heap.current();
            Session s = heap.acquire(b);
            int type;
            long bits;
            try {
                int rc = (int) getFn.invokeExact(s.h, ref, index, s.at + Session.OUT);
                if (rc == Errors.ERANGE)
                    throw outOfRange(index, what);
                if (rc != 0)
                    throw Errors.of(rc, what);
                type = s.valueType(Session.OUT);
                bits = s.valueBits(Session.OUT);
            } catch (Throwable t) {
                throw Errors.rethrow(t);
            } finally {
                heap.release(b, s);
            }
            Object v = Values.from(heap, type, bits);
            if (v != Values.CHANGED)
                return v;
            if (b != null)
                throw new ConflictException(what + ": an element read in this block was replaced "
                        + "by another session: run the block again");
        }
        throw new ConflictException(what + ": the element kept changing while being read");
    }

    /**
     * setFn(h, ref, index, &value, flags) with the old value freed if it is
     * a string or bytes; returns the old value when getFn is not null.
     * want: the element type required (arrays), 0 for any. length: the
     * fixed length of an array, whose index is checked here so that
     * UH_ERANGE then means a value out of range; -1 for a list.
     */
    static Object set(Heap heap, long ref, MethodHandle getFn, MethodHandle setFn, long index,
                      Object value, int want, long length, String what) {
        if (index < 0 || length >= 0 && index >= length)
            throw outOfRange(index, what);
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        Object[] old = {null};
        long[] raw = {0, 0};
        try {
            Steps.run(s, b == null, what, () -> {
                Values.to(heap, s, Session.OUT2, value, want, what);
                try {
                    int rc;
                    if (getFn != null) {
                        rc = (int) getFn.invokeExact(s.h, ref, index, s.at + Session.OUT);
                        if (rc == Errors.ERANGE)
                            throw outOfRange(index, what);
                        if (rc != 0)
                            return rc;
                        old[0] = keep(heap, s, raw, what);
                    }
                    rc = (int) setFn.invokeExact(s.h, ref, index, s.at + Session.OUT2, FREE_OLD_VALUE);
                    if (rc == Errors.ERANGE && length < 0)
                        throw outOfRange(index, what);
                    return rc;
                } catch (Throwable t) {
                    throw Errors.rethrow(t);
                }
            });
        } finally {
            heap.release(b, s);
        }
        return raw[0] != 0 ? Values.from(heap, (int) raw[0], raw[1]) : old[0];
    }

    /* The old value at OUT: strings and bytes copied now (the step frees
     * them), anything else left in raw for after the session is back. A
     * type this binding does not know throws here, before the step
     * commits: nothing changes. */
    static Object keep(Heap heap, Session s, long[] raw, String what) {
        int type = Values.checkKnown(s.valueType(Session.OUT), what);
        long bits = s.valueBits(Session.OUT);
        if (type != Values.STRING && type != Values.BYTES) {
            raw[0] = type;
            raw[1] = bits;
            return null;
        }
        Object v = Values.from(heap, type, bits);
        if (v == Values.CHANGED)
            throw new ConflictException(what + ": the element was replaced meanwhile");
        return v;
    }
}
