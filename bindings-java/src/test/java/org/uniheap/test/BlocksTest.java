package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.uniheap.Block;
import org.uniheap.ConflictException;
import org.uniheap.Heap;
import org.uniheap.HeapFullException;
import org.uniheap.PList;
import org.uniheap.UniheapException;

/** Failure-atomic blocks: commit, rollback, nesting, conflicts, retries. */
class BlocksTest extends HeapTest {
    private Account account(long balance) {
        return heap.create(Account.class, a -> a.balance(balance));
    }

    @Test
    void commitMakesWritesVisible() {
        Account a = account(1);
        Heap other = connect();
        Account seen = other.proxy(a.ref()).as(Account.class);
        try (Block b = heap.begin()) {
            a.balance(2);
            assertEquals(2, a.balance());     // own write
            assertEquals(1, seen.balance());  // not yet for others
            b.commit();
        }
        assertEquals(2, seen.balance());
        assertFalse(heap.inBlock());
    }

    @Test
    void closeWithoutCommitRollsBack() {
        Account a = account(1);
        try (Block b = heap.begin()) {
            a.balance(5);
            a.owner("gone");
            heap.create(Account.class);
        }
        assertEquals(1, a.balance());
        assertNull(a.owner());
    }

    @Test
    void exceptionInAtomicRollsBackAndPropagates() {
        Account a = account(1);
        RuntimeException boom = new IllegalStateException("boom");
        RuntimeException e = assertThrows(IllegalStateException.class, () -> heap.atomic(() -> {
            a.balance(99);
            throw boom;
        }));
        assertSame(boom, e);
        assertEquals(1, a.balance());
        assertFalse(heap.inBlock());
    }

    @Test
    void nestingFlattens() {
        Account a = account(0);
        try (Block outer = heap.begin()) {
            try (Block inner = heap.begin()) {
                a.balance(1);
                inner.commit();
            }
            heap.atomic(() -> a.balance(a.balance() + 1));   // joins
            assertTrue(heap.inBlock());
            outer.commit();
        }
        assertEquals(2, a.balance());
        // the outer level rolled back: the inner commit is undone too
        try (Block outer = heap.begin()) {
            try (Block inner = heap.begin()) {
                a.balance(10);
                inner.commit();
            }
        }
        assertEquals(2, a.balance());
    }

    @Test
    void innerLevelWithoutCommitDoomsTheBlock() {
        Account a = account(0);
        UniheapException e = assertThrows(UniheapException.class, () -> {
            try (Block outer = heap.begin()) {
                try (Block inner = heap.begin()) {
                    a.balance(3);
                }
                a.owner("x");
                outer.commit();
            }
        });
        assertTrue(e.getMessage().contains("nested"), e.getMessage());
        assertEquals(0, a.balance());
        assertNull(a.owner());
    }

    @Test
    void blockMisuse() {
        Block b = heap.begin();
        b.commit();
        assertThrows(IllegalStateException.class, b::commit);
        b.close();   // idempotent
        try (Block outer = heap.begin()) {
            Block inner = heap.begin();
            assertThrows(IllegalStateException.class, outer::commit);
            inner.commit();
            outer.commit();
        }
    }

    @Test
    void conflictIsRetriedByAtomic() throws Exception {
        Account a = account(0);
        Heap other = connect();
        Account mine = other.proxy(a.ref()).as(Account.class);
        CountDownLatch locked = new CountDownLatch(1), release = new CountDownLatch(1);
        Thread holder = Thread.ofPlatform().start(() -> {
            try (Block b = other.begin()) {
                mine.balance(100);     // takes the lock
                locked.countDown();
                release.await();
                b.commit();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        locked.await();
        AtomicInteger runs = new AtomicInteger();
        Thread releaser = Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(150);
            } catch (InterruptedException e) {
                return;
            }
            release.countDown();
        });
        long retries = heap.stats().retries();
        heap.atomic(() -> {
            runs.incrementAndGet();
            a.balance(a.balance() + 1);
        });
        holder.join();
        releaser.join();
        assertEquals(101, a.balance());
        assertTrue(runs.get() > 1, "ran " + runs.get() + " times");
        assertTrue(heap.stats().retries() > retries);
    }

    @Test
    void aDoomedBlockStaysDoomed() throws Exception {
        Account a = account(0), b2 = account(0);
        Heap other = connect();
        Account theirs = other.proxy(a.ref()).as(Account.class);
        try (Block held = other.begin()) {
            theirs.balance(7);   // holds the lock until the end of this try
            try (Block b = heap.begin()) {
                assertThrows(ConflictException.class, () -> a.balance(1));
                assertThrows(ConflictException.class, () -> b2.balance(1));
                assertThrows(ConflictException.class, b::commit);
            }
            held.commit();
        }
        assertEquals(7, a.balance());
        assertEquals(0, b2.balance());
    }

    @Test
    void atomicGivesUpAfterMaxTries() throws Exception {
        Account a = account(0);
        Heap other = connect();
        Account theirs = other.proxy(a.ref()).as(Account.class);
        heap.maxTries(2);
        try (Block held = other.begin()) {
            theirs.balance(1);
            ConflictException e = assertThrows(ConflictException.class,
                    () -> heap.atomic(() -> a.balance(2)));
            assertTrue(e.getMessage().contains("2 tries"), e.getMessage());
            held.commit();
        }
        assertFalse(heap.inBlock());
    }

    @Test
    void blockBiggerThanTheLogAreaCommits() {
        // far more than the 1 MiB a session's log starts with: the log grows
        PList<Object> l = heap.newList();
        heap.atomic(() -> {
            for (int i = 0; i < 20_000; i++)
                l.add("an element of a block bigger than the first log extent " + i);
        });
        assertEquals(20_000, l.size());
        assertEquals("an element of a block bigger than the first log extent 19999", l.get(19_999));
    }

    @Test
    void blockThatFillsTheHeapIsRolledBack() throws Exception {
        try (Heapd small = Heapd.start("16M"); Heap h = Heap.connect(small.socket)) {
            Account a = h.create(Account.class, x -> x.balance(1));
            HeapFullException e = assertThrows(HeapFullException.class, () -> h.atomic(() -> {
                a.balance(2);
                for (int i = 0; i < 100_000; i++)
                    h.create(Account.class).owner("x".repeat(900));
            }));
            assertEquals("UH_ENOSPC", e.codeName());
            assertEquals(1, a.balance());
            a.balance(3);   // the heap goes on
            assertEquals(3, a.balance());
        }
    }

    @Test
    void atomicReturnsTheResult() {
        Account a = account(41);
        long r = heap.atomic(() -> {
            a.deposit(1);
            return a.balance();
        });
        assertEquals(42, r);
        var s = heap.stats();
        heap.atomic(() -> {});            // an empty block commits nothing
        assertEquals(s.emptyCommits() + 1, heap.stats().emptyCommits());
    }
}
