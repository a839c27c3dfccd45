package org.uniheap;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * A persistent hash map, as a {@link java.util.Map}: keys all {@code String},
 * all {@link Bytes} or all {@code Long} (fixed at creation,
 * {@link Heap#newMap(Class)}); values null, {@code Boolean}, numbers,
 * {@code String}, {@code byte[]} or persistent objects (see
 * {@link Heap#newMap(Class)}).
 *
 * <p>Each operation is atomic on its own and joins the calling thread's
 * block. A String or byte[] value belongs to its entry: replacing or
 * removing it frees it in the same step; a replaced object (a reference)
 * never is. One of up to 128 bytes (its UTF-8 for a String) is kept inside
 * the entry, so that a put allocates one object and a get reads one; a
 * longer one is an object of its own. Either reads back the same. {@code put} and {@code remove} return the previous value, which
 * costs a read; {@link #set(Object, Object)} does not.
 *
 * <p>java.util contracts: {@code equals} and {@code hashCode} compare
 * contents, as for any Map (use {@link #ref()} for identity); iteration
 * order is unspecified; iterators see or miss concurrent changes (they never
 * throw ConcurrentModificationException) and support {@code remove}; null
 * keys are refused with NullPointerException and keys of another class with
 * ClassCastException.
 *
 * @param <K> the key type: String, Bytes or Long
 * @param <V> the value type
 */
public final class PMap<K, V> extends AbstractMap<K, V> implements DataType {
    private final Heap heap;
    private final ProxyType type;
    private final long ref;
    private int kind;   // key kind, 0 until read (fixed at creation)

    private PMap(Heap heap, ProxyType type, long ref) {
        this.heap = heap;
        this.type = type;
        this.ref = ref;
        heap.proxies.adopt(this, ref, type);   // pinned: the collector keeps it
    }

    static PObject make(Heap heap, ProxyType type, long ref) {
        return new PMap<>(heap, type, ref);
    }

    static <K, V> PMap<K, V> create(Heap heap, Class<K> keyType) {
        int kind = Keys.kindOf(keyType);
        long ref = DataTypes.create(heap, "new map", Native.MAP_NEW, kind);
        PMap<K, V> m = new PMap<>(heap, heap.classes.type(ProxyType.CLASS_MAP), ref);
        m.kind = kind;
        return m;
    }

    private int kind() {
        int k = kind;
        if (k == 0)
            kind = k = MapOps.keyKind(heap, ref, false);
        return k;
    }

    /** The key class: String, Bytes or Long. */
    public Class<?> keyType() {
        return switch (kind()) {
            case Keys.STRING -> String.class;
            case Keys.BYTES -> Bytes.class;
            default -> Long.class;
        };
    }

    @Override
    public int size() {
        return MapOps.intSize(longSize());
    }

    /** The number of entries, beyond Integer.MAX_VALUE too. */
    public long longSize() {
        return MapOps.size(heap, ref, false);
    }

    @Override
    public boolean isEmpty() {
        return longSize() == 0;
    }

    @Override
    @SuppressWarnings("unchecked")
    public V get(Object key) {
        Object v = MapOps.get(heap, ref, false, kind(), key);
        return v == MapOps.MISSING ? null : (V) v;
    }

    /**
     * A zero-copy, read-only view of the bytes value of key where it lies in
     * the heap (get copies it into a new byte[]); see {@link BytesView} for
     * how long it shows the value.
     * @return the view, or null if key is absent (as get returns)
     * @throws TypeMismatchException if the value is not bytes (null included)
     * @throws NullPointerException for a null key
     * @throws ClassCastException for a key of another class than the map's
     */
    public BytesView view(Object key) {
        Object v = MapOps.get(heap, ref, false, kind(), key, (h, t, b, w) -> BytesView.of(this, h, t, b, w));
        return v == MapOps.MISSING ? null : (BytesView) v;
    }

    /**
     * The field values of the record stored under key, as {@code
     * get(key).fieldValues()} returns them (in {@link PObject#fieldNames()}
     * order, all at one instant), without making a proxy of the record: the
     * lookup and the copy of the whole record are one libuniheap call.
     * @return the values, or null if key is absent (as get returns)
     * @throws TypeMismatchException if the value is not a record (null included)
     * @throws NullPointerException for a null key
     * @throws ClassCastException for a key of another class than the map's
     */
    public Object[] fieldValues(Object key) {
        return MapOps.getFields(heap, ref, false, kind(), key);
    }

    /**
     * The record stored under key, copied whole at one instant into an
     * array of its own ({@link RecordImage}: the payload's bytes and where
     * each inline field's value lies), as {@link #fieldValues(Object)}
     * reads it but without decoding a value: the lookup and the copy are
     * one libuniheap call, no proxy made.
     * @return the image, or null if key is absent (as get returns)
     * @throws TypeMismatchException if the value is not a record (null included)
     * @throws NullPointerException for a null key
     * @throws ClassCastException for a key of another class than the map's
     */
    public RecordImage recordImage(Object key) {
        return MapOps.getImage(heap, ref, false, kind(), key);
    }

    /**
     * Replace an inline field ({@link Inline}) of the record stored under
     * key, as {@code get(key).setField(field, value)} would, without making a
     * proxy of the record: the lookup and the write are one libuniheap call,
     * in the calling thread's block or atomic and durable on their own.
     * @param value a byte[] or {@link Bytes} for an inline bytes field, a
     *        String for an inline string field
     * @return false if key is absent (nothing written)
     * @throws TypeMismatchException if the value under key is not a record,
     *         or the field is not inline
     * @throws ValueRangeException if value is longer than the field's capacity
     * @throws InvalidValueException if the record has no such field
     */
    public boolean setField(Object key, String field, Object value) {
        return MapOps.setInline(heap, ref, false, kind(), key, field, value);
    }

    /**
     * Store a new record of class {@code type} under key, as {@code
     * put(key, heap.create(type))} followed by a {@code setField} of each
     * value would, without making a proxy: the allocation, the field writes
     * and the put are one libuniheap call, in the calling thread's block or
     * atomic and durable on their own. Fields not given are empty.
     * @param values field name to value, each of an {@link Inline} field: a
     *        byte[] or {@link Bytes} for inline bytes, a String for an inline
     *        string
     * @param freeOld also free the object key held (only when nothing else
     *        refers to it)
     * @throws TypeMismatchException if a field is not inline or its value
     *         not of its type
     * @throws ValueRangeException if a value is longer than its field's capacity
     * @throws NotFoundException if the class has no such field
     */
    public void putRecord(K key, Class<? extends PObject> type, Map<String, ?> values,
                          boolean freeOld) {
        MapOps.putRecord(heap, ref, false, kind(), key, heap.classes.declared(Declared.of(type)),
                values, freeOld);
    }

    @Override
    public boolean containsKey(Object key) {
        return MapOps.get(heap, ref, false, kind(), key) != MapOps.MISSING;
    }

    @Override
    @SuppressWarnings("unchecked")
    public V put(K key, V value) {
        Object old = MapOps.put(heap, ref, false, kind(), key, value, true);
        return old == MapOps.MISSING ? null : (V) old;
    }

    /** Put without reading the previous value (one call less than put). */
    public void set(K key, V value) {
        MapOps.put(heap, ref, false, kind(), key, value, false);
    }

    @Override
    @SuppressWarnings("unchecked")
    public V remove(Object key) {
        Object old = MapOps.remove(heap, ref, false, kind(), key);
        return old == MapOps.MISSING ? null : (V) old;
    }

    /** Check the map's structure (libuniheap's uh_map_check).
     * @throws UniheapException naming the first problem */
    public void check() {
        MapOps.check(heap, ref, false);
    }

    @Override
    public Set<Map.Entry<K, V>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public Iterator<Map.Entry<K, V>> iterator() {
                return DataTypes.entries(PMap.this,
                        new MapOps.Cursor<K, V>(PMap.this, heap, ref, false, kind(), null, false));
            }

            @Override
            public int size() {
                return PMap.this.size();
            }
        };
    }

    /** {@code uniheap.map@4160{a=1, b=2, ...}}, at most 16 entries. */
    @Override
    public String toString() {
        return DataTypes.describe(this, entrySet().iterator());
    }

    // ---- PObject (the rest: DataType) ----

    @Override
    public Heap heap() {
        return heap;
    }

    @Override
    public long ref() {
        return ref;
    }

    @Override
    public int classId() {
        return type.classId;
    }
}
