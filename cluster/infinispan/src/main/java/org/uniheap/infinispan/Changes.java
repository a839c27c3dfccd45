package org.uniheap.infinispan;

import java.util.List;
import java.util.concurrent.CompletionStage;

import org.infinispan.persistence.spi.MarshallableEntry;
import org.infinispan.persistence.spi.NonBlockingStore.SegmentedPublisher;
import org.reactivestreams.Publisher;
import org.uniheap.Bytes;
import org.uniheap.Heap;
import org.uniheap.PSortedMap;

import io.reactivex.rxjava3.core.Flowable;

/**
 * Several writes and deletes applied as one: a batch, or a transaction's
 * modifications. They are gathered in Java first (the key's marshalled
 * bytes, the EntryCodec record or null for a delete), then applied in one
 * failure-atomic block: after a crash either all of them are in the heap
 * or none. A uniheap block belongs to the thread that opened it, and
 * Infinispan may prepare and commit on different threads, so nothing
 * touches the heap before the commit: prepared changes live in Java.
 *
 * Invariant: the segment maps a block writes to exist before the block
 * opens, so a block that rolls back never leaves Segments' cache naming a
 * map that the root does not hold.
 */
final class Changes {
    /** One change: record null deletes key. */
    record Change(int segment, Bytes key, byte[] record) {}

    interface KeyMarshaller {
        Bytes bytes(Object key);
    }

    private Changes() {}

    /**
     * The changes the two publishers carry. Their segment publishers are
     * subscribed together (up to publisherCount at once), as the SPI asks.
     */
    static <K, V> CompletionStage<List<Change>> gather(int publisherCount,
            Publisher<SegmentedPublisher<Object>> removes,
            Publisher<SegmentedPublisher<MarshallableEntry<K, V>>> writes, KeyMarshaller keys) {
        int n = Math.max(1, publisherCount);
        Flowable<Change> deletes = Flowable.fromPublisher(removes).flatMap(sp -> Flowable
                .fromPublisher(sp).map(k -> new Change(sp.getSegment(), keys.bytes(k), null)), n);
        Flowable<Change> puts = Flowable.fromPublisher(writes).flatMap(sp -> Flowable
                .fromPublisher(sp).map(e -> new Change(sp.getSegment(),
                        Bytes.of(e.getKeyBytes().trim()), EntryCodec.encode(e))), n);
        return Flowable.merge(deletes, puts).toList().toCompletionStage();
    }

    /** Apply every change in one block (re-run by heap.atomic on a conflict). */
    static void apply(Heap heap, Segments segments, List<Change> changes) {
        if (changes.isEmpty())
            return;
        for (Change c : changes)
            if (c.record() != null)
                segments.map(c.segment(), true);
        heap.atomic(() -> {
            for (Change c : changes) {
                PSortedMap<Bytes, byte[]> m = segments.map(c.segment(), c.record() != null);
                if (c.record() != null)
                    m.set(c.key(), c.record());
                else if (m != null)
                    m.remove(c.key());
            }
        });
    }
}
