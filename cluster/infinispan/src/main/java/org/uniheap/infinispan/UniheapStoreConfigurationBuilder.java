package org.uniheap.infinispan;

import static org.uniheap.infinispan.UniheapStoreConfiguration.ROOT;
import static org.uniheap.infinispan.UniheapStoreConfiguration.SOCKET;

import org.infinispan.commons.configuration.Combine;
import org.infinispan.configuration.cache.AbstractStoreConfigurationBuilder;
import org.infinispan.configuration.cache.PersistenceConfigurationBuilder;

/**
 * Builds a {@link UniheapStoreConfiguration}:
 * {@code builder.persistence().addStore(UniheapStoreConfigurationBuilder.class)
 * .socket("/run/uniheap/node1.sock")}. The store is per node (not shared) and
 * segmented by default: each segment is a sorted map of its own.
 */
public class UniheapStoreConfigurationBuilder extends
        AbstractStoreConfigurationBuilder<UniheapStoreConfiguration, UniheapStoreConfigurationBuilder> {

    public UniheapStoreConfigurationBuilder(PersistenceConfigurationBuilder builder) {
        super(builder, UniheapStoreConfiguration.attributeDefinitionSet());
        segmented(true);
    }

    @Override
    public UniheapStoreConfigurationBuilder self() {
        return this;
    }

    /** heapd's UNIX socket (default: $UNIHEAP_SOCKET, else the binding's default). */
    public UniheapStoreConfigurationBuilder socket(String socket) {
        attributes.attribute(SOCKET).set(socket);
        return this;
    }

    /** The durable root holding the segments (default "infinispan/<cache name>"). */
    public UniheapStoreConfigurationBuilder root(String root) {
        attributes.attribute(ROOT).set(root);
        return this;
    }

    @Override
    public UniheapStoreConfiguration create() {
        return new UniheapStoreConfiguration(attributes.protect(), async.create());
    }

    @Override
    public UniheapStoreConfigurationBuilder read(UniheapStoreConfiguration template, Combine combine) {
        super.read(template, combine);
        return this;
    }
}
