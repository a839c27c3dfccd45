package org.uniheap;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

/**
 * A zero-copy view of a bytes value where it lies in the heap
 * ({@link PMap#view(Object)}, {@link PSortedMap#view(Object)}): a read-only
 * {@link MemorySegment} over the value's payload, and a way to ask whether
 * the value is still there.
 *
 * <p>Lifetime. The segment is a slice of the heap's mapping: readable while
 * the heap is open; once {@link Heap#close()} ran, every access throws
 * IllegalStateException (never a crash). It shows the value while the value
 * lives: a put that replaces it or a remove frees it (in any process), and
 * the slot may then hold another object, whose bytes the segment shows.
 * {@link #valid()} says whether it still shows the value; for a consistent
 * copy, copy and then check {@code valid()}. Reads of the segment are plain
 * memory reads: inside a block the view shows the value as the block saw
 * it when {@code view} was called, and does not join the block's snapshot
 * afterwards.
 */
public final class BytesView {
    /** The header's valid bit and class word (uniheap.h, "direct"). */
    private static final long HEADER_MASK = 0x8000_0000_ffff_ffffL;

    /* The map the value was read from: its proxy's pin keeps the map, and
     * so the value while the map holds it, from the online garbage
     * collector as long as the view is reachable. */
    @SuppressWarnings("unused")
    private final DataType map;
    private final Heap heap;
    private final long ref;
    private final long header;   // the live header word ref names, under HEADER_MASK
    private final MemorySegment segment;

    private BytesView(DataType map, Heap heap, long ref, long header, MemorySegment segment) {
        this.map = map;
        this.heap = heap;
        this.ref = ref;
        this.header = header;
        this.segment = segment;
    }

    /** The header word of the live object of class cls ref names, under
     * HEADER_MASK. */
    private static long headerOf(long ref, int cls) {
        return 1L << 63 | (ref >>> 48) << 16 | cls;
    }

    /**
     * The view of the value a map lookup found (a {@link MapOps.Reader}):
     * a bytes object's payload, or the bytes an inline bytes value names in
     * its hash-map entry (which never change while the entry lives);
     * {@link Values#CHANGED} if the object holding them was freed since, so
     * the lookup runs again, as get's does.
     * @throws TypeMismatchException if the value is not bytes
     */
    static Object of(DataType map, Heap heap, int type, long bits, int where) {
        boolean inline = type == Values.IBYTES;
        if (!inline && (type != Values.BYTES || bits == 0))
            throw notBytes(type, bits);
        long o = bits & ProxyBase.OFFSET_MASK;
        try {
            heap.reach(bits);
            MemorySegment s = heap.seg;
            long w = (long) ProxyBase.LONG_AT.getAcquire(s, o + 8);
            // an entry's class is whichever the map's entries have: the header's own
            long header = headerOf(bits, inline ? (int) w & 0xffff : ProxyType.CLASS_BYTES);
            if ((w & HEADER_MASK) != header)
                return Values.CHANGED;   // freed (and maybe reused) since the lookup
            long at = inline ? where & 0xffff : 16;
            int len = inline ? where >>> 16 : (int) (w >>> 32) & 0x7fff_ffff;
            return new BytesView(map, heap, bits, header, s.asSlice(o + at, len).asReadOnly());
        } catch (IllegalStateException e) {
            throw heap.closedError();
        } catch (IndexOutOfBoundsException e) {
            throw new FreedObjectException(Errors.EFREED, "view(): reference " + bits
                    + " is outside the heap");
        }
    }

    private static TypeMismatchException notBytes(int type, long bits) {
        String what = bits == 0 && type >= Values.REF && type <= Values.BYTES ? "null"
                : FieldType.nameOf(type == Values.ISTRING ? Values.STRING : type);
        return new TypeMismatchException("view(): the value is not bytes but " + what);
    }

    /** The value's bytes in the mapping, read-only: writes throw
     * IllegalArgumentException (the JDK's rule for read-only segments;
     * through {@code asByteBuffer()}, ReadOnlyBufferException), and any
     * access after the heap closed, IllegalStateException. */
    public MemorySegment segment() {
        return segment;
    }

    /** The number of bytes. */
    public long length() {
        return segment.byteSize();
    }

    /**
     * True while the object holding the bytes the view shows (the bytes
     * object, or the hash-map entry of an inline value) is still the
     * value's (its header is valid, with the reference's generation); false
     * once it was freed, or the heap closed. Call it after copying: a true
     * answer means the copy was the value.
     */
    public boolean valid() {
        VarHandle.acquireFence();   // the caller's copy before the check
        return DataTypes.headerIs(heap, ref, HEADER_MASK, header);
    }

    /** The offset in the heap of the object holding the bytes (as heapctl
     * shows it): the bytes object's, or the hash-map entry's of an inline
     * value. */
    public long offset() {
        return ref & ProxyBase.OFFSET_MASK;
    }

    /** {@code BytesView@4160[12 bytes]}. */
    @Override
    public String toString() {
        return "BytesView@" + offset() + "[" + length() + " bytes]";
    }
}
