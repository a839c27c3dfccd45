package org.uniheap;

/**
 * A block lost a conflict with another session (an object it wrote stayed locked,
 * or one it read changed meanwhile). The block has been rolled back; every later
 * operation in it throws this again until the outermost level ends. Re-run it, or
 * use {@link Heap#atomic(Runnable)}, which does.
 */
public class ConflictException extends UniheapException {
    private static final long serialVersionUID = 1L;

    /** With libuniheap's code (or 0) and message. */
    public ConflictException(int code, String message) {
        super(code, message);
    }

    /** Found by the binding itself. */
    public ConflictException(String message) {
        super(Errors.ECONFLICT, message);
    }
}
