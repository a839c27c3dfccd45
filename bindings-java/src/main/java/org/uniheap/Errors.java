package org.uniheap;

/** libuniheap's error codes and the one place that turns them into exceptions. */
final class Errors {
    private Errors() {
    }

    static final int EINVAL = -1;
    static final int ENOMEM = -2;
    static final int ENOSPC = -3;
    static final int ENOTFOUND = -4;
    static final int ECONFLICT = -5;
    static final int ECLASSMISMATCH = -6;
    static final int EFREED = -7;
    static final int ETYPE = -8;
    static final int ERANGE = -9;
    static final int EDISCONNECTED = -10;
    static final int EPROTO = -11;
    static final int EIO = -12;
    static final int EFORK = -13;
    static final int ELOGFULL = -14;
    static final int EREADONLY = -15;
    static final int ESTATE = -16;
    static final int EUTF8 = -17;
    static final int EINTERNAL = -18;

    private static final String[] NAMES = {
        "", "UH_EINVAL", "UH_ENOMEM", "UH_ENOSPC", "UH_ENOTFOUND", "UH_ECONFLICT",
        "UH_ECLASSMISMATCH", "UH_EFREED", "UH_ETYPE", "UH_ERANGE", "UH_EDISCONNECTED",
        "UH_EPROTO", "UH_EIO", "UH_EFORK", "UH_ELOGFULL", "UH_EREADONLY", "UH_ESTATE",
        "UH_EUTF8", "UH_EINTERNAL",
    };

    static String codeName(int code) {
        return code <= 0 && -code < NAMES.length ? NAMES[-code] : "UH_E" + code;
    }

    /**
     * The exception for a failed libuniheap call. Must be the first thing
     * done after the call, on the same thread: it reads uh_errmsg(), which
     * the next libuniheap call resets. {@code what} says what the binding
     * was doing ("map put", "bank.Account.balance").
     */
    static UniheapException of(int rc, String what) {
        String detail = Native.errmsg();
        if (detail.isEmpty())
            detail = Native.strerror(rc);
        return make(rc, what == null || what.isEmpty() ? detail : what + ": " + detail);
    }

    static UniheapException make(int rc, String msg) {
        return switch (rc) {
            case ECONFLICT -> new ConflictException(rc, msg);
            case EFREED -> new FreedObjectException(rc, msg);
            case ECLASSMISMATCH -> new ClassMismatchException(rc, msg);
            case EDISCONNECTED -> new DisconnectedException(rc, msg);
            case ENOSPC -> new HeapFullException(rc, msg);
            case EREADONLY -> new ReadOnlyException(rc, msg);
            case ELOGFULL -> new BlockTooLargeException(rc, msg);
            case ETYPE -> new TypeMismatchException(rc, msg);
            case ERANGE -> new ValueRangeException(rc, msg);
            case EINVAL, EUTF8 -> new InvalidValueException(rc, msg);
            case ENOTFOUND -> new NotFoundException(rc, msg);
            default -> new UniheapException(rc, msg);
        };
    }

    /** A Throwable from MethodHandle.invokeExact: downcalls throw nothing
     * checked, so this is an Error or a RuntimeException to pass on. */
    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r)
            return r;
        if (t instanceof Error e)
            throw e;
        return new UniheapException("unexpected " + t, t);
    }
}
