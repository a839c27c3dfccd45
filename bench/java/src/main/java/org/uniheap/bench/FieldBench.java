package org.uniheap.bench;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.uniheap.Block;
import org.uniheap.Heap;

/**
 * Field get/set of a persistent object against a plain Java field, and the
 * cost of an empty block. Outside a block a get is two loads from the
 * mapped heap (header check, field); a set is one libuniheap call (lock,
 * store, persist, unlock).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@State(Scope.Thread)
public class FieldBench {
    /** The plain Java peer. */
    public static final class Plain {
        long x;
    }

    private Heap heap;
    private Point point;
    private final Plain plain = new Plain();
    private long v;
    private static final Runnable NOTHING = () -> {
    };

    @Setup
    public void setup() {
        heap = Heap.connect();
        point = heap.create(Point.class);
        heap.roots().put("bench.point", point);
    }

    @TearDown
    public void teardown() {
        heap.close();
    }

    @Benchmark
    public long javaFieldGet() {
        return plain.x;
    }

    @Benchmark
    public void javaFieldSet() {
        plain.x = v++;
    }

    @Benchmark
    public long uniheapFieldGet() {
        return point.x();
    }

    @Benchmark
    public void uniheapFieldSet() {
        point.x(v++);
    }

    /** begin + commit of a block that does nothing. */
    @Benchmark
    public void uniheapEmptyBlock() {
        try (Block b = heap.begin()) {
            b.commit();
        }
    }

    /** heap.atomic() of an empty body (the retrying form). */
    @Benchmark
    public void uniheapEmptyAtomic() {
        heap.atomic(NOTHING);
    }

    /** A block that writes one field: lock, log, two persist barriers. */
    @Benchmark
    public void uniheapSetInBlock() {
        try (Block b = heap.begin()) {
            point.x(v++);
            b.commit();
        }
    }
}
