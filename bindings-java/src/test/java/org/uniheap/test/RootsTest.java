package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.uniheap.DisconnectedException;
import org.uniheap.Heap;
import org.uniheap.PMap;
import org.uniheap.PObject;

/** Roots and objects survive reconnects and heapd restarts. */
class RootsTest extends HeapTest {
    @Test
    void rootsAcrossReconnectAndRestart() throws Exception {
        Account a = heap.create(Account.class, x -> {
            x.owner("durable");
            x.balance(77);
        });
        PMap<String, Object> m = heap.newMap(String.class, Map.of("k", "v", "n", 5L));
        heap.atomic(() -> {
            heap.roots().put("roots.account", a);
            heap.roots().put("roots.map", m);
        });
        heap.close();

        try (Heap again = Heap.connect(heapd.socket)) {
            assertEquals(77, again.root("roots.account", Account.class).balance());
            assertEquals(Map.of("k", "v", "n", 5L), again.roots().get("roots.map"));
        }

        heapd.restart();
        try (Heap after = Heap.connect(heapd.socket)) {
            Account r = after.root("roots.account", Account.class);
            assertEquals("durable", r.owner());
            assertEquals(77, r.balance());
            assertEquals(Map.of("k", "v", "n", 5L), after.roots().get("roots.map"));
            assertTrue(after.roots().containsKey("roots.map"));
            r.balance(78);
        }

        heapd.kill();      // a crash: recovery runs at the next start
        heapd.start();
        try (Heap after = Heap.connect(heapd.socket)) {
            assertEquals(78, after.root("roots.account", Account.class).balance());
            after.check();
        }
    }

    @Test
    void aHeapGoesOnAcrossAHeapdRestart() throws Exception {
        Account a = heap.create(Account.class, x -> x.balance(1));
        heap.roots().put("roots.survivor", a);
        PMap<String, Object> m = heap.newMap(String.class);
        heap.roots().put("roots.survivor.map", m);
        heapd.restart();
        // libuniheap attaches anew by itself; the proxies and the mapping stay
        heap.atomic(() -> a.balance(a.balance() + 1));
        m.put("after", "restart");
        assertEquals(2, a.balance());
        assertEquals("restart", m.get("after"));
        assertTrue(heap.stats().reattaches() >= 1);
    }

    @Test
    void allocatedButNeverPublishedIsReclaimed() throws Exception {
        try (Heap h = Heap.connect(heapd.socket)) {
            h.atomic(() -> {
                Account a = h.create(Account.class);
                h.roots().put("roots.kept", a);
            });
            h.create(Account.class);   // unreachable
        }
        heapd.restart();
        try (Heap h = Heap.connect(heapd.socket)) {
            assertNotNull(h.roots().get("roots.kept"));
            for (Map.Entry<String, PObject> e : h.roots().entrySet())
                assertTrue(e.getValue().isLive(), e.getKey());
        }
    }

    @Test
    void noHeapdGivesAClearError() {
        DisconnectedException e = assertThrows(DisconnectedException.class,
                () -> Heap.connect(heapd.dir.resolve("nobody.sock"),
                        Heap.Option.connectTimeout(java.time.Duration.ZERO)));
        assertTrue(e.getMessage().contains("nobody.sock"), e.getMessage());
        assertEquals("UH_EDISCONNECTED", e.codeName());
    }
}
