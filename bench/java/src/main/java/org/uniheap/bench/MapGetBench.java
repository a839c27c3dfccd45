package org.uniheap.bench;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.concurrent.TimeUnit;

import org.lmdbjava.Txn;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.uniheap.Heap;
import org.uniheap.PMap;

/**
 * A get of a 100-byte value by a String key, from a persistent PMap, from a
 * java.util.HashMap and from lmdbjava (one read transaction per get, the
 * value copied out, as uniheap copies it into a byte[]), with 1 and 2
 * threads. Each map is filled once per run: the PMap lives in the heap
 * (root "bench.map.<n>") and the LMDB environment in $UNIHEAP_BENCH_DIR,
 * across forks.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class MapGetBench {

    @State(Scope.Benchmark)
    public static class Keys {
        @Param({"100000", "1000000"})
        public int keys;
    }

    /** Each thread walks its own random order of keys. */
    @State(Scope.Thread)
    public static class Cursor {
        String[] lookups;
        int next;
        ByteBuffer keyBuf = ByteBuffer.allocateDirect(64);

        @Setup
        public void setup(Keys k) {
            lookups = MapData.lookups(k.keys, Thread.currentThread().threadId());
        }

        String key() {
            return lookups[next++ & (MapData.LOOKUPS - 1)];
        }
    }

    @State(Scope.Benchmark)
    public static class Uniheap {
        Heap heap;
        PMap<String, byte[]> map;

        @Setup(Level.Trial)
        public void setup(Keys k) {
            heap = Heap.connect();
            String root = "bench.map." + k.keys;
            if (heap.roots().containsKey(root)) {
                map = heap.roots().get(root).as(PMap.class);
                return;
            }
            map = heap.newMap(String.class);
            for (int i = 0; i < k.keys; i += 1000) {
                int from = i;
                heap.atomic(() -> {
                    for (int j = from; j < Math.min(from + 1000, k.keys); j++)
                        map.set(MapData.key(j), MapData.value(j));
                });
            }
            heap.roots().put(root, map);
        }

        @TearDown(Level.Trial)
        public void teardown() {
            heap.close();
        }
    }

    @State(Scope.Benchmark)
    public static class JavaMap {
        HashMap<String, byte[]> map;

        @Setup(Level.Trial)
        public void setup(Keys k) {
            map = new HashMap<>();
            for (int i = 0; i < k.keys; i++)
                map.put(MapData.key(i), MapData.value(i));
        }
    }

    @State(Scope.Benchmark)
    public static class Lmdb extends LmdbState {
        @Setup(Level.Trial)
        public void setup(Keys k) throws Exception {
            if (!open("lmdb-" + k.keys, "bench"))
                return;
            ByteBuffer key = ByteBuffer.allocateDirect(64), val = ByteBuffer.allocateDirect(MapData.VALUE_LEN);
            for (int i = 0; i < k.keys; i += 10000) {
                try (Txn<ByteBuffer> txn = env.txnWrite()) {
                    for (int j = i; j < Math.min(i + 10000, k.keys); j++) {
                        key.clear();
                        key.put(MapData.utf8(MapData.key(j))).flip();
                        val.clear();
                        val.put(MapData.value(j)).flip();
                        db.put(txn, key, val);
                    }
                    txn.commit();
                }
            }
        }

        byte[] get(Cursor c) {
            ByteBuffer key = c.keyBuf;
            key.clear();
            key.put(MapData.utf8(c.key())).flip();
            try (Txn<ByteBuffer> txn = env.txnRead()) {
                ByteBuffer v = db.get(txn, key);
                byte[] out = new byte[v.remaining()];
                v.get(out);
                return out;
            }
        }
    }

    @Benchmark
    public byte[] uniheap(Uniheap u, Cursor c) {
        return u.map.get(c.key());
    }

    @Benchmark
    @Threads(2)
    public byte[] uniheap2T(Uniheap u, Cursor c) {
        return u.map.get(c.key());
    }

    @Benchmark
    public byte[] hashMap(JavaMap m, Cursor c) {
        return m.map.get(c.key());
    }

    @Benchmark
    @Threads(2)
    public byte[] hashMap2T(JavaMap m, Cursor c) {
        return m.map.get(c.key());
    }

    /* lmdbjava's forks only get --add-opens (it reaches into java.nio
     * internals on JDK 25); uniheap's never need them. */
    @Benchmark
    @Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-opens",
        "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"})
    public byte[] lmdbjava(Lmdb l, Cursor c) {
        return l.get(c);
    }

    @Benchmark
    @Threads(2)
    @Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-opens",
        "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"})
    public byte[] lmdbjava2T(Lmdb l, Cursor c) {
        return l.get(c);
    }
}
