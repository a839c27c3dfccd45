package org.uniheap.ycsb;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

import net.openhft.chronicle.map.ChronicleMap;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB on Chronicle Map, the Java peer that shares a map between JVMs
 * through a memory-mapped file ({@code -p chronicle.path=DIR}, one file per
 * table), records encoded by {@link RecordCodec}.
 *
 * <p>Chronicle Map is a hash map: it has no key order, so scans (workload
 * E) return NOT_IMPLEMENTED. It is sized when created:
 * {@code chronicle.entries} (default: twice recordcount, room for the
 * workloads' inserts).
 *
 * <p>On JDK 25 (Chronicle 2026.1) it needs, at the least:
 * {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED},
 * {@code --add-exports jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED} (it
 * compiles code at run time), {@code --add-opens java.base/java.lang=ALL-UNNAMED}
 * and {@code --add-opens java.base/java.lang.reflect=ALL-UNNAMED}; and
 * {@code -Dchronicle.analytics.disable=true}, or it tries to send usage
 * analytics over the network.
 */
public final class ChronicleMapDB extends DB {
  private static final Object LOCK = new Object();
  private static final Map<String, ChronicleMap<CharSequence, byte[]>> MAPS = new HashMap<>();
  private static int users;
  private static DBException failure;

  /**
   * Opens (or creates) the workload's table once per JVM. YCSB's DBFactory
   * calls this before the client starts its clock; Chronicle Map compiles
   * code when it first opens a map, which takes seconds.
   */
  @Override
  public void setProperties(Properties p) {
    super.setProperties(p);
    try {
      map(p.getProperty("table", "usertable"));
    } catch (DBException e) {
      failure = e;
    }
  }

  @Override
  public void init() throws DBException {
    synchronized (LOCK) {
      if (failure != null) {
        throw failure;
      }
      users++;
    }
  }

  @Override
  public void cleanup() throws DBException {
    synchronized (LOCK) {
      if (--users == 0) {
        MAPS.values().forEach(ChronicleMap::close);
        MAPS.clear();
      }
    }
  }

  private ChronicleMap<CharSequence, byte[]> map(String table) throws DBException {
    synchronized (LOCK) {
      ChronicleMap<CharSequence, byte[]> m = MAPS.get(table);
      if (m == null) {
        m = open(getProperties(), table);
        MAPS.put(table, m);
      }
      return m;
    }
  }

  private static ChronicleMap<CharSequence, byte[]> open(Properties p, String table) throws DBException {
    String path = p.getProperty("chronicle.path");
    if (path == null) {
      throw new DBException("chronicle: give the folder of the map files with -p chronicle.path=DIR");
    }
    File dir = new File(path);
    if (!dir.isDirectory() && !dir.mkdirs()) {
      throw new DBException("chronicle: cannot create the folder " + path);
    }
    long records = Long.parseLong(p.getProperty("recordcount", "1000"));
    long entries = Long.parseLong(p.getProperty("chronicle.entries", String.valueOf(2 * records + 1000)));
    int fields = Integer.parseInt(p.getProperty("fieldcount", "10"));
    int length = Integer.parseInt(p.getProperty("fieldlength", "100"));
    try {
      return ChronicleMap.of(CharSequence.class, byte[].class)
          .name(table)
          .entries(entries)
          .averageKey("user6284781860667377211")
          .averageValueSize(fields * (length + 14.0))
          .createPersistedTo(new File(dir, table + ".cm"));
    } catch (IOException e) {
      throw new DBException("chronicle: cannot open " + new File(dir, table + ".cm") + ": " + e, e);
    }
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      byte[] v = map(table).get(key);
      if (v == null) {
        return Status.NOT_FOUND;
      }
      RecordCodec.decodeInto(ByteBuffer.wrap(v), fields, result);
      return Status.OK;
    } catch (DBException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status scan(String table, String startkey, int count, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    return Status.NOT_IMPLEMENTED;
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    try {
      Map<String, byte[]> changes = RecordCodec.toBytes(values);
      // computeIfPresent runs under the entry's segment lock: atomic
      // against other threads and other JVMs.
      byte[] out = map(table).computeIfPresent(key, (k, v) -> {
        Map<String, byte[]> record = RecordCodec.decode(ByteBuffer.wrap(v));
        record.putAll(changes);
        return RecordCodec.encode(record);
      });
      return out == null ? Status.NOT_FOUND : Status.OK;
    } catch (DBException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    try {
      map(table).put(key, RecordCodec.encode(RecordCodec.toBytes(values)));
      return Status.OK;
    } catch (DBException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status delete(String table, String key) {
    try {
      return map(table).remove(key) != null ? Status.OK : Status.NOT_FOUND;
    } catch (DBException e) {
      return Status.ERROR;
    }
  }
}
