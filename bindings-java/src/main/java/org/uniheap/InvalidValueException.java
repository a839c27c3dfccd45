package org.uniheap;

/**
 * A bad argument: a malformed name, a key too long, a string that is not UTF-8, an
 * object of another heap.
 */
public class InvalidValueException extends UniheapException {
    private static final long serialVersionUID = 1L;

    /** With libuniheap's code (or 0) and message. */
    public InvalidValueException(int code, String message) {
        super(code, message);
    }

    /** Found by the binding itself. */
    public InvalidValueException(String message) {
        super(Errors.EINVAL, message);
    }
}
