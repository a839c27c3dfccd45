package org.uniheap;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;

/**
 * A range of a persistent sorted map, ascending or descending: the map
 * itself ({@link PSortedMap}) and every subMap/headMap/tailMap/descendingMap
 * view of it. Navigation is a scan of the B+-tree from a key, either way
 * (uh_smap_scan); nothing is cached.
 */
abstract class SortedView<K, V> extends AbstractMap<K, V> implements NavigableMap<K, V> {
    /* Bounds in the map's own (ascending) order. */
    final boolean hasLo, loIncl, hasHi, hiIncl;
    final K lo, hi;
    /** Iteration and navigation run from high to low keys. */
    final boolean desc;

    SortedView(boolean hasLo, K lo, boolean loIncl, boolean hasHi, K hi, boolean hiIncl, boolean desc) {
        this.hasLo = hasLo;
        this.lo = lo;
        this.loIncl = loIncl;
        this.hasHi = hasHi;
        this.hi = hi;
        this.hiIncl = hiIncl;
        this.desc = desc;
    }

    /** The map this is a view of. */
    abstract PSortedMap<K, V> base();

    final int cmp(Object a, Object b) {
        return Keys.compare(base().kind(), a, b);
    }

    private boolean tooLow(Object k) {
        if (!hasLo)
            return false;
        int c = cmp(k, lo);
        return c < 0 || c == 0 && !loIncl;
    }

    private boolean tooHigh(Object k) {
        if (!hasHi)
            return false;
        int c = cmp(k, hi);
        return c > 0 || c == 0 && !hiIncl;
    }

    final boolean inRange(Object k) {
        return !tooLow(k) && !tooHigh(k);
    }

    /* A new bound must lie in this range; an exclusive one may sit on an
     * exclusive bound of ours. */
    private boolean boundOk(Object k, boolean incl) {
        if (inRange(k))
            return true;
        if (incl)
            return false;
        return hasLo && !loIncl && cmp(k, lo) == 0 || hasHi && !hiIncl && cmp(k, hi) == 0;
    }

    private K checkKey(Object k) {
        base().checkKeyType(k);
        @SuppressWarnings("unchecked")
        K key = (K) k;
        return key;
    }

    // ---- navigation in ascending order, inside the bounds ----

    private Map.Entry<K, V> scanFirst(boolean reverse, Object from, boolean incl) {
        MapOps.Cursor<K, V> c = base().cursor(from, reverse);
        while (c.hasNext()) {   // bound: skips one entry at most
            Map.Entry<K, V> e = c.next();
            if (!incl && from != null && cmp(e.getKey(), from) == 0)
                continue;
            return e;
        }
        return null;
    }

    private Map.Entry<K, V> absLowest() {
        Map.Entry<K, V> e = scanFirst(false, hasLo ? lo : null, loIncl);
        return e == null || tooHigh(e.getKey()) ? null : e;
    }

    private Map.Entry<K, V> absHighest() {
        Map.Entry<K, V> e = scanFirst(true, hasHi ? hi : null, hiIncl);
        return e == null || tooLow(e.getKey()) ? null : e;
    }

    private Map.Entry<K, V> absCeiling(Object k, boolean incl) {
        if (tooLow(k))
            return absLowest();
        Map.Entry<K, V> e = scanFirst(false, k, incl);
        return e == null || tooHigh(e.getKey()) ? null : e;
    }

    private Map.Entry<K, V> absFloor(Object k, boolean incl) {
        if (tooHigh(k))
            return absHighest();
        Map.Entry<K, V> e = scanFirst(true, k, incl);
        return e == null || tooLow(e.getKey()) ? null : e;
    }

    /** Entries in this view's order. */
    final Iterator<Map.Entry<K, V>> entryIterator() {
        // The far bound ends the scan in libuniheap; only an exclusive near
        // bound (the scan starts at it) is skipped here.
        MapOps.Cursor<K, V> c = desc
                ? base().cursor(hasHi ? hi : null, true, hasLo ? lo : null, loIncl)
                : base().cursor(hasLo ? lo : null, false, hasHi ? hi : null, hiIncl);
        Iterator<Map.Entry<K, V>> ranged = new Iterator<>() {
            private Map.Entry<K, V> next;

            @Override
            public boolean hasNext() {
                while (next == null && c.hasNext()) {   // bound: one skipped bound key
                    Map.Entry<K, V> e = c.next();
                    if (!(desc ? tooHigh(e.getKey()) : tooLow(e.getKey())))
                        next = e;
                }
                return next != null;
            }

            @Override
            public Map.Entry<K, V> next() {
                if (!hasNext())
                    throw new NoSuchElementException();
                Map.Entry<K, V> e = next;
                next = null;
                return e;
            }
        };
        return DataTypes.entries(this, ranged);   // adds remove and setValue
    }

    // ---- Map ----

    @Override
    public V get(Object key) {
        return inRange(checkKey(key)) ? base().getRaw(key) : null;
    }

    @Override
    public boolean containsKey(Object key) {
        return inRange(checkKey(key)) && base().containsRaw(key);
    }

    @Override
    public V put(K key, V value) {
        if (!inRange(checkKey(key)))
            throw new IllegalArgumentException("key out of this view's range: " + key);
        return base().putRaw(key, value);
    }

    @Override
    public V remove(Object key) {
        return inRange(checkKey(key)) ? base().removeRaw(key) : null;
    }

    @Override
    public int size() {
        if (!hasLo && !hasHi)
            return base().size();
        int n = 0;
        for (Iterator<Map.Entry<K, V>> it = entryIterator(); it.hasNext(); it.next())
            n++;
        return n;
    }

    @Override
    public boolean isEmpty() {
        return firstEntry() == null;
    }

    @Override
    public Set<Map.Entry<K, V>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public Iterator<Map.Entry<K, V>> iterator() {
                return entryIterator();
            }

            @Override
            public int size() {
                return SortedView.this.size();
            }
        };
    }

    // ---- SortedMap / NavigableMap ----

    @Override
    @SuppressWarnings("unchecked")
    public Comparator<? super K> comparator() {
        Comparator<? super K> c = base().kind() == Keys.STRING ? (Comparator<? super K>) Keys.CODE_POINT_ORDER : null;
        if (!desc)
            return c;
        return c == null ? (Comparator<? super K>) Collections.reverseOrder() : Collections.reverseOrder(c);
    }

    @Override
    public Map.Entry<K, V> firstEntry() {
        return desc ? absHighest() : absLowest();
    }

    @Override
    public Map.Entry<K, V> lastEntry() {
        return desc ? absLowest() : absHighest();
    }

    @Override
    public K firstKey() {
        return key(firstEntry());
    }

    @Override
    public K lastKey() {
        return key(lastEntry());
    }

    private static <K> K key(Map.Entry<K, ?> e) {
        if (e == null)
            throw new NoSuchElementException("the map is empty");
        return e.getKey();
    }

    private static <K> K keyOrNull(Map.Entry<K, ?> e) {
        return e == null ? null : e.getKey();
    }

    @Override
    public Map.Entry<K, V> pollFirstEntry() {
        return poll(firstEntry());
    }

    @Override
    public Map.Entry<K, V> pollLastEntry() {
        return poll(lastEntry());
    }

    private Map.Entry<K, V> poll(Map.Entry<K, V> e) {
        if (e == null)
            return null;
        base().removeRaw(e.getKey());
        return e;
    }

    @Override
    public Map.Entry<K, V> ceilingEntry(K key) {
        checkKey(key);
        return desc ? absFloor(key, true) : absCeiling(key, true);
    }

    @Override
    public Map.Entry<K, V> higherEntry(K key) {
        checkKey(key);
        return desc ? absFloor(key, false) : absCeiling(key, false);
    }

    @Override
    public Map.Entry<K, V> floorEntry(K key) {
        checkKey(key);
        return desc ? absCeiling(key, true) : absFloor(key, true);
    }

    @Override
    public Map.Entry<K, V> lowerEntry(K key) {
        checkKey(key);
        return desc ? absCeiling(key, false) : absFloor(key, false);
    }

    @Override
    public K ceilingKey(K key) {
        return keyOrNull(ceilingEntry(key));
    }

    @Override
    public K higherKey(K key) {
        return keyOrNull(higherEntry(key));
    }

    @Override
    public K floorKey(K key) {
        return keyOrNull(floorEntry(key));
    }

    @Override
    public K lowerKey(K key) {
        return keyOrNull(lowerEntry(key));
    }

    @Override
    public NavigableMap<K, V> subMap(K fromKey, boolean fromInclusive, K toKey, boolean toInclusive) {
        checkKey(fromKey);
        checkKey(toKey);
        int c = cmp(fromKey, toKey);
        if (desc ? c < 0 : c > 0)
            throw new IllegalArgumentException("fromKey " + fromKey + " is after toKey " + toKey);
        return desc ? view(true, toKey, toInclusive, true, fromKey, fromInclusive, true)
                : view(true, fromKey, fromInclusive, true, toKey, toInclusive, false);
    }

    @Override
    public NavigableMap<K, V> headMap(K toKey, boolean inclusive) {
        checkKey(toKey);
        return desc ? view(true, toKey, inclusive, hasHi, hi, hiIncl, true)
                : view(hasLo, lo, loIncl, true, toKey, inclusive, false);
    }

    @Override
    public NavigableMap<K, V> tailMap(K fromKey, boolean inclusive) {
        checkKey(fromKey);
        return desc ? view(hasLo, lo, loIncl, true, fromKey, inclusive, true)
                : view(true, fromKey, inclusive, hasHi, hi, hiIncl, false);
    }

    private NavigableMap<K, V> view(boolean nLo, K l, boolean li, boolean nHi, K h, boolean hi2,
                                    boolean d) {
        if (nLo && (l != lo || li != loIncl) && !boundOk(l, li))
            throw new IllegalArgumentException("key out of range: " + l);
        if (nHi && (h != hi || hi2 != hiIncl) && !boundOk(h, hi2))
            throw new IllegalArgumentException("key out of range: " + h);
        return new SubView<>(base(), nLo, l, li, nHi, h, hi2, d);
    }

    @Override
    public SortedMap<K, V> subMap(K fromKey, K toKey) {
        return subMap(fromKey, true, toKey, false);
    }

    @Override
    public SortedMap<K, V> headMap(K toKey) {
        return headMap(toKey, false);
    }

    @Override
    public SortedMap<K, V> tailMap(K fromKey) {
        return tailMap(fromKey, true);
    }

    @Override
    public NavigableMap<K, V> descendingMap() {
        return new SubView<>(base(), hasLo, lo, loIncl, hasHi, hi, hiIncl, !desc);
    }

    @Override
    public NavigableSet<K> navigableKeySet() {
        return new KeySet<>(this);
    }

    @Override
    public Set<K> keySet() {
        return navigableKeySet();
    }

    @Override
    public NavigableSet<K> descendingKeySet() {
        return descendingMap().navigableKeySet();
    }

    /** A view of a range of a sorted map. */
    static final class SubView<K, V> extends SortedView<K, V> {
        private final PSortedMap<K, V> base;

        SubView(PSortedMap<K, V> base, boolean hasLo, K lo, boolean loIncl, boolean hasHi, K hi,
                boolean hiIncl, boolean desc) {
            super(hasLo, lo, loIncl, hasHi, hi, hiIncl, desc);
            this.base = base;
        }

        @Override
        PSortedMap<K, V> base() {
            return base;
        }
    }

    /** The keys of a view, as a NavigableSet backed by it. */
    static final class KeySet<K> extends AbstractSet<K> implements NavigableSet<K> {
        private final SortedView<K, ?> m;

        KeySet(SortedView<K, ?> m) {
            this.m = m;
        }

        @Override
        public Iterator<K> iterator() {
            Iterator<? extends Map.Entry<K, ?>> it = m.entrySet().iterator();
            return new Iterator<>() {
                @Override
                public boolean hasNext() {
                    return it.hasNext();
                }

                @Override
                public K next() {
                    return it.next().getKey();
                }

                @Override
                public void remove() {
                    it.remove();
                }
            };
        }

        @Override
        public int size() {
            return m.size();
        }

        @Override
        public boolean isEmpty() {
            return m.isEmpty();
        }

        @Override
        public boolean contains(Object o) {
            return m.containsKey(o);
        }

        @Override
        public boolean remove(Object o) {
            boolean had = m.containsKey(o);
            m.remove(o);
            return had;
        }

        @Override
        public Comparator<? super K> comparator() {
            return m.comparator();
        }

        @Override
        public K first() {
            return m.firstKey();
        }

        @Override
        public K last() {
            return m.lastKey();
        }

        @Override
        public K lower(K k) {
            return m.lowerKey(k);
        }

        @Override
        public K floor(K k) {
            return m.floorKey(k);
        }

        @Override
        public K ceiling(K k) {
            return m.ceilingKey(k);
        }

        @Override
        public K higher(K k) {
            return m.higherKey(k);
        }

        @Override
        public K pollFirst() {
            return keyOrNull(m.pollFirstEntry());
        }

        @Override
        public K pollLast() {
            return keyOrNull(m.pollLastEntry());
        }

        @Override
        public NavigableSet<K> descendingSet() {
            return new KeySet<>((SortedView<K, ?>) m.descendingMap());
        }

        @Override
        public Iterator<K> descendingIterator() {
            return descendingSet().iterator();
        }

        @Override
        public NavigableSet<K> subSet(K from, boolean fi, K to, boolean ti) {
            return new KeySet<>((SortedView<K, ?>) m.subMap(from, fi, to, ti));
        }

        @Override
        public NavigableSet<K> headSet(K to, boolean inclusive) {
            return new KeySet<>((SortedView<K, ?>) m.headMap(to, inclusive));
        }

        @Override
        public NavigableSet<K> tailSet(K from, boolean inclusive) {
            return new KeySet<>((SortedView<K, ?>) m.tailMap(from, inclusive));
        }

        @Override
        public SortedSet<K> subSet(K from, K to) {
            return subSet(from, true, to, false);
        }

        @Override
        public SortedSet<K> headSet(K to) {
            return headSet(to, false);
        }

        @Override
        public SortedSet<K> tailSet(K from) {
            return tailSet(from, true);
        }
    }
}
