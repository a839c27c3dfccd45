package org.uniheap;

/**
 * The block a thread has open on one heap: the session it borrowed for it
 * and the nesting depth. Confined to that thread.
 */
final class BlockState {
    final Session session;
    final Thread thread;
    /** Nesting levels open; 0 once the block ended. */
    int depth;
    /** A nested level ended without commit: the outermost one must roll back. */
    boolean rollbackOnly;

    BlockState(Session session) {
        this.session = session;
        this.thread = Thread.currentThread();
    }
}
