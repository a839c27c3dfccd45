package org.uniheap;

/**
 * A class name is registered in the heap with another layout, or declared twice
 * with different layouts; the message names the first differing field.
 */
public class ClassMismatchException extends UniheapException {
    private static final long serialVersionUID = 1L;

    /** With libuniheap's code (or 0) and message. */
    public ClassMismatchException(int code, String message) {
        super(code, message);
    }

    /** Found by the binding itself. */
    public ClassMismatchException(String message) {
        super(Errors.ECLASSMISMATCH, message);
    }
}
