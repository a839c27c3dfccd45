package org.uniheap;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One libuniheap session ({@code uh_heap *}) and its scratch memory: the
 * out-parameters, key and value structs and small buffers of its calls.
 *
 * <p>Used by one thread at a time: a thread borrows it from the heap's
 * {@link SessionPool} for a block or a single operation. Every method
 * returns libuniheap's code; the caller turns a failure into an exception
 * at once (uh_errmsg() is thread-local).
 */
final class Session {
    /* Scratch layout (bytes). */
    static final long OUT = 0;        // uh_value or a u64/u32 out-parameter
    static final long OUT2 = 16;      // a second uh_value (old values)
    static final long KEY = 32;       // uh_key {u32 kind, u32 flags, ptr data, size_t len, i64}
    static final long ITER = 64;      // uh_iter (64 bytes)
    static final long ROOT = 128;     // uh_root_next: cursor, name, name_len, value
    static final long CINFO = 160;    // uh_class_info (24 bytes)
    static final long FINFO = 184;    // uh_field_info (24 bytes)
    static final long PIN = 208;      // uh_pin's id (u32): apart from OUT, which a
                                      // call's caller may still read
    static final long INFO = 512;     // uh_info (4216 bytes)
    static final long KEYBUF = 4736;  // bytes of a string or bytes key
    static final int KEYBUF_CAP = 4104;   // > UH_KEY_MAX_LEN: too long is libuniheap's to say
    static final long DATA = 12288;   // small strings and bytes, names
    static final int DATA_CAP = 12288;
    /* uh_smap_next_n's uh_key and uh_value arrays, inside DATA (no call
     * uses both at once). */
    static final int BATCH_MAX = 32;  // > a sorted map leaf's keys (a call reads one leaf)
    static final long BATCH_KEYS = DATA;
    static final long BATCH_VALS = DATA + 32L * BATCH_MAX;
    private static final long SCRATCH = DATA + DATA_CAP;

    final long h;
    /** This session's pins, as the Cleaner's unpins reach them. */
    final Pins pins;
    final MemorySegment scratch;
    final long at;     // scratch address
    /** Where uh_smap_next_records copies a scan's records (ScanRecords):
     * made at the session's first such scan. */
    private MemorySegment records;
    static final int RECORDS_CAP = 49152;   // 32 YCSB records of 1 KiB and more
    /** Outermost block open on this session wrote something (a commit that
     * may persist); see {@link Native#COMMIT_QUICK}. */
    boolean wrote;
    /** A uh_key's four words (Keys.put), written to the scratch at once. */
    final long[] keyWords = new long[4];
    /** Bytes staged for one copy into the scratch (MapOps.putRecord):
     * grown up to DATA_CAP, used by the borrowing thread only. */
    private byte[] staging = new byte[2048];

    Session(long h) {
        this.h = h;
        this.pins = new Pins(h);
        this.scratch = Arena.ofAuto().allocate(SCRATCH, 16);
        this.at = scratch.address();
    }

    /** The staging array, of at least n bytes (n <= DATA_CAP). */
    byte[] staging(int n) {
        if (staging.length < n)
            staging = new byte[Math.max(n, Math.min(2 * staging.length, DATA_CAP))];
        return staging;
    }

    MemorySegment records() {
        if (records == null)
            records = Arena.ofAuto().allocate(RECORDS_CAP, 16);
        return records;
    }

    // ---- opening and closing ----

    /** uh_connect_timeout (timeoutMs: UH_CONNECT_DEFAULT, -1, for
     * libuniheap's default); the new session or an exception. */
    static Session connect(String socket, int flags, int timeoutMs) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            long sock = socket == null ? 0 : a.allocateFrom(socket).address();
            int rc = (int) Native.CONNECT.invokeExact(sock, flags, timeoutMs, out.address());
            if (rc != 0)
                throw Errors.of(rc, "connect to heapd at " + (socket == null ? "the default socket" : socket));
            return new Session(out.get(JAVA_LONG, 0));
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /** uh_session_open: one more session over this one's mapping. Safe
     * while another thread uses this session: it reads only the shared
     * mapping's fixed facts, and its out-parameter is not in our scratch. */
    Session open(int flags) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            int rc = (int) Native.SESSION_OPEN.invokeExact(h, flags, out.address());
            if (rc != 0)
                throw Errors.of(rc, "open one more session");
            return new Session(out.get(JAVA_LONG, 0));
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /** uh_disconnect; an open block is rolled back, the pins go with
     * the session (no unpin reaches the handle after it). Can't fail. */
    void disconnect() {
        pins.close();
        try {
            Native.DISCONNECT.invokeExact(h);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    // ---- out-parameters ----

    long outLong() {
        return scratch.get(JAVA_LONG, OUT);
    }

    int outInt() {
        return scratch.get(JAVA_INT, OUT);
    }

    double outDouble() {
        return scratch.get(JAVA_DOUBLE, OUT);
    }

    /** The type of the uh_value at off. */
    int valueType(long off) {
        return scratch.get(JAVA_INT, off);
    }

    long valueBits(long off) {
        return scratch.get(JAVA_LONG, off + 8);
    }

    /** The reserved word of the uh_value at off: where an inline value's
     * bytes lie in the object its bits name (0 for any other value). */
    int valueWhere(long off) {
        return scratch.get(JAVA_INT, off + 4);
    }

    void setValue(long off, int type, long bits) {
        scratch.set(JAVA_INT, off, type);
        scratch.set(JAVA_INT, off + 4, 0);
        scratch.set(JAVA_LONG, off + 8, bits);
    }

    // ---- calls (each returns libuniheap's code) ----

    static int call(MethodHandle mh, long h) {
        try {
            return (int) mh.invokeExact(h);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    int begin() {
        return call(Native.BEGIN, h);
    }

    int commit(boolean quick) {
        return call(quick ? Native.COMMIT_QUICK : Native.COMMIT, h);
    }

    int abort() {
        return call(Native.ABORT, h);
    }

    int retryWait(int tries) {
        try {
            return (int) Native.RETRY_WAIT.invokeExact(h, tries);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    int alloc(int classId) {
        try {
            return (int) Native.ALLOC.invokeExact(h, classId, at + OUT);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    int free(long ref) {
        try {
            return (int) Native.FREE.invokeExact(h, ref);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    int objClass(long ref) {
        try {
            return (int) Native.OBJ_CLASS.invokeExact(h, ref, at + OUT);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /** uh_pin of ref; the pin's id in PIN ({@link #pinOut()}). */
    int pin(long ref) {
        try {
            return (int) Native.PIN.invokeExact(h, ref, at + PIN);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    int pinOut() {
        return scratch.get(JAVA_INT, PIN);
    }

    int getI64(long ref, int field) {
        try {
            return (int) Native.GET_I64.invokeExact(h, ref, field, at + OUT);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /** uh_read of len bytes (a multiple of 8) at offset lo of the object
     * into dst, which holds len / 8 longs; through DATA, or a buffer of its
     * own when they do not fit there. */
    int read(long ref, int lo, long[] dst) {
        int len = dst.length * 8;
        try {
            if (len <= DATA_CAP) {
                int rc = readData(ref, lo, len);
                if (rc == 0)
                    MemorySegment.copy(scratch, JAVA_LONG, DATA, dst, 0, dst.length);
                return rc;
            }
            try (Arena a = Arena.ofConfined()) {
                MemorySegment buf = a.allocate(len, 8);
                int rc = (int) Native.READ.invokeExact(h, ref, lo, buf.address(), len);
                if (rc == 0)
                    MemorySegment.copy(buf, JAVA_LONG, 0, dst, 0, dst.length);
                return rc;
            }
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /** uh_read of len bytes (at most DATA_CAP) at offset lo of the object
     * into DATA, where they stay until the session is given back. */
    int readData(long ref, int lo, int len) {
        try {
            return (int) Native.READ.invokeExact(h, ref, lo, at + DATA, len);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    int setI64(long ref, int field, long v) {
        try {
            return (int) Native.SET_I64.invokeExact(h, ref, field, v);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    int getF64(long ref, int field) {
        try {
            return (int) Native.GET_F64.invokeExact(h, ref, field, at + OUT);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    int setF64(long ref, int field, double v) {
        try {
            return (int) Native.SET_F64.invokeExact(h, ref, field, v);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    int getRef(long ref, int field) {
        try {
            return (int) Native.GET_REF.invokeExact(h, ref, field, at + OUT);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    int setRef(long ref, int field, long v) {
        try {
            return (int) Native.SET_REF.invokeExact(h, ref, field, v);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /** An inline field's value (uh_get_inline) of at most cap bytes, through
     * DATA or a buffer of its own; rc[0] the return code (null value
     * unless 0). */
    byte[] getInline(long ref, int field, int cap, int[] rc) {
        try {
            if (cap <= DATA_CAP) {
                rc[0] = (int) Native.GET_INLINE.invokeExact(h, ref, field, at + DATA, (long) cap, at + OUT);
                return rc[0] == 0 ? scratch.asSlice(DATA, outLong()).toArray(JAVA_BYTE) : null;
            }
            try (Arena a = Arena.ofConfined()) {
                MemorySegment buf = a.allocate(cap);
                rc[0] = (int) Native.GET_INLINE.invokeExact(h, ref, field, buf.address(), (long) cap, at + OUT);
                return rc[0] == 0 ? buf.asSlice(0, outLong()).toArray(JAVA_BYTE) : null;
            }
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /** uh_set_inline of data into an inline field. */
    int setInline(long ref, int field, byte[] data) {
        long n = data.length;
        try {
            if (n <= DATA_CAP) {
                MemorySegment.copy(data, 0, scratch, JAVA_BYTE, DATA, data.length);
                return (int) Native.SET_INLINE.invokeExact(h, ref, field, at + DATA, n);
            }
            try (Arena a = Arena.ofConfined()) {
                MemorySegment buf = a.allocate(n);
                MemorySegment.copy(data, 0, buf, JAVA_BYTE, 0, data.length);
                return (int) Native.SET_INLINE.invokeExact(h, ref, field, buf.address(), n);
            }
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /** uh_string_new / uh_bytes_new of data; the new reference in OUT. */
    int newBlob(boolean string, byte[] data) {
        long n = data.length;
        try {
            if (n <= DATA_CAP) {
                MemorySegment.copy(data, 0, scratch, JAVA_BYTE, DATA, data.length);
                return string ? (int) Native.STRING_NEW.invokeExact(h, at + DATA, n, at + OUT)
                        : (int) Native.BYTES_NEW.invokeExact(h, at + DATA, n, at + OUT);
            }
            try (Arena a = Arena.ofConfined()) {
                MemorySegment buf = a.allocate(n);
                MemorySegment.copy(data, 0, buf, JAVA_BYTE, 0, data.length);
                return string ? (int) Native.STRING_NEW.invokeExact(h, buf.address(), n, at + OUT)
                        : (int) Native.BYTES_NEW.invokeExact(h, buf.address(), n, at + OUT);
            }
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /** uh_map_put_bytes of data as a string or bytes value under the key
     * in KEY (the UTF-8 of a string: libuniheap checks it). */
    int mapPutBytes(long map, boolean string, byte[] data, int flags) {
        int type = string ? Values.STRING : Values.BYTES;
        long n = data.length;
        try {
            if (n <= DATA_CAP) {
                MemorySegment.copy(data, 0, scratch, JAVA_BYTE, DATA, data.length);
                return (int) Native.MAP_PUT_BYTES.invokeExact(h, map, at + KEY, type, at + DATA, n, flags);
            }
            try (Arena a = Arena.ofConfined()) {
                MemorySegment buf = a.allocate(n);
                MemorySegment.copy(data, 0, buf, JAVA_BYTE, 0, data.length);
                return (int) Native.MAP_PUT_BYTES.invokeExact(h, map, at + KEY, type, buf.address(), n, flags);
            }
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /** uh_change_token of obj (a reference, or 1 for the roots) into OUT. */
    int changeToken(long obj) {
        try {
            return (int) Native.CHANGE_TOKEN.invokeExact(h, obj, at + OUT);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /** uh_wait: sleep until obj's token differs from since, at most
     * timeoutNs; the token then in OUT. Blocks this session (Waits runs it
     * on a wait session, never on one of the pool's). */
    int waitChange(long obj, long since, long timeoutNs) {
        try {
            return (int) Native.WAIT.invokeExact(h, obj, since, timeoutNs, at + OUT);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /** uh_wait_cancel: end the wait in progress on this session at once;
     * the one call made from another thread than the session's user. */
    void waitCancel() {
        try {
            Native.WAIT_CANCEL.invokeExact(h);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    /** Put a NUL-terminated UTF-8 name into DATA; its address, or 0 if it
     * does not fit (the caller reports the name as too long). */
    long cName(byte[] utf8) {
        if (utf8.length >= DATA_CAP)
            return 0;
        MemorySegment.copy(utf8, 0, scratch, JAVA_BYTE, DATA, utf8.length);
        scratch.set(JAVA_BYTE, DATA + utf8.length, (byte) 0);
        return at + DATA;
    }
}
