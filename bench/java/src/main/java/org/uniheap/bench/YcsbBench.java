package org.uniheap.bench;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.lmdbjava.Cursor;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.GetOp;
import org.lmdbjava.Txn;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.uniheap.ConflictException;
import org.uniheap.FreedObjectException;
import org.uniheap.Heap;
import org.uniheap.PObject;
import org.uniheap.PSortedMap;
import org.uniheap.RecordImage;
import org.uniheap.ycsb.RecordCodec;
import org.uniheap.ycsb.uniheap.Record;

import site.ycsb.ByteIterator;

/**
 * YCSB's read (workload C), update (workload A's write) and scan (workload
 * E) without the YCSB client around, on a table of 20,000 records of ten
 * 100-byte fields: a uniheap sorted map of ycsb.Record objects, and
 * lmdbjava records (one value per record, bench/ycsb's encoding). The
 * record class (Record) and the encoding (RecordCodec) are bench/ycsb/java's
 * own. Two pairs of read and scan:
 * <ul>
 * <li>readUniheapRecord, scanUniheapRecords against readLmdbRecord,
 * scanLmdbRecords: what bench/ycsb's UniheapDB and LmdbDB do now, each
 * record's fields as YCSB's ByteIterators (uniheap: one call copies a
 * record, recordImage, or a leaf's records, scanImages, the fields slices
 * of the copy, no proxy, no block; LMDB: the value decoded, decodeInto, in
 * a read transaction);</li>
 * <li>readUniheap, readUniheapWhole, scanUniheap against readLmdb,
 * scanLmdb: each record as a field name -> byte[] map, uniheap through
 * proxies in a block (readUniheapWhole: fieldValues() of the record).</li>
 * </ul>
 * A scan returns 50 records from a random start key; an update replaces
 * one random field of the record of a random key with a new 100-byte value
 * and commits (uniheap: setField, one call; lmdbjava: the record read,
 * changed and written back in one write transaction). Also the parts of a
 * uniheap read: an empty block, a sorted-map get and ten field reads, each
 * in and outside a block, the ten fields at once (fieldValues), and a walk
 * over 50 entries of the table (records not read), in and outside a block.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-opens",
    "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"})
public class YcsbBench {
    static final int RECORDS = 20_000;
    static final int SCAN = 50;
    static final String[] FIELDS = {"field0", "field1", "field2", "field3", "field4", "field5",
        "field6", "field7", "field8", "field9"};

    /* Keys in an order unrelated to i, the order records are created in,
     * as YCSB's hashed insert order makes them: a scan in key order visits
     * records created at different times (odd multiplier: no two i share
     * a key). */
    static String recordKey(int i) {
        return "user" + Long.toUnsignedString((i + 1L) * 0x9E3779B97F4A7C15L);
    }

    static byte[] value(int i, int f) {
        byte[] v = new byte[100];
        Random r = new Random(i * 16L + f);
        for (int j = 0; j < v.length; j++)
            v[j] = (byte) (' ' + r.nextInt(95));
        return v;
    }

    /** Each thread walks its own random order of keys. */
    @State(Scope.Thread)
    public static class Keys {
        String[] lookups;
        int next;

        @Setup
        public void setup() {
            Random r = new Random(Thread.currentThread().threadId());
            lookups = new String[1 << 16];
            for (int i = 0; i < lookups.length; i++)
                lookups[i] = recordKey(r.nextInt(RECORDS));
        }

        String key() {
            return lookups[next++ & (lookups.length - 1)];
        }
    }

    /** Each thread's updates: a field and its new value per operation,
     *  drawn before the run (YCSB's client makes them outside the store's
     *  call too), the same sequence for every store. */
    @State(Scope.Thread)
    public static class Updates {
        int[] fields;
        byte[][] values;
        int next;

        @Setup
        public void setup() {
            Random r = new Random(~Thread.currentThread().threadId());
            fields = new int[1 << 10];
            values = new byte[fields.length][];
            for (int i = 0; i < fields.length; i++) {
                fields[i] = r.nextInt(FIELDS.length);
                values[i] = value(RECORDS + i, fields[i]);
            }
        }

        int step() {
            return next++ & (fields.length - 1);
        }
    }

    @State(Scope.Benchmark)
    public static class Uniheap {
        Heap heap;
        PSortedMap<String, PObject> table;

        @Setup(Level.Trial)
        @SuppressWarnings("unchecked")
        public void setup() {
            heap = Heap.connect();
            String root = "bench.ycsb";
            PObject t = heap.roots().get(root);
            if (t != null) {
                table = (PSortedMap<String, PObject>) t;
                return;
            }
            table = heap.newSortedMap(String.class);
            for (int i = 0; i < RECORDS; i += 500) {
                int from = i;
                heap.atomic(() -> {
                    for (int j = from; j < Math.min(from + 500, RECORDS); j++) {
                        Record r = heap.create(Record.class);
                        r.field0(value(j, 0));
                        r.field1(value(j, 1));
                        r.field2(value(j, 2));
                        r.field3(value(j, 3));
                        r.field4(value(j, 4));
                        r.field5(value(j, 5));
                        r.field6(value(j, 6));
                        r.field7(value(j, 7));
                        r.field8(value(j, 8));
                        r.field9(value(j, 9));
                        table.set(recordKey(j), r);
                    }
                });
            }
            heap.roots().put(root, table);
        }

        @TearDown(Level.Trial)
        public void teardown() {
            heap.close();
        }

        static Record record(PObject p) {
            return p instanceof Record r ? r : p.as(Record.class);
        }

        static void fields(Record r, Map<String, byte[]> out) {
            out.put("field0", r.field0());
            out.put("field1", r.field1());
            out.put("field2", r.field2());
            out.put("field3", r.field3());
            out.put("field4", r.field4());
            out.put("field5", r.field5());
            out.put("field6", r.field6());
            out.put("field7", r.field7());
            out.put("field8", r.field8());
            out.put("field9", r.field9());
        }

        Map<String, byte[]> read(String key) {
            return heap.atomic(() -> {
                Map<String, byte[]> out = new HashMap<>();
                PObject rec = table.get(key);
                if (rec != null)
                    fields(record(rec), out);
                return out;
            });
        }

        /* bench/ycsb's read of all fields: a lookup, then every field at
         * one instant, no block; a record freed in between is read in one. */
        Map<String, byte[]> readWhole(String key) {
            try {
                Map<String, byte[]> out = new HashMap<>();
                PObject rec = table.get(key);
                if (rec != null)
                    values(record(rec).fieldValues(), out);
                return out;
            } catch (FreedObjectException e) {
                return read(key);
            }
        }

        static void values(Object[] v, Map<String, byte[]> out) {
            for (int i = 0; i < v.length; i++)
                out.put(FIELDS[i], (byte[]) v[i]);
        }

        List<Map<String, byte[]>> scan(String start) {
            return heap.atomic(() -> {
                List<Map<String, byte[]>> out = new ArrayList<>(SCAN);
                Iterator<PObject> it = table.tailMap(start, true).values().iterator();
                while (out.size() < SCAN && it.hasNext()) {
                    Map<String, byte[]> row = new HashMap<>();
                    fields(record(it.next()), row);
                    out.add(row);
                }
                return out;
            });
        }
    }

    @State(Scope.Benchmark)
    public static class Lmdb extends LmdbState {
        @Setup(Level.Trial)
        public void setup() throws Exception {
            // bench/ycsb's lmdb.durability=nosync, the peer it runs beside
            // uniheap's memory durability (run.sh's): a commit syncs nothing.
            if (!open("lmdb-ycsb", "usertable", EnvFlags.MDB_NOSYNC, EnvFlags.MDB_NOMETASYNC,
                    EnvFlags.MDB_WRITEMAP))
                return;
            ByteBuffer key = ByteBuffer.allocateDirect(64);
            ByteBuffer val = ByteBuffer.allocateDirect(2048);
            Map<String, byte[]> record = new LinkedHashMap<>();
            try (Txn<ByteBuffer> txn = env.txnWrite()) {
                for (int i = 0; i < RECORDS; i++) {
                    key.clear();
                    key.put(recordKey(i).getBytes(StandardCharsets.UTF_8)).flip();
                    for (int f = 0; f < FIELDS.length; f++)
                        record.put(FIELDS[f], value(i, f));
                    val.clear();
                    RecordCodec.encode(record, val);
                    val.flip();
                    db.put(txn, key, val);
                }
                txn.commit();
            }
        }

        static ByteBuffer key(ByteBuffer buf, String k) {
            buf.clear();
            buf.put(k.getBytes(StandardCharsets.UTF_8)).flip();
            return buf;
        }
    }

    @State(Scope.Thread)
    public static class LmdbKey {
        final ByteBuffer buf = ByteBuffer.allocateDirect(511);
        ByteBuffer val = ByteBuffer.allocateDirect(2048);

        /* The record into val, grown when short, as bench/ycsb's LmdbDB encodes. */
        ByteBuffer encode(Map<String, byte[]> record) {
            int size = RecordCodec.encodedSize(record);
            if (val.capacity() < size)
                val = ByteBuffer.allocateDirect(Math.max(size, 2 * val.capacity()));
            val.clear();
            RecordCodec.encode(record, val);
            return val.flip();
        }
    }

    @Benchmark
    public Map<String, byte[]> readUniheap(Uniheap u, Keys k) {
        return u.read(k.key());
    }

    @Benchmark
    public Map<String, byte[]> readUniheapWhole(Uniheap u, Keys k) {
        return u.readWhole(k.key());
    }

    /** bench/ycsb's UniheapDB read: one call copies the record
     *  (recordImage), its fields handed to YCSB as slices of that copy. */
    @Benchmark
    public Map<String, ByteIterator> readUniheapRecord(Uniheap u, Keys k) {
        Map<String, ByteIterator> out = new HashMap<>();
        RecordImage v = u.table.recordImage(k.key());
        if (v != null)
            Record.readAll(v, out);
        return out;
    }

    /** bench/ycsb's LmdbDB read: the record's value decoded into
     *  ByteIterators in a read transaction (RecordCodec.decodeInto). */
    @Benchmark
    public Map<String, ByteIterator> readLmdbRecord(Lmdb l, LmdbKey kb, Keys k) {
        try (Txn<ByteBuffer> txn = l.env.txnRead()) {
            Map<String, ByteIterator> out = new HashMap<>();
            ByteBuffer v = l.db.get(txn, Lmdb.key(kb.buf, k.key()));
            if (v != null)
                RecordCodec.decodeInto(v, null, out);
            return out;
        }
    }

    @Benchmark
    public Map<String, byte[]> readLmdb(Lmdb l, LmdbKey kb, Keys k) {
        try (Txn<ByteBuffer> txn = l.env.txnRead()) {
            Map<String, byte[]> out = new HashMap<>();
            ByteBuffer v = l.db.get(txn, Lmdb.key(kb.buf, k.key()));
            if (v != null)
                RecordCodec.decode(v, out);
            return out;
        }
    }

    /** bench/ycsb's update of one field of a Record: setField, the lookup
     *  and the write in one call, atomic and durable on its own (committed
     *  when it returns); as a block if it lost a conflict. */
    @Benchmark
    public boolean updateUniheapRecord(Uniheap u, Keys k, Updates w) {
        int i = w.step();
        String key = k.key(), field = FIELDS[w.fields[i]];
        byte[] v = w.values[i];
        try {
            return u.table.setField(key, field, v);
        } catch (ConflictException e) {
            return u.heap.atomic(() -> u.table.setField(key, field, v));
        }
    }

    /** bench/ycsb's LmdbDB update: in one write transaction, the record
     *  read and decoded, the field replaced, the record encoded and put,
     *  the transaction committed. */
    @Benchmark
    public boolean updateLmdb(Lmdb l, LmdbKey kb, Keys k, Updates w) {
        int i = w.step();
        try (Txn<ByteBuffer> txn = l.env.txnWrite()) {
            ByteBuffer key = Lmdb.key(kb.buf, k.key());
            ByteBuffer v = l.db.get(txn, key);
            if (v == null)
                return false;
            Map<String, byte[]> record = RecordCodec.decode(v);
            record.put(FIELDS[w.fields[i]], w.values[i]);
            l.db.put(txn, key, kb.encode(record));
            txn.commit();
            return true;
        }
    }

    @Benchmark
    public List<Map<String, byte[]>> scanUniheap(Uniheap u, Keys k) {
        return u.scan(k.key());
    }

    /** bench/ycsb's UniheapDB scan: a leaf's records copied per call
     *  (scanImages), each record's fields slices of its copy. */
    @Benchmark
    public List<Map<String, ByteIterator>> scanUniheapRecords(Uniheap u, Keys k) {
        List<Map<String, ByteIterator>> out = new ArrayList<>(SCAN);
        for (RecordImage v : u.table.scanImages(k.key(), SCAN)) {
            Map<String, ByteIterator> row = new HashMap<>();
            Record.readAll(v, row);
            out.add(row);
        }
        return out;
    }

    /** bench/ycsb's LmdbDB scan: a cursor from the start key, each value
     *  decoded into ByteIterators (RecordCodec.decodeInto). */
    @Benchmark
    public List<Map<String, ByteIterator>> scanLmdbRecords(Lmdb l, LmdbKey kb, Keys k) {
        try (Txn<ByteBuffer> txn = l.env.txnRead(); Cursor<ByteBuffer> c = l.db.openCursor(txn)) {
            List<Map<String, ByteIterator>> out = new ArrayList<>(SCAN);
            boolean found = c.get(Lmdb.key(kb.buf, k.key()), GetOp.MDB_SET_RANGE);
            for (int i = 0; found && i < SCAN; i++) {
                Map<String, ByteIterator> row = new HashMap<>();
                RecordCodec.decodeInto(c.val(), null, row);
                out.add(row);
                found = c.next();
            }
            return out;
        }
    }

    @Benchmark
    public List<Map<String, byte[]>> scanLmdb(Lmdb l, LmdbKey kb, Keys k) {
        try (Txn<ByteBuffer> txn = l.env.txnRead(); Cursor<ByteBuffer> c = l.db.openCursor(txn)) {
            List<Map<String, byte[]>> out = new ArrayList<>(SCAN);
            boolean found = c.get(Lmdb.key(kb.buf, k.key()), GetOp.MDB_SET_RANGE);
            for (int i = 0; found && i < SCAN; i++) {
                Map<String, byte[]> row = new HashMap<>();
                RecordCodec.decode(c.val(), row);
                out.add(row);
                found = c.next();
            }
            return out;
        }
    }

    @Benchmark
    @Threads(2)
    public Map<String, byte[]> readUniheap2T(Uniheap u, Keys k) {
        return u.read(k.key());
    }

    @Benchmark
    @Threads(2)
    public Map<String, byte[]> readLmdb2T(Lmdb l, LmdbKey kb, Keys k) {
        return readLmdb(l, kb, k);
    }

    @Benchmark
    @Threads(2)
    public List<Map<String, byte[]>> scanUniheap2T(Uniheap u, Keys k) {
        return u.scan(k.key());
    }

    @Benchmark
    @Threads(2)
    public List<Map<String, byte[]>> scanLmdb2T(Lmdb l, LmdbKey kb, Keys k) {
        return scanLmdb(l, kb, k);
    }

    // ---- the parts of readUniheap ----

    @Benchmark
    public Object partEmptyBlock(Uniheap u) {
        return u.heap.atomic(() -> u);
    }

    @Benchmark
    public Object partGetInBlock(Uniheap u, Keys k) {
        return u.heap.atomic(() -> u.table.get(k.key()));
    }

    @Benchmark
    public Object partGetOutside(Uniheap u, Keys k) {
        return u.table.get(k.key());
    }

    /* 50 entries of the table from a random key, the records not read. */
    static int walk(Uniheap u, String start) {
        int n = 0;
        Iterator<Map.Entry<String, PObject>> it = u.table.tailMap(start, true).entrySet().iterator();
        while (n < SCAN && it.hasNext()) {
            if (it.next().getValue() != null)
                n++;
        }
        return n;
    }

    @Benchmark
    public int partWalkInBlock(Uniheap u, Keys k) {
        return u.heap.atomic(() -> walk(u, k.key()));
    }

    @Benchmark
    public int partWalkOutside(Uniheap u, Keys k) {
        return walk(u, k.key());
    }

    @State(Scope.Thread)
    public static class OneRecord {
        Record rec;

        @Setup
        public void setup(Uniheap u) {
            rec = Uniheap.record(u.table.get(recordKey(12345)));
        }
    }

    @Benchmark
    public Object partFieldsInBlock(Uniheap u, OneRecord r) {
        return u.heap.atomic(() -> {
            Map<String, byte[]> out = new HashMap<>();
            Uniheap.fields(r.rec, out);
            return out;
        });
    }

    @Benchmark
    public Object partFieldsOutside(OneRecord r) {
        Map<String, byte[]> out = new HashMap<>();
        Uniheap.fields(r.rec, out);
        return out;
    }

    @Benchmark
    public Object partFieldValues(OneRecord r) {
        Map<String, byte[]> out = new HashMap<>();
        Uniheap.values(r.rec.fieldValues(), out);
        return out;
    }
}
