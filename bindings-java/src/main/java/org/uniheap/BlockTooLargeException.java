package org.uniheap;

/**
 * A block outgrew its session's redo log (1 MiB by default,
 * {@code heapd --log-size}): split it into smaller blocks.
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
