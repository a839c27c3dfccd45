package org.uniheap;

/**
 * The heap is out of space.
 */
public class HeapFullException extends UniheapException {
    private static final long serialVersionUID = 1L;

    /** With libuniheap's code (or 0) and message. */
    public HeapFullException(int code, String message) {
        super(code, message);
    }

    /** Found by the binding itself. */
    public HeapFullException(String message) {
        super(Errors.ENOSPC, message);
    }
}
