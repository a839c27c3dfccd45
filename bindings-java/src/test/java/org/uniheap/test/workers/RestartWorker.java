package org.uniheap.test.workers;

import java.io.FileOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.uniheap.Heap;
import org.uniheap.HeapStats;
import org.uniheap.PArray;
import org.uniheap.PList;

/**
 * A client with no reconnect logic, for the heapd restart test
 * (bindings-python/tests/test_heapd_restart.py): the Java twin of
 * tests/c/prog_restart_worker.c, same roots, same ops, same output. Run as
 * a single source file on the uniheap jar.
 *
 * <p>Usage: RestartWorker NAME ACKFILE STOPFILE ($UNIHEAP_SOCKET set).
 */
public final class RestartWorker {
    private RestartWorker() {
    }

    public static void main(String[] args) throws Exception {
        String name = args[0], root = "rs." + name;
        Path stop = Path.of(args[2]);
        try (Heap heap = Heap.connect(); FileOutputStream ack = new FileOutputStream(args[1], true)) {
            heap.atomic(() -> {
                if (!heap.roots().containsKey(root))
                    heap.roots().put(root, heap.newList());
                if (!heap.roots().containsKey("rs.count"))
                    heap.roots().put("rs.count", heap.newArray(Long.class, 1));
            });
            @SuppressWarnings("unchecked")
            PList<Long> items = heap.roots().get(root).as(PList.class);
            @SuppressWarnings("unchecked")
            PArray<Long> count = heap.roots().get("rs.count").as(PArray.class);
            long i = 0;
            double longestMs = 0;
            while (!Files.exists(stop)) {
                long op = ++i;
                long before = heap.stats().reattaches();
                long t0 = System.nanoTime();
                heap.atomic(() -> {
                    if (items.size() != op - 1)
                        throw new IllegalStateException("the list has " + items.size()
                                + " elements before op " + op);
                    items.add(op);
                    count.setLong(0, count.getLong(0) + 1);
                });
                HeapStats st = heap.stats();
                if (st.reattaches() != before)
                    longestMs = Math.max(longestMs, (System.nanoTime() - t0) / 1e6);
                ack.write((op + " " + st.reattaches() + "\n").getBytes(StandardCharsets.US_ASCII));
                Thread.sleep(1);
            }
            HeapStats st = heap.stats();
            System.out.printf("ops=%d reattaches=%d reattach_ms_max=%.1f reattach_ms_total=%.1f%n",
                    i, st.reattaches(), longestMs, st.reattachNs() / 1e6);
        }
    }
}
