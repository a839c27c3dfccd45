package org.uniheap;

/**
 * A number that does not fit its field or element type, or an index out of range.
 */
public class ValueRangeException extends UniheapException {
    private static final long serialVersionUID = 1L;

    /** With libuniheap's code (or 0) and message. */
    public ValueRangeException(int code, String message) {
        super(code, message);
    }

    /** Found by the binding itself. */
    public ValueRangeException(String message) {
        super(Errors.ERANGE, message);
    }
}
