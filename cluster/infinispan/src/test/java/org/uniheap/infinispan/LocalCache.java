package org.uniheap.infinispan;

import java.nio.file.Path;

import org.infinispan.Cache;
import org.infinispan.commons.util.IntSet;
import org.infinispan.commons.util.IntSets;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.configuration.global.GlobalConfigurationBuilder;
import org.infinispan.distribution.ch.KeyPartitioner;
import org.infinispan.factories.ComponentRegistry;
import org.infinispan.manager.DefaultCacheManager;
import org.infinispan.persistence.manager.PersistenceManager;
import org.infinispan.persistence.spi.MarshallableEntryFactory;
import org.infinispan.transaction.TransactionMode;
import org.infinispan.transaction.lookup.EmbeddedTransactionManagerLookup;

/**
 * A local (non-clustered) cache manager whose cache "c" keeps its entries in
 * the uniheap store on one heapd, and handles on the store itself, the entry
 * factory and the key partitioner, so that tests can drive the store's
 * contract directly as Infinispan does. A transactional one uses
 * Infinispan's embedded transaction manager and the store as a
 * transactional store (prepareWithModifications, commit, rollback).
 */
final class LocalCache implements AutoCloseable {
    static final int SEGMENTS = 16;

    final DefaultCacheManager manager;
    final Cache<Object, Object> cache;
    final UniheapStore<Object, Object> store;
    final MarshallableEntryFactory<Object, Object> entries;
    final KeyPartitioner partitioner;

    LocalCache(Path socket, boolean preload) {
        this(socket, preload, false);
    }

    @SuppressWarnings("unchecked")
    LocalCache(Path socket, boolean preload, boolean transactional) {
        GlobalConfigurationBuilder g = new GlobalConfigurationBuilder().nonClusteredDefault();
        g.globalState().disable();
        ConfigurationBuilder c = new ConfigurationBuilder();
        c.clustering().hash().numSegments(SEGMENTS);
        c.persistence().addStore(UniheapStoreConfigurationBuilder.class)
                .socket(socket.toString()).preload(preload).transactional(transactional);
        if (transactional)
            c.transaction().transactionMode(TransactionMode.TRANSACTIONAL)
                    .transactionManagerLookup(new EmbeddedTransactionManagerLookup());
        manager = new DefaultCacheManager(g.build());
        manager.defineConfiguration("c", c.build());
        cache = manager.getCache("c");
        PersistenceManager pm = ComponentRegistry.componentOf(cache, PersistenceManager.class);
        store = pm.getStores(UniheapStore.class).iterator().next();
        entries = ComponentRegistry.componentOf(cache, MarshallableEntryFactory.class);
        partitioner = ComponentRegistry.componentOf(cache, KeyPartitioner.class);
    }

    int segment(Object key) {
        return partitioner.getSegment(key);
    }

    static IntSet all() {
        return IntSets.immutableRangeSet(SEGMENTS);
    }

    @Override
    public void close() {
        manager.stop();
    }
}
