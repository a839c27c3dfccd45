package org.uniheap;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The one class that makes restricted FFM calls: it loads libuniheap, binds
 * every C function once, and turns native addresses into segments.
 *
 * <p>Pointers cross as {@code long} (the C ABI passes both in one integer
 * register): no segment is built per call. A function is bound
 * {@code critical} only when it is short and can never block: it then skips
 * the thread-state transition (~2.5 ns instead of ~8.5 ns a call) but holds
 * back safepoints for its whole run. Anything that may wait for a lock held
 * by another session, sleep, persist (msync in {@code sync} durability) or
 * talk to heapd is an ordinary downcall.
 *
 * <p>Where libuniheap comes from, first found wins: the file named by
 * {@code $UNIHEAP_LIB}; {@code libuniheap.so.0} (or {@code libuniheap.so})
 * in a folder of {@code java.library.path}; the copy shipped in this jar;
 * an installed {@code libuniheap.so.0} that the system's dynamic linker
 * finds by its soname ({@code LD_LIBRARY_PATH}, {@code ldconfig}'s cache),
 * for a jar built without a copy.
 */
@SuppressWarnings("restricted")
final class Native {
    private Native() {
    }

    private static final MemoryLayout P = JAVA_LONG;  // a pointer, as long
    private static final MemoryLayout I = JAVA_INT;   // int, uint32_t, unsigned
    private static final MemoryLayout J = JAVA_LONG;  // uint64_t, int64_t, size_t, uh_off
    private static final MemoryLayout D = JAVA_DOUBLE;

    /** Why the library could not be bound (null when it was). */
    static final UniheapException LOAD_ERROR;
    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIB;
    private static final String SONAME = "libuniheap.so.0";

    static {
        SymbolLookup lib = null;
        UniheapException err = null;
        try {
            Path p = findLibrary();
            lib = p != null ? SymbolLookup.libraryLookup(p, Arena.global())
                    : SymbolLookup.libraryLookup(SONAME, Arena.global());
        } catch (IllegalCallerException e) {
            err = nativeAccessError(e);
        } catch (IllegalArgumentException | IOException e) {
            err = new UniheapException("cannot load libuniheap (looked at $UNIHEAP_LIB, "
                    + "java.library.path, this jar's copy and the system's library path): "
                    + e.getMessage()
                    + " (set UNIHEAP_LIB to the path of libuniheap.so.0, or install uniheap"
                    + " where the dynamic linker finds it)", e);
        }
        LIB = lib;
        LOAD_ERROR = err;
    }

    private static UniheapException nativeAccessError(IllegalCallerException e) {
        return new UniheapException("uniheap calls native code through the FFM API: start the JVM "
                + "with --enable-native-access=ALL-UNNAMED (or =org.uniheap when uniheap is on the "
                + "module path)", e);
    }

    private static Path findLibrary() throws IOException {
        String env = System.getenv("UNIHEAP_LIB");
        if (env != null && !env.isEmpty()) {
            Path p = Path.of(env);
            if (!Files.isRegularFile(p))
                throw new IOException("UNIHEAP_LIB names " + env + ", which is not a file");
            return p;
        }
        String lp = System.getProperty("java.library.path", "");
        for (String dir : lp.split(java.io.File.pathSeparator)) {
            if (dir.isEmpty())
                continue;
            for (String name : new String[] {"libuniheap.so.0", "libuniheap.so"}) {
                Path p = Path.of(dir, name);
                if (Files.isRegularFile(p))
                    return p;
            }
        }
        return extractShipped();
    }

    /* The jar's copy goes to a private temporary file: dlopen needs a path.
     * null when the jar has none: then the installed library is looked up
     * by its soname. */
    private static Path extractShipped() throws IOException {
        String res = "native/linux-amd64/libuniheap.so.0";
        try (InputStream in = Native.class.getResourceAsStream(res)) {
            if (in == null)
                return null;
            Path dir = Files.createTempDirectory("uniheap-");
            Path p = dir.resolve("libuniheap.so.0");
            Files.copy(in, p, StandardCopyOption.REPLACE_EXISTING);
            p.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
            return p;
        }
    }

    private static MethodHandle fn(String name, boolean critical, MemoryLayout ret,
                                   MemoryLayout... args) {
        if (LIB == null)
            return null;
        MemorySegment sym = LIB.find(name).orElseThrow(() -> new UniheapException(
                "libuniheap has no function " + name + ": the library is older than this binding"));
        FunctionDescriptor d = ret == null ? FunctionDescriptor.ofVoid(args)
                : FunctionDescriptor.of(ret, args);
        try {
            return critical ? LINKER.downcallHandle(sym, d, Linker.Option.critical(false))
                    : LINKER.downcallHandle(sym, d);
        } catch (IllegalCallerException e) {
            throw nativeAccessError(e);
        }
    }

    // ---- critical: short, never block, never call back ----
    static final MethodHandle ERRMSG = fn("uh_errmsg", true, P);
    static final MethodHandle STRERROR = fn("uh_strerror", true, P, I);
    static final MethodHandle VERSION = fn("uh_version", true, P);
    static final MethodHandle FORMAT_VERSION = fn("uh_format_version", true, I);
    static final MethodHandle DURABILITY_NAME = fn("uh_durability_name", true, P, I);
    static final MethodHandle BASE = fn("uh_base", true, P, P);
    static final MethodHandle HEAP_INFO = fn("uh_heap_info", true, I, P, P);
    static final MethodHandle STATS_GET = fn("uh_stats_get", true, I, P, P);
    /* Class-table reads in the mapping. */
    static final MethodHandle CLASS_FIND = fn("uh_class_find", true, I, P, P, P);
    static final MethodHandle CLASS_INFO_GET = fn("uh_class_info_get", true, I, P, I, P);
    static final MethodHandle FIELD_INFO_GET = fn("uh_field_info_get", true, I, P, I, I, P);
    /* A header check (the arena index is rebuilt from the mapping if needed). */
    static final MethodHandle OBJ_CLASS = fn("uh_obj_class", true, I, P, J, P);
    /* Pins (Pins): a slot of the session's pin table and a fence; uh_pin
     * also checks the object's header and, while the collector marks, hands
     * the reference to it. Both may spin briefly on the session's pin lock
     * (the Cleaner's unpin); uh_pin yields in two rare cases: the collector's
     * ring is full (bounded, ~100 ms) or the collector is sweeping that very
     * object (it then finds the pin and keeps it). */
    static final MethodHandle PIN = fn("uh_pin", true, I, P, J, P);
    static final MethodHandle UNPIN = fn("uh_unpin", true, I, P, I);
    /* Begin only reads the clock. */
    static final MethodHandle BEGIN = fn("uh_begin", true, I, P);
    /* Commit of a nested level, or of a block that wrote nothing: no log,
     * no lock, no persist. Block decides which commit to call. */
    static final MethodHandle COMMIT_QUICK = fn("uh_commit", true, I, P);
    /* A change token: one word of the mapping, read beside a header check. */
    static final MethodHandle CHANGE_TOKEN = fn("uh_change_token", true, I, P, J, P);

    // ---- ordinary downcalls: may wait, sleep, persist or talk to heapd ----
    /* Waits for a heapd that is not running yet, up to its timeout. */
    static final MethodHandle CONNECT = fn("uh_connect_timeout", false, I, P, I, I, P);
    static final MethodHandle SESSION_OPEN = fn("uh_session_open", false, I, P, I, P);
    static final MethodHandle DISCONNECT = fn("uh_disconnect", false, null, P);
    static final MethodHandle CLASS_REGISTER = fn("uh_class_register", false, I, P, P, P, I, P);
    static final MethodHandle ALLOC = fn("uh_alloc", false, I, P, I, P);
    static final MethodHandle FREE = fn("uh_free", false, I, P, J);
    /* Several fields at one instant: an optimistic read that may fall back
     * to a read-only block, which may wait for a lock. */
    static final MethodHandle READ = fn("uh_read", false, I, P, J, I, P, I);
    static final MethodHandle GET_I64 = fn("uh_get_i64", false, I, P, J, I, P);
    static final MethodHandle SET_I64 = fn("uh_set_i64", false, I, P, J, I, J);
    static final MethodHandle GET_F64 = fn("uh_get_f64", false, I, P, J, I, P);
    static final MethodHandle SET_F64 = fn("uh_set_f64", false, I, P, J, I, D);
    static final MethodHandle GET_REF = fn("uh_get_ref", false, I, P, J, I, P);
    static final MethodHandle SET_REF = fn("uh_set_ref", false, I, P, J, I, J);
    static final MethodHandle GET_INLINE = fn("uh_get_inline", false, I, P, J, I, P, J, P);
    static final MethodHandle SET_INLINE = fn("uh_set_inline", false, I, P, J, I, P, J);
    static final MethodHandle STRING_NEW = fn("uh_string_new", false, I, P, P, J, P);
    static final MethodHandle BYTES_NEW = fn("uh_bytes_new", false, I, P, P, J, P);
    static final MethodHandle COMMIT = fn("uh_commit", false, I, P);
    static final MethodHandle ABORT = fn("uh_abort", false, I, P);
    static final MethodHandle RETRY_WAIT = fn("uh_retry_wait", false, I, P, I);
    static final MethodHandle ROOT_GET = fn("uh_root_get", false, I, P, P, P);
    static final MethodHandle ROOT_SET = fn("uh_root_set", false, I, P, P, J);
    static final MethodHandle ROOT_DEL = fn("uh_root_del", false, I, P, P);
    static final MethodHandle ROOT_NEXT = fn("uh_root_next", false, I, P, P, P, P, P);
    static final MethodHandle ROOT_COUNT = fn("uh_root_count", false, I, P, P);
    static final MethodHandle HEAP_CHECK = fn("uh_heap_check", false, I, P, P);
    /* Waiting for changes (Waits): the waits sleep in the kernel, so they run
     * on platform threads of their own, never on a critical path; the cancel
     * is a futex wake, called from another thread than the waiting one. */
    static final MethodHandle WAIT = fn("uh_wait", false, I, P, J, J, J, P);
    static final MethodHandle WAIT_ANY = fn("uh_wait_any", false, I, P, I, P, P, J, P);
    static final MethodHandle WAIT_CANCEL = fn("uh_wait_cancel", false, null, P);

    static final MethodHandle ARRAY_NEW = fn("uh_array_new", false, I, P, I, J, P);
    static final MethodHandle ARRAY_LEN = fn("uh_array_len", false, I, P, J, P);
    static final MethodHandle ARRAY_ELEM_TYPE = fn("uh_array_elem_type", false, I, P, J, P);
    static final MethodHandle ARRAY_GET = fn("uh_array_get", false, I, P, J, J, P);
    static final MethodHandle ARRAY_SET = fn("uh_array_set", false, I, P, J, J, P, I);

    static final MethodHandle LIST_NEW = fn("uh_list_new", false, I, P, P);
    static final MethodHandle LIST_LEN = fn("uh_list_len", false, I, P, J, P);
    static final MethodHandle LIST_GET = fn("uh_list_get", false, I, P, J, J, P);
    static final MethodHandle LIST_SET = fn("uh_list_set", false, I, P, J, J, P, I);
    static final MethodHandle LIST_APPEND = fn("uh_list_append", false, I, P, J, P);
    static final MethodHandle LIST_INSERT = fn("uh_list_insert", false, I, P, J, J, P);
    static final MethodHandle LIST_POP = fn("uh_list_pop", false, I, P, J, J, P, I);

    static final MethodHandle MAP_NEW = fn("uh_map_new", false, I, P, I, P);
    static final MethodHandle MAP_KEY_KIND = fn("uh_map_key_kind", false, I, P, J, P);
    static final MethodHandle MAP_LEN = fn("uh_map_len", false, I, P, J, P);
    static final MethodHandle MAP_GET = fn("uh_map_get", false, I, P, J, P, P);
    static final MethodHandle MAP_GET_RECORD = fn("uh_map_get_record", false, I, P, J, P, P, J, P, P);
    static final MethodHandle MAP_SET_INLINE = fn("uh_map_set_inline", false, I, P, J, P, P, P, J);
    static final MethodHandle MAP_PUT_RECORD = fn("uh_map_put_record", false, I, P, J, P, I, P, I, I);
    static final MethodHandle MAP_PUT = fn("uh_map_put", false, I, P, J, P, P, I);
    /* A string or bytes value given as bytes: kept in the entry up to
     * UH_MAP_INLINE_MAX bytes, else an object of its own. */
    static final MethodHandle MAP_PUT_BYTES = fn("uh_map_put_bytes", false, I, P, J, P, I, P, J, I);
    static final MethodHandle MAP_REMOVE = fn("uh_map_remove", false, I, P, J, P, P, I);
    static final MethodHandle MAP_NEXT = fn("uh_map_next", false, I, P, J, P, P, P);
    static final MethodHandle MAP_CHECK = fn("uh_map_check", false, I, P, J);

    static final MethodHandle SMAP_NEW = fn("uh_smap_new", false, I, P, I, P);
    static final MethodHandle SMAP_KEY_KIND = fn("uh_smap_key_kind", false, I, P, J, P);
    static final MethodHandle SMAP_LEN = fn("uh_smap_len", false, I, P, J, P);
    static final MethodHandle SMAP_GET = fn("uh_smap_get", false, I, P, J, P, P);
    static final MethodHandle SMAP_GET_RECORD = fn("uh_smap_get_record", false, I, P, J, P, P, J, P, P);
    static final MethodHandle SMAP_SET_INLINE = fn("uh_smap_set_inline", false, I, P, J, P, P, P, J);
    static final MethodHandle SMAP_PUT_RECORD = fn("uh_smap_put_record", false, I, P, J, P, I, P, I, I);
    static final MethodHandle SMAP_PUT = fn("uh_smap_put", false, I, P, J, P, P, I);
    static final MethodHandle SMAP_REMOVE = fn("uh_smap_remove", false, I, P, J, P, P, I);
    static final MethodHandle SMAP_SCAN = fn("uh_smap_scan", false, I, P, J, P, I, P);
    static final MethodHandle SMAP_NEXT_N = fn("uh_smap_next_n", false, I, P, J, P, P, P, I, P);
    static final MethodHandle SMAP_NEXT_UNTIL = fn("uh_smap_next_until", false, I, P, J, P, P, I, P, P, I, P);
    static final MethodHandle SMAP_NEXT_RECORDS = fn("uh_smap_next_records", false, I, P, J, P, P, I, P, J, P, I, P);
    static final MethodHandle SMAP_CHECK = fn("uh_smap_check", false, I, P, J);

    /** The heap mapping as one segment of its arena (closing the arena
     * makes every later access throw instead of touching the pages). */
    static MemorySegment mapping(long base, long size, Arena arena) {
        return MemorySegment.ofAddress(base).reinterpret(size, arena, null);
    }

    /** The len bytes libuniheap's memory holds at addr (outside the
     * mapping: a buffer it filled for the call that returned addr). */
    static MemorySegment at(long addr, long len) {
        return MemorySegment.ofAddress(addr).reinterpret(len);
    }

    /** A NUL-terminated C string at addr, at most max bytes long. */
    static String cString(long addr, long max) {
        if (addr == 0)
            return "";
        return MemorySegment.ofAddress(addr).reinterpret(max).getString(0);
    }

    /** uh_errmsg(): call it right after the failing call, on the same
     * thread (it is thread-local and reset by the next libuniheap call). */
    static String errmsg() {
        try {
            return cString((long) ERRMSG.invokeExact(), 1024);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }

    static String strerror(int rc) {
        try {
            return cString((long) STRERROR.invokeExact(rc), 256);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
    }
}
