package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.uniheap.Heap;
import org.uniheap.HeapInfo;
import org.uniheap.PObject;
import org.uniheap.Persistent;

/**
 * A heap that grows while this JVM is connected (FORMAT.md 1.1): the
 * objects another process made in the part the heap grew into after the
 * JVM connected are read and written through proxies here (the heap's
 * segment is made anew, longer, at the same base, once libuniheap has
 * mapped that part for a reference that reached past it), and info()
 * reports the heap's size now, the most it may grow to and the bytes its
 * arenas hold, as heapctl status does.
 *
 * The other process is tests/c/prog_grow_fill (its blocks: chains of 200
 * GrowFill records valued id * 1e9 + k * 1000 + i, under the roots
 * "w&lt;id&gt;.&lt;k&gt;").
 */
class GrowTest {
    private static final long MIB = 1L << 20;
    private static final long OFFSET = (1L << 48) - 1;
    private static final int REC = 200;
    private static final int BLOCKS = 1500;   // ~18 MiB of records: past the 16 MiB pool

    private Heapd heapd;

    /** prog_grow_fill's record class. */
    @Persistent("GrowFill")
    public interface GrowFill extends PObject {
        long value();     void value(long v);
        GrowFill next();  void next(GrowFill v);
        long a();         void a(long v);
        long b();         void b(long v);
        long c();         void c(long v);
        long d();         void d(long v);
    }

    @BeforeEach
    void startHeapd() throws Exception {
        heapd = Heapd.start("16M", "--max-size", "256M", "--log-size", "256K");
    }

    @AfterEach
    void stopHeapd() {
        if (heapd != null)
            heapd.close();
        heapd = null;
    }

    private Procs.Result prog(String... args) throws Exception {
        List<String> argv = new ArrayList<>(List.of(Heapd.binary("prog_grow_fill").toString(),
                heapd.socket.toString()));
        argv.addAll(List.of(args));
        return Procs.run(heapd, argv, 300);
    }

    /** Objects this JVM makes past what the heap was when it connected
     * (its leases grew the heap) are read outside blocks too. */
    @Test
    void objectsThisProcessMadePastTheStartSizeRead() {
        try (Heap heap = Heap.connect(heapd.socket)) {
            long start = heap.info().curSize();
            GrowFill last = null;
            for (int k = 0; k < 4000 && (last == null || (last.ref() & OFFSET) < start); k++) {
                final long kk = k;
                last = heap.atomic(() -> {
                    GrowFill prev = null;
                    for (int i = 0; i < REC; i++) {
                        final GrowFill p = prev;
                        final long v = kk * 1000 + i;
                        prev = heap.create(GrowFill.class, g -> {
                            g.value(v);
                            g.next(p);
                        });
                    }
                    heap.roots().put("java." + kk, prev);
                    return prev;
                });
            }
            assertTrue((last.ref() & OFFSET) >= start, "no object past " + start);
            assertTrue(last.isLive());
            long k = last.value() / 1000;
            int n = 0;
            for (GrowFill g = last; g != null; g = g.next(), n++)
                assertEquals(k * 1000 + REC - 1 - n, g.value());
            assertEquals(REC, n);
            assertTrue(heap.info().curSize() > start);
        }
    }

    @Test
    void objectsInThePartTheHeapGrewIntoReadAndWritten() throws Exception {
        try (Heap heap = Heap.connect(heapd.socket)) {
            HeapInfo i = heap.info();
            assertEquals(16 * MIB, i.size());
            assertEquals(16 * MIB, i.curSize());
            assertEquals(256 * MIB, i.maxSize());
            assertTrue(i.usedSize() > 0 && i.usedSize() <= i.curSize(), i.toString());

            Procs.Result r = prog("write", "0", String.valueOf(BLOCKS));
            assertEquals(0, r.exit(), r.output());
            assertTrue(r.output().contains("blocks " + BLOCKS), r.output());

            List<PObject> beyond = new ArrayList<>();
            for (int k = 0; k < BLOCKS; k++) {
                PObject o = heap.roots().get("w0." + k);
                int n = 0;
                for (; o != null; n++) {
                    assertEquals((long) k * 1000 + REC - 1 - n, o.getField("value"));
                    if ((o.ref() & OFFSET) >= 16 * MIB)
                        beyond.add(o);
                    o = (PObject) o.getField("next");
                }
                assertEquals(REC, n);
            }
            assertFalse(beyond.isEmpty(), "no record in the part the heap grew into");

            PObject rec = beyond.get(beyond.size() - 1);
            long v = (Long) rec.getField("value");
            heap.atomic(() -> rec.setField("a", v + 1));
            assertEquals(v + 1, rec.getField("a"));

            i = heap.info();
            assertTrue(i.curSize() > 16 * MIB, i.toString());
            assertEquals(256 * MIB, i.maxSize());
            assertTrue((rec.ref() & OFFSET) < i.size() && i.size() <= i.curSize(), i.toString());
            assertTrue(i.usedSize() > 16 * MIB, i.toString());
        }
        // C reads every block again, the one Java wrote to included.
        Files.writeString(heapd.dir.resolve("done"), "");
        Procs.Result r = prog("read", "1", heapd.dir.toString());
        assertEquals(0, r.exit(), r.output());
        assertTrue(r.output().contains("read " + BLOCKS), r.output());
    }
}
