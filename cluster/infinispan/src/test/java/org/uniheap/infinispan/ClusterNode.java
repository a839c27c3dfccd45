package org.uniheap.infinispan;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import org.infinispan.Cache;
import org.infinispan.commons.util.IntSets;
import org.infinispan.configuration.cache.CacheMode;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.configuration.global.GlobalConfigurationBuilder;
import org.infinispan.factories.ComponentRegistry;
import org.infinispan.factories.GlobalComponentRegistry;
import org.infinispan.globalstate.GlobalStateManager;
import org.infinispan.manager.DefaultCacheManager;
import org.infinispan.persistence.manager.PersistenceManager;
import org.infinispan.remoting.transport.jgroups.JGroupsTransport;
import org.infinispan.topology.LocalTopologyManager;
import org.infinispan.topology.MissingMembersException;

/**
 * One member of the cluster test, in a JVM of its own: a distributed cache
 * "c" (2 owners, 64 segments) whose store is this node's heapd, preloaded at
 * start; global state in its folder, so that a cluster shut down with
 * cache.shutdown() comes back with the same owners.
 *
 * args: name, heapd socket, global-state folder. JGroups as in
 * jgroups-loopback.xml (system properties jgroups.tcp.port, jgroups.hosts).
 * Commands on stdin, one answer line each on stdout:
 *   wait N           until N members and no rebalance -> "ready"
 *   write A B        put k<i> = v<i> for A <= i < B -> "done"
 *   verify A B       read them all -> "missing <count> <first missing key or ->"
 *   stored           entries in this node's store -> "stored <n>"
 *   shutdown         cluster-wide graceful cache shutdown, then exit
 *   exit             leave the cluster (after a shutdown: the cache has stopped), then exit
 *                    both -> "bye" when this node's global state holds the cache's
 *                    topology (what a restart restores), "bye without saved topology" if not
 */
public final class ClusterNode {
    static final int SEGMENTS = 64;

    public static void main(String[] args) throws Exception {
        PrintStream out = System.out;
        GlobalConfigurationBuilder g = GlobalConfigurationBuilder.defaultClusteredBuilder();
        g.transport().nodeName(args[0]).clusterName("uniheap-test")
                .addProperty(JGroupsTransport.CONFIGURATION_FILE, "jgroups-loopback.xml");
        g.globalState().enable().persistentLocation(args[2]);
        ConfigurationBuilder c = new ConfigurationBuilder();
        c.clustering().cacheMode(CacheMode.DIST_SYNC).hash().numOwners(2).numSegments(SEGMENTS);
        c.persistence().addStore(UniheapStoreConfigurationBuilder.class).socket(args[1])
                .preload(true).shared(false);
        DefaultCacheManager manager = new DefaultCacheManager(g.build());
        manager.defineConfiguration("c", c.build());
        Cache<String, String> cache = manager.getCache("c");
        out.println("started");
        out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null;) {
            String[] w = line.trim().split("\\s+");
            switch (w[0]) {
                case "wait" -> out.println(waitFor(manager, cache, Integer.parseInt(w[1])));
                case "write" -> {
                    write(cache, Integer.parseInt(w[1]), Integer.parseInt(w[2]));
                    out.println("done");
                }
                case "verify" -> out.println(verify(cache, Integer.parseInt(w[1]), Integer.parseInt(w[2])));
                case "stored" -> out.println("stored " + ComponentRegistry.componentOf(cache,
                        PersistenceManager.class).size(IntSets.immutableRangeSet(SEGMENTS))
                        .toCompletableFuture().join());
                case "shutdown", "exit" -> {
                    if (w[0].equals("shutdown"))
                        cache.shutdown();
                    String saved = topologySaved(manager) ? "bye" : "bye without saved topology";
                    manager.stop();
                    out.println(saved);
                    out.flush();
                    System.exit(0);
                }
                default -> out.println("unknown " + w[0]);
            }
            out.flush();
        }
        manager.stop();
    }

    private static String waitFor(DefaultCacheManager manager, Cache<String, String> cache, int n)
            throws InterruptedException {
        var dm = cache.getAdvancedCache().getDistributionManager();
        var topology = GlobalComponentRegistry.of(manager).getComponent(LocalTopologyManager.class);
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (manager.getMembers().size() == n
                    && dm.getCacheTopology().getActualMembers().size() == n
                    && !dm.isRehashInProgress() && stable(topology, cache.getName()))
                return "ready";
            Thread.sleep(100);
        }
        return "timeout " + manager.getMembers();
    }

    /**
     * Whether this node serves the cache now: after a whole-cluster restart
     * it refuses operations (MissingMembersException) until it has seen
     * every member of the saved topology rejoin, which may come after the
     * members and the cache topology look complete here.
     */
    private static boolean stable(LocalTopologyManager topology, String cache) {
        try {
            topology.assertTopologyStable(cache);
            return true;
        } catch (MissingMembersException e) {
            return false;
        }
    }

    /**
     * Whether the graceful shutdown saved the cache's topology in this node's
     * global state: without it, the next start is a new cluster, whose
     * rebalance drops from each store the segments it does not own, and the
     * entries of a segment no new owner preloaded are gone.
     */
    private static boolean topologySaved(DefaultCacheManager manager) {
        return GlobalComponentRegistry.of(manager).getComponent(GlobalStateManager.class)
                .readScopedState("c").isPresent();
    }

    private static void write(Cache<String, String> cache, int from, int to) {
        Map<String, String> batch = new HashMap<>();
        for (int i = from; i < to; i++) {
            batch.put("k" + i, "v" + i);
            if (batch.size() == 500 || i == to - 1) {
                cache.putAll(batch);
                batch.clear();
            }
        }
    }

    private static String verify(Cache<String, String> cache, int from, int to) {
        int missing = 0;
        String first = "-";
        for (int i = from; i < to; i += 500) {
            Set<String> keys = new HashSet<>();
            for (int j = i; j < Math.min(to, i + 500); j++)
                keys.add("k" + j);
            Map<String, String> got = cache.getAdvancedCache().getAll(keys);
            for (String k : keys) {
                if (!("v" + k.substring(1)).equals(got.get(k))) {
                    if (missing++ == 0)
                        first = k;
                }
            }
        }
        return "missing " + missing + " " + first;
    }
}
