package org.uniheap;

/**
 * A value of the wrong type for a field, element or key, or a reference to an
 * object of the wrong class.
 */
public class TypeMismatchException extends UniheapException {
    private static final long serialVersionUID = 1L;

    /** With libuniheap's code (or 0) and message. */
    public TypeMismatchException(int code, String message) {
        super(code, message);
    }

    /** Found by the binding itself. */
    public TypeMismatchException(String message) {
        super(Errors.ETYPE, message);
    }
}
