package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.uniheap.FreedObjectException;
import org.uniheap.Heap;
import org.uniheap.HeapClosedException;
import org.uniheap.PList;
import org.uniheap.PMap;
import org.uniheap.PSortedMap;
import org.uniheap.test.workers.AwaitOnce;
import org.uniheap.test.workers.Poke;

/**
 * Waiting for changes: token, await, changed, onChange. Every wait has a
 * bound (a lost wake-up fails the test instead of hanging it); the
 * timeout checks assert only that a wait did not return before its time.
 */
class WaitTest extends HeapTest {
    private static final Duration BOUND = Duration.ofSeconds(10);

    private NotifyCell cell(String root) {
        return heap.atomic(() -> {
            NotifyCell c = heap.create(NotifyCell.class);
            heap.roots().put(root, c);
            return c;
        });
    }

    /** The same object through another connection (another session). */
    private static NotifyCell on(Heap h, NotifyCell c) {
        return h.proxy(c.ref()).as(NotifyCell.class);
    }

    @Test
    void anotherThreadsCommitWakesAwait() throws Exception {
        NotifyCell c = cell("w.thread");
        NotifyCell other = on(connect(), c);
        long tok = heap.token(c);
        Thread t = Thread.ofPlatform().start(() -> {
            sleep(100);
            other.ping(7);
        });
        OptionalLong r = heap.await(c, tok, BOUND);
        t.join();
        assertTrue(r.isPresent(), "not woken");
        assertNotEquals(tok, r.getAsLong());
        assertEquals(7, c.ping());
        assertEquals(r.getAsLong(), heap.token(c));
    }

    @Test
    void anotherProcesssCommitWakesAwait() throws Exception {
        NotifyCell c = cell("w.proc");
        long tok = heap.token(c);
        Process p = Heapd.spawn(Procs.jvm(Poke.class, "w.proc", "pong", "42", "0"),
                heapd.dir.resolve("poke.log"), Procs.env(heapd));
        try {
            OptionalLong r = heap.await(c, tok, Duration.ofSeconds(60));
            assertTrue(r.isPresent(), "not woken by the other process");
            assertEquals(42, c.pong());
            assertTrue(p.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue());
        } finally {
            Heapd.stop(p, 1000);
        }
    }

    /** A waiter in another JVM keeps waiting across a heapd restart and
     * wakes on the next change. It runs with libuniheap's default slices:
     * a new heapd forgets the waiters it counted, and a waiter counts
     * itself again at the end of its slice. */
    @Test
    void aWaitOutlivesAHeapdRestart() throws Exception {
        NotifyCell c = cell("w.restart");
        Path out = heapd.dir.resolve("await-once.log");
        Map<String, String> env = new HashMap<>(Procs.env(heapd));
        env.put("UH_WAIT_SLICE_MS", "200");
        Process p = Heapd.spawn(Procs.jvm(AwaitOnce.class, "w.restart", "60"), out, env);
        try {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.readString(out).contains("waiting") && System.nanoTime() < end)
                sleep(20);
            sleep(200);   // into its wait
            heapd.restart();
            c.ping(5);    // reattaches, then commits
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the waiter did not finish");
            assertEquals(0, p.exitValue(), Files.readString(out));
            assertTrue(Files.readString(out).contains("woken"), Files.readString(out));
        } finally {
            Heapd.stop(p, 1000);
        }
    }

    @Test
    void sinceCatchesAChangeBeforeTheWait() {
        NotifyCell c = cell("w.since");
        long tok = heap.token(c);
        c.ping(1);   // committed between the token and the wait
        OptionalLong r = heap.await(c, tok, BOUND);
        assertTrue(r.isPresent());
        assertEquals(heap.token(c), r.getAsLong());
        assertEquals(r, heap.await(c, tok, Duration.ZERO), "zero timeout just compares");
        assertTrue(heap.await(c, r.getAsLong(), Duration.ZERO).isEmpty());
    }

    @Test
    void timeoutsAreHonouredOnPlatformAndVirtualThreads() throws Exception {
        NotifyCell c = cell("w.timeout");
        Duration d = Duration.ofMillis(200);
        long t0 = System.nanoTime();
        assertTrue(heap.await(c, d).isEmpty());
        assertTrue(System.nanoTime() - t0 >= d.toNanos(), "returned before its timeout");
        AtomicReference<Object> out = new AtomicReference<>();
        Thread.ofVirtual().start(() -> {
            long v0 = System.nanoTime();
            OptionalLong r = heap.await(c, d);
            out.set(r.isEmpty() && System.nanoTime() - v0 >= d.toNanos() ? "ok" : r + " early");
        }).join();
        assertEquals("ok", out.get());
    }

    @Test
    void collectionAndRootTokensMove() {
        PMap<String, Object> map = heap.newMap(String.class);
        PList<Long> list = heap.newList();
        PSortedMap<Long, Object> smap = heap.newSortedMap(Long.class);
        long tm = heap.token(map), tl = heap.token(list), ts = heap.token(smap);
        long tr = heap.token(Heap.ROOTS);
        map.set("a", 1L);
        list.add(2L);
        smap.set(3L, "c");
        heap.roots().put("w.map", map);
        assertNotEquals(tm, heap.token(map));
        assertNotEquals(tl, heap.token(list));
        assertNotEquals(ts, heap.token(smap));
        assertNotEquals(tr, heap.token(Heap.ROOTS));
        assertEquals(heap.token(Heap.ROOTS), heap.token(heap.roots()), "roots() is ROOTS");
        assertTrue(heap.await(map, tm, BOUND).isPresent());
        assertTrue(heap.await(Heap.ROOTS, tr, BOUND).isPresent());

        long before = heap.token(Heap.ROOTS);
        Thread t = Thread.ofPlatform().start(() -> {
            sleep(100);
            heap.roots().remove("w.map");
        });
        assertTrue(heap.await(Heap.ROOTS, before, BOUND).isPresent(), "a root removal wakes");
        join(t);
    }

    @Test
    void freedObjectsThrow() {
        NotifyCell c = heap.create(NotifyCell.class);
        long tok = heap.token(c);
        heap.free(c);
        assertThrows(FreedObjectException.class, () -> heap.token(c));
        assertThrows(FreedObjectException.class, () -> heap.await(c, tok, BOUND));
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> heap.changed(c, tok).get(10, TimeUnit.SECONDS));
        assertInstanceOf(FreedObjectException.class, e.getCause());
    }

    @Test
    void freeingTheObjectEndsAWait() throws Exception {
        NotifyCell c = cell("w.freed");
        NotifyCell other = on(connect(), c);
        long tok = heap.token(c);
        Thread t = Thread.ofPlatform().start(() -> {
            sleep(100);
            other.heap().atomic(() -> {
                other.heap().roots().remove("w.freed");
                other.heap().free(other);
            });
        });
        assertThrows(FreedObjectException.class, () -> heap.await(c, tok, BOUND));
        t.join();
    }

    @Test
    void waitingInsideABlockThrows() {
        NotifyCell c = cell("w.block");
        long tok = heap.token(c);
        heap.atomic(() -> {
            assertThrows(IllegalStateException.class, () -> heap.await(c, tok, BOUND));
            assertThrows(IllegalStateException.class, () -> heap.changed(c, tok));
        });
    }

    @Test
    void changedCompletesAndCancels() throws Exception {
        NotifyCell c = cell("w.changed");
        long tok = heap.token(c);
        CompletableFuture<Long> f = heap.changed(c, tok);
        CompletableFuture<Long> g = heap.changed(c, tok);   // shares f's native wait
        assertFalse(f.isDone());
        g.cancel(false);
        c.ping(3);
        long now = f.get(10, TimeUnit.SECONDS);
        assertNotEquals(tok, now);
        assertTrue(g.isCancelled());

        CompletableFuture<Long> h = heap.changed(c, now);
        h.cancel(false);   // ends the native wait
        assertTrue(heap.await(c, now, Duration.ofMillis(50)).isEmpty());
    }

    @Test
    void onChangeCallsBackForEachChangeUntilClosed() throws Exception {
        NotifyCell c = cell("w.on");
        NotifyCell other = on(connect(), c);
        LinkedBlockingQueue<Long> seen = new LinkedBlockingQueue<>();
        ExecutorService ex = Executors.newSingleThreadExecutor();
        try {
            AutoCloseable sub = heap.onChange(c, ex, seen::add);
            for (int i = 1; i <= 5; i++) {
                other.ping(i);
                Long tok = seen.poll(10, TimeUnit.SECONDS);
                assertNotNull(tok, "no callback for change " + i);
                assertEquals(heap.token(c), tok);
            }
            sub.close();
            other.ping(99);
            assertNull(seen.poll(300, TimeUnit.MILLISECONDS), "a callback after close");
        } finally {
            ex.shutdownNow();
        }
    }

    @Test
    void closeEndsWaitsInProgress() throws Exception {
        Heap h = connect();
        NotifyCell c = on(h, cell("w.close"));
        long tok = h.token(c);
        CompletableFuture<Long> f = h.changed(c, tok);
        AtomicReference<Throwable> err = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                h.await(c, tok, null);
            } catch (Throwable e) {
                err.set(e);
            }
        });
        sleep(200);
        h.close();
        t.join(10_000);
        assertFalse(t.isAlive(), "await still running after close");
        assertInstanceOf(HeapClosedException.class, err.get());
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        assertInstanceOf(HeapClosedException.class, e.getCause());
    }

    /** A thousand virtual threads on 2 carriers: a wait that pinned its
     * carrier would leave the writer no thread to run on. */
    @Test
    void thousandVirtualThreadsWakeOnOneCommit() throws Exception {
        NotifyCell c = cell("w.virtual");
        long tok = heap.token(c);
        int n = 1000;
        CountDownLatch started = new CountDownLatch(n);
        List<Future<OptionalLong>> rs = new ArrayList<>();
        try (ExecutorService vt = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < n; i++)
                rs.add(vt.submit(() -> {
                    started.countDown();
                    return heap.await(c, tok, Duration.ofSeconds(60));
                }));
            assertTrue(started.await(60, TimeUnit.SECONDS));
            Future<?> w = vt.submit(() -> c.ping(1));   // a virtual writer too
            w.get(60, TimeUnit.SECONDS);
            for (Future<OptionalLong> r : rs)
                assertTrue(r.get(60, TimeUnit.SECONDS).isPresent(), "a virtual thread not woken");
        }
    }

    /** Ping-pong between two Heaps (two sessions): each round one side
     * commits and waits for the other's answer; a lost wake-up shows as
     * a wait running into its 10 s bound. -Duniheap.waitRounds=100000 for
     * the long run. */
    @Test
    void pingPongLosesNoWakeUp() throws Exception {
        pingPong("w.pingpong", Integer.getInteger("uniheap.waitRounds", 20_000), Thread.ofPlatform());
    }

    /** The same on virtual threads: each wait is a native wait of the
     * heap's pool, handed over through a future. */
    @Test
    void pingPongOnVirtualThreadsLosesNoWakeUp() throws Exception {
        pingPong("w.vpingpong", Integer.getInteger("uniheap.waitRounds", 20_000) / 4, Thread.ofVirtual());
    }

    private void pingPong(String root, int rounds, Thread.Builder threads) throws Exception {
        NotifyCell c = cell(root);
        NotifyCell a = on(connect(), c), b = on(connect(), c);
        AtomicReference<String> fail = new AtomicReference<>();
        Thread waiter = threads.start(() -> {
            for (long i = 1; i <= rounds && fail.get() == null; i++) {
                if (!waitFor(b, () -> b.ping(), i, fail))
                    return;
                b.pong(i);
            }
        });
        Thread writer = threads.start(() -> {
            for (long i = 1; i <= rounds && fail.get() == null; i++) {
                a.ping(i);
                if (!waitFor(a, () -> a.pong(), i, fail))
                    return;
            }
        });
        writer.join();
        waiter.join();
        assertNull(fail.get());
        assertEquals(rounds, c.pong());
    }

    /* Token, read, wait with the token: until read() == want. */
    private static boolean waitFor(NotifyCell on, java.util.function.LongSupplier read, long want,
                                   AtomicReference<String> fail) {
        Heap h = on.heap();
        for (;;) {   // bound: every wait has BOUND
            long tok = h.token(on);
            if (read.getAsLong() == want)
                return true;
            if (fail.get() != null)
                return false;
            if (h.await(on, tok, BOUND).isEmpty()) {
                fail.compareAndSet(null, "round " + want + ": no wake-up within " + BOUND);
                return false;
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void join(Thread t) {
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
