package org.uniheap;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Strings and bytes objects, and the inline string and bytes values of
 * hash-map entries, read in place (uniheap.h, "Direct access for
 * bindings"): check the header, copy the bytes, check the header again.
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
        return tryCopy(heap, ref, cls, 0, what);
    }

    /**
     * The bytes of an inline value (a string or bytes value a hash map keeps
     * in its entry): where's length (high 16 bits) of bytes at where's
     * offset (low 16 bits) in the object ref names, as uh_value's reserved
     * word gives them; null, as for tryRead, if that object was freed
     * before or during the copy. The object is the map's entry, whatever
     * its class: its bytes never change while it lives, so the header
     * check that guards a bytes object's copy guards this one too.
     */
    static byte[] tryReadInline(Heap heap, long ref, int where, String what) {
        return tryCopy(heap, ref, 0, where, what);
    }

    /* cls: the class the object must have, its payload being the value; 0
     * for an inline value, where then placing it in the object. */
    private static byte[] tryCopy(Heap heap, long ref, int cls, int where, String what) {
        long o = ref & ProxyBase.OFFSET_MASK;
        try {
            heap.reach(ref);
            MemorySegment s = heap.seg;
            long w = (long) ProxyBase.LONG_AT.getAcquire(s, o + 8);
            int word = (int) w;
            int size = (int) (w >>> 32);
            if (size >= 0 || (word >>> 16) != (int) (ref >>> 48))
                return null;   // valid bit clear, or another generation
            if (cls != 0 && (word & 0xffff) != cls)
                throw notOfClass(heap, word & 0xffff, cls, what);
            return cls != 0 ? copy(s, o, w, 16, size & 0x7fff_ffff)
                    : copy(s, o, w, where & 0xffff, where >>> 16);
        } catch (IllegalStateException e) {
            throw heap.closedError();
        } catch (IndexOutOfBoundsException e) {
            throw new FreedObjectException(Errors.EFREED, what + ": reference " + ref
                    + " is outside the heap");
        }
    }

    /* len bytes at offset at of the object at o, whose header word was w;
     * null if the header changed under the copy. */
    private static byte[] copy(MemorySegment s, long o, long w, long at, int len) {
        byte[] b = new byte[len];
        MemorySegment.copy(s, JAVA_BYTE, o + at, b, 0, len);
        VarHandle.acquireFence();   // the copy's loads before the check's
        if ((long) ProxyBase.LONG_AT.getAcquire(s, o + 8) != w)
            return null;
        return b;
    }

    private static TypeMismatchException notOfClass(Heap heap, int found, int cls, String what) {
        return new TypeMismatchException(what + ": the reference names an object of class "
                + heap.className(found) + ", not a "
                + (cls == ProxyType.CLASS_STRING ? "string" : "bytes"));
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
