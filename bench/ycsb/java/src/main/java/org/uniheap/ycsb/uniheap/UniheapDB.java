package org.uniheap.ycsb.uniheap;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.ConcurrentHashMap;

import org.uniheap.ConflictException;
import org.uniheap.FreedObjectException;
import org.uniheap.Heap;
import org.uniheap.PMap;
import org.uniheap.PObject;
import org.uniheap.PSortedMap;
import org.uniheap.RecordImage;
import org.uniheap.UniheapException;

import org.uniheap.ycsb.RecordCodec;

import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB on uniheap, through the Java binding (bindings-java).
 *
 * <p>The schema every language uses (bench/ycsb/README.md): table T is a
 * persistent sorted map with String keys under the root {@code ycsb.T}; a
 * record is a {@link Record} ({@code ycsb.Record}, inline bytes fields
 * field0..field9 of capacity 100: one object per record) when the workload
 * has YCSB's default fields and lengths, and a
 * {@code PMap<String, byte[]>} otherwise.
 *
 * <p>One {@link Heap} per JVM, shared by the client threads (it lends each
 * thread a session of its pool for a block or a write), connected in
 * {@link #setProperties} before the client's clock starts
 * ({@code -p uniheap.socket=PATH}, else {@code $UNIHEAP_SOCKET}). A read of
 * a {@link Record} is one libuniheap call, {@code PSortedMap.recordImage(key)}
 * (the lookup and the whole record copied at one instant into one array,
 * no proxy, no block), whose fields the client gets as slices of that
 * array; a record replaced under every one of its tries is read again in
 * a block.
 * A scan of Records is {@code PSortedMap.scanImages(start, count)}: a
 * leaf's records per call, each copied at its own instant, as YCSB's own
 * stores scan. Reads of PMap records and their scans run in a block (one
 * snapshot of a record); an update of one field is
 * a single field write (atomic and durable on its own, for a Record one
 * call, {@code PSortedMap.setField(key, field, value)}; redone as a block
 * if it loses a conflict with another client); an insert of a Record is
 * one call too, {@code PSortedMap.putRecord(key, Record.class, values, true)}
 * (the new record, its fields, the put and the free of the record it
 * replaces); other inserts, multi-field updates and deletes are blocks,
 * re-run by {@code heap.atomic} after a lost conflict.
 */
public final class UniheapDB extends DB {
  private static final String ROOT_PREFIX = "ycsb.";
  private static final Object LOCK = new Object();
  private static final Map<String, PSortedMap<String, PObject>> TABLES = new ConcurrentHashMap<>();
  private static Heap heap;
  private static int users;
  private static DBException failure;

  private boolean records;
  private String lastName;              // this client thread's last table, and its map
  private PSortedMap<String, PObject> lastTable;

  @Override
  public void setProperties(Properties p) {
    super.setProperties(p);
    records = Integer.parseInt(p.getProperty("fieldcount", "10")) == 10
        && p.getProperty("fieldnameprefix", "field").equals("field")
        && Integer.parseInt(p.getProperty("fieldlength", "100")) <= Record.CAPACITY;
    synchronized (LOCK) {
      if (heap == null && failure == null) {
        String socket = p.getProperty("uniheap.socket");
        try {
          heap = socket == null ? Heap.connect() : Heap.connect(Path.of(socket));
        } catch (UniheapException e) {
          failure = new DBException("uniheap: cannot connect to heapd (" + e.getMessage()
              + "); start heapd and set UNIHEAP_SOCKET or -p uniheap.socket=PATH", e);
        }
      }
    }
  }

  @Override
  public void init() throws DBException {
    synchronized (LOCK) {
      if (heap == null) {
        throw failure != null ? failure : new DBException("uniheap: the heap is closed");
      }
      users++;
    }
  }

  @Override
  public void cleanup() throws DBException {
    synchronized (LOCK) {
      if (--users == 0) {
        TABLES.clear();
        heap.close();
        heap = null;
      }
    }
  }

  /** The sorted map of a table; the last one this client used without a lookup. */
  private PSortedMap<String, PObject> table(String name) {
    if (!name.equals(lastName)) {
      lastTable = sharedTable(name);
      lastName = name;
    }
    return lastTable;
  }

  /** The sorted map of a table, created (once, atomically) if the heap has none. */
  @SuppressWarnings("unchecked")
  private static PSortedMap<String, PObject> sharedTable(String name) {
    return TABLES.computeIfAbsent(name, n -> heap.atomic(() -> {
      String root = ROOT_PREFIX + n;
      PObject t = heap.roots().get(root);
      if (t == null) {
        t = heap.newSortedMap(String.class);
        heap.roots().put(root, t);
      }
      return (PSortedMap<String, PObject>) t;
    }));
  }

  private static Record record(PObject p) {
    return p instanceof Record r ? r : p.as(Record.class);
  }

  @SuppressWarnings("unchecked")
  private void read(PObject rec, Set<String> fields, Map<String, ByteIterator> out) {
    if (records && fields == null) {
      Record.readAll(record(rec), out);
    } else if (records) {
      Record r = record(rec);
      for (String f : fields) {
        out.put(f, new ByteArrayByteIterator(Record.get(r, f)));
      }
    } else {
      PMap<String, byte[]> m = (PMap<String, byte[]>) rec;
      for (Map.Entry<String, byte[]> e : m.entrySet()) {
        if (fields == null || fields.contains(e.getKey())) {
          out.put(e.getKey(), new ByteArrayByteIterator(e.getValue()));
        }
      }
    }
  }

  @SuppressWarnings("unchecked")
  private void write(PObject rec, Map<String, byte[]> values) {
    if (records) {
      Record r = record(rec);
      for (Map.Entry<String, byte[]> e : values.entrySet()) {
        Record.set(r, e.getKey(), e.getValue());
      }
    } else {
      PMap<String, byte[]> m = (PMap<String, byte[]>) rec;
      for (Map.Entry<String, byte[]> e : values.entrySet()) {
        m.set(e.getKey(), e.getValue());
      }
    }
  }

  private PObject create(Map<String, byte[]> values) {
    PObject rec = records ? heap.create(Record.class) : heap.newMap(String.class);
    write(rec, values);
    return rec;
  }

  @SuppressWarnings("unchecked")
  private static void free(PObject rec, boolean records) {
    if (!records) {           // a record's values are inside it
      ((PMap<String, byte[]>) rec).clear();
    }
    heap.free(rec);
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    PSortedMap<String, PObject> t = table(table);
    if (records) {
      // One libuniheap call: the lookup and the copy of the whole record at
      // one instant (PSortedMap.recordImage), no proxy, no block; the
      // values are slices of that one copy.
      try {
        RecordImage v = t.recordImage(key);
        if (v == null) {
          return Status.NOT_FOUND;
        }
        result.clear();
        if (fields == null) {
          Record.readAll(v, result);
        } else {
          Record.readSome(v, fields, result);
        }
        return Status.OK;
      } catch (FreedObjectException e) {
        return readIn(t, key, fields, result);   // replaced under each of libuniheap's tries
      }
    }
    return readIn(t, key, fields, result);
  }

  /** read in a block: one snapshot of the record. */
  private Status readIn(PSortedMap<String, PObject> t, String key, Set<String> fields,
                        Map<String, ByteIterator> result) {
    return heap.atomic(() -> {
      result.clear();                 // a re-run starts afresh
      PObject rec = t.get(key);
      if (rec == null) {
        return Status.NOT_FOUND;
      }
      read(rec, fields, result);
      return Status.OK;
    });
  }

  @Override
  public Status scan(String table, String startkey, int count, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    PSortedMap<String, PObject> t = table(table);
    if (records) {
      // A leaf's records per libuniheap call, each copied whole at its own
      // instant into an array of its own (PSortedMap.scanImages), no proxy,
      // no block; the values are slices of those copies, as a read's are.
      result.clear();
      for (RecordImage v : t.scanImages(startkey, count)) {
        HashMap<String, ByteIterator> row = new HashMap<>();
        if (fields == null) {
          Record.readAll(v, row);
        } else {
          Record.readSome(v, fields, row);
        }
        result.add(row);
      }
      return Status.OK;
    }
    return heap.atomic(() -> {
      result.clear();
      for (PObject rec : t.tailMap(startkey, true).values()) {
        if (result.size() >= count) {
          break;
        }
        HashMap<String, ByteIterator> row = new HashMap<>();
        read(rec, fields, row);
        result.add(row);
      }
      return Status.OK;
    });
  }

  private Status updateIn(PSortedMap<String, PObject> t, String key, Map<String, byte[]> values) {
    PObject rec = t.get(key);
    if (rec == null) {
      return Status.NOT_FOUND;
    }
    write(rec, values);
    return Status.OK;
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> fields) {
    PSortedMap<String, PObject> t = table(table);
    Map<String, byte[]> values;       // taken before a block: see insert
    if (fields.size() == 1) {         // one field write: atomic and durable alone
      Map.Entry<String, ByteIterator> f = fields.entrySet().iterator().next();
      byte[] v = f.getValue().toArray();
      values = Map.of(f.getKey(), v);
      try {
        if (records) {                // the lookup and the write: one libuniheap call
          return t.setField(key, f.getKey(), v) ? Status.OK : Status.NOT_FOUND;
        }
        return updateIn(t, key, values);
      } catch (ConflictException e) {
        // another client had the record: as a block, retried
      }
    } else {
      values = RecordCodec.toBytes(fields);
    }
    return heap.atomic(() -> updateIn(t, key, values));
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> fields) {
    PSortedMap<String, PObject> t = table(table);
    // A ByteIterator can be read once: the bytes are taken before the block,
    // which re-runs after a lost conflict.
    Map<String, byte[]> values = RecordCodec.toBytes(fields);
    if (records) {
      try {               // the new record, its fields and the put: one libuniheap call
        t.putRecord(key, Record.class, values, true);
        return Status.OK;
      } catch (ConflictException e) {
        // lost to another client under each of libuniheap's tries: as a block, retried
      }
      return heap.atomic(() -> {
        t.putRecord(key, Record.class, values, true);
        return Status.OK;
      });
    }
    return heap.atomic(() -> {
      PObject old = t.put(key, create(values));
      if (old != null) {
        free(old, records);
      }
      return Status.OK;
    });
  }

  @Override
  public Status delete(String table, String key) {
    PSortedMap<String, PObject> t = table(table);
    return heap.atomic(() -> {
      PObject old = t.remove(key);
      if (old == null) {
        return Status.NOT_FOUND;
      }
      free(old, records);
      return Status.OK;
    });
  }
}
