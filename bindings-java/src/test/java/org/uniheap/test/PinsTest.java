package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

import org.junit.jupiter.api.Test;
import org.uniheap.Heap;
import org.uniheap.HeapClosedException;
import org.uniheap.PArray;
import org.uniheap.PList;
import org.uniheap.PMap;
import org.uniheap.PObject;
import org.uniheap.PSortedMap;

/**
 * Pins for the online GC, as {@link Heap#stats()} counts them: every proxy
 * of a persistent object (records, lists, arrays, maps, sorted maps) holds
 * one pin while reachable, and reading an object again returns its live
 * proxy (no new pin); the pin is released once the JVM found the proxy
 * unreachable; a closed heap's proxies release nothing into it. Waits for
 * the releases by bounded polling (System.gc() between looks), never on a
 * timing.
 */
class PinsTest extends HeapTest {
    private static final int N = 500;

    /** Poll until pins() <= want (System.gc() each round); the last value. */
    private static long pinsDownTo(LongSupplier pins, long want) throws InterruptedException {
        long now = pins.getAsLong();
        for (int i = 0; i < 600 && now > want; i++) {   // bound: 600 rounds of 50 ms
            System.gc();
            Thread.sleep(50);
            now = pins.getAsLong();
        }
        return now;
    }

    private long pins() {
        return heap.stats().pins();
    }

    @Test
    void recordProxiesPinWhileReachable() throws InterruptedException {
        PList<Account> list = heap.atomic(() -> {
            PList<Account> l = heap.newList();
            for (int i = 0; i < N; i++) {
                Account a = heap.create(Account.class);
                a.balance(i);
                l.add(a);
            }
            heap.roots().put("pins.accounts", l);
            return l;
        });
        long base = pinsDownTo(this::pins, 1);   // the accounts' proxies die
        assertEquals(1, base, "only list's proxy is reachable");
        List<Account> held = new ArrayList<>();
        for (int i = 0; i < N; i++)
            held.add(list.get(i));   // a new proxy each time
        assertTrue(pins() >= base + N, "pins " + pins() + " after " + N + " proxies over " + base);
        for (int i = 0; i < N; i++)
            assertEquals(i, held.get(i).balance());
        held = null;
        long after = pinsDownTo(this::pins, base);
        assertTrue(after <= base, "pins " + after + " once the proxies died, " + base + " before");
    }

    @Test
    void everyKindOfProxyPins() throws InterruptedException {
        long base = pins();   // a new connection: 0
        List<Object> held = new ArrayList<>();
        heap.atomic(() -> {
            PMap<String, PObject> m = heap.newMap(String.class);
            held.add(m);
            PSortedMap<Long, Object> sm = heap.newSortedMap(Long.class);
            held.add(sm);
            PList<Object> l = heap.newList();
            held.add(l);
            PArray<Long> a = heap.newArray(long.class, 4);
            held.add(a);
            TreeNode t = heap.create(TreeNode.class);
            held.add(t);
            m.put("list", l);
            m.put("tree", t);
            sm.put(1L, a);
            heap.roots().put("pins.kinds", m);
        });
        assertTrue(pins() >= base + 5, "5 new proxies: pins " + pins() + " over " + base);
        // Reads of those objects return the proxies already made: no pin.
        long mid = pins();
        @SuppressWarnings("unchecked")
        PMap<String, PObject> m = (PMap<String, PObject>) held.get(0);
        @SuppressWarnings("unchecked")
        PSortedMap<Long, Object> sm = (PSortedMap<Long, Object>) held.get(1);
        assertSame(held.get(2), m.get("list"));
        assertSame(held.get(4), m.get("tree"));
        assertSame(held.get(3), sm.get(1L));
        assertSame(m, heap.roots().get("pins.kinds"));
        assertEquals(mid, pins());
        held.clear();
        m = null;
        sm = null;
        long after = pinsDownTo(this::pins, base);
        assertTrue(after <= base, "pins " + after + " once the proxies died, " + base + " before");
    }

    @Test
    void aProxyIsMadeOncePerObjectWhileReachable() throws InterruptedException {
        PMap<String, Account> m = heap.atomic(() -> {
            PMap<String, Account> x = heap.newMap(String.class);
            for (int i = 0; i < N; i++) {
                Account a = heap.create(Account.class);
                a.balance(i);
                x.put("k" + i, a);
            }
            heap.roots().put("pins.once", x);
            return x;
        });
        long base = pinsDownTo(this::pins, 1);
        assertEquals(1, base, "only the map's proxy is reachable");
        List<Account> held = new ArrayList<>();
        for (int round = 0; round < 3; round++)
            for (int i = 0; i < N; i++)
                held.add(m.get("k" + i));
        assertEquals(1 + N, pins(), "one pin per object, however often it is read");
        for (int i = 0; i < N; i++)
            assertSame(held.get(i), held.get(N + i));
        held = null;
        assertEquals(1, pinsDownTo(this::pins, 1));
        Account again = m.get("k3");   // a new proxy once the old one died
        assertEquals(3, again.balance());
        assertEquals(2, pins());
    }

    @Test
    void aScanKeepsItsMapPinned() throws InterruptedException {
        List<WeakReference<Object>> map = new ArrayList<>();
        Iterator<Map.Entry<String, Object>> it = scanOfAMapNothingElseHolds(map);
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertNotNull(map.get(0).get(), "the scan holds its map's proxy, so its pin");
        assertTrue(pins() >= 1);
        assertTrue(it.hasNext());
        assertEquals("a", it.next().getKey());
    }

    private Iterator<Map.Entry<String, Object>> scanOfAMapNothingElseHolds(
            List<WeakReference<Object>> map) {
        PMap<String, Object> m = heap.atomic(() -> {
            PMap<String, Object> x = heap.newMap(String.class);
            x.put("a", 1L);
            heap.roots().put("pins.scan", x);
            return x;
        });
        map.add(new WeakReference<>(m));
        return m.entrySet().iterator();
    }

    @Test
    void proxiesOfAClosedHeapReleaseNothingIntoIt() throws InterruptedException {
        Heap other = connect();
        List<WeakReference<Object>> gone = new ArrayList<>();
        PList<Object> l = other.atomic(() -> {
            PList<Object> x = other.newList();
            for (int i = 0; i < N; i++)
                x.add(other.create(Account.class));
            return x;
        });
        for (int i = 0; i < N; i++)
            gone.add(new WeakReference<>(l.get(i)));
        assertTrue(other.stats().pins() >= N);
        other.close();
        l = null;
        for (int i = 0; i < 600 && gone.stream().anyMatch(w -> w.get() != null); i++) {
            System.gc();
            Thread.sleep(50);
        }
        // The Cleaner ran for those proxies against closed sessions; this
        // heap and its own pins are untouched.
        assertThrows(HeapClosedException.class, other::stats);
        Account a = heap.create(Account.class);
        a.balance(7);
        assertEquals(7, a.balance());
        assertTrue(pins() >= 1);
    }
}
