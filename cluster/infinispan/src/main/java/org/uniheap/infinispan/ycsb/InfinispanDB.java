package org.uniheap.infinispan.ycsb;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

import org.infinispan.Cache;
import org.infinispan.configuration.cache.CacheMode;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.configuration.global.GlobalConfigurationBuilder;
import org.infinispan.manager.DefaultCacheManager;
import org.infinispan.remoting.transport.jgroups.JGroupsTransport;
import org.uniheap.infinispan.UniheapStoreConfigurationBuilder;

import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.workloads.CoreWorkload;

/**
 * YCSB on an embedded (local) Infinispan cache, one per JVM shared by the
 * client threads, over one of three stores with the same cache settings:
 *   ispn.store=uniheap  the uniheap store (ispn.socket, else $UNIHEAP_SOCKET)
 *   ispn.store=sifs     SoftIndexFileStore, Infinispan's default file store,
 *                       under ispn.dir
 *   ispn.store=none     no store (memory only)
 * ispn.sync=1 makes SoftIndexFileStore force each write to the disk before
 * it returns (syncWrites), as a heap in the sync class does (the heapd's
 * durability is its own setting: ycsb.sh starts it so).
 * ispn.memory=N keeps at most N entries in memory (eviction; reads of the
 * others go to the store); -1 (default) keeps them all. ispn.preload=true
 * fills memory from the store when the cache starts (a node's restart).
 * ispn.nodes=N (N > 1) makes the cache distributed (2 owners) over N
 * nodes: this client's JVM (ispn.node, its name) and N-1 Node processes
 * with the same properties, over the JGroups stack in the file ispn.jgroups
 * (each node's store its own: ispn.socket, ispn.dir per node). A record is one
 * byte[] value (Records). Keys are YCSB's strings; scans are not supported
 * by a hash-partitioned cache (Status.NOT_IMPLEMENTED), as in J-NVM's runs.
 *
 * The official client loads and runs in separate JVMs; with a store the run
 * finds the table in it; on several nodes, the other nodes keep it. With
 * no store on one node a run loads the table itself, once per JVM, in
 * init (before the client's clock starts).
 */
public final class InfinispanDB extends DB {
    private static DefaultCacheManager manager;
    private static Cache<String, byte[]> cache;
    private static int users;

    @Override
    public void init() throws DBException {
        synchronized (InfinispanDB.class) {
            if (cache == null)
                start(getProperties());
            users++;
        }
    }

    @Override
    public void cleanup() {
        synchronized (InfinispanDB.class) {
            if (--users == 0) {
                manager.stop();
                manager = null;
                cache = null;
            }
        }
    }

    private static void start(Properties p) throws DBException {
        manager = open(p);
        cache = manager.getCache("ycsb");
        boolean run = Boolean.parseBoolean(p.getProperty("dotransactions", "true"));
        if (run && p.getProperty("ispn.store", "uniheap").equals("none") && nodes(p) == 1)
            loadHere(p);
    }

    private static int nodes(Properties p) {
        return Integer.parseInt(p.getProperty("ispn.nodes", "1"));
    }

    /**
     * A started cache manager with the cache "ycsb" as the properties say
     * (the client's node, and each other node of a cluster: Node).
     */
    static DefaultCacheManager open(Properties p) throws DBException {
        String store = p.getProperty("ispn.store", "uniheap");
        long memory = Long.parseLong(p.getProperty("ispn.memory", "-1"));
        int nodes = nodes(p);
        GlobalConfigurationBuilder g;
        ConfigurationBuilder c = new ConfigurationBuilder();
        if (nodes > 1) {
            String jgroups = p.getProperty("ispn.jgroups");
            if (jgroups == null)
                throw new DBException("ispn.nodes > 1 needs ispn.jgroups (a JGroups stack file)");
            g = GlobalConfigurationBuilder.defaultClusteredBuilder();
            g.transport().clusterName("uniheap-ycsb")
                    .nodeName(p.getProperty("ispn.node", "client"))
                    .addProperty(JGroupsTransport.CONFIGURATION_FILE, jgroups);
            c.clustering().cacheMode(CacheMode.DIST_SYNC).hash().numOwners(2);
        } else {
            g = new GlobalConfigurationBuilder().nonClusteredDefault();
        }
        boolean preload = Boolean.parseBoolean(p.getProperty("ispn.preload", "false"));
        if (memory >= 0)
            c.memory().maxCount(memory);
        switch (store) {
            case "uniheap" -> {
                g.globalState().disable();
                var s = c.persistence().addStore(UniheapStoreConfigurationBuilder.class)
                        .preload(preload);
                String socket = p.getProperty("ispn.socket");
                if (socket != null)
                    s.socket(socket);
            }
            case "sifs" -> {
                String dir = p.getProperty("ispn.dir");
                if (dir == null)
                    throw new DBException("ispn.store=sifs needs ispn.dir");
                g.globalState().enable().persistentLocation(dir);
                c.persistence().addSoftIndexFileStore().dataLocation("data").indexLocation("index")
                        .syncWrites("1".equals(p.getProperty("ispn.sync", "0")))
                        .preload(preload);
            }
            case "none" -> g.globalState().disable();
            default -> throw new DBException("ispn.store: uniheap, sifs or none, not " + store);
        }
        DefaultCacheManager m = new DefaultCacheManager(g.build());
        m.defineConfiguration("ycsb", c.build());
        m.getCache("ycsb");
        return m;
    }

    /** Insert the table through CoreWorkload's own insert path. */
    private static void loadHere(Properties p) throws DBException {
        try {
            CoreWorkload w = new CoreWorkload();
            w.init(p);
            long records = Long.parseLong(p.getProperty("recordcount", "0"));
            InfinispanDB db = new InfinispanDB();
            for (long i = 0; i < records; i++)
                if (!w.doInsert(db, null))
                    throw new DBException("load insert " + i + " failed");
        } catch (site.ycsb.WorkloadException e) {
            throw new DBException(e);
        }
    }

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
        byte[] rec = cache.get(key);
        if (rec == null)
            return Status.NOT_FOUND;
        Records.copy(Records.decode(rec), fields, result);
        return Status.OK;
    }

    @Override
    public Status scan(String table, String startkey, int count, Set<String> fields,
            Vector<HashMap<String, ByteIterator>> result) {
        return Status.NOT_IMPLEMENTED;
    }

    @Override
    public Status update(String table, String key, Map<String, ByteIterator> values) {
        Map<String, byte[]> changes = Records.bytesOf(values);
        byte[] merged = cache.computeIfPresent(key, (k, old) -> {
            Map<String, byte[]> rec = Records.decode(old);
            rec.putAll(changes);
            return Records.encode(rec);
        });
        return merged == null ? Status.NOT_FOUND : Status.OK;
    }

    @Override
    public Status insert(String table, String key, Map<String, ByteIterator> values) {
        cache.put(key, Records.encode(Records.bytesOf(values)));
        return Status.OK;
    }

    @Override
    public Status delete(String table, String key) {
        return cache.remove(key) == null ? Status.NOT_FOUND : Status.OK;
    }
}
