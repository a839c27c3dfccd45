package org.uniheap;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongConsumer;

/**
 * The subscription {@link Heap#onChange} returns: a chain of
 * {@link Waits#changed} futures, each started (from the wait thread that
 * completed the one before) with the token the last one returned, so that
 * a change committed while a callback runs is not lost: it wakes the next
 * wait at once. Several changes between two wakes give one callback, with
 * the latest token.
 *
 * <p>Invariant: once {@code closed} is set no callback starts and no wait
 * begins; the wait in progress is cancelled (uh_wait_cancel). The chain
 * also ends quietly when the object is freed or the heap closes.
 */
final class ChangeListener implements AutoCloseable {
    private final Waits waits;
    private final long obj;
    /* The proxy subscribed to (or Heap.ROOTS): its pin keeps the object
     * from the online garbage collector while the subscription runs. */
    @SuppressWarnings("unused")
    private final Object proxy;
    private final Executor executor;
    private final LongConsumer callback;
    private volatile boolean closed;
    private volatile CompletableFuture<Long> pending;

    ChangeListener(Waits waits, long obj, Object proxy, Executor executor, LongConsumer callback) {
        this.waits = waits;
        this.obj = obj;
        this.proxy = proxy;
        this.executor = executor;
        this.callback = callback;
    }

    /** Wait for the first change after token since. */
    void start(long since) {
        next(since);
    }

    private void next(long since) {
        if (closed)
            return;
        CompletableFuture<Long> f;
        try {
            f = waits.changed(new Waits.Key(obj, since));
        } catch (UniheapException e) {   // the heap closed
            return;
        }
        pending = f;
        if (closed) {   // close() may have missed f
            f.cancel(false);
            return;
        }
        f.whenComplete((tok, err) -> {
            if (err != null || closed)
                return;
            try {
                executor.execute(() -> {
                    if (!closed)
                        callback.accept(tok);
                });
            } catch (RejectedExecutionException e) {
                closed = true;   // the executor shut down: nobody to call
                return;
            }
            next(tok);
        });
    }

    /** Stop: no callback starts after this returns (one running finishes). */
    @Override
    public void close() {
        closed = true;
        CompletableFuture<Long> f = pending;
        if (f != null)
            f.cancel(false);
    }
}
