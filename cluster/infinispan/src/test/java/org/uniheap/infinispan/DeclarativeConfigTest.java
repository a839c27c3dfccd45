package org.uniheap.infinispan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.infinispan.Cache;
import org.infinispan.configuration.cache.StoreConfiguration;
import org.infinispan.manager.DefaultCacheManager;
import org.junit.jupiter.api.Test;
import org.uniheap.test.Heapd;

/**
 * An Infinispan XML file with {@code <uniheap-store>} configures the store
 * (socket, root, preload), and the cache it configures keeps its entries in
 * the heap across a restart of the cache manager.
 */
class DeclarativeConfigTest {

    private static String xml(Path socket) {
        return """
                <infinispan>
                  <cache-container>
                    <local-cache name="declared">
                      <persistence>
                        <uniheap-store xmlns="urn:uniheap:config:store:0.1"
                                       socket="%s" root="declared/entries" preload="true"/>
                      </persistence>
                    </local-cache>
                  </cache-container>
                </infinispan>
                """.formatted(socket);
    }

    @Test
    void xmlConfiguresTheStore() throws Exception {
        try (Heapd heapd = Heapd.start("64M")) {
            Path file = heapd.dir.resolve("infinispan.xml");
            Files.writeString(file, xml(heapd.socket));
            try (DefaultCacheManager m = new DefaultCacheManager(file.toString())) {
                Cache<String, String> c = m.getCache("declared");
                StoreConfiguration sc = c.getCacheConfiguration().persistence().stores().get(0);
                assertTrue(sc instanceof UniheapStoreConfiguration, sc.getClass().getName());
                UniheapStoreConfiguration u = (UniheapStoreConfiguration) sc;
                assertEquals(heapd.socket.toString(), u.socket());
                assertEquals("declared/entries", u.root());
                assertTrue(u.preload());
                c.put("x", "1");
            }
            try (DefaultCacheManager m = new DefaultCacheManager(file.toString())) {
                assertEquals("1", m.<String, String>getCache("declared").get("x"));
            }
        }
    }
}
