package org.uniheap;

/**
 * One level of a failure-atomic block, from {@link Heap#begin()}. Commit it
 * with {@link #commit()}; closing it without a commit rolls the whole block
 * back. Use it in try-with-resources:
 *
 * {@snippet :
 * try (Block b = heap.begin()) {
 *     from.balance(from.balance() - 10);
 *     to.balance(to.balance() + 10);
 *     b.commit();
 * }
 * }
 *
 * <p>Blocks nest by joining the outermost one (uniheap.h): an inner
 * {@code commit()} only ends its level, and the writes become durable and
 * visible when the outermost level commits. An inner level closed without
 * a commit dooms the whole block: the outermost {@code commit()} then rolls
 * it back and throws. A block that lost a conflict ({@link ConflictException})
 * has been rolled back; every later operation in it throws the same until
 * the outermost level is closed. A Block belongs to the thread that began it.
 */
public final class Block implements AutoCloseable {
    private final Blocks blocks;
    private final BlockState state;
    private final int level;
    private boolean done;

    Block(Blocks blocks, BlockState state, int level) {
        this.blocks = blocks;
        this.state = state;
        this.level = level;
    }

    /**
     * End this level. For the outermost level: make the whole block durable
     * and visible to other sessions.
     * @throws ConflictException if the block lost a conflict (rolled back)
     * @throws UniheapException if a nested level ended without commit (rolled back)
     * @throws IllegalStateException if this level already ended, an inner
     *         level is still open, or another thread calls it
     */
    public void commit() {
        check("commit()");
        if (state.depth != level)
            throw new IllegalStateException("commit(): a nested block (level " + state.depth
                    + ") is still open; commit or close it first");
        done = true;
        blocks.endLevel(state, true);
    }

    /** Roll the whole block back unless this level was committed. Idempotent. */
    @Override
    public void close() {
        if (done || state.depth == 0)
            return;
        check("close()");
        done = true;
        if (state.depth > level)
            blocks.rollbackAll(state);   // closed out of order: undo everything
        else
            blocks.endLevel(state, false);
    }

    /** True until this level was committed or closed. */
    public boolean isOpen() {
        return !done && state.depth >= level;
    }

    private void check(String what) {
        if (Thread.currentThread() != state.thread)
            throw new IllegalStateException(what + ": a block belongs to the thread that began it ("
                    + state.thread + ")");
        if (done || state.depth < level)
            throw new IllegalStateException(what + ": this block level has already ended");
    }
}
