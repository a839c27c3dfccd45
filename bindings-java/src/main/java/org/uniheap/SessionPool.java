package org.uniheap;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The sessions of one {@link Heap}, all over its one mapping. A thread
 * borrows a session for a block (for the block's whole run) or for one
 * operation outside a block, and gives it back; sessions are opened on
 * demand (uh_session_open, one heapd round trip) up to {@code max}, then
 * borrowers wait. heapd has 1023 session slots per heap for all processes,
 * so a JVM with thousands of (virtual) threads must share a few.
 *
 * <p>Fast path: one slot per stripe, picked by thread id, taken and put
 * back with one atomic operation each; a shared queue behind it.
 *
 * <p>Closing: {@link #close()} disconnects the idle sessions; a borrowed
 * one is disconnected when it comes back. libuniheap unmaps the heap with
 * the last session, so a thread in the middle of a call always has its
 * mapping.
 */
final class SessionPool {
    /** Slots between two stripes: 128 bytes or more, so that threads of
     * different stripes never take and give back on one cache line. */
    private static final int SPACING = 32;
    private final AtomicReferenceArray<Session> stripes;
    private final int mask;
    private final ConcurrentLinkedQueue<Session> idle = new ConcurrentLinkedQueue<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition returned = lock.newCondition();
    private final List<Session> all = new ArrayList<>();   // guarded by lock
    private final Session first;
    private final int flags;
    private final int max;
    private volatile int waiters;
    private volatile boolean closed;

    SessionPool(Session first, int flags, int max) {
        int n = StripedCount.stripesFor(Runtime.getRuntime().availableProcessors());
        this.stripes = new AtomicReferenceArray<>(n * SPACING);
        this.mask = n - 1;
        this.first = first;
        this.flags = flags;
        this.max = max;
        all.add(first);
        idle.add(first);
    }

    /** A session for the calling thread; give it back with {@link #giveBack}. */
    Session borrow() {
        int i = stripe();
        Session s = stripes.get(i);
        if (s != null && stripes.compareAndSet(i, s, null))
            return s;
        s = idle.poll();
        return s != null ? s : borrowSlow();
    }

    private int stripe() {
        return ((int) Thread.currentThread().threadId() & mask) * SPACING;
    }

    void giveBack(Session s) {
        if (closed) {
            retire(s);
            return;
        }
        if (waiters == 0) {
            int i = stripe();
            if (stripes.get(i) == null && stripes.compareAndSet(i, null, s))
                return;
        }
        idle.offer(s);
        if (waiters != 0) {
            lock.lock();
            try {
                returned.signal();
            } finally {
                lock.unlock();
            }
        }
        if (closed)
            drain();   // close() may have drained before our offer
    }

    private Session borrowSlow() {
        lock.lock();
        try {
            waiters++;
            try {
                for (;;) {   // bound: returns once a session is free or opened
                    if (closed)
                        throw new HeapClosedException("the heap is closed");
                    Session s = idle.poll();
                    if (s == null)
                        s = takeAnyStripe();
                    if (s != null)
                        return s;
                    if (all.size() < max) {
                        s = first.open(flags);
                        all.add(s);
                        return s;
                    }
                    returned.await(10, TimeUnit.MILLISECONDS);
                }
            } finally {
                waiters--;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UniheapException("interrupted while waiting for a free session "
                    + "(all " + max + " of this heap are in use)", e);
        } finally {
            lock.unlock();
        }
    }

    private Session takeAnyStripe() {
        for (int i = 0; i < stripes.length(); i += SPACING) {
            Session s = stripes.get(i);
            if (s != null && stripes.compareAndSet(i, s, null))
                return s;
        }
        return null;
    }

    /** Sessions opened so far (at most max). */
    int opened() {
        lock.lock();
        try {
            return all.size();
        } finally {
            lock.unlock();
        }
    }

    /** Every session of the pool, borrowed or not (for counters). */
    List<Session> sessions() {
        lock.lock();
        try {
            return new ArrayList<>(all);
        } finally {
            lock.unlock();
        }
    }

    /** Disconnect the idle sessions now and the borrowed ones when they
     * come back. Idempotent. */
    void close() {
        lock.lock();
        try {
            closed = true;
            returned.signalAll();
        } finally {
            lock.unlock();
        }
        drain();
    }

    private void drain() {
        Session s;
        while ((s = idle.poll()) != null)
            retire(s);
        while ((s = takeAnyStripe()) != null)
            retire(s);
    }

    private void retire(Session s) {
        lock.lock();
        try {
            if (!all.remove(s))
                return;   // already disconnected
        } finally {
            lock.unlock();
        }
        s.disconnect();
    }
}
