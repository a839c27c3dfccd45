package org.uniheap.infinispan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.infinispan.persistence.spi.MarshallableEntry;
import org.infinispan.persistence.spi.NonBlockingStore.SegmentedPublisher;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.uniheap.test.Heapd;

import io.reactivex.rxjava3.core.Flowable;
import jakarta.transaction.Transaction;
import jakarta.transaction.TransactionManager;

/**
 * The store as a transactional store of a transactional cache: a committed
 * transaction's writes and deletes are in the heap after the cache manager
 * restarts; a rolled-back one leaves nothing; prepared changes stay out of
 * the heap until the commit.
 */
class TransactionTest {
    private Heapd heapd;

    @BeforeEach
    void up() throws Exception {
        heapd = Heapd.start("128M");
    }

    @AfterEach
    void down() {
        if (heapd != null)
            heapd.close();
    }

    private static Object stored(LocalCache n, Object key) {
        MarshallableEntry<Object, Object> e =
                n.store.load(n.segment(key), key).toCompletableFuture().join();
        return e == null ? null : e.getValue();
    }

    @Test
    void commitSurvivesRestartAndRollbackLeavesNothing() throws Exception {
        try (LocalCache n = new LocalCache(heapd.socket, false, true)) {
            TransactionManager tm = n.cache.getAdvancedCache().getTransactionManager();
            n.cache.put("gone", "x");
            tm.begin();
            n.cache.put("a", "1");
            n.cache.put("b", "2");
            n.cache.remove("gone");
            tm.commit();
            tm.begin();
            n.cache.put("c", "3");
            n.cache.put("a", "changed");
            tm.rollback();
            assertEquals("1", stored(n, "a"));
            assertNull(stored(n, "c"));
            assertNull(stored(n, "gone"));
        }
        try (LocalCache n = new LocalCache(heapd.socket, true, true)) {
            assertEquals(2, n.cache.size());
            assertEquals("1", n.cache.get("a"));
            assertEquals("2", n.cache.get("b"));
            assertNull(n.cache.get("c"));
            assertNull(n.cache.get("gone"));
        }
    }

    @Test
    void preparedChangesWaitForTheCommit() throws Exception {
        try (LocalCache n = new LocalCache(heapd.socket, false, true)) {
            TransactionManager tm = n.cache.getAdvancedCache().getTransactionManager();
            tm.begin();
            Transaction tx = tm.getTransaction();
            prepare(n, tx, "p", "v");
            assertNull(stored(n, "p"));
            n.store.commit(tx).toCompletableFuture().join();
            assertEquals("v", stored(n, "p"));
            prepare(n, tx, "q", "w");
            n.store.rollback(tx).toCompletableFuture().join();
            assertNull(stored(n, "q"));
            n.store.commit(tx).toCompletableFuture().join();   // nothing left to commit
            assertNull(stored(n, "q"));
            tm.rollback();
        }
    }

    private static void prepare(LocalCache n, Transaction tx, Object key, Object value) {
        MarshallableEntry<Object, Object> e = n.entries.create(key, value);
        SegmentedPublisher<MarshallableEntry<Object, Object>> writes = segmented(n.segment(key), e);
        n.store.prepareWithModifications(tx, 1, Flowable.empty(), Flowable.just(writes))
                .toCompletableFuture().join();
    }

    private static <T> SegmentedPublisher<T> segmented(int segment, T item) {
        return new SegmentedPublisher<>() {
            @Override
            public int getSegment() {
                return segment;
            }

            @Override
            public void subscribe(Subscriber<? super T> s) {
                Flowable.just(item).subscribe(s);
            }
        };
    }
}
