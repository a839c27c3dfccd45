package org.uniheap.infinispan.ycsb;

import java.util.Properties;

import org.infinispan.manager.DefaultCacheManager;

/**
 * One of the other nodes of a YCSB run on several nodes (InfinispanDB with
 * ispn.nodes > 1), in a JVM of its own: it starts the same cache as the
 * client's node, prints "ready" once it is a member, and serves until it
 * is stopped (SIGTERM: it leaves the cluster).
 *
 * args: the client's properties, as key=value (ispn.store, ispn.memory,
 * ispn.nodes, ispn.jgroups, ispn.sync, and this node's ispn.node, ispn.socket,
 * ispn.dir).
 */
public final class Node {
    private Node() {}

    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq <= 0)
                throw new IllegalArgumentException("not key=value: " + a);
            p.setProperty(a.substring(0, eq), a.substring(eq + 1));
        }
        DefaultCacheManager manager = InfinispanDB.open(p);
        Runtime.getRuntime().addShutdownHook(new Thread(manager::stop));
        System.out.println("ready");
        System.out.flush();
        Thread.currentThread().join();   // until SIGTERM; the hook leaves the cluster
    }
}
