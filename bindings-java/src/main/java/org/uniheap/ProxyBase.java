package org.uniheap;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Function;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * Base class of the proxies of records: the ones the uniheap annotation
 * processor generates for {@link Persistent} interfaces, and the generic
 * proxies of classes this JVM never declared. Not meant to be extended by
 * hand; its protected methods are what generated code calls.
 *
 * <p>A field read outside a block is two loads from the mapped heap: the
 * 8 header bytes at +8 (class id and generation, valid bit, payload size:
 * the object is still the one this proxy names) and the field. Inside a
 * block of the calling thread, reads go through libuniheap, which validates
 * them against the block's snapshot. Every write calls libuniheap.
 *
 * <p>Each proxy pins its object for the online garbage collector while it
 * is reachable ({@link Proxies}): a proxy never outlives what it names.
 */
public abstract class ProxyBase implements PObject {
    static final long OFFSET_MASK = 0xffff_ffff_ffffL;
    static final VarHandle LONG_AT = JAVA_LONG.varHandle();
    /** Where a payload starts in its object (UH_OBJHDR_SIZE): field offsets
     * count from the object, a uh_record_read copy from the payload. */
    static final int PAYLOAD_AT = 16;

    final Heap heap;
    final ProxyType type;
    final long ref;
    final long offset;
    final long hdr;
    final long hdrMask;

    /** For generated code: pass on the token the runtime gave. */
    protected ProxyBase(Init init) {
        this.heap = init.heap;
        this.type = init.type;
        this.ref = init.ref;
        this.offset = init.ref & OFFSET_MASK;
        this.hdr = init.type.hdrOf(init.ref);
        this.hdrMask = init.type.hdrMask;
        heap.proxies.adopt(this, ref, type);   // pinned: the collector keeps it
    }

    /** What the runtime hands a proxy constructor. Only the runtime makes these. */
    public static final class Init {
        final Heap heap;
        final ProxyType type;
        final long ref;

        Init(Heap heap, ProxyType type, long ref) {
            this.heap = heap;
            this.type = type;
            this.ref = ref;
        }
    }

    /** A declared persistent class as the annotation processor laid it out. */
    public static final class Layout {
        final Class<? extends PObject> type;
        final String name;
        final Function<Init, ? extends ProxyBase> factory;
        final String[] names;
        final int[] types;
        final Class<?>[] targets;
        final int[] offsets;
        final int[] capacities;     // inline fields' capacities, else 0
        final int payload;

        Layout(Class<? extends PObject> type, String name, Function<Init, ? extends ProxyBase> factory,
               String[] names, int[] types, Class<?>[] targets, int[] offsets, int[] capacities,
               int payload) {
            this.type = type;
            this.name = name;
            this.factory = factory;
            this.names = names;
            this.types = types;
            this.targets = targets;
            this.offsets = offsets;
            this.capacities = capacities;
            this.payload = payload;
        }

        @Override
        public String toString() {
            return name + " (" + type.getName() + ")";
        }
    }

    /**
     * Called once by each generated proxy class, in its static initializer:
     * records the declaration (its fields in layout order, the offsets the
     * heap format gives them) for {@link Heap#create} and for the objects
     * of that class read from any heap.
     */
    public static Layout declare(Class<? extends PObject> type, String name,
                                 Function<Init, ? extends ProxyBase> factory, String[] names,
                                 int[] types, Class<?>[] targets, int[] offsets, int payload) {
        return declare(type, name, factory, names, types, targets, offsets,
                new int[names.length], payload);
    }

    /** {@link #declare} of a class with inline fields: capacities[i] is
     * field i's ({@link Inline}), 0 for other fields. */
    public static Layout declare(Class<? extends PObject> type, String name,
                                 Function<Init, ? extends ProxyBase> factory, String[] names,
                                 int[] types, Class<?>[] targets, int[] offsets, int[] capacities,
                                 int payload) {
        Layout l = new Layout(type, name, factory, names.clone(), types.clone(), targets.clone(),
                offsets.clone(), capacities.clone(), payload);
        Declared.add(l);
        return l;
    }

    // ---- PObject ----

    @Override
    public final Heap heap() {
        return heap;
    }

    @Override
    public final long ref() {
        return ref;
    }

    @Override
    public final String className() {
        return type.name;
    }

    @Override
    public final int classId() {
        return type.classId;
    }

    @Override
    public final List<String> fieldNames() {
        return type.fieldNames();
    }

    @Override
    public final boolean isLive() {
        try {
            return !heap.isClosed() && live(seg());
        } catch (IllegalStateException e) {
            return false;
        }
    }

    @Override
    public final <T extends PObject> T as(Class<T> cls) {
        if (cls.isInstance(this))
            return cls.cast(this);
        return heap.as(this, cls);
    }

    /** Same object of the same heap connection. */
    @Override
    public final boolean equals(Object o) {
        return o instanceof ProxyBase p && p.heap == heap && p.offset == offset;
    }

    @Override
    public final int hashCode() {
        return Long.hashCode(offset * 0x9E3779B97F4A7C15L) ^ System.identityHashCode(heap);
    }

    /** {@code bank.Account@4160[owner="ada", balance=100, next=bank.Account@4224]}. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(type.name).append('@').append(offset);
        if (!isLive())
            return sb.append(heap.isClosed() ? " (heap closed)" : " (freed)").toString();
        sb.append('[');
        for (int i = 0; i < type.names.length; i++) {
            if (i > 0)
                sb.append(", ");
            sb.append(type.names[i]).append('=');
            try {
                Object v = getField(i);
                if (v instanceof String s)
                    sb.append('"').append(s).append('"');
                else if (v instanceof byte[] b)
                    sb.append(Bytes.wrap(b));
                else if (v instanceof PObject p)
                    sb.append(p.className()).append('@').append(p.ref() & OFFSET_MASK);
                else
                    sb.append(v);
            } catch (UniheapException e) {
                sb.append('<').append(e.getClass().getSimpleName()).append('>');
            }
        }
        return sb.append(']').toString();
    }

    /**
     * Every field at one instant: one uh_read of the bytes the fields span
     * (outside a block an optimistic read of the object, tried again if a
     * commit changed it meanwhile; inside one the block's snapshot and its
     * own writes), decoded here; for a class with no string, bytes or ref
     * field, in the session's scratch before it is given back. A string or
     * bytes value is copied after that read: outside a block, one replaced
     * (so freed) under the copy sends the whole read round again, as a
     * getter reads its field again.
     */
    @Override
    public final Object[] fieldValues() {
        int n = type.names.length;
        if (n == 0) {
            try {
                checked();
            } catch (IllegalStateException e) {
                throw heap.closedError();
            }
            return new Object[0];
        }
        for (int tries = 0; tries < Blobs.READ_TRIES; tries++) {   // bound: a writer replacing a value each time
            BlockState b = block();
            if (type.flat)   // nothing out of line: no value can be freed under the read
                return FieldIO.readFlat(b, this);
            Object[] v = decode(FieldIO.readFields(b, this));
            if (v != null)
                return v;
            if (b != null)
                throw new ConflictException("a string or bytes field of the " + type.name
                        + " at offset " + offset + " was replaced by another session while this "
                        + "block read it: run the block again");
        }
        throw new ConflictException("the fields of the " + type.name + " at offset " + offset
                + " kept changing while being read (a string or bytes value was replaced under "
                + "each of " + Blobs.READ_TRIES + " reads)");
    }

    /* The fields' values from the words readFields copied; null when a
     * string or bytes value was freed before or during its copy. */
    private Object[] decode(long[] words) {
        return decode(heap, type, MemorySegment.ofArray(words), type.spanLo);
    }

    /**
     * The field values of a record of type t whose bytes from object
     * offset base on are in m from its start (a uh_read of its fields'
     * span, or a whole uh_record_read payload with base PAYLOAD_AT; for
     * bytes that lie further into m, base less their place there); null
     * when a string or bytes value (out of line) was freed before or during
     * its copy. Inline values come from m itself.
     */
    static Object[] decode(Heap heap, ProxyType t, MemorySegment m, long base) {
        int n = t.names.length;
        Object[] out = new Object[n];
        for (int i = 0; i < n; i++) {
            long at = t.offsets[i] - base;
            out[i] = switch (FieldType.of(t.types[i])) {
                case BOOL -> m.get(JAVA_BYTE, at) != 0;
                case I8 -> m.get(JAVA_BYTE, at);
                case I16 -> m.get(JAVA_SHORT, at);
                case I32 -> m.get(JAVA_INT, at);
                case I64 -> m.get(JAVA_LONG, at);
                case F32 -> m.get(JAVA_FLOAT, at);
                case F64 -> m.get(JAVA_DOUBLE, at);
                case STRING, BYTES -> {
                    long r = m.get(JAVA_LONG, at);
                    if (r == 0)
                        yield null;
                    boolean str = t.types[i] == FieldType.STRING.code();
                    byte[] b = Blobs.tryRead(heap, r, str ? ProxyType.CLASS_STRING
                            : ProxyType.CLASS_BYTES, t.whats[i]);
                    if (b == null)
                        yield Values.CHANGED;
                    yield str ? new String(b, StandardCharsets.UTF_8) : b;
                }
                case REF -> {
                    long r = m.get(JAVA_LONG, at);
                    yield r == 0 ? null : heap.wrapValue(r);
                }
                case INLINE_STRING, INLINE_BYTES -> {  // in the same one copy
                    int len = m.get(JAVA_INT, at);
                    if (len < 0 || len > t.refClass[i])
                        throw new UniheapException("field " + t.whats[i] + " holds " + len
                                + " bytes, past its capacity " + t.refClass[i]);
                    if (t.types[i] == FieldType.INLINE_STRING.code())
                        yield new String(m.asSlice(at + 4, len).toArray(JAVA_BYTE),
                                StandardCharsets.UTF_8);
                    byte[] b = new byte[len];
                    MemorySegment.copy(m, JAVA_BYTE, at + 4, b, 0, len);
                    yield b;
                }
                case null -> throw Values.unknown(t.whats[i], "field type", t.types[i]);
            };
            if (out[i] == Values.CHANGED)
                return null;
        }
        return out;
    }

    @Override
    public final Object getField(String name) {
        return getField(type.fieldIndex(name));
    }

    @Override
    public final void setField(String name, Object value) {
        int i = type.fieldIndex(name);
        int t = type.types[i];
        if (FieldType.of(t) == null)
            throw Values.unknown(what(i), "field type", t);
        if (t == FieldType.BOOL.code() && value instanceof Boolean b)
            setBool(i, b);
        else if (t <= FieldType.I64.code() && isIntegral(value))
            FieldIO.writeI64(this, i, ((Number) value).longValue());
        else if ((t == FieldType.F32.code() || t == FieldType.F64.code()) && value instanceof Number)
            FieldIO.writeF64(this, i, ((Number) value).doubleValue());
        else if (t == FieldType.STRING.code() && (value == null || value instanceof String))
            setString(i, (String) value);
        else if (t == FieldType.BYTES.code() && (value == null || value instanceof byte[]))
            setBytes(i, (byte[]) value);
        else if (t == FieldType.BYTES.code() && value instanceof Bytes b)
            setBytes(i, b.raw());
        else if (t == FieldType.REF.code() && (value == null || value instanceof PObject))
            setRef(i, checkTarget(i, (PObject) value));
        else if (t == FieldType.INLINE_STRING.code() && value instanceof String s)
            setInlineString(i, s);
        else if (t == FieldType.INLINE_BYTES.code() && value instanceof byte[] b)
            setInlineBytes(i, b);
        else if (t == FieldType.INLINE_BYTES.code() && value instanceof Bytes b)
            setInlineBytes(i, b.raw());
        else
            throw new TypeMismatchException(what(i) + " is a " + FieldType.nameOf(t)
                    + " field: it takes " + javaTypes(t) + ", not "
                    + (value == null ? "null" : value.getClass().getName()));
    }

    /* A typed ref to the class itself (or along a cycle) is untyped in the
     * heap: the declared Java type is checked here, as setters check it. */
    private PObject checkTarget(int i, PObject v) {
        Class<?> target = type.layout == null ? null : type.layout.targets[i];
        if (v != null && target != null && !target.isInstance(v))
            throw new TypeMismatchException(what(i) + " refers to " + target.getName()
                    + " objects, not to a " + v.className());
        return v;
    }

    private static boolean isIntegral(Object v) {
        return v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte;
    }

    private static String javaTypes(int t) {
        if (t == FieldType.BOOL.code())
            return "a Boolean";
        if (t <= FieldType.I64.code())
            return "a Long, Integer, Short or Byte";
        if (t <= FieldType.F64.code())
            return "a Number";
        if (t == FieldType.STRING.code())
            return "a String or null";
        if (t == FieldType.BYTES.code())
            return "a byte[], Bytes or null";
        if (t == FieldType.INLINE_STRING.code())
            return "a String";
        if (t == FieldType.INLINE_BYTES.code())
            return "a byte[] or Bytes";
        return "a PObject or null";
    }

    final Object getField(int i) {
        int off = type.offsets[i];
        return switch (FieldType.of(type.types[i])) {
            case BOOL -> getBool(off, i);
            case I8 -> getI8(off, i);
            case I16 -> getI16(off, i);
            case I32 -> getI32(off, i);
            case I64 -> getI64(off, i);
            case F32 -> getF32(off, i);
            case F64 -> getF64(off, i);
            case STRING -> getString(off, i);
            case BYTES -> getBytes(off, i);
            case REF -> getAny(off, i);
            case INLINE_STRING -> getInlineString(off, i);
            case INLINE_BYTES -> getInlineBytes(off, i);
            case null -> throw Values.unknown(what(i), "field type", type.types[i]);
        };
    }

    /** "bank.Account.balance", for messages. */
    final String what(int index) {
        return type.whats[index];
    }

    // ---- the checks every access makes ----

    private boolean live(MemorySegment s) {
        return ((long) LONG_AT.getAcquire(s, offset + 8) & hdrMask) == hdr;
    }

    /** The heap's segment, made to reach this object first if it lies in a
     * part the heap grew into that the segment does not cover yet (an
     * object this process made there: its lease mapped that part). */
    private MemorySegment seg() {
        MemorySegment s = heap.seg;
        if (offset + 16 <= s.byteSize())
            return s;
        heap.reach(ref);
        return heap.seg;
    }

    /** The mapping, once the header says the object is still ours. */
    private MemorySegment checked() {
        MemorySegment s = seg();
        if (!live(s))
            throw gone();
        return s;
    }

    final FreedObjectException gone() {
        return new FreedObjectException(Errors.EFREED, "the " + type.name + " at offset " + offset
                + " has been freed");
    }

    /** The calling thread's block on this heap, or null. */
    private BlockState block() {
        return heap.current();
    }

    // ---- reads (generated getters call these with constant arguments) ----

    protected final boolean getBool(int off, int index) {
        BlockState b = block();
        if (b != null)
            return FieldIO.readI64(b, this, index) != 0;
        try {
            return checked().get(JAVA_BYTE, offset + off) != 0;
        } catch (IllegalStateException e) {
            throw heap.closedError();
        }
    }

    protected final byte getI8(int off, int index) {
        BlockState b = block();
        if (b != null)
            return (byte) FieldIO.readI64(b, this, index);
        try {
            return checked().get(JAVA_BYTE, offset + off);
        } catch (IllegalStateException e) {
            throw heap.closedError();
        }
    }

    protected final short getI16(int off, int index) {
        BlockState b = block();
        if (b != null)
            return (short) FieldIO.readI64(b, this, index);
        try {
            return checked().get(JAVA_SHORT, offset + off);
        } catch (IllegalStateException e) {
            throw heap.closedError();
        }
    }

    protected final int getI32(int off, int index) {
        BlockState b = block();
        if (b != null)
            return (int) FieldIO.readI64(b, this, index);
        try {
            return checked().get(JAVA_INT, offset + off);
        } catch (IllegalStateException e) {
            throw heap.closedError();
        }
    }

    protected final long getI64(int off, int index) {
        BlockState b = block();
        if (b != null)
            return FieldIO.readI64(b, this, index);
        try {
            return checked().get(JAVA_LONG, offset + off);
        } catch (IllegalStateException e) {
            throw heap.closedError();
        }
    }

    protected final float getF32(int off, int index) {
        BlockState b = block();
        if (b != null)
            return (float) FieldIO.readF64(b, this, index);
        try {
            return checked().get(JAVA_FLOAT, offset + off);
        } catch (IllegalStateException e) {
            throw heap.closedError();
        }
    }

    protected final double getF64(int off, int index) {
        BlockState b = block();
        if (b != null)
            return FieldIO.readF64(b, this, index);
        try {
            return checked().get(JAVA_DOUBLE, offset + off);
        } catch (IllegalStateException e) {
            throw heap.closedError();
        }
    }

    /** The reference stored in a ref, string or bytes field. */
    private long getRefBits(int off, int index, BlockState b) {
        if (b != null)
            return FieldIO.readRef(b, this, index);
        try {
            return (long) LONG_AT.getAcquire(checked(), offset + off);
        } catch (IllegalStateException e) {
            throw heap.closedError();
        }
    }

    protected final String getString(int off, int index) {
        byte[] b = getBlob(off, index, ProxyType.CLASS_STRING);
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    protected final byte[] getBytes(int off, int index) {
        return getBlob(off, index, ProxyType.CLASS_BYTES);
    }

    /** An inline string field ({@link Inline}): one uh_get_inline. */
    protected final String getInlineString(int off, int index) {
        return new String(FieldIO.readInline(block(), this, index, type.refClass[index]),
                StandardCharsets.UTF_8);
    }

    /** An inline bytes field ({@link Inline}): one uh_get_inline. */
    protected final byte[] getInlineBytes(int off, int index) {
        return FieldIO.readInline(block(), this, index, type.refClass[index]);
    }

    /* A string or bytes value is freed when the field is given a new one:
     * if it changes under the copy, read the field again (it then holds
     * the new value). */
    private byte[] getBlob(int off, int index, int cls) {
        for (int tries = 0; tries < 1000; tries++) {   // bound: a writer replacing it 1000 times
            BlockState b = block();
            long r = getRefBits(off, index, b);
            if (r == 0)
                return null;
            byte[] v = Blobs.tryRead(heap, r, cls, what(index));
            if (v != null)
                return v;
            if (b != null)
                throw new ConflictException("the value of " + what(index) + " was replaced by "
                        + "another session while this block read it: run the block again");
        }
        throw new ConflictException("the value of " + what(index) + " kept changing while being read");
    }

    /** A typed reference: generated getters pass the declared type. */
    protected final <T> T getRef(int off, int index, Class<T> target) {
        long r = getRefBits(off, index, block());
        if (r == 0)
            return null;
        PObject p = heap.wrapObject(r);
        if (!target.isInstance(p))
            throw new TypeMismatchException(what(index) + " refers to a " + p.className()
                    + ", which is not a " + target.getName());
        return target.cast(p);
    }

    /** An untyped reference as a value: strings and bytes objects read as
     * String and byte[], like the values of collections. */
    private Object getAny(int off, int index) {
        long r = getRefBits(off, index, block());
        return r == 0 ? null : heap.wrapValue(r);
    }

    // ---- writes: libuniheap range-checks, locks, logs and persists ----

    protected final void setBool(int index, boolean v) {
        FieldIO.writeI64(this, index, v ? 1 : 0);
    }

    protected final void setI8(int index, byte v) {
        FieldIO.writeI64(this, index, v);
    }

    protected final void setI16(int index, short v) {
        FieldIO.writeI64(this, index, v);
    }

    protected final void setI32(int index, int v) {
        FieldIO.writeI64(this, index, v);
    }

    protected final void setI64(int index, long v) {
        FieldIO.writeI64(this, index, v);
    }

    protected final void setF32(int index, float v) {
        FieldIO.writeF64(this, index, v);
    }

    protected final void setF64(int index, double v) {
        FieldIO.writeF64(this, index, v);
    }

    protected final void setString(int index, String v) {
        FieldIO.writeBlob(this, index, true, v == null ? null : v.getBytes(StandardCharsets.UTF_8));
    }

    protected final void setBytes(int index, byte[] v) {
        FieldIO.writeBlob(this, index, false, v);
    }

    protected final void setRef(int index, PObject v) {
        FieldIO.writeRef(this, index, v);
    }

    /** An inline field holds a value, never null. */
    private void notNull(int index, Object v) {
        if (v == null)
            throw new TypeMismatchException(what(index) + " is an inline field: it holds a value, "
                    + "never null (write an empty one)");
    }

    protected final void setInlineString(int index, String v) {
        notNull(index, v);
        FieldIO.writeInline(this, index, v.getBytes(StandardCharsets.UTF_8));
    }

    protected final void setInlineBytes(int index, byte[] v) {
        notNull(index, v);
        FieldIO.writeInline(this, index, v);
    }
}
