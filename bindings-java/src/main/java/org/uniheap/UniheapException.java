package org.uniheap;

/**
 * Base of every exception uniheap throws. Unchecked, like the exceptions of
 * {@code java.util}. When libuniheap reported the error, {@link #code()} is its
 * {@code UH_E*} code (negative) and the message is libuniheap's own, prefixed
 * with what the binding was doing; errors found by the binding itself have
 * code 0.
 */
public class UniheapException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int code;

    /** An error found by the binding itself (code 0). */
    public UniheapException(String message) {
        this(0, message, null);
    }

    /** An error found by the binding itself (code 0), with its cause. */
    public UniheapException(String message, Throwable cause) {
        this(0, message, cause);
    }

    /** An error with libuniheap's code. */
    public UniheapException(int code, String message) {
        this(code, message, null);
    }

    UniheapException(int code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    /** libuniheap's error code ({@code UH_E*}, negative), or 0. */
    public int code() {
        return code;
    }

    /** The name of {@link #code()}, e.g. {@code "UH_ECONFLICT"}; "" for 0. */
    public String codeName() {
        return Errors.codeName(code);
    }
}
