package org.uniheap;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Strings and bytes objects read in place (uniheap.h, "Direct access for
 * bindings"): check the header, copy the payload, check the header again.
 * No libuniheap call: the value's reference came from libuniheap or from a
 * field written through it.
 *
 * <p>libuniheap's uh_copy_values is the same loop in C, for the other
 * bindings; this one stays in Java, where it would add a downcall and two
 * upcalls to every read of a copy the JVM now makes in place. Its bound is
 * the same.
 */
final class Blobs {
    /** Reads of a value (or of all fields at once) before a read that keeps
     * finding a string or bytes value replaced under its copy gives up:
     * uniheap.h's UH_READ_TRIES. */
    static final int READ_TRIES = 1000;

    private Blobs() {
    }

    /**
     * The payload of the string (cls 1) or bytes (cls 2) object named by
     * ref; null if that object is no longer the one ref named (freed, or
     * freed and reused) before or during the copy: the caller reads the
     * reference again.
     * @throws TypeMismatchException if ref names a live object of another class
     */
    static byte[] tryRead(Heap heap, long ref, int cls, String what) {
        long o = ref & ProxyBase.OFFSET_MASK;
        try {
            heap.reach(ref);
            MemorySegment s = heap.seg;
            long w = (long) ProxyBase.LONG_AT.getAcquire(s, o + 8);
            int word = (int) w;
            int size = (int) (w >>> 32);
            if (size >= 0 || (word >>> 16) != (int) (ref >>> 48))
                return null;   // valid bit clear, or another generation
            if ((word & 0xffff) != cls)
                throw new TypeMismatchException(what + ": the reference names an object of class "
                        + heap.className(word & 0xffff) + ", not a "
                        + (cls == ProxyType.CLASS_STRING ? "string" : "bytes"));
            int len = size & 0x7fff_ffff;
            byte[] b = new byte[len];
            MemorySegment.copy(s, JAVA_BYTE, o + 16, b, 0, len);
            VarHandle.acquireFence();   // the copy's loads before the check's
            if ((long) ProxyBase.LONG_AT.getAcquire(s, o + 8) != w)
                return null;
            return b;
        } catch (IllegalStateException e) {
            throw heap.closedError();
        } catch (IndexOutOfBoundsException e) {
            throw new FreedObjectException(Errors.EFREED, what + ": reference " + ref
                    + " is outside the heap");
        }
    }

    /** tryRead, for a reference that stays put: a second failure means the
     * object was freed, not replaced. */
    static byte[] read(Heap heap, long ref, int cls, String what) {
        byte[] b = tryRead(heap, ref, cls, what);
        if (b == null)
            b = tryRead(heap, ref, cls, what);
        if (b == null)
            throw new FreedObjectException(Errors.EFREED, what + ": the value at offset "
                    + (ref & ProxyBase.OFFSET_MASK) + " has been freed");
        return b;
    }
}
