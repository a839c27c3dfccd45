package org.uniheap.infinispan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.infinispan.commons.util.IntSet;
import org.infinispan.commons.util.IntSets;
import org.infinispan.metadata.EmbeddedMetadata;
import org.infinispan.metadata.Metadata;
import org.infinispan.persistence.spi.MarshallableEntry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.uniheap.test.Heapd;

import io.reactivex.rxjava3.core.Flowable;

/**
 * The NonBlockingStore contract, case by case, on a store started by a real
 * local cache over a heapd of the test's own: write/load/delete/containsKey,
 * size and approximateSize per segment, publishEntries/publishKeys (with
 * segments, filters, without values), expiration (load hides, purgeExpired
 * removes and reports, only the expired), clear, removeSegments/addSegments,
 * metadata round trip, and durability across a store restart and a heapd
 * restart (SIGTERM and SIGKILL).
 */
class StoreContractTest {
    private Heapd heapd;
    private LocalCache node;

    @BeforeEach
    void up() throws Exception {
        heapd = Heapd.start("128M");
        node = new LocalCache(heapd.socket, false);
    }

    @AfterEach
    void down() {
        if (node != null)
            node.close();
        if (heapd != null)
            heapd.close();
    }

    private static <T> T join(CompletionStage<T> s) {
        return s.toCompletableFuture().join();
    }

    private static <T> List<T> all(Publisher<T> p) {
        return Flowable.fromPublisher(p).toList().blockingGet();
    }

    private MarshallableEntry<Object, Object> entry(Object k, Object v, Metadata md, long created) {
        return node.entries.create(k, v, md, null, created, created);
    }

    private void put(Object k, Object v) {
        join(node.store.write(node.segment(k), node.entries.create(k, v)));
    }

    private Object get(Object k) {
        MarshallableEntry<Object, Object> e = join(node.store.load(node.segment(k), k));
        return e == null ? null : e.getValue();
    }

    @Test
    void writeLoadDeleteContains() {
        assertNull(get("k1"));
        put("k1", "v1");
        put("k2", 42L);
        put(7, new byte[] {1, 2, 3});
        assertEquals("v1", get("k1"));
        assertEquals(42L, get("k2"));
        assertEquals(3, ((byte[]) get(7)).length);
        assertTrue(join(node.store.containsKey(node.segment("k1"), "k1")));
        put("k1", "v1b");
        assertEquals("v1b", get("k1"));
        assertTrue(join(node.store.delete(node.segment("k1"), "k1")));
        assertFalse(join(node.store.delete(node.segment("k1"), "k1")));
        assertNull(get("k1"));
        assertFalse(join(node.store.containsKey(node.segment("k1"), "k1")));
    }

    @Test
    void metadataAndTimesRoundTrip() {
        long now = System.currentTimeMillis();
        Metadata md = new EmbeddedMetadata.Builder().lifespan(1, TimeUnit.HOURS)
                .maxIdle(10, TimeUnit.MINUTES).build();
        join(node.store.write(node.segment("m"), entry("m", "v", md, now)));
        MarshallableEntry<Object, Object> e = join(node.store.load(node.segment("m"), "m"));
        assertNotNull(e);
        assertEquals(TimeUnit.HOURS.toMillis(1), e.getMetadata().lifespan());
        assertEquals(TimeUnit.MINUTES.toMillis(10), e.getMetadata().maxIdle());
        assertEquals(now, e.created());
        assertEquals(now, e.lastUsed());
    }

    @Test
    void sizeAndApproximateSizePerSegment() {
        for (int i = 0; i < 200; i++)
            put("key" + i, "value" + i);
        assertEquals(200L, join(node.store.size(LocalCache.all())));
        assertEquals(200L, join(node.store.approximateSize(LocalCache.all())));
        int s = node.segment("key0");
        long inS = 0;
        for (int i = 0; i < 200; i++)
            if (node.segment("key" + i) == s)
                inS++;
        assertEquals(inS, join(node.store.size(IntSets.immutableSet(s))));
    }

    @Test
    void publishEntriesAndKeys() {
        for (int i = 0; i < 100; i++)
            put("key" + i, "value" + i);
        List<MarshallableEntry<Object, Object>> es = all(node.store.publishEntries(LocalCache.all(), null, true));
        assertEquals(100, es.size());
        for (MarshallableEntry<Object, Object> e : es)
            assertEquals("value" + ((String) e.getKey()).substring(3), e.getValue());

        List<MarshallableEntry<Object, Object>> noValues = all(node.store.publishEntries(
                LocalCache.all(), k -> ((String) k).endsWith("7"), false));
        assertEquals(10, noValues.size());
        assertTrue(noValues.stream().allMatch(e -> e.getValue() == null));

        int s = node.segment("key5");
        Set<Object> keys = new HashSet<>(all(node.store.publishKeys(IntSets.immutableSet(s), null)));
        assertTrue(keys.contains("key5"));
        assertTrue(keys.stream().allMatch(k -> node.segment(k) == s));
        assertEquals(100, all(node.store.publishKeys(LocalCache.all(), null)).size());
    }

    @Test
    void expiredEntriesAreHiddenAndPurged() {
        long longAgo = System.currentTimeMillis() - 60_000;
        Metadata brief = new EmbeddedMetadata.Builder().lifespan(1, TimeUnit.SECONDS).build();
        Metadata hour = new EmbeddedMetadata.Builder().lifespan(1, TimeUnit.HOURS).build();
        for (int i = 0; i < 20; i++)
            join(node.store.write(node.segment("old" + i), entry("old" + i, "x", brief, longAgo)));
        for (int i = 0; i < 5; i++)
            join(node.store.write(node.segment("new" + i), entry("new" + i, "y", hour,
                    System.currentTimeMillis())));
        put("forever", "z");
        assertNull(get("old3"));
        assertFalse(join(node.store.containsKey(node.segment("old3"), "old3")));
        assertEquals(6L, join(node.store.size(LocalCache.all())));
        assertEquals(6, all(node.store.publishKeys(LocalCache.all(), null)).size());
        assertEquals(26L, join(node.store.approximateSize(LocalCache.all())));

        Set<Object> purged = all(node.store.purgeExpired()).stream()
                .map(MarshallableEntry::getKey).collect(Collectors.toSet());
        assertEquals(20, purged.size());
        assertTrue(purged.contains("old0"));
        assertEquals(6L, join(node.store.approximateSize(LocalCache.all())));
        assertEquals("z", get("forever"));
        assertEquals("y", get("new0"));
        assertTrue(all(node.store.purgeExpired()).isEmpty());
    }

    @Test
    void clearEmptiesEverySegment() {
        for (int i = 0; i < 50; i++)
            put("key" + i, i);
        join(node.store.clear());
        assertEquals(0L, join(node.store.size(LocalCache.all())));
        assertNull(get("key1"));
        put("key1", "again");
        assertEquals("again", get("key1"));
    }

    @Test
    void removeSegmentsDropsOnlyThose() {
        for (int i = 0; i < 300; i++)
            put("key" + i, i);
        int gone = node.segment("key0");
        IntSet removed = IntSets.immutableSet(gone);
        join(node.store.removeSegments(removed));
        for (int i = 0; i < 300; i++) {
            String k = "key" + i;
            if (node.segment(k) == gone)
                assertNull(get(k), k);
            else
                assertEquals(i, get(k), k);
        }
        assertEquals(0L, join(node.store.size(removed)));
        join(node.store.addSegments(removed));
        put("key0", "back");
        assertEquals("back", get("key0"));
        assertEquals(1L, join(node.store.size(removed)));
    }

    @Test
    void cacheRestartKeepsData() {
        for (int i = 0; i < 500; i++)
            node.cache.put("key" + i, "value" + i);
        node.close();
        node = new LocalCache(heapd.socket, true);
        assertEquals(500, node.cache.size());
        for (int i = 0; i < 500; i++)
            assertEquals("value" + i, node.cache.get("key" + i));
    }

    @Test
    void heapdRestartsAreSurvived() throws Exception {
        put("before", "1");
        heapd.stop();
        heapd.start();
        put("afterStop", "2");
        heapd.kill();
        heapd.start();
        put("afterKill", "3");
        assertEquals("1", get("before"));
        assertEquals("2", get("afterStop"));
        assertEquals("3", get("afterKill"));
        node.close();
        node = new LocalCache(heapd.socket, true);
        assertEquals("3", node.cache.get("afterKill"));
        assertEquals(3, node.cache.size());
    }
}
