package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.uniheap.DisconnectedException;
import org.uniheap.Heap;

/**
 * Heap.connect waits for heapd: a client started before heapd connects once
 * heapd comes up within the timeout; a timeout of zero fails at once and a
 * missing heapd fails after the timeout, with a DisconnectedException naming
 * the socket and saying heapd is not running. Timings are checked from below
 * and only generously from above (the machine may be loaded).
 */
class ConnectWaitTest {
    private static final Duration GENEROUS = Duration.ofSeconds(60);

    private static void notRunning(DisconnectedException e, Path sock) {
        String m = e.getMessage();
        assertTrue(m.contains("heapd is not running") && m.contains(sock.toString())
                && m.contains("heapd --heap"), m);
        assertEquals("UH_EDISCONNECTED", e.codeName());
    }

    @Test
    void clientStartedBeforeHeapdConnects() throws Exception {
        try (Heapd d = Heapd.start("64M")) {
            d.stop();
            CompletableFuture<Heap> early = CompletableFuture.supplyAsync(
                    () -> Heap.connect(d.socket, Heap.Option.connectTimeout(GENEROUS)));
            Thread.sleep(500);
            assertFalse(early.isDone(), "the client gave up before heapd started");
            d.start();
            try (Heap h = early.get(GENEROUS.toSeconds() + 10, TimeUnit.SECONDS)) {
                assertTrue(h.info().size() > 0);
            }
        }
    }

    @Test
    void zeroFailsAtOnceAndMissingHeapdAfterTheTimeout() throws Exception {
        try (Heapd d = Heapd.start("64M")) {
            Path sock = d.dir.resolve("nobody.sock");
            long t0 = System.nanoTime();
            notRunning(assertThrows(DisconnectedException.class,
                    () -> Heap.connect(sock, Heap.Option.connectTimeout(Duration.ZERO))), sock);
            assertTrue(System.nanoTime() - t0 < GENEROUS.toNanos());
            t0 = System.nanoTime();
            notRunning(assertThrows(DisconnectedException.class,
                    () -> Heap.connect(sock, Heap.Option.connectTimeout(Duration.ofSeconds(1)))), sock);
            long tookMs = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(tookMs >= 950 && tookMs < GENEROUS.toMillis(), "took " + tookMs + " ms");
        }
    }

    @Test
    void negativeTimeoutIsRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> Heap.Option.connectTimeout(Duration.ofMillis(-1)));
    }
}
