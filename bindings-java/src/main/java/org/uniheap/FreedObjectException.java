package org.uniheap;

/**
 * The object was freed, or the reference does not name a live object.
 */
public class FreedObjectException extends UniheapException {
    private static final long serialVersionUID = 1L;

    /** With libuniheap's code (or 0) and message. */
    public FreedObjectException(int code, String message) {
        super(code, message);
    }

    /** Found by the binding itself. */
    public FreedObjectException(String message) {
        super(Errors.EFREED, message);
    }
}
