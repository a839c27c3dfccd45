package org.uniheap;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * Operations made of several libuniheap calls that must be one atomic step
 * (allocate a string and store it, read the old value and replace it): a
 * block of their own outside a block, a nested level inside one.
 */
final class Steps {
    private Steps() {
    }

    /** Fill steps per block when a new collection is filled. */
    static final int CHUNK = 256;

    /**
     * Run body (libuniheap calls on s, returning the first failure's code
     * at once) as one step. On failure the step is rolled back when it is
     * the outermost level; inside a block, the failure leaves the block's
     * fate to its owner (a conflict dooms it anyway).
     */
    static void run(Session s, boolean outer, String what, IntSupplier body) {
        s.wrote = true;
        int rc = s.begin();
        if (rc != 0)
            throw Errors.of(rc, what);
        try {
            rc = body.getAsInt();
        } catch (RuntimeException | Error e) {
            end(s, outer);
            throw e;
        }
        if (rc != 0) {
            UniheapException e = Errors.of(rc, what);
            end(s, outer);
            throw e;
        }
        rc = s.commit(!outer);   // a nested level's commit is quick
        if (rc != 0)
            throw Errors.of(rc, what);
    }

    private static void end(Session s, boolean outer) {
        if (outer)
            s.abort();
        else
            s.commit(true);   // leaves our level
    }

    /** step(item) for every item, CHUNK per block (joins an open block). A
     * new collection is unreachable until published: a failure half-way
     * leaves nothing visible. */
    static <T> void fill(Heap heap, Iterable<T> items, Consumer<T> step) {
        if (heap.inBlock()) {
            for (T t : items)
                step.accept(t);
            return;
        }
        Iterator<T> it = items.iterator();
        while (it.hasNext()) {   // bound: items / CHUNK blocks
            List<T> batch = new ArrayList<>(CHUNK);
            while (it.hasNext() && batch.size() < CHUNK)
                batch.add(it.next());
            heap.atomic(() -> batch.forEach(step));
        }
    }
}
