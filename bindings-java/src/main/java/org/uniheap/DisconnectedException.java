package org.uniheap;

/**
 * heapd is unreachable (not running, or the socket is wrong).
 */
public class DisconnectedException extends UniheapException {
    private static final long serialVersionUID = 1L;

    /** With libuniheap's code (or 0) and message. */
    public DisconnectedException(int code, String message) {
        super(code, message);
    }

    /** Found by the binding itself. */
    public DisconnectedException(String message) {
        super(Errors.EDISCONNECTED, message);
    }
}
