package org.uniheap;

/**
 * The heap (or the heap of a proxy) is closed.
 */
public class HeapClosedException extends UniheapException {
    private static final long serialVersionUID = 1L;

    /** With libuniheap's code (or 0) and message. */
    public HeapClosedException(int code, String message) {
        super(code, message);
    }

    /** Found by the binding itself. */
    public HeapClosedException(String message) {
        super(0, message);
    }
}
