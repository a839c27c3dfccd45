package org.uniheap.ycsb;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.workloads.CoreWorkload;

/**
 * YCSB on an in-process {@link ConcurrentSkipListMap}: the ceiling, what
 * the JVM's own sorted concurrent map gives, shared by every client thread.
 *
 * <p>Nothing outlives the JVM, and the official client runs the load and
 * the transactions in separate JVMs. So a transaction run ({@code -t})
 * loads the table itself, once per JVM, through CoreWorkload's own insert
 * path (the keys and values a load would write). It does so in
 * {@link #setProperties}, which YCSB's DBFactory calls before the client
 * starts its clock; {@code -p memory.preload=false} turns it off.
 */
public final class SkipListDB extends DB {
  private static final ConcurrentMap<String, ConcurrentNavigableMap<String, Map<String, byte[]>>> TABLES =
      new ConcurrentHashMap<>();
  private static boolean preloaded;

  @Override
  public void setProperties(Properties p) {
    super.setProperties(p);
    boolean run = Boolean.parseBoolean(p.getProperty("dotransactions", "true"));
    if (run && Boolean.parseBoolean(p.getProperty("memory.preload", "true"))) {
      preload(p);
    }
  }

  private static synchronized void preload(Properties p) {
    if (preloaded) {
      return;
    }
    preloaded = true;
    try {
      CoreWorkload w = new CoreWorkload();
      w.init(p);
      long records = Long.parseLong(p.getProperty("recordcount", "0"));
      long start = Long.parseLong(p.getProperty("insertstart", "0"));
      long count = Long.parseLong(p.getProperty("insertcount", String.valueOf(records - start)));
      SkipListDB db = new SkipListDB();
      for (long i = 0; i < count; i++) {
        if (!w.doInsert(db, null)) {
          throw new IllegalStateException("preload insert " + i + " failed");
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException("memory: cannot preload the table: " + e, e);
    }
  }

  private static ConcurrentNavigableMap<String, Map<String, byte[]>> table(String name) {
    return TABLES.computeIfAbsent(name, n -> new ConcurrentSkipListMap<>());
  }

  private static void copy(Map<String, byte[]> record, Set<String> fields, Map<String, ByteIterator> out) {
    for (Map.Entry<String, byte[]> e : record.entrySet()) {
      if (fields == null || fields.contains(e.getKey())) {
        out.put(e.getKey(), new ByteArrayByteIterator(e.getValue()));
      }
    }
  }

  @Override
  public Status read(String t, String key, Set<String> fields, Map<String, ByteIterator> result) {
    Map<String, byte[]> record = table(t).get(key);
    if (record == null) {
      return Status.NOT_FOUND;
    }
    copy(record, fields, result);
    return Status.OK;
  }

  @Override
  public Status scan(String t, String startkey, int count, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    for (Map<String, byte[]> record : table(t).tailMap(startkey, true).values()) {
      if (result.size() >= count) {
        break;
      }
      HashMap<String, ByteIterator> row = new HashMap<>();
      copy(record, fields, row);
      result.add(row);
    }
    return Status.OK;
  }

  @Override
  public Status update(String t, String key, Map<String, ByteIterator> values) {
    Map<String, byte[]> record = table(t).get(key);
    if (record == null) {
      return Status.NOT_FOUND;
    }
    record.putAll(RecordCodec.toBytes(values));
    return Status.OK;
  }

  @Override
  public Status insert(String t, String key, Map<String, ByteIterator> values) {
    table(t).put(key, new ConcurrentHashMap<>(RecordCodec.toBytes(values)));
    return Status.OK;
  }

  @Override
  public Status delete(String t, String key) {
    return table(t).remove(key) != null ? Status.OK : Status.NOT_FOUND;
  }
}
