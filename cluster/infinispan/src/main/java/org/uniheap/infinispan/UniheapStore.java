package org.uniheap.infinispan;

import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

import org.infinispan.commons.configuration.ConfiguredBy;
import org.infinispan.commons.io.ByteBufferFactory;
import org.infinispan.commons.time.TimeService;
import org.infinispan.commons.util.IntSet;
import org.infinispan.marshall.persistence.PersistenceMarshaller;
import org.infinispan.persistence.spi.InitializationContext;
import org.infinispan.persistence.spi.MarshallableEntry;
import org.infinispan.persistence.spi.MarshallableEntryFactory;
import org.infinispan.persistence.spi.NonBlockingStore;
import org.infinispan.persistence.spi.PersistenceException;
import org.reactivestreams.Publisher;
import org.uniheap.Bytes;
import org.uniheap.Heap;
import org.uniheap.PSortedMap;
import org.uniheap.infinispan.Changes.Change;

import io.reactivex.rxjava3.core.Flowable;
import jakarta.transaction.Transaction;

/**
 * An Infinispan store backed by uniheap: each node's entries live in its own
 * heapd's heap (Segments: one sorted map per segment under one durable
 * root), keyed by the key's marshalled bytes, valued by an EntryCodec record.
 *
 * Every operation is an in-memory step of libuniheap (no file I/O on the
 * calling thread; durable on return at the heap's durability), so it runs
 * inline on the caller's thread and its stage is already complete. A write
 * or delete is atomic on its own (a block, re-run when it loses a conflict
 * with a concurrent writer of the same segment map); a batch, and a transaction's
 * modifications (TRANSACTIONAL: prepareWithModifications keeps them in
 * Java, commit applies them in one block, rollback drops them), are atomic
 * as a whole (Changes). Bulk reads scan the sorted maps in place,
 * segment by segment, and never return expired entries; purgeExpired removes
 * an expired entry only if it is still the one it read (one block), so a
 * concurrent rewrite is never lost.
 */
@ConfiguredBy(UniheapStoreConfiguration.class)
public class UniheapStore<K, V> implements NonBlockingStore<K, V> {
    private Heap heap;
    private Segments segments;
    private PersistenceMarshaller marshaller;
    private MarshallableEntryFactory<K, V> entries;
    private ByteBufferFactory buffers;
    private TimeService time;
    /** Prepared transactions' changes, until their commit or rollback. */
    private final Map<Transaction, List<Change>> prepared = new ConcurrentHashMap<>();

    @Override
    public CompletionStage<Void> start(InitializationContext ctx) {
        UniheapStoreConfiguration conf = ctx.getConfiguration();
        String root = conf.root() != null ? conf.root() : "infinispan/" + ctx.getCache().getName();
        int count = ctx.getCache().getCacheConfiguration().clustering().hash().numSegments();
        marshaller = ctx.getPersistenceMarshaller();
        entries = ctx.getMarshallableEntryFactory();
        buffers = ctx.getByteBufferFactory();
        time = ctx.getTimeService();
        return run(() -> {
            heap = SharedHeaps.acquire(conf.socket());
            try {
                segments = new Segments(heap, root, count);
            } catch (RuntimeException e) {
                SharedHeaps.release(heap);
                heap = null;
                throw e;
            }
            return null;
        });
    }

    @Override
    public CompletionStage<Void> stop() {
        return run(() -> {
            if (heap != null)
                SharedHeaps.release(heap);
            heap = null;
            segments = null;
            return null;
        });
    }

    @Override
    public Set<Characteristic> characteristics() {
        return EnumSet.of(Characteristic.BULK_READ, Characteristic.SEGMENTABLE,
                Characteristic.EXPIRATION, Characteristic.TRANSACTIONAL);
    }

    @Override
    public CompletionStage<Boolean> isAvailable() {
        return CompletableFuture.completedFuture(heap != null && !heap.isClosed());
    }

    @Override
    public CompletionStage<MarshallableEntry<K, V>> load(int segment, Object key) {
        return run(() -> {
            PSortedMap<Bytes, byte[]> m = segments.map(segment, false);
            byte[] rec = m == null ? null : m.get(keyBytes(key));
            if (rec == null || EntryCodec.isExpired(rec, time.wallClockTime()))
                return null;
            return EntryCodec.decode(rec, key, null, true, entries, buffers);
        });
    }

    @Override
    public CompletionStage<Boolean> containsKey(int segment, Object key) {
        return run(() -> {
            PSortedMap<Bytes, byte[]> m = segments.map(segment, false);
            byte[] rec = m == null ? null : m.get(keyBytes(key));
            return rec != null && !EntryCodec.isExpired(rec, time.wallClockTime());
        });
    }

    @Override
    public CompletionStage<Void> write(int segment, MarshallableEntry<? extends K, ? extends V> entry) {
        return run(() -> {
            byte[] rec = EntryCodec.encode(entry);
            Bytes key = Bytes.of(entry.getKeyBytes().trim());
            PSortedMap<Bytes, byte[]> m = segments.map(segment, true);
            // In a block of its own, which heap.atomic runs again when it
            // loses a conflict with a writer of the same map (a lone set
            // would throw ConflictException instead).
            heap.atomic(() -> m.set(key, rec));
            return null;
        });
    }

    @Override
    public CompletionStage<Boolean> delete(int segment, Object key) {
        return run(() -> {
            PSortedMap<Bytes, byte[]> m = segments.map(segment, false);
            if (m == null)
                return false;
            Bytes k = keyBytes(key);
            return heap.atomic(() -> m.remove(k) != null);   // retried on a conflict, as write
        });
    }

    @Override
    public CompletionStage<Void> batch(int publisherCount,
            Publisher<SegmentedPublisher<Object>> removePublisher,
            Publisher<SegmentedPublisher<MarshallableEntry<K, V>>> writePublisher) {
        return Changes.gather(publisherCount, removePublisher, writePublisher, this::keyBytes)
                .thenCompose(changes -> run(() -> {
                    Changes.apply(heap, segments, changes);
                    return null;
                }));
    }

    @Override
    public CompletionStage<Void> prepareWithModifications(Transaction tx, int publisherCount,
            Publisher<SegmentedPublisher<Object>> removePublisher,
            Publisher<SegmentedPublisher<MarshallableEntry<K, V>>> writePublisher) {
        return Changes.gather(publisherCount, removePublisher, writePublisher, this::keyBytes)
                .thenAccept(changes -> prepared.put(tx, changes));
    }

    @Override
    public CompletionStage<Void> commit(Transaction tx) {
        List<Change> changes = prepared.remove(tx);
        if (changes == null)
            return CompletableFuture.completedFuture(null);
        return run(() -> {
            Changes.apply(heap, segments, changes);
            return null;
        });
    }

    @Override
    public CompletionStage<Void> rollback(Transaction tx) {
        prepared.remove(tx);
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<Void> addSegments(IntSet added) {
        // Maps are created by the first write to a segment: nothing to do
        // until then, and an empty segment costs nothing in the heap.
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<Void> removeSegments(IntSet removed) {
        return run(() -> {
            removed.forEach((int s) -> segments.drop(s));
            return null;
        });
    }

    @Override
    public CompletionStage<Void> clear() {
        return run(() -> {
            segments.clearAll();
            return null;
        });
    }

    @Override
    public CompletionStage<Long> size(IntSet in) {
        return run(() -> {
            long now = time.wallClockTime();
            long n = 0;
            for (int s : segments.present()) {
                if (!in.contains(s))
                    continue;
                for (byte[] rec : segments.map(s, true).values())
                    if (!EntryCodec.isExpired(rec, now))
                        n++;
            }
            return n;
        });
    }

    @Override
    public CompletionStage<Long> approximateSize(IntSet in) {
        return run(() -> {
            long n = 0;
            for (int s : segments.present())
                if (in.contains(s))
                    n += segments.map(s, true).longSize();
            return n;
        });
    }

    @Override
    public Publisher<MarshallableEntry<K, V>> publishEntries(IntSet in, Predicate<? super K> filter,
            boolean includeValues) {
        return Flowable.defer(() -> {
            long now = time.wallClockTime();
            return scan(in).filter(e -> !EntryCodec.isExpired(e.getValue(), now))
                    .map(e -> {
                        Object key = filter == null ? null : keyOf(e.getKey());
                        return EntryCodec.decode(e.getValue(), key,
                                buffers.newByteBuffer(e.getKey().toArray()), includeValues,
                                entries, buffers);
                    })
                    .filter(e -> filter == null || filter.test(e.getKey()));
        });
    }

    @Override
    @SuppressWarnings("unchecked")
    public Publisher<K> publishKeys(IntSet in, Predicate<? super K> filter) {
        return Flowable.defer(() -> {
            long now = time.wallClockTime();
            return scan(in).filter(e -> !EntryCodec.isExpired(e.getValue(), now))
                    .map(e -> (K) keyOf(e.getKey()))
                    .filter(k -> filter == null || filter.test(k));
        });
    }

    @Override
    public Publisher<MarshallableEntry<K, V>> purgeExpired() {
        return Flowable.defer(() -> {
            long now = time.wallClockTime();
            return Flowable.fromArray(presentBoxed())
                    .concatMap(s -> {
                        PSortedMap<Bytes, byte[]> m = segments.map(s, false);
                        if (m == null)
                            return Flowable.empty();
                        return Flowable.fromIterable(m.entrySet())
                                .filter(e -> EntryCodec.isExpired(e.getValue(), now))
                                .filter(e -> removeIfSame(m, e.getKey(), e.getValue()))
                                .map(e -> EntryCodec.<K, V>decode(e.getValue(), null,
                                        buffers.newByteBuffer(e.getKey().toArray()), true,
                                        entries, buffers));
                    });
        });
    }

    /** Remove key if its record is still rec (what the caller decided on). */
    private boolean removeIfSame(PSortedMap<Bytes, byte[]> m, Bytes key, byte[] rec) {
        return heap.atomic(() -> {
            byte[] now = m.get(key);
            if (now == null || !java.util.Arrays.equals(now, rec))
                return false;
            m.remove(key);
            return true;
        });
    }

    /** The entries of the selected segments, segment after segment, read in place. */
    private Flowable<Map.Entry<Bytes, byte[]>> scan(IntSet in) {
        return Flowable.fromArray(presentBoxed())
                .filter(in::contains)
                .concatMap(s -> {
                    PSortedMap<Bytes, byte[]> m = segments.map(s, false);
                    return m == null ? Flowable.empty() : Flowable.fromIterable(m.entrySet());
                });
    }

    private Integer[] presentBoxed() {
        return java.util.Arrays.stream(segments.present()).boxed().toArray(Integer[]::new);
    }

    private Bytes keyBytes(Object key) {
        try {
            return Bytes.of(marshaller.objectToBuffer(key).trim());
        } catch (java.io.IOException e) {
            throw new PersistenceException("uniheap store: cannot marshal key " + key, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PersistenceException(e);
        }
    }

    private Object keyOf(Bytes key) {
        try {
            return marshaller.objectFromByteBuffer(key.toArray());
        } catch (java.io.IOException | ClassNotFoundException e) {
            throw new PersistenceException("uniheap store: cannot unmarshal a key", e);
        }
    }

    private interface Step<T> {
        T get() throws Exception;
    }

    /** Run an in-memory step now; its result (or failure) as a completed stage. */
    private static <T> CompletionStage<T> run(Step<T> step) {
        try {
            return CompletableFuture.completedFuture(step.get());
        } catch (Throwable t) {
            return CompletableFuture.failedFuture(t instanceof PersistenceException ? t
                    : new PersistenceException("uniheap store: " + t.getMessage(), t));
        }
    }
}
