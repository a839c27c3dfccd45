package org.uniheap;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The change waits of one {@link Heap} (uniheap.h, "Waiting for changes"):
 * its wait sessions, the platform threads that sleep in uh_wait on them,
 * and the waits in progress. Heap's public wait methods delegate here.
 *
 * <p>A wait blocks its session, so no wait runs on a session of the heap's
 * {@link SessionPool}: wait sessions are opened from the heap's first
 * session on demand, kept (a few) between waits, and closed with the heap.
 * A wait never runs on a virtual thread (it would pin its carrier for the
 * whole sleep): a platform thread calling {@code await} waits itself; a
 * virtual one, and every {@code changed} future, share a native wait run by
 * a daemon platform thread of this class's pool: one {@link WaitCall} per
 * (object, token), however many callers wait for it, so a thousand virtual
 * threads waiting for one object hold one session and one thread.
 *
 * <p>Invariants: {@code shared} maps a key to its running, uncancelled
 * call; {@code active} holds every call between its start and its end;
 * once {@code closed} is set (under the lock) no call starts and no session
 * opens, and close() cancels every active call.
 */
final class Waits {
    /** Wait sessions kept open between waits; more are closed on return. */
    private static final int IDLE_MAX = 4;
    /** How long close() waits for the waits it cancelled to return. */
    private static final long CLOSE_WAIT_NS = 2_000_000_000L;

    /** What a wait is for: an object (or 1, the roots) and the token it
     * compares with. */
    record Key(long obj, long since) {
        String what() {
            return obj == 1 ? "the roots" : "the object at offset " + (obj & ProxyBase.OFFSET_MASK);
        }
    }

    private final Session first;
    private final int flags;
    private final ThreadPoolExecutor threads;
    private final ArrayDeque<Session> idle = new ArrayDeque<>();   // guarded by this
    private final Map<Key, WaitCall> shared = new HashMap<>();     // guarded by this
    private final Set<WaitCall> active = new HashSet<>();          // guarded by this
    private boolean closed;                                        // guarded by this

    Waits(Session first, int flags) {
        this.first = first;
        this.flags = flags;
        this.threads = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS,
                new SynchronousQueue<>(), Thread.ofPlatform().daemon().name("uniheap-wait-", 0).factory());
    }

    // ---- the waits ----

    /** Block until obj's token differs from since, or timeoutNs passes
     * (Long.MAX_VALUE: never). Not inside a block (Heap checks). */
    OptionalLong await(long obj, long since, long timeoutNs) {
        Key key = new Key(obj, since);
        if (Thread.currentThread().isVirtual())
            return awaitShared(key, timeoutNs);
        WaitCall c = new WaitCall(this, key, deadline(timeoutNs));
        start(c);
        c.run();
        return result(c.done);
    }

    /* A virtual thread parks on the shared call's future: it unmounts, and
     * its carrier runs other virtual threads meanwhile. */
    private OptionalLong awaitShared(Key key, long timeoutNs) {
        CompletableFuture<Long> f = changed(key);
        try {
            Long tok = timeoutNs == Long.MAX_VALUE ? f.get() : f.get(timeoutNs, TimeUnit.NANOSECONDS);
            return OptionalLong.of(tok);
        } catch (TimeoutException e) {
            if (f.cancel(false))
                return OptionalLong.empty();
            return result(f);   // completed as the time ran out
        } catch (InterruptedException e) {
            f.cancel(false);
            Thread.currentThread().interrupt();
            throw new UniheapException("interrupted while waiting for a change of " + key.what(), e);
        } catch (ExecutionException e) {
            throw unwrap(e);
        }
    }

    /** A future of the next token other than key.since: shares the running
     * call for key, or starts one. Cancelling it ends the call when no
     * other caller waits for it. */
    CompletableFuture<Long> changed(Key key) {
        WaitCall c;
        boolean fresh = false;
        synchronized (this) {
            c = shared.get(key);
            if (c == null || c.cancelled) {
                c = new WaitCall(this, key, Long.MAX_VALUE);
                startLocked(c);
                shared.put(key, c);
                fresh = true;
            }
            c.users++;
        }
        CompletableFuture<Long> mine = new CompletableFuture<>();
        WaitCall call = c;
        mine.whenComplete((v, e) -> release(call));
        c.done.whenComplete((v, e) -> {
            if (e != null)
                mine.completeExceptionally(e instanceof CompletionException && e.getCause() != null
                        ? e.getCause() : e);
            else
                mine.complete(v);
        });
        if (fresh) {
            try {
                threads.execute(call::run);
            } catch (RuntimeException e) {   // closed meanwhile, or out of threads
                finished(call);
                call.done.completeExceptionally(isClosed() ? cancelledError() : e);
            }
        }
        return mine;
    }

    /* A caller of c is done (answered, cancelled, timed out): the last one
     * cancels c if it still runs. */
    private void release(WaitCall c) {
        synchronized (this) {
            if (--c.users > 0 || c.done.isDone())
                return;
            c.cancelled = true;
            shared.remove(c.key, c);
        }
        c.cancel();
    }

    private static long deadline(long timeoutNs) {
        if (timeoutNs == Long.MAX_VALUE)
            return Long.MAX_VALUE;
        long d = System.nanoTime() + timeoutNs;
        return d < 0 ? Long.MAX_VALUE - 1 : d;   // saturate far timeouts
    }

    private static OptionalLong result(CompletableFuture<Long> f) {
        try {
            Long tok = f.get();
            return tok == null ? OptionalLong.empty() : OptionalLong.of(tok);
        } catch (ExecutionException e) {
            throw unwrap(e);
        } catch (InterruptedException e) {   // f is done: get() does not wait
            Thread.currentThread().interrupt();
            throw new UniheapException("interrupted", e);
        }
    }

    private static RuntimeException unwrap(ExecutionException e) {
        Throwable c = e.getCause();
        if (c instanceof RuntimeException r)
            return r;
        if (c instanceof Error err)
            throw err;
        return new UniheapException("wait failed: " + c, c);
    }

    private synchronized void start(WaitCall c) {
        startLocked(c);
    }

    private void startLocked(WaitCall c) {
        if (closed)
            throw new HeapClosedException("the heap is closed");
        active.add(c);
    }

    /** c has returned (WaitCall.run's end). */
    synchronized void finished(WaitCall c) {
        active.remove(c);
        shared.remove(c.key, c);
        if (active.isEmpty())
            notifyAll();
    }

    synchronized boolean isClosed() {
        return closed;
    }

    /** The error of a call cancelled before it saw a change. */
    synchronized UniheapException cancelledError() {
        return closed ? new HeapClosedException("the heap was closed during the wait")
                : new UniheapException("the wait was cancelled", new CancellationException());
    }

    // ---- wait sessions ----

    /** An idle wait session, or a new one (uh_session_open). */
    Session takeSession() {
        synchronized (this) {
            if (closed)
                throw new HeapClosedException("the heap is closed");
            Session s = idle.poll();
            if (s != null)
                return s;
            // Under the lock: close() cannot disconnect first meanwhile.
            return first.open(flags);
        }
    }

    void giveBackSession(Session s) {
        synchronized (this) {
            if (!closed && idle.size() < IDLE_MAX) {
                idle.push(s);
                return;
            }
        }
        s.disconnect();
    }

    // ---- closing ----

    /** Cancel every wait, wait (a bounded time) for them to return, close
     * the idle wait sessions. A wait that returns later closes its own. */
    void close() {
        List<WaitCall> running;
        List<Session> sessions;
        synchronized (this) {
            if (closed)
                return;
            closed = true;
            running = new ArrayList<>(active);
            sessions = new ArrayList<>(idle);
            idle.clear();
        }
        for (WaitCall c : running)
            c.cancel();
        awaitQuiet();
        threads.shutdown();
        for (Session s : sessions)
            s.disconnect();
    }

    private synchronized void awaitQuiet() {
        long end = System.nanoTime() + CLOSE_WAIT_NS;
        boolean interrupted = false;
        while (!active.isEmpty()) {   // bound: CLOSE_WAIT_NS
            long left = end - System.nanoTime();
            if (left <= 0)
                break;
            try {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted)
            Thread.currentThread().interrupt();
    }
}
