package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** tests/notify/NotifyPeer.java against itself: a writer and a waiter JVM
 * (single-file source programs on this binding's class path). */
class NotifyPeerTest extends HeapTest {
    private static final int ROUNDS = 2000;

    private static List<String> peer(String... args) {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Path src = Path.of("..", "tests", "notify", "NotifyPeer.java").toAbsolutePath().normalize();
        List<String> argv = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "--enable-native-access=ALL-UNNAMED", "-cp", cp, src.toString()));
        argv.addAll(List.of(args));
        return argv;
    }

    @Test
    void writerAndWaiterPingPong() throws Exception {
        heap.atomic(() -> {
            heap.roots().put("np.cell", heap.create(NotifyCell.class));
        });
        String sock = heapd.socket.toString();
        Path wout = heapd.dir.resolve("peer-waiter.out"), rout = heapd.dir.resolve("peer-writer.out");
        Process waiter = Heapd.spawn(peer(sock, "np.cell", "waiter", "" + ROUNDS), wout, null);
        Process writer = Heapd.spawn(peer(sock, "np.cell", "writer", "" + ROUNDS), rout, null);
        try {
            assertTrue(writer.waitFor(120, TimeUnit.SECONDS), "writer did not finish");
            assertTrue(waiter.waitFor(120, TimeUnit.SECONDS), "waiter did not finish");
            String w = Files.readString(wout), r = Files.readString(rout);
            assertEquals(0, writer.exitValue(), r);
            assertEquals(0, waiter.exitValue(), w);
            assertTrue(r.contains("peer java writer: " + ROUNDS + " rounds"), r);
            assertTrue(w.contains("peer java waiter: " + ROUNDS + " rounds"), w);
            assertTrue(w.matches("(?s).*latency_us p50=\\d+\\.\\d p99=\\d+\\.\\d max=\\d+\\.\\d\\s*"), w);
        } finally {
            Heapd.stop(writer, 1000);
            Heapd.stop(waiter, 1000);
        }
    }
}
