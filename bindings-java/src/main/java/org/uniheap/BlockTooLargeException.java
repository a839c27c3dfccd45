package org.uniheap;

/**
 * libuniheap's UH_ELOGFULL, kept for compatibility: a block's redo log now
 * grows as the block needs, and a block is bounded by the heap's free space
 * ({@link HeapFullException}, the block rolled back).
 */
public class BlockTooLargeException extends UniheapException {
    private static final long serialVersionUID = 1L;

    /** With libuniheap's code (or 0) and message. */
    public BlockTooLargeException(int code, String message) {
        super(code, message);
    }

    /** Found by the binding itself. */
    public BlockTooLargeException(String message) {
        super(Errors.ELOGFULL, message);
    }
}
