package org.uniheap;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A class of one heap as this JVM proxies it: the class table's facts
 * (id, name, kind, fields) and how to make a proxy of one of its objects.
 * Immutable; one per (heap, class id), cached by {@link HeapClasses}.
 */
final class ProxyType {
    static final int KIND_RECORD = 1;
    /* The built-in class ids this binding uses: the one Java copy of
     * libuniheap/include/uniheap.h's UH_CLASS_STRING, _BYTES, _ARRAY,
     * _LIST, _MAP and _SMAP (fixed by the heap format). The tests check
     * them against objects libuniheap made (CollectionsTest). */
    static final int CLASS_STRING = 1;
    static final int CLASS_BYTES = 2;
    static final int CLASS_ARRAY = 5;
    static final int CLASS_LIST = 6;
    static final int CLASS_MAP = 8;
    static final int CLASS_SMAP = 11;

    /** Makes the proxy of an object of this type. */
    interface Maker {
        PObject make(Heap heap, ProxyType type, long ref);
    }

    final int classId;
    final int kind;
    final String name;
    final int payload;
    final String[] names;
    final int[] types;
    final int[] offsets;
    final int[] refClass;
    /** The declaring interface's layout; null for generic and built-in types. */
    final ProxyBase.Layout layout;
    final Maker maker;
    /** Expected 8 header bytes at +8 for generation 0 (class word | size
     * word << 32), and which of their bits to compare: all of them for a
     * record (class, valid bit, payload size), class and valid bit else. */
    final long hdr;
    final long hdrMask;
    /** "class.field" of each field, for messages: made once here, since
     * reads and writes pass it on before they know whether they fail. */
    final String[] whats;
    /** The bytes the fields span, 8-aligned at both ends (the first
     * field's offset rounded down, the last one's end rounded up): what
     * {@link ProxyBase#fieldValues()} reads at once. 0 and 0 without fields. */
    final int spanLo;
    final int spanLen;
    /** No string, bytes or ref field: a copy of the payload decodes
     * without another libuniheap call (so in place, in a session's
     * scratch, before the session is given back). */
    final boolean flat;
    private final Map<String, Integer> index;

    ProxyType(int classId, int kind, String name, int payload, String[] names, int[] types,
              int[] offsets, int[] refClass, ProxyBase.Layout layout, Maker maker) {
        this.classId = classId;
        this.kind = kind;
        this.name = name;
        this.payload = payload;
        this.names = names;
        this.types = types;
        this.offsets = offsets;
        this.refClass = refClass;
        this.layout = layout;
        this.maker = maker;
        long valid = 0x8000_0000L;
        if (kind == KIND_RECORD) {
            this.hdr = (valid | payload) << 32 | classId;
            this.hdrMask = -1L;
        } else {
            this.hdr = valid << 32 | classId;
            this.hdrMask = valid << 32 | 0xffff_ffffL;
        }
        Map<String, Integer> m = new HashMap<>();
        this.whats = new String[names.length];
        for (int i = 0; i < names.length; i++) {
            m.put(names[i], i);
            whats[i] = name + "." + names[i];
        }
        this.index = m;
        int n = names.length;
        this.spanLo = n == 0 ? 0 : offsets[0] & ~7;
        this.spanLen = n == 0 ? 0
                : ((offsets[n - 1] + sizeOf(types[n - 1], refClass[n - 1]) + 7) & ~7) - spanLo;
        boolean f = true;
        for (int t : types)
            f &= t != FieldType.STRING.code() && t != FieldType.BYTES.code()
                    && t != FieldType.REF.code();
        this.flat = f;
    }

    /** The bytes a field of type code t takes (FORMAT.md 3.3). */
    /** Bytes a field takes; word is an inline field's capacity (the
     * refClass entry of an inline field holds it). */
    static int sizeOf(int t, int word) {
        return FieldType.isInline(t) ? 4 + word : sizeOf(t);
    }

    static int sizeOf(int t) {
        return switch (t) {
            case 1, 2 -> 1;
            case 3 -> 2;
            case 4, 6 -> 4;
            default -> 8;
        };
    }

    /** The same class proxied another way (declared vs generic). */
    ProxyType with(ProxyBase.Layout layout, Maker maker) {
        return new ProxyType(classId, kind, name, payload, names, types, offsets, refClass, layout,
                maker);
    }

    /** Header bytes expected for an object named by ref. */
    long hdrOf(long ref) {
        return hdr | (ref >>> 48) << 16;
    }

    int fieldIndex(String field) {
        Integer i = index.get(field);
        if (i == null)
            throw new NotFoundException("class " + name + " has no field '" + field + "'"
                    + (names.length == 0 ? " (it has no fields)" : "; its fields: "
                    + String.join(", ", names)));
        return i;
    }

    List<String> fieldNames() {
        return List.of(names);
    }

    /** Same fields, types and offsets (the reference targets aside). */
    boolean sameLayout(ProxyType o) {
        return payload == o.payload && Arrays.equals(names, o.names)
                && Arrays.equals(types, o.types) && Arrays.equals(offsets, o.offsets);
    }
}
