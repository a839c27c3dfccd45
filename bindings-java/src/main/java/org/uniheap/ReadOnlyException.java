package org.uniheap;

/**
 * A write on a heap connected with {@link Heap.Option#READ_ONLY}.
 */
public class ReadOnlyException extends UniheapException {
    private static final long serialVersionUID = 1L;

    /** With libuniheap's code (or 0) and message. */
    public ReadOnlyException(int code, String message) {
        super(code, message);
    }

    /** Found by the binding itself. */
    public ReadOnlyException(String message) {
        super(Errors.EREADONLY, message);
    }
}
