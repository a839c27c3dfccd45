package org.uniheap.infinispan;

import org.infinispan.commons.configuration.io.ConfigurationReader;
import org.infinispan.configuration.parsing.CacheParser;
import org.infinispan.configuration.parsing.ConfigurationBuilderHolder;
import org.infinispan.configuration.parsing.ConfigurationParser;
import org.infinispan.configuration.parsing.Namespace;
import org.infinispan.configuration.parsing.ParseUtils;

/**
 * The declarative form of the store, inside a cache's {@code <persistence>}:
 * {@code <uniheap-store xmlns="urn:uniheap:config:store:0.1"
 * socket="/run/uniheap/heapd.sock" root="..." preload="true"/>}. The
 * attributes and child elements every store has (preload, purge, shared,
 * segmented, write-behind, property) are Infinispan's own; socket and root
 * are UniheapStoreConfiguration's. Found by Infinispan through
 * META-INF/services.
 */
@Namespace(root = "uniheap-store")
@Namespace(uri = "urn:uniheap:config:store:0.1", root = "uniheap-store")
public class UniheapStoreConfigurationParser implements ConfigurationParser {

    @Override
    public void readElement(ConfigurationReader reader, ConfigurationBuilderHolder holder) {
        UniheapStoreConfigurationBuilder store = holder.getCurrentConfigurationBuilder()
                .persistence().addStore(UniheapStoreConfigurationBuilder.class);
        for (int i = 0; i < reader.getAttributeCount(); i++) {
            String value = reader.getAttributeValue(i);
            switch (reader.getAttributeName(i)) {
                case "socket" -> store.socket(value);
                case "root" -> store.root(value);
                default -> CacheParser.parseStoreAttribute(reader, i, store);
            }
        }
        while (reader.inTag())
            CacheParser.parseStoreElement(reader, store);
    }

    @Override
    public Namespace[] getNamespaces() {
        return ParseUtils.getNamespaceAnnotations(getClass());
    }
}
