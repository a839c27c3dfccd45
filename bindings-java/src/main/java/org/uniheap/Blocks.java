package org.uniheap;

import java.util.function.Supplier;

/**
 * The failure-atomic blocks of one {@link Heap}: which thread has one open,
 * how a level begins and ends, and the run-and-retry loop of
 * {@link Heap#atomic(Supplier)}. Heap's public block methods delegate here;
 * {@link Block} ends its levels here.
 *
 * <p>Invariants: a thread has at most one open block per heap, its
 * {@link BlockState} in {@code here} while its depth is above 0; the
 * session of that state is borrowed from the pool when the block begins
 * and given back when its outermost level ends (committed or rolled back),
 * never earlier; {@code openBlocks} counts the outermost blocks open, so that a
 * thread whose stripe counts 0 needs no thread-local lookup.
 */
final class Blocks {
    private final Heap heap;
    private final SessionPool pool;
    private final ThreadLocal<BlockState> here = new ThreadLocal<>();
    /** Outermost blocks open, per stripe of threads. */
    private final StripedCount openBlocks = new StripedCount(StripedCount.stripesFor(
            Runtime.getRuntime().availableProcessors()));
    private volatile int maxTries = 100;

    Blocks(Heap heap, SessionPool pool) {
        this.heap = heap;
        this.pool = pool;
    }

    /** The calling thread's open block, or null (cheap while no thread of
     * its stripe has one open). */
    BlockState current() {
        return openBlocks.none() ? null : here.get();
    }

    int maxTries() {
        return maxTries;
    }

    void maxTries(int n) {
        if (n < 1 || n > 1_000_000)
            throw new IllegalArgumentException("maxTries must be 1..1000000, not " + n);
        maxTries = n;
    }

    /** Heap.close(): roll back the block the closing thread has open. */
    void rollbackHere() {
        BlockState b = here.get();
        if (b != null && b.depth > 0)
            rollbackAll(b);
    }

    /** A new outermost block, or one more level of this thread's. */
    Block begin() {
        BlockState b = current();
        if (b != null) {
            Session s = heap.acquire(b);
            int rc = s.begin();
            if (rc != 0)
                throw Errors.of(rc, "begin");
            return new Block(this, b, ++b.depth);
        }
        Session s = heap.acquire(null);
        int rc = s.begin();
        if (rc != 0) {
            UniheapException e = Errors.of(rc, "begin");
            pool.giveBack(s);
            throw e;
        }
        b = start(s);
        return new Block(this, b, 1);
    }

    private BlockState start(Session s) {
        BlockState b = new BlockState(s);
        b.depth = 1;
        s.wrote = false;
        here.set(b);
        openBlocks.add(1);
        return b;
    }

    /* The block is over: the thread has none open. */
    private void leave(BlockState b) {
        b.depth = 0;
        here.remove();
        openBlocks.add(-1);
    }

    private void finish(BlockState b) {
        leave(b);
        pool.giveBack(b.session);
    }

    /** End one level: commit it (commit true) or abandon it. */
    void endLevel(BlockState b, boolean commit) {
        Session s = b.session;
        if (b.depth > 1) {
            if (!commit)
                b.rollbackOnly = true;
            int rc = s.commit(true);   // leaves one level; a doomed block stays doomed
            b.depth--;
            if (commit && rc != 0)
                throw Errors.of(rc, "commit");
            return;
        }
        UniheapException err = null;
        if (!commit) {
            s.abort();
        } else if (heap.isClosed()) {
            s.abort();
            err = new HeapClosedException("the heap was closed while this block ran: rolled back");
        } else if (b.rollbackOnly) {
            s.abort();
            err = new UniheapException("commit(): rolled back, because a nested block ended "
                    + "without commit()");
        } else {
            int rc = s.commit(!s.wrote);
            if (rc != 0)
                err = Errors.of(rc, "commit");
        }
        finish(b);
        if (err != null)
            throw err;
    }

    void rollbackAll(BlockState b) {
        b.session.abort();
        finish(b);
    }

    /** Heap.atomic(Supplier): body in a block, run again after a lost
     * conflict, up to maxTries times; just body inside a block. A block
     * that found the heap full runs again after {@link Pins#reclaim}, at
     * most RECLAIMS times: the objects of proxies the JVM has not collected
     * yet may be what fills it. */
    <T> T atomic(Supplier<T> body) {
        if (current() != null)
            return body.get();
        Session s = heap.acquire(null);
        int reclaims = 0;
        try {
            for (int tries = 0;; tries++) {   // bound: maxTries, and RECLAIMS more
                if (tries > 0)
                    s.retryWait(tries);   // may sleep up to 10 ms: an ordinary downcall
                T[] out;
                try {
                    out = runOnce(s, body, tries + 1 >= maxTries);
                } catch (HeapFullException e) {
                    if (reclaims++ == Pins.RECLAIMS)
                        throw e;
                    Pins.reclaim(heap);
                    tries--;   // not a lost conflict
                    continue;
                }
                if (out != null)
                    return out[0];
            }
        } finally {
            pool.giveBack(s);
        }
    }

    /* One try: {result} once committed, null after a lost conflict that
     * may be retried. The session stays borrowed across tries. */
    @SuppressWarnings("unchecked")
    private <T> T[] runOnce(Session s, Supplier<T> body, boolean last) {
        if (heap.isClosed())
            throw heap.closedError();
        int rc = s.begin();
        if (rc != 0)
            throw Errors.of(rc, "begin");
        BlockState b = start(s);
        boolean open = true;
        try {
            T r = body.get();
            if (b.rollbackOnly)
                throw new UniheapException("atomic(): rolled back, because a nested block ended "
                        + "without commit()");
            if (heap.isClosed())
                throw new HeapClosedException("the heap was closed while this block ran: rolled back");
            rc = s.commit(!s.wrote);
            open = false;    // committed, or rolled back by the failed commit
            if (rc == 0)
                return (T[]) new Object[] {r};
            UniheapException e = Errors.of(rc, "atomic(): commit");
            if (rc != Errors.ECONFLICT || last)
                throw giveUp(e, last);
            return null;
        } catch (ConflictException e) {
            if (open) {
                s.abort();
                open = false;
            }
            if (last)
                throw giveUp(e, true);
            return null;
        } finally {
            if (open)
                s.abort();
            leave(b);
        }
    }

    private UniheapException giveUp(UniheapException e, boolean last) {
        if (!last || !(e instanceof ConflictException))
            return e;
        return new ConflictException(Errors.ECONFLICT, "atomic(): gave up after " + maxTries
                + " tries lost conflicts (raise heap.maxTries() or make the block smaller); last: "
                + e.getMessage());
    }
}
