package org.uniheap;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The classes of one heap as this JVM proxies them: by class id (built from
 * the heap's class table on first sight) and by declared layout (registered
 * with heapd on first use). No lock: reading the class table and
 * registering a class are idempotent, and a ProxyType is immutable, so two
 * threads doing it at once publish equal results.
 */
final class HeapClasses {
    static final int CAP = 4096;   // class ids 1..4095 (FORMAT.md)
    private static final int UH_ENOTFOUND = Errors.ENOTFOUND;

    private final Heap heap;
    private final ProxyType[] byId = new ProxyType[CAP];
    private final ConcurrentHashMap<ProxyBase.Layout, ProxyType> byLayout = new ConcurrentHashMap<>();

    HeapClasses(Heap heap) {
        this.heap = heap;
    }

    /** The type of class id if this connection knows it already, else
     * null (then {@link #type} reads it, which needs a session). */
    ProxyType known(int id) {
        return id > 0 && id < CAP ? byId[id] : null;
    }

    /** The type of class id, for wrapping an object of that class. */
    ProxyType type(int id) {
        if (id > 0 && id < CAP) {
            ProxyType t = byId[id];
            if (t != null)
                return t;
        }
        ProxyType t = read(id);
        if (t == null)
            throw new NotFoundException(Errors.ENOTFOUND, "class id " + id
                    + " is not in the heap's class table");
        if (t.kind == ProxyType.KIND_RECORD) {
            for (ProxyBase.Layout l : Declared.byName(t.name)) {
                try {
                    return declared(l);
                } catch (ClassMismatchException e) {
                    // declared here with another layout: try the next, else generic
                }
            }
        }
        t = t.with(null, builtin(id));
        byId[id] = t;
        return t;
    }

    /** type(id), or null when the class table has no such id. */
    ProxyType typeIfExists(int id) {
        try {
            return type(id);
        } catch (NotFoundException e) {
            return null;
        }
    }

    private static ProxyType.Maker builtin(int id) {
        return switch (id) {
            case ProxyType.CLASS_MAP -> PMap::make;
            case ProxyType.CLASS_SMAP -> PSortedMap::make;
            case ProxyType.CLASS_LIST -> PList::make;
            case ProxyType.CLASS_ARRAY -> PArray::make;
            default -> GenericObject::make;
        };
    }

    /** The heap class id of a built-in data type used as a ref target; 0 if none. */
    static int builtinId(Class<?> target) {
        if (target == PMap.class)
            return ProxyType.CLASS_MAP;
        if (target == PSortedMap.class)
            return ProxyType.CLASS_SMAP;
        if (target == PList.class)
            return ProxyType.CLASS_LIST;
        if (target == PArray.class)
            return ProxyType.CLASS_ARRAY;
        return 0;
    }

    /**
     * The type of a declared class in this heap: found in its class table
     * (and checked against the declaration) or registered with heapd.
     * @throws ClassMismatchException naming the first differing field
     */
    ProxyType declared(ProxyBase.Layout l) {
        ProxyType t = byLayout.get(l);
        return t != null ? t : declared(l, new HashSet<>());
    }

    private ProxyType declared(ProxyBase.Layout l, Set<ProxyBase.Layout> visiting) {
        ProxyType t = byLayout.get(l);
        if (t != null)
            return t;
        int id = find(l.name);
        if (id == 0) {
            visiting.add(l);
            int[] refs = refClasses(l, visiting);
            id = register(l, refs);
        }
        ProxyType inHeap = read(id);
        if (inHeap == null)
            throw new NotFoundException(Errors.ENOTFOUND, "class " + l.name + " vanished from the heap");
        check(l, inHeap);
        t = inHeap.with(l, (h, ty, r) -> ty.layout.factory.apply(new ProxyBase.Init(h, ty, r)));
        byLayout.put(l, t);
        byId[id] = t;   // objects of this class now get the declared proxy
        return t;
    }

    /* Typed references name their target's class id. A ref to the class
     * itself, or along a cycle of classes being registered, stays untyped
     * in the heap (as the Python binding does); Java's types still check it. */
    private int[] refClasses(ProxyBase.Layout l, Set<ProxyBase.Layout> visiting) {
        int[] refs = new int[l.names.length];
        for (int i = 0; i < refs.length; i++) {
            Class<?> target = l.targets[i];
            if (l.types[i] != FieldType.REF.code() || target == null || target == PObject.class)
                continue;
            int b = builtinId(target);
            if (b != 0) {
                refs[i] = b;
                continue;
            }
            ProxyBase.Layout tl = Declared.of(target);
            if (tl != l && !visiting.contains(tl))
                refs[i] = declared(tl, visiting).classId;
        }
        return refs;
    }

    private void check(ProxyBase.Layout l, ProxyType h) {
        String where = l.name + " (declared by " + l.type.getName() + ")";
        if (h.kind != ProxyType.KIND_RECORD)
            throw mismatch(where + ": the heap's class of that name is not a record");
        int n = Math.min(l.names.length, h.names.length);
        for (int i = 0; i < n; i++) {
            if (!l.names[i].equals(h.names[i]) || l.types[i] != h.types[i]
                    || l.offsets[i] != h.offsets[i])
                throw mismatch(where + ": field " + (i + 1) + " is '" + l.names[i] + "' "
                        + FieldType.nameOf(l.types[i]) + " at offset " + l.offsets[i]
                        + " here, but '" + h.names[i] + "' " + FieldType.nameOf(h.types[i])
                        + " at offset " + h.offsets[i] + " in the heap");
            if (FieldType.isInline(l.types[i]) && l.capacities[i] != h.refClass[i])
                throw mismatch(where + ": field '" + l.names[i] + "' has capacity "
                        + l.capacities[i] + " here, capacity " + h.refClass[i] + " in the heap");
            if (!FieldType.isInline(l.types[i]) && h.refClass[i] != 0 && l.targets[i] != null
                    && l.targets[i] != PObject.class) {
                String want = targetName(l.targets[i]);
                String have = heap.className(h.refClass[i]);
                if (!want.equals(have))
                    throw mismatch(where + ": field '" + l.names[i] + "' refers to " + want
                            + " here, but to " + have + " in the heap");
            }
        }
        if (l.names.length != h.names.length || l.payload != h.payload)
            throw mismatch(where + ": " + l.names.length + " fields here, " + h.names.length
                    + " in the heap" + (n < h.names.length ? " (next: '" + h.names[n] + "')"
                    : n < l.names.length ? " (next here: '" + l.names[n] + "')" : ""));
    }

    private static String targetName(Class<?> target) {
        int b = builtinId(target);
        return switch (b) {
            case ProxyType.CLASS_MAP -> "uniheap.map";
            case ProxyType.CLASS_SMAP -> "uniheap.sortedmap";
            case ProxyType.CLASS_LIST -> "uniheap.list";
            case ProxyType.CLASS_ARRAY -> "uniheap.array";
            default -> Declared.of(target).name;
        };
    }

    private static ClassMismatchException mismatch(String msg) {
        return new ClassMismatchException(Errors.ECLASSMISMATCH, msg);
    }

    // ---- libuniheap calls ----

    /** The id of a class name in the heap, 0 if absent. */
    private int find(String name) {
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        try {
            long cname = s.cName(name.getBytes(StandardCharsets.UTF_8));
            if (cname == 0)
                throw new InvalidValueException(Errors.EINVAL, "class name too long: " + name);
            int rc = (int) Native.CLASS_FIND.invokeExact(s.h, cname, s.at + Session.OUT);
            if (rc == UH_ENOTFOUND)
                return 0;
            if (rc != 0)
                throw Errors.of(rc, "class " + name);
            return s.outInt();
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        } finally {
            heap.release(b, s);
        }
    }

    private int register(ProxyBase.Layout l, int[] refs) {
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        try (Arena a = Arena.ofConfined()) {
            int n = l.names.length;
            MemorySegment specs = a.allocate(16L * Math.max(n, 1), 8);
            for (int i = 0; i < n; i++) {
                specs.set(ADDRESS, 16L * i, a.allocateFrom(l.names[i]));
                specs.set(JAVA_INT, 16L * i + 8, l.types[i]);
                // the third word: a ref's class, or an inline field's capacity
                specs.set(JAVA_INT, 16L * i + 12, FieldType.isInline(l.types[i]) ? l.capacities[i] : refs[i]);
            }
            MemorySegment out = a.allocate(JAVA_INT);
            long name = a.allocateFrom(l.name).address();
            int rc = (int) Native.CLASS_REGISTER.invokeExact(s.h, name, specs.address(), n,
                    out.address());
            if (rc != 0)
                throw Errors.of(rc, "register " + l.name + " (" + l.type.getName() + ")");
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        } finally {
            heap.release(b, s);
        }
    }

    /** The class table's entry for id as a (generic) type; null if none. */
    private ProxyType read(int id) {
        BlockState b = heap.current();
        Session s = heap.acquire(b);
        try {
            int rc = (int) Native.CLASS_INFO_GET.invokeExact(s.h, id, s.at + Session.CINFO);
            if (rc == UH_ENOTFOUND)
                return null;
            if (rc != 0)
                throw Errors.of(rc, "class " + id);
            MemorySegment m = s.scratch;
            int kind = m.get(JAVA_INT, Session.CINFO + 4);
            int n = m.get(JAVA_INT, Session.CINFO + 8);
            int payload = m.get(JAVA_INT, Session.CINFO + 12);
            String name = heap.cString(m.get(JAVA_LONG, Session.CINFO + 16));
            String[] names = new String[n];
            int[] types = new int[n], offsets = new int[n], refs = new int[n];
            for (int i = 0; i < n; i++) {
                rc = (int) Native.FIELD_INFO_GET.invokeExact(s.h, id, i, s.at + Session.FINFO);
                if (rc != 0)
                    throw Errors.of(rc, "class " + name + " field " + i);
                names[i] = heap.cString(m.get(JAVA_LONG, Session.FINFO));
                types[i] = m.get(JAVA_INT, Session.FINFO + 8);
                offsets[i] = m.get(JAVA_INT, Session.FINFO + 12);
                refs[i] = m.get(JAVA_INT, Session.FINFO + 16);
                if (FieldType.isInline(types[i]))   // its capacity (uh_field_info)
                    refs[i] = m.get(JAVA_INT, Session.FINFO + 20);
            }
            return new ProxyType(id, kind, name, payload, names, types, offsets, refs, null,
                    GenericObject::make);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        } finally {
            heap.release(b, s);
        }
    }
}
