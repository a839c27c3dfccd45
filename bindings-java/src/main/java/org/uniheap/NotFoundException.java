package org.uniheap;

/**
 * No such root, class or field.
 */
public class NotFoundException extends UniheapException {
    private static final long serialVersionUID = 1L;

    /** With libuniheap's code (or 0) and message. */
    public NotFoundException(int code, String message) {
        super(code, message);
    }

    /** Found by the binding itself. */
    public NotFoundException(String message) {
        super(Errors.ENOTFOUND, message);
    }
}
