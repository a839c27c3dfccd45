package org.uniheap.ycsb;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.ConcurrentHashMap;

import org.lmdbjava.Cursor;
import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.GetOp;
import org.lmdbjava.Txn;

import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB on LMDB through lmdbjava, the memory-mapped peer.
 *
 * <p>One environment per JVM ({@code -p lmdb.path=DIR}), shared by the
 * client threads; one named database per table; records encoded by
 * {@link RecordCodec}. {@code lmdb.durability}: {@code sync} (LMDB's
 * default, an fdatasync per commit) or {@code nosync} (MDB_NOSYNC |
 * MDB_NOMETASYNC | MDB_WRITEMAP: survives process crashes, not power loss).
 * Every read runs in a read transaction of its own; an update reads,
 * changes and rewrites the record in one write transaction.
 *
 * <p>On JDK 25 lmdbjava 0.9.3 needs {@code --add-opens java.base/java.nio=ALL-UNNAMED}
 * (it reads direct buffers' address field) and
 * {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED} (it uses DirectBuffer).
 */
public final class LmdbDB extends DB {
  private static final Object LOCK = new Object();
  private static Env<ByteBuffer> env;
  private static int users;
  private static DBException failure;
  private static final Map<String, Dbi<ByteBuffer>> DBIS = new ConcurrentHashMap<>();

  /** Per thread: LMDB takes keys and values in direct buffers. */
  private ByteBuffer key;
  private ByteBuffer value;

  /**
   * Opens the environment once per JVM. YCSB's DBFactory calls this before
   * the client starts its clock (each thread's init() runs inside it), so
   * opening the environment stays out of the timed run, as it does in the
   * Python and Node clients.
   */
  @Override
  public void setProperties(Properties p) {
    super.setProperties(p);
    synchronized (LOCK) {
      if (env == null) {
        try {
          env = open(p);
        } catch (DBException e) {
          failure = e;
        }
      }
    }
  }

  @Override
  public void init() throws DBException {
    synchronized (LOCK) {
      if (env == null) {
        throw failure != null ? failure : new DBException("lmdb: the environment is closed");
      }
      users++;
    }
    key = ByteBuffer.allocateDirect(env.getMaxKeySize());
    value = ByteBuffer.allocateDirect(64 * 1024);
  }

  private static Env<ByteBuffer> open(Properties p) throws DBException {
    String path = p.getProperty("lmdb.path");
    if (path == null) {
      throw new DBException("lmdb: give the environment's folder with -p lmdb.path=DIR");
    }
    String durability = p.getProperty("lmdb.durability", "sync");
    EnvFlags[] flags;
    if (durability.equals("nosync")) {
      flags = new EnvFlags[] {EnvFlags.MDB_NOSYNC, EnvFlags.MDB_NOMETASYNC, EnvFlags.MDB_WRITEMAP};
    } else if (durability.equals("sync")) {
      flags = new EnvFlags[0];
    } else {
      throw new DBException("lmdb.durability=" + durability + ": sync or nosync");
    }
    File dir = new File(path);
    if (!dir.isDirectory() && !dir.mkdirs()) {
      throw new DBException("lmdb: cannot create the folder " + path);
    }
    long mapSize = Long.parseLong(p.getProperty("lmdb.mapsize", String.valueOf(8L << 30)));
    return Env.create().setMapSize(mapSize).setMaxDbs(16).setMaxReaders(256).open(dir, flags);
  }

  @Override
  public void cleanup() throws DBException {
    synchronized (LOCK) {
      if (--users == 0) {
        DBIS.values().forEach(Dbi::close);
        DBIS.clear();
        env.close();
        env = null;
      }
    }
  }

  private Dbi<ByteBuffer> dbi(String table) {
    return DBIS.computeIfAbsent(table, t -> env.openDbi(t, DbiFlags.MDB_CREATE));
  }

  private ByteBuffer key(String k) {
    key.clear();
    key.put(k.getBytes(StandardCharsets.UTF_8)).flip();
    return key;
  }

  private ByteBuffer encode(Map<String, byte[]> record) {
    int size = RecordCodec.encodedSize(record);
    if (value.capacity() < size) {
      value = ByteBuffer.allocateDirect(Math.max(size, 2 * value.capacity()));
    }
    value.clear();
    RecordCodec.encode(record, value);
    value.flip();
    return value;
  }

  @Override
  public Status read(String table, String k, Set<String> fields, Map<String, ByteIterator> result) {
    Dbi<ByteBuffer> d = dbi(table);
    try (Txn<ByteBuffer> txn = env.txnRead()) {
      ByteBuffer v = d.get(txn, key(k));
      if (v == null) {
        return Status.NOT_FOUND;
      }
      RecordCodec.decodeInto(v, fields, result);
      return Status.OK;
    }
  }

  @Override
  public Status scan(String table, String startkey, int count, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    Dbi<ByteBuffer> d = dbi(table);
    try (Txn<ByteBuffer> txn = env.txnRead(); Cursor<ByteBuffer> c = d.openCursor(txn)) {
      boolean found = c.get(key(startkey), GetOp.MDB_SET_RANGE);
      for (int i = 0; found && i < count; i++) {
        HashMap<String, ByteIterator> row = new HashMap<>();
        RecordCodec.decodeInto(c.val(), fields, row);
        result.add(row);
        found = c.next();
      }
      return Status.OK;
    }
  }

  @Override
  public Status update(String table, String k, Map<String, ByteIterator> values) {
    Dbi<ByteBuffer> d = dbi(table);
    try (Txn<ByteBuffer> txn = env.txnWrite()) {
      ByteBuffer v = d.get(txn, key(k));
      if (v == null) {
        return Status.NOT_FOUND;
      }
      Map<String, byte[]> record = RecordCodec.decode(v);
      record.putAll(RecordCodec.toBytes(values));
      d.put(txn, key, encode(record));
      txn.commit();
      return Status.OK;
    }
  }

  @Override
  public Status insert(String table, String k, Map<String, ByteIterator> values) {
    dbi(table).put(key(k), encode(RecordCodec.toBytes(values)));
    return Status.OK;
  }

  @Override
  public Status delete(String table, String k) {
    return dbi(table).delete(key(k)) ? Status.OK : Status.NOT_FOUND;
  }
}
