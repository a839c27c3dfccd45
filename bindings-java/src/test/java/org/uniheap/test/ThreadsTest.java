package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.uniheap.Heap;
import org.uniheap.HeapClosedException;
import org.uniheap.PArray;
import org.uniheap.PMap;
import org.uniheap.PObject;

/** One Heap shared by many threads: each runs its blocks in its own session. */
class ThreadsTest extends HeapTest {
    private static final int ACCOUNTS = 16;
    private static final long START = 1000;

    @Test
    void eightThreadsTransferOnOneBank() throws Exception {
        PArray<PObject> bank = heap.newArray(PObject.class, ACCOUNTS);
        for (int i = 0; i < ACCOUNTS; i++)
            bank.set(i, heap.create(Account.class, a -> a.balance(START)));
        PMap<Long, Object> done = heap.newMap(Long.class);   // transfer id -> amount
        heap.roots().put("threads.bank", bank);
        ConcurrentLinkedQueue<Long> acked = new ConcurrentLinkedQueue<>();
        AtomicLong ids = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            long seed = t;
            threads.add(Thread.ofPlatform().start(() -> {
                Random rnd = new Random(seed);
                for (int i = 0; i < 300; i++) {
                    Account from = bank.get(rnd.nextInt(ACCOUNTS)).as(Account.class);
                    Account to = bank.get(rnd.nextInt(ACCOUNTS)).as(Account.class);
                    long amount = rnd.nextInt(50), id = ids.incrementAndGet();
                    heap.atomic(() -> {
                        from.balance(from.balance() - amount);
                        to.balance(to.balance() + amount);
                        done.set(id, amount);
                    });
                    acked.add(id);
                }
            }));
        }
        for (Thread th : threads)
            th.join();
        long total = 0;
        for (PObject p : bank)
            total += p.as(Account.class).balance();
        assertEquals(ACCOUNTS * START, total);
        assertEquals(8 * 300, acked.size());
        for (long id : acked)
            assertTrue(done.containsKey(id), "acknowledged transfer " + id + " is missing");
        assertTrue(heap.sessionsOpened() > 1, "threads shared one session");
        assertTrue(heap.sessionsOpened() <= 64);
        heap.check();
    }

    /* More threads than the heap keeps stripes of open blocks: threads
     * that share a stripe with a thread in a block still read outside it. */
    @Test
    void aBlockBelongsToItsThreadOnly() throws Exception {
        int n = 64;
        Account[] accounts = new Account[n];
        for (int i = 0; i < n; i++)
            accounts[i] = heap.create(Account.class, a -> a.balance(START));
        CountDownLatch written = new CountDownLatch(n / 2);
        CountDownLatch checked = new CountDownLatch(n / 2);
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < n; t++) {
            int me = t;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    if (me % 2 == 0) {   // holds a block open, with a write in it
                        try (org.uniheap.Block b = heap.begin()) {
                            accounts[me].balance(START + me);
                            written.countDown();
                            checked.await();
                            if (!heap.inBlock() || accounts[me].balance() != START + me)
                                wrong.add("thread " + me + " lost its block");
                        }   // rolled back
                    } else {             // reads outside any block meanwhile
                        written.await();
                        if (heap.inBlock())
                            wrong.add("thread " + me + " is in another thread's block");
                        for (Account a : accounts)
                            if (a.balance() != START)
                                wrong.add("thread " + me + " read an uncommitted write");
                        checked.countDown();
                    }
                } catch (InterruptedException e) {
                    wrong.add("interrupted");
                }
            }));
        }
        for (Thread th : threads)
            th.join();
        assertEquals(List.of(), List.copyOf(wrong));
        for (Account a : accounts)
            assertEquals(START, a.balance());
        assertFalse(heap.inBlock());
    }

    @Test
    void proxyMadeInOneThreadUsedInAnother() throws Exception {
        Account[] made = new Account[1];
        Thread t = Thread.ofPlatform().start(() -> made[0] = heap.create(Account.class, a -> a.owner("t1")));
        t.join();
        Thread u = Thread.ofPlatform().start(() -> {
            made[0].balance(7);
            made[0].owner("t2");
        });
        u.join();
        assertEquals(7, made[0].balance());
        assertEquals("t2", made[0].owner());
    }

    @Test
    void manyVirtualThreadsFewSessions() throws Exception {
        Heap h = connect(Heap.Option.maxSessions(4));
        Account counter = h.create(Account.class);
        try (ExecutorService ex = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < 500; i++)
                fs.add(ex.submit(() -> h.atomic(() -> counter.balance(counter.balance() + 1))));
            for (Future<?> f : fs)
                f.get();
        }
        assertEquals(500, counter.balance());
        assertTrue(h.sessionsOpened() <= 4, "opened " + h.sessionsOpened());
    }

    @Test
    void closingWhileOtherThreadsReadNeverCrashes() throws Exception {
        Heap h = connect();
        Account a = h.create(Account.class, x -> x.owner("reader"));
        PMap<String, Object> m = h.newMap(String.class, java.util.Map.of("k", "v"));
        AtomicBoolean sawClosed = new AtomicBoolean();
        AtomicLong reads = new AtomicLong();
        CountDownLatch running = new CountDownLatch(4);
        List<Thread> readers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int kind = t;
            readers.add(Thread.ofPlatform().start(() -> {
                running.countDown();
                try {
                    for (;;) {
                        switch (kind) {
                            case 0 -> a.balance();
                            case 1 -> a.owner();
                            case 2 -> m.get("k");
                            default -> a.balance(reads.get());
                        }
                        reads.incrementAndGet();
                    }
                } catch (HeapClosedException e) {
                    sawClosed.set(true);
                }
            }));
        }
        running.await();
        Thread.sleep(100);
        h.close();
        for (Thread r : readers)
            r.join(10_000);
        for (Thread r : readers)
            assertFalse(r.isAlive());
        assertTrue(sawClosed.get());
        assertTrue(reads.get() > 0);
        assertThrows(HeapClosedException.class, a::balance);
        assertThrows(HeapClosedException.class, () -> h.create(Account.class));
        assertTrue(a.toString().endsWith("(heap closed)"));
    }
}
