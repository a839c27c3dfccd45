package org.uniheap;

import java.util.List;
import java.util.Map;

/**
 * A persistent sorted map (a B+-tree), as a {@link java.util.NavigableMap}:
 * keys all {@code String} (ordered by code point, the order of their UTF-8
 * bytes), all {@link Bytes} (unsigned bytewise) or all {@code Long}
 * (numeric), fixed at creation ({@link Heap#newSortedMap(Class)}). Values
 * as in {@link PMap}.
 *
 * <p>Every navigation method and every view (subMap, headMap, tailMap,
 * descendingMap, navigableKeySet) reads the tree in place: views are live
 * and write through. {@link #comparator()} returns the code point order for
 * String keys (String.compareTo differs above U+FFFF) and null (natural
 * order) for Long and Bytes keys. Size of a bounded view counts its entries.
 * The rest is as for {@link PMap}: contents-based equals/hashCode, atomic
 * operations that join the calling thread's block, iterators that see or
 * miss concurrent changes.
 *
 * @param <K> the key type: String, Bytes or Long
 * @param <V> the value type
 */
public final class PSortedMap<K, V> extends SortedView<K, V> implements DataType {
    private final Heap heap;
    private final ProxyType type;
    private final long ref;
    private int kind;

    private PSortedMap(Heap heap, ProxyType type, long ref) {
        super(false, null, false, false, null, false, false);
        this.heap = heap;
        this.type = type;
        this.ref = ref;
        heap.proxies.adopt(this, ref, type);   // pinned: the collector keeps it
    }

    static PObject make(Heap heap, ProxyType type, long ref) {
        return new PSortedMap<>(heap, type, ref);
    }

    static <K, V> PSortedMap<K, V> create(Heap heap, Class<K> keyType) {
        int kind = Keys.kindOf(keyType);
        long ref = DataTypes.create(heap, "new sorted map", Native.SMAP_NEW, kind);
        PSortedMap<K, V> m = new PSortedMap<>(heap, heap.classes.type(ProxyType.CLASS_SMAP), ref);
        m.kind = kind;
        return m;
    }

    @Override
    PSortedMap<K, V> base() {
        return this;
    }

    int kind() {
        int k = kind;
        if (k == 0)
            kind = k = MapOps.keyKind(heap, ref, true);
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

    void checkKeyType(Object k) {
        if (k == null)
            throw new NullPointerException("persistent maps have no null keys");
        Class<?> want = keyType();
        if (!want.isInstance(k))
            throw new ClassCastException("this map's keys are " + want.getSimpleName() + ", not "
                    + k.getClass().getName());
    }

    MapOps.Cursor<K, V> cursor(Object from, boolean reverse) {
        return new MapOps.Cursor<>(this, heap, ref, true, kind(), from, reverse);
    }

    /* A scan that libuniheap ends at to (null: none; toIncl: a key equal to
     * it is still returned), in either direction (uh_smap_next_until). */
    MapOps.Cursor<K, V> cursor(Object from, boolean reverse, Object to, boolean toIncl) {
        return new MapOps.Cursor<>(this, heap, ref, true, kind(), from, reverse, to, toIncl);
    }

    @SuppressWarnings("unchecked")
    V getRaw(Object key) {
        Object v = MapOps.get(heap, ref, true, kind(), key);
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
        checkKeyType(key);
        Object v = MapOps.get(heap, ref, true, kind(), key, (h, t, b, w) -> BytesView.of(this, h, t, b, w));
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
        checkKeyType(key);
        return MapOps.getFields(heap, ref, true, kind(), key);
    }

    /**
     * The field values of the records stored under the first count keys at
     * or after from (all keys when from is null), in key order, as {@link
     * #fieldValues(Object)} returns each: a sorted-map leaf's records per
     * libuniheap call, no proxy made. Each record is read at its own
     * instant (in a block: the block's snapshot); outside a block a record
     * replaced meanwhile is read as the key's record now, and one whose key
     * was removed meanwhile is left out.
     * @return the values, at most count of them
     * @throws TypeMismatchException if a value in the range is not a record
     * @throws ClassCastException for a from of another class than the map's keys
     */
    public List<Object[]> scanFieldValues(Object from, int count) {
        if (from != null)
            checkKeyType(from);
        return ScanRecords.scan(heap, ref, kind(), from, count);
    }

    /**
     * The records stored under the first count keys at or after from (all
     * keys when from is null), in key order, each copied whole into an
     * array of its own as {@link #recordImage(Object)} copies one: a
     * sorted-map leaf's records per libuniheap call, no proxy made, no value
     * decoded. Each record is read at its own instant (in a block: the
     * block's snapshot); outside a block a record replaced meanwhile is read
     * as the key's record now, and one whose key was removed meanwhile is
     * left out.
     * @return the images, at most count of them
     * @throws TypeMismatchException if a value in the range is not a record
     * @throws ClassCastException for a from of another class than the map's keys
     */
    public List<RecordImage> scanImages(Object from, int count) {
        if (from != null)
            checkKeyType(from);
        return ScanRecords.images(heap, ref, kind(), from, count);
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
        checkKeyType(key);
        return MapOps.getImage(heap, ref, true, kind(), key);
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
        checkKeyType(key);
        return MapOps.setInline(heap, ref, true, kind(), key, field, value);
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
        checkKeyType(key);
        MapOps.putRecord(heap, ref, true, kind(), key, heap.classes.declared(Declared.of(type)),
                values, freeOld);
    }

    boolean containsRaw(Object key) {
        return MapOps.get(heap, ref, true, kind(), key) != MapOps.MISSING;
    }

    @SuppressWarnings("unchecked")
    V putRaw(K key, V value) {
        Object old = MapOps.put(heap, ref, true, kind(), key, value, true);
        return old == MapOps.MISSING ? null : (V) old;
    }

    @SuppressWarnings("unchecked")
    V removeRaw(Object key) {
        Object old = MapOps.remove(heap, ref, true, kind(), key);
        return old == MapOps.MISSING ? null : (V) old;
    }

    /** Put without reading the previous value (one call less than put). */
    public void set(K key, V value) {
        checkKeyType(key);
        MapOps.put(heap, ref, true, kind(), key, value, false);
    }

    @Override
    public int size() {
        return MapOps.intSize(longSize());
    }

    /** The number of entries, beyond Integer.MAX_VALUE too. */
    public long longSize() {
        return MapOps.size(heap, ref, true);
    }

    /** Check the tree's structure (libuniheap's uh_smap_check).
     * @throws UniheapException naming the first problem */
    public void check() {
        MapOps.check(heap, ref, true);
    }

    /** {@code uniheap.sortedmap@4160{a=1, b=2, ...}}, at most 16 entries. */
    @Override
    public String toString() {
        return DataTypes.describe(this, entryIterator());
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
