package org.uniheap.infinispan;

import org.infinispan.commons.configuration.BuiltBy;
import org.infinispan.commons.configuration.ConfigurationFor;
import org.infinispan.commons.configuration.attributes.AttributeDefinition;
import org.infinispan.commons.configuration.attributes.AttributeSet;
import org.infinispan.configuration.cache.AbstractStoreConfiguration;
import org.infinispan.configuration.cache.AsyncStoreConfiguration;
import org.infinispan.configuration.parsing.Element;

/**
 * The uniheap store's configuration: the socket of the node's heapd and the
 * name of the durable root under which the cache's segments live.
 *
 * socket: heapd's UNIX socket; null means the binding's default
 * ($UNIHEAP_SOCKET, else the default socket). root: the root's name; null
 * means "infinispan/" + the cache's name, so the caches of one node can share
 * one heapd without meeting. Both are fixed once the cache runs.
 */
@BuiltBy(UniheapStoreConfigurationBuilder.class)
@ConfigurationFor(UniheapStore.class)
public class UniheapStoreConfiguration extends AbstractStoreConfiguration<UniheapStoreConfiguration> {
    static final AttributeDefinition<String> SOCKET =
            AttributeDefinition.builder("socket", null, String.class).immutable().build();
    static final AttributeDefinition<String> ROOT =
            AttributeDefinition.builder("root", null, String.class).immutable().build();

    public static AttributeSet attributeDefinitionSet() {
        return new AttributeSet(UniheapStoreConfiguration.class,
                AbstractStoreConfiguration.attributeDefinitionSet(), SOCKET, ROOT);
    }

    public UniheapStoreConfiguration(AttributeSet attributes, AsyncStoreConfiguration async) {
        super(Element.STORE, attributes, async);
    }

    /** heapd's socket, or null for the binding's default. */
    public String socket() {
        return attributes.attribute(SOCKET).get();
    }

    /** The durable root's name, or null for "infinispan/<cache name>". */
    public String root() {
        return attributes.attribute(ROOT).get();
    }
}
