package org.uniheap;

import java.util.concurrent.CompletableFuture;

/**
 * One native wait: uh_wait on a wait session of {@link Waits}, for one
 * object (or the roots) and one token, on the platform thread that calls
 * {@link #run()}. Its result is {@link #done}: the new token, null when
 * the deadline passed first, or an exception (the object was freed, heapd
 * is gone, the heap closed, the wait was cancelled).
 *
 * <p>Cancelling: {@link #cancel()} sets {@code cancelled}, then calls
 * uh_wait_cancel on the session while the wait holds one. uh_wait_cancel
 * misses a wait that begins after it, and the waiting thread may have
 * looked at {@code cancelled} just before it was set: so the thread waits
 * in slices of at most {@link #SLICE_NS} and looks again after each. A
 * slice that ends only costs a new registration; the token stays, so no
 * change is lost between slices.
 *
 * <p>Invariant: {@code session} is non-null exactly while the thread may be
 * in uh_wait on it, and is cleared (under this object's lock) before the
 * session goes back to the pool, so a cancel never reaches a closed
 * session or another caller's wait.
 */
final class WaitCall {
    /** Longest uh_wait between two looks at {@code cancelled}: 200 ms, or
     * libuniheap's knob $UH_WAIT_SLICE_MS, which tests lengthen so that a
     * lost wake-up shows as a hang rather than a late wake at a slice's end. */
    static final long SLICE_NS = sliceNs();

    final Waits owner;
    final Waits.Key key;
    /** System.nanoTime() when the wait gives up; Long.MAX_VALUE: never. */
    private final long deadline;
    final CompletableFuture<Long> done = new CompletableFuture<>();
    /** Callers sharing this wait (guarded by owner). */
    int users;
    volatile boolean cancelled;
    private Session session;   // guarded by this

    WaitCall(Waits owner, Waits.Key key, long deadline) {
        this.owner = owner;
        this.key = key;
        this.deadline = deadline;
    }

    private static long sliceNs() {
        try {
            long ms = Long.parseLong(System.getenv().getOrDefault("UH_WAIT_SLICE_MS", "0"));
            if (ms > 0)
                return Math.min(ms, Long.MAX_VALUE / 1_000_000L) * 1_000_000L;
        } catch (NumberFormatException e) {
            // not a number: the default, as libuniheap does
        }
        return 200_000_000L;
    }

    /** Wait on the calling thread (a platform thread) until done. */
    void run() {
        Session s;
        try {
            s = owner.takeSession();
        } catch (RuntimeException e) {
            owner.finished(this);
            done.completeExceptionally(e);
            return;
        }
        synchronized (this) {
            session = s;
        }
        try {
            loop(s);
        } catch (RuntimeException | Error e) {
            done.completeExceptionally(e);
        } finally {
            synchronized (this) {
                session = null;
            }
            owner.giveBackSession(s);
            owner.finished(this);
            if (!done.isDone())
                done.completeExceptionally(owner.cancelledError());
        }
    }

    private void loop(Session s) {
        for (;;) {   // bound: ends at a change, an error, the deadline or a cancel
            if (cancelled)
                return;
            long left = deadline == Long.MAX_VALUE ? SLICE_NS : deadline - System.nanoTime();
            if (left <= 0) {
                done.complete(null);
                return;
            }
            int rc = s.waitChange(key.obj(), key.since(), Math.min(left, SLICE_NS));
            if (rc == 1) {
                done.complete(s.outLong());
                return;
            }
            if (rc < 0) {
                done.completeExceptionally(Errors.of(rc, "wait for a change of " + key.what()));
                return;
            }
        }
    }

    /** End the wait soon: at once, or at the end of the current slice. */
    void cancel() {
        cancelled = true;
        synchronized (this) {
            if (session != null)
                session.waitCancel();
        }
    }
}
