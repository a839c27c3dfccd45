package org.uniheap;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.Supplier;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A heap served by heapd, mapped into this JVM: the entry point of uniheap.
 *
 * {@snippet :
 * try (Heap heap = Heap.connect()) {          // $UNIHEAP_SOCKET or the default socket
 *     Account ada = heap.atomic(() -> {       // find or create, publish: one atomic step
 *         Account a = heap.root("ada", Account.class);
 *         if (a == null) {
 *             a = heap.create(Account.class);
 *             a.owner("ada");
 *             heap.roots().put("ada", a);
 *         }
 *         return a;
 *     });
 *     heap.atomic(() -> ada.balance(ada.balance() + 10));
 * }
 * }
 *
 * <p><b>Threads.</b> A Heap is shared by all the threads of the JVM,
 * virtual ones included. It maps the heap once and keeps a pool of
 * libuniheap sessions over that mapping: a thread borrows one for a block
 * (for the block's whole run) or for a single write or data-type operation,
 * and gives it back. Field reads outside a block read the mapping directly
 * and borrow nothing. Proxies are not tied to a thread or a session.
 *
 * <p><b>Closing.</b> {@link #close()} rolls back a block the closing thread
 * has open, stops direct reads (every later use of the heap or its proxies
 * throws {@link HeapClosedException}), and disconnects the sessions: idle
 * ones at once, borrowed ones when their thread gives them back, so no
 * thread ever touches an unmapped page.
 *
 * <p><b>Waiting for changes.</b> {@link #token(Object)} and
 * {@link #await(Object, long, Duration)}, {@link #changed(Object, long)},
 * {@link #onChange(Object, Executor, LongConsumer)}: sleep until another
 * thread's or process's commit changes an object, a collection or the
 * roots ({@link #ROOTS}), with no polling.
 */
public final class Heap implements AutoCloseable {
    private static final int UH_READONLY = 1;
    private static final int DEFAULT_MAX_SESSIONS = 64;
    private static final int STATS_ROOM = 64;   // u64s of uh_stats room, >= HeapStats.COUNT
    private static final long WAIT_ROOTS = 1;   // UH_WAIT_ROOTS
    private static final int GC_CYCLES = 23;    // uh_stats.gc_cycles, in u64s

    /** Stands for the heap's roots wherever the wait methods take an
     * object: its token moves when any root is set or removed. */
    public static final Object ROOTS = new Object() {
        @Override
        public String toString() {
            return "Heap.ROOTS";
        }
    };

    /** What is mapped of the heap, from base; closed (accesses throw) when
     * the heap closes. A heap may grow while it is connected (FORMAT.md
     * 1.1): libuniheap maps the part it grew by when a reference check
     * first reaches there, into a reservation whose base never moves, and
     * {@link #reach(long)} then replaces seg by a longer segment of the
     * same arena, so that slices taken from an earlier one stay valid. */
    volatile MemorySegment seg;
    final long base;
    private final boolean readOnly;
    private final Arena arena;
    private final SessionPool pool;
    final HeapClasses classes;
    /** Every live proxy's pin; the canonical proxy of each reference. */
    final Proxies proxies = new Proxies(this);
    private final Blocks blocks;
    private final Waits waits;
    private final Roots roots = new Roots(this);
    /** Sorted-map puts and removes, per stripe of threads: a cursor that
     * read entries ahead reads them again after its thread wrote one. */
    final StripedCount sortedWrites = new StripedCount(StripedCount.stripesFor(
            Runtime.getRuntime().availableProcessors()));
    private volatile boolean closed;

    /** A connection option for {@link #connect(Path, Option...)}. */
    public static final class Option {
        /** Map the heap read-only: every write throws {@link ReadOnlyException};
         * blocks read a consistent snapshot. */
        public static final Option READ_ONLY = new Option(0, -1);
        final int maxSessions;     // 0: not this option
        final int timeoutMs;       // -1: not this option

        private Option(int maxSessions, int timeoutMs) {
            this.maxSessions = maxSessions;
            this.timeoutMs = timeoutMs;
        }

        /**
         * How long {@code connect} waits for a heapd that is not running yet
         * (no socket file, or nobody accepting on it: heapd starting or being
         * restarted), trying again until it answers. Without this option:
         * {@code $UNIHEAP_CONNECT_TIMEOUT_MS} milliseconds if set, else 5 s.
         * After the timeout {@link DisconnectedException} names the socket and
         * says heapd is not running there.
         * @param timeout 0 (or {@link Duration#ZERO}) fails at once; rounded
         *        up to milliseconds, at most {@code Integer.MAX_VALUE} of them
         * @throws IllegalArgumentException if timeout is negative
         */
        public static Option connectTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isNegative())
                throw new IllegalArgumentException("connectTimeout must not be negative: " + timeout);
            if (timeout.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) >= 0)
                return new Option(0, Integer.MAX_VALUE);
            long ms = timeout.toMillis() + (timeout.toNanosPart() % 1_000_000 != 0 ? 1 : 0);
            return new Option(0, (int) Math.min(ms, Integer.MAX_VALUE));
        }

        /**
         * At most n libuniheap sessions (default 64): threads beyond that
         * many in blocks or writes at once wait for one. heapd has 1023
         * session slots per heap, for all processes.
         * @throws IllegalArgumentException unless 1 &lt;= n &lt;= 1023
         */
        public static Option maxSessions(int n) {
            if (n < 1 || n > 1023)
                throw new IllegalArgumentException("maxSessions must be 1..1023, not " + n);
            return new Option(n, -1);
        }
    }

    private Heap(Session first, boolean readOnly, int maxSessions) {
        long b;
        try {
            b = (long) Native.BASE.invokeExact(first.h);
            int rc = (int) Native.HEAP_INFO.invokeExact(first.h, first.at + Session.INFO);
            if (rc != 0)
                throw Errors.of(rc, "heap info");
        } catch (Throwable t) {
            first.disconnect();
            throw Errors.rethrow(t);
        }
        this.base = b;
        this.readOnly = readOnly;
        this.arena = Arena.ofShared();
        this.seg = Native.mapping(base, first.scratch.get(JAVA_LONG, Session.INFO), arena);
        this.pool = new SessionPool(first, readOnly ? UH_READONLY : 0, maxSessions);
        this.blocks = new Blocks(this, pool);
        // A wait writes nothing: its sessions are read-only, so heapd
        // gives them no log (a writing session's costs 1 MiB of heap).
        this.waits = new Waits(first, UH_READONLY);
        this.classes = new HeapClasses(this);
    }

    /** Connect to heapd on $UNIHEAP_SOCKET, else on the default socket
     * (libuniheap's uh_default_socket() rule, the same for every client).
     * @throws DisconnectedException if no heapd answers there */
    public static Heap connect() {
        return connect(null);
    }

    /**
     * Connect to the heapd serving {@code socket} and map its heap.
     * @param socket heapd's socket, or null for the default
     * @param options {@link Option#READ_ONLY}, {@link Option#maxSessions(int)},
     *        {@link Option#connectTimeout(Duration)}
     * @throws DisconnectedException if no heapd answers there (after
     *         waiting for one to start: {@link Option#connectTimeout(Duration)})
     * @throws UniheapException if the heap file cannot be mapped, or the JVM
     *         lacks {@code --enable-native-access}
     */
    public static Heap connect(Path socket, Option... options) {
        if (Native.LOAD_ERROR != null)
            throw new UniheapException(Native.LOAD_ERROR.getMessage(), Native.LOAD_ERROR);
        boolean ro = false;
        int max = DEFAULT_MAX_SESSIONS;
        int timeoutMs = -1;    // UH_CONNECT_DEFAULT
        for (Option o : options) {
            if (o == Option.READ_ONLY)
                ro = true;
            else if (Objects.requireNonNull(o, "option").timeoutMs >= 0)
                timeoutMs = o.timeoutMs;
            else
                max = o.maxSessions;
        }
        Session s = Session.connect(socket == null ? null : socket.toString(), ro ? UH_READONLY : 0,
                timeoutMs);
        return new Heap(s, ro, max);
    }

    // ---- life cycle ----

    /** True once closed. */
    public boolean isClosed() {
        return closed;
    }

    /** Connected with {@link Option#READ_ONLY}. */
    public boolean isReadOnly() {
        return readOnly;
    }

    /**
     * Roll back a block this thread has open, stop every use of the heap
     * and its proxies, end the waits in progress ({@code await} and the
     * {@code changed} futures then throw {@link HeapClosedException};
     * {@code onChange} subscriptions stop), and detach from heapd.
     * Idempotent. Blocks of other
     * threads are rolled back when they end (their next operation throws
     * {@link HeapClosedException}).
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed)
                return;
            closed = true;
        }
        blocks.rollbackHere();
        waits.close();    // before pool.close() disconnects the session waits open from
        arena.close();    // waits for direct reads in flight; later ones throw
        pool.close();
    }

    HeapClosedException closedError() {
        return new HeapClosedException("the heap is closed");
    }

    // ---- sessions: a block's, or one borrowed for one operation ----

    /** The calling thread's open block on this heap, or null. */
    BlockState current() {
        return blocks.current();
    }

    Session acquire(BlockState b) {
        if (closed)
            throw closedError();
        return b != null ? b.session : pool.borrow();
    }

    void release(BlockState b, Session s) {
        if (b == null)
            pool.giveBack(s);
    }

    /** Sessions opened so far by this heap (at most the maxSessions option). */
    public int sessionsOpened() {
        return pool.opened();
    }

    // ---- blocks ----

    /** Tries of {@link #atomic(Supplier)} before it gives up (default 100). */
    public int maxTries() {
        return blocks.maxTries();
    }

    /** Set the tries of {@link #atomic(Supplier)}; 1..1000000. */
    public void maxTries(int n) {
        blocks.maxTries(n);
    }

    /** True while the calling thread has a block open on this heap. */
    public boolean inBlock() {
        BlockState b = current();
        return b != null && b.depth > 0;
    }

    /**
     * Begin a failure-atomic block, or one more nested level of this
     * thread's open block. See {@link Block}.
     */
    public Block begin() {
        return blocks.begin();
    }

    /** Run body in a block; see {@link #atomic(Supplier)}. */
    public void atomic(Runnable body) {
        Objects.requireNonNull(body, "body");
        atomic(() -> {
            body.run();
            return null;
        });
    }

    /**
     * Run body in a failure-atomic block and commit it, re-running it when
     * the block loses a conflict with another session, after libuniheap's
     * randomized backoff (10 µs doubling to 10 ms), up to {@link #maxTries()}
     * times. Any other exception rolls the block back and propagates. Called
     * inside a block, it just runs body (the enclosing block is the one
     * retried). body must be safe to run again: only its effects on the heap
     * are rolled back.
     * @return body's result, from the try that committed
     * @throws ConflictException after maxTries lost conflicts
     */
    public <T> T atomic(Supplier<T> body) {
        Objects.requireNonNull(body, "body");
        return blocks.atomic(body);
    }

    // ---- objects ----

    /**
     * A new object of a persistent class, zeroed (nulls, 0, false). Outside
     * a block it is unreachable (and reclaimed by the next heapd recovery)
     * until you store a reference to it, e.g. as a root.
     * @throws InvalidValueException if type is no persistent interface
     * @throws ClassMismatchException if the heap has the class with another layout
     */
    public <T extends PObject> T create(Class<T> type) {
        ProxyType t = classes.declared(Declared.of(type));
        long ref = allocate(t.classId, t.name);
        return type.cast(t.maker.make(this, t, ref));
    }

    /** A new object, initialized by init in the same block (see
     * {@link #atomic(Supplier)}): all of it or nothing. */
    public <T extends PObject> T create(Class<T> type, Consumer<? super T> init) {
        Objects.requireNonNull(init, "init");
        return atomic(() -> {
            T o = create(type);
            init.accept(o);
            return o;
        });
    }

    /* Outside a block, a full heap is tried again after Pins.reclaim (as
     * atomic() runs a block again); inside one, atomic() does it. */
    private long allocate(int classId, String what) {
        BlockState b = current();
        for (int reclaims = 0;; reclaims++) {   // bound: Pins.RECLAIMS
            Session s = acquire(b);
            UniheapException err;
            try {
                s.wrote = true;
                int rc = s.alloc(classId);
                if (rc == 0)
                    return s.outLong();
                err = Errors.of(rc, "new " + what);
            } finally {
                release(b, s);
            }
            if (!(err instanceof HeapFullException) || b != null || reclaims == Pins.RECLAIMS)
                throw err;
            Pins.reclaim(this);
        }
    }

    /**
     * Free an object (at commit, inside a block). Its proxies then throw
     * {@link FreedObjectException}. Free only what nothing else refers to.
     */
    public void free(PObject obj) {
        long ref = refOf(Objects.requireNonNull(obj, "obj"));
        BlockState b = current();
        Session s = acquire(b);
        try {
            s.wrote = true;
            int rc = s.free(ref);
            if (rc != 0)
                throw Errors.of(rc, "free " + obj.className());
        } finally {
            release(b, s);
        }
    }

    /**
     * The object a persistent reference names (see {@link PObject#ref()}).
     * @throws FreedObjectException if ref is not a live object of this heap
     */
    public PObject proxy(long ref) {
        if (ref == 0)
            throw new FreedObjectException(Errors.EFREED, "reference 0 is null");
        BlockState b = current();
        Session s = acquire(b);
        try {
            int rc = s.objClass(ref);
            if (rc != 0)
                throw Errors.of(rc, "reference " + ref);
        } finally {
            release(b, s);
        }
        return wrapObject(ref);
    }

    /** The reference of a proxy of this heap. */
    long refOf(PObject obj) {
        if (obj.heap() != this)
            throw new InvalidValueException(Errors.EINVAL, "the " + obj.className() + " at offset "
                    + (obj.ref() & ProxyBase.OFFSET_MASK) + " belongs to another heap connection");
        return obj.ref();
    }

    /** A proxy of the object ref names; its header is checked here. */
    PObject wrapObject(long ref) {
        ProxyType t = typeAt(ref);
        Object p = proxies.find(ref, t);
        return p != null ? (PObject) p : t.maker.make(this, t, ref);
    }

    /** A value read from a reference: strings and bytes objects as String
     * and byte[], anything else as a proxy. */
    Object wrapValue(long ref) {
        ProxyType t = typeAt(ref);
        if (t.classId == ProxyType.CLASS_STRING)
            return new String(Blobs.read(this, ref, t.classId, "string"), StandardCharsets.UTF_8);
        if (t.classId == ProxyType.CLASS_BYTES)
            return Blobs.read(this, ref, t.classId, "bytes");
        Object p = proxies.find(ref, t);
        return p != null ? p : t.maker.make(this, t, ref);
    }

    private ProxyType typeAt(long ref) {
        long o = ref & ProxyBase.OFFSET_MASK;
        long w;
        try {
            reach(ref);
            w = (long) ProxyBase.LONG_AT.getAcquire(seg, o + 8);
        } catch (IllegalStateException e) {
            throw closedError();
        } catch (IndexOutOfBoundsException | IllegalArgumentException e) {
            throw new FreedObjectException(Errors.EFREED, "reference " + ref + " is not an object "
                    + "of this heap");
        }
        int word = (int) w;
        if ((int) (w >>> 32) >= 0 || (word >>> 16) != (int) (ref >>> 48))
            throw freed(ref);
        return classes.type(word & 0xffff);
    }

    /**
     * True once the header of the object ref names lies in {@link #seg}.
     * Past it, libuniheap checks the reference, which maps what the heap
     * has grown by when ref lies there, and seg is made anew as long as
     * what is mapped now (false: ref lies past the heap, or the check
     * failed; the caller's read of the header then says what is wrong).
     */
    boolean reach(long ref) {
        long end = (ref & ProxyBase.OFFSET_MASK) + 16;
        if (end <= seg.byteSize())
            return true;
        if (closed)
            return false;
        BlockState b = current();
        Session s = acquire(b);
        long mapped;
        try {
            s.objClass(ref);
            int rc = (int) Native.HEAP_INFO.invokeExact(s.h, s.at + Session.INFO);
            if (rc != 0)
                return false;
            mapped = s.scratch.get(JAVA_LONG, Session.INFO);
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        } finally {
            release(b, s);
        }
        synchronized (this) {
            if (mapped > seg.byteSize() && !closed)
                seg = Native.mapping(base, mapped, arena);
        }
        return end <= seg.byteSize();
    }

    /* The object ref names is gone from the mapping. Inside a block ref was
     * read in the block's snapshot: if a commit freed the object after that
     * snapshot (libuniheap says so: UH_ECONFLICT), the block must run again,
     * as heap.atomic does on a ConflictException; else it was freed. */
    UniheapException freed(long ref) {
        long o = ref & ProxyBase.OFFSET_MASK;
        BlockState b = current();
        if (b != null && acquire(b).objClass(ref) == Errors.ECONFLICT)
            return new ConflictException(Errors.ECONFLICT, "the object at offset " + o + ", read in "
                    + "this block, was freed by another session since the block began: run the "
                    + "block again");
        return new FreedObjectException(Errors.EFREED, "the object at offset " + o
                + " has been freed");
    }

    <T extends PObject> T as(PObject p, Class<T> cls) {
        ProxyType t = classes.declared(Declared.of(cls));
        if (t.classId != p.classId())
            throw new TypeMismatchException("the " + p.className() + " at offset "
                    + (p.ref() & ProxyBase.OFFSET_MASK) + " is not a " + t.name + " ("
                    + cls.getName() + ")");
        return cls.cast(t.maker.make(this, t, p.ref()));
    }

    /** A NUL-terminated string inside the mapping (class and field names). */
    String cString(long addr) {
        try {
            return seg.getString(addr - base);
        } catch (IllegalStateException e) {
            throw closedError();
        }
    }

    String className(int classId) {
        try {
            return classes.type(classId).name;
        } catch (UniheapException e) {
            return "#" + classId;
        }
    }

    // ---- roots ----

    /**
     * The heap's named durable roots: name -> object. A root set inside a
     * block commits with it, so "allocate and publish" is one atomic step.
     * {@code put} and {@code remove} return the previous object.
     */
    public Map<String, PObject> roots() {
        return roots;
    }

    /**
     * The root {@code name} through a persistent interface (declaring it in
     * this JVM first); null if there is no such root.
     * @throws TypeMismatchException if the root's object is of another class
     */
    public <T extends PObject> T root(String name, Class<T> type) {
        ProxyType t = classes.declared(Declared.of(type));
        PObject p = roots.get(name);
        if (p == null)
            return null;
        if (p.classId() != t.classId)
            throw new TypeMismatchException("root '" + name + "' is a " + p.className() + ", not a "
                    + t.name + " (" + type.getName() + ")");
        return type.cast(type.isInstance(p) ? p : t.maker.make(this, t, p.ref()));
    }

    // ---- data types ----

    /**
     * A new empty hash map whose keys are {@code String}, {@link Bytes} or
     * {@code Long} (fixed for the map's life).
     */
    public <K, V> PMap<K, V> newMap(Class<K> keyType) {
        return PMap.create(this, keyType);
    }

    /** A new hash map holding data's entries (filled in blocks of 256 steps;
     * unreachable until published, so a failure leaves nothing visible). */
    public <K, V> PMap<K, V> newMap(Class<K> keyType, Map<? extends K, ? extends V> data) {
        PMap<K, V> m = PMap.create(this, keyType);
        Steps.fill(this, data.entrySet(), e -> m.set(e.getKey(), e.getValue()));
        return m;
    }

    /** A new empty sorted map (a B+-tree) keyed by {@code String} (code point
     * order), {@link Bytes} (unsigned bytewise) or {@code Long}. */
    public <K, V> PSortedMap<K, V> newSortedMap(Class<K> keyType) {
        return PSortedMap.create(this, keyType);
    }

    /** A new sorted map holding data's entries. */
    public <K, V> PSortedMap<K, V> newSortedMap(Class<K> keyType, Map<? extends K, ? extends V> data) {
        PSortedMap<K, V> m = PSortedMap.create(this, keyType);
        Steps.fill(this, data.entrySet(), e -> m.set(e.getKey(), e.getValue()));
        return m;
    }

    /** A new empty list. */
    public <E> PList<E> newList() {
        return PList.create(this);
    }

    /** A new list holding values, in order. */
    public <E> PList<E> newList(Collection<? extends E> values) {
        PList<E> l = PList.create(this);
        Steps.fill(this, values, l::add);
        return l;
    }

    /**
     * A new fixed-length array of one element type, zeroed (null for
     * references): {@code long.class} (or {@code Long.class}),
     * {@code int.class}, {@code short.class}, {@code byte.class},
     * {@code boolean.class}, {@code double.class}, {@code float.class},
     * {@code String.class}, {@code byte[].class} or a {@link PObject} type.
     */
    public <E> PArray<E> newArray(Class<E> elemType, long length) {
        return PArray.create(this, elemType, length);
    }

    // ---- waiting for changes ----

    /**
     * The change token of obj: a number that every commit changing it
     * moves. For a record, string, bytes value or array, its version; for a
     * {@link PList}, {@link PMap} or {@link PSortedMap}, a change counter
     * (shared by hashing with other collections: it may also move when
     * another one changed); for {@link #ROOTS}, a counter that moves when
     * any root is set or removed. Take the token, read what you need, then
     * {@link #await(Object, long, Duration) await} with it: a change
     * committed in between is not lost.
     * @param obj a proxy of this heap, or {@link #ROOTS}
     * @throws FreedObjectException if obj has been freed
     * @throws InvalidValueException if obj is neither
     */
    public long token(Object obj) {
        long target = waitTarget(obj);
        BlockState b = current();
        Session s = acquire(b);
        try {
            int rc = s.changeToken(target);
            if (rc != 0)
                throw Errors.of(rc, "change token");
            return s.outLong();
        } finally {
            release(b, s);
        }
    }

    /**
     * Block until obj's token differs from since (a commit changed obj
     * after the token was taken), or timeout passes. A platform thread
     * sleeps in libuniheap on a wait session of its own; a virtual thread
     * parks (unmounts) while a platform thread of the heap waits for it.
     * Callers on virtual threads waiting for the same object and token
     * share one native wait. An interrupt ends a virtual thread's wait
     * (with a {@link UniheapException}, the interrupt status set), not a
     * platform thread's: there, use a timeout or {@link #changed}.
     * @param since a token of obj, from {@link #token(Object)}
     * @param timeout null for none; {@link Duration#ZERO} just compares
     * @return the new token, or empty when the timeout passed first (never
     *         before it)
     * @throws IllegalStateException inside a block (it sees one snapshot:
     *         wait outside blocks)
     * @throws FreedObjectException if obj is (or gets) freed
     * @throws HeapClosedException if the heap is closed, or closes meanwhile
     * @throws DisconnectedException if heapd restarted and did not come back
     */
    public OptionalLong await(Object obj, long since, Duration timeout) {
        long target = waitTarget(obj);
        if (inBlock())
            throw new IllegalStateException("await: inside a block, which sees one snapshot; "
                    + "wait outside blocks");
        long ns = timeoutNanos(timeout);
        if (ns == 0) {
            long now = token(obj);
            return now != since ? OptionalLong.of(now) : OptionalLong.empty();
        }
        if (closed)
            throw closedError();
        return waits.await(target, since, ns);
    }

    /**
     * Block until obj changes after this call, or timeout passes:
     * {@code await(obj, token(obj), timeout)}. A change committed before
     * the call is not seen: take the token first when that matters.
     * @return the new token, or empty on timeout
     * @see #await(Object, long, Duration)
     */
    public OptionalLong await(Object obj, Duration timeout) {
        return await(obj, token(obj), timeout);
    }

    /**
     * A future of obj's next token other than since, completed by a
     * platform thread of the heap when a commit changes obj. It blocks no
     * thread of the caller; {@code cancel} ends the native wait (when no
     * other caller waits for the same object and token); for a timeout use
     * {@link CompletableFuture#orTimeout}. Completes exceptionally with
     * {@link FreedObjectException} if obj is freed, {@link
     * HeapClosedException} if the heap closes first.
     * @throws IllegalStateException inside a block
     */
    public CompletableFuture<Long> changed(Object obj, long since) {
        long target = waitTarget(obj);
        if (inBlock())
            throw new IllegalStateException("changed: inside a block, which sees one snapshot; "
                    + "wait outside blocks");
        if (closed)
            throw closedError();
        return waits.changed(new Waits.Key(target, since));
    }

    /**
     * Call back after each change of obj, from now on, until closed: the
     * callback runs on executor with the new token. Changes committed while
     * a callback runs are not lost (the next wait starts with the token
     * the last one returned, before the callback runs); several of them
     * may give one callback. On a single-threaded executor callbacks run in
     * order. Closing the returned handle stops the callbacks (one running
     * finishes) and cancels the native wait; the subscription also ends
     * when obj is freed or the heap closes.
     * @throws FreedObjectException if obj has been freed
     */
    public AutoCloseable onChange(Object obj, Executor executor, LongConsumer callback) {
        Objects.requireNonNull(executor, "executor");
        Objects.requireNonNull(callback, "callback");
        long since = token(obj);
        ChangeListener l = new ChangeListener(waits, waitTarget(obj), obj, executor, callback);
        l.start(since);
        return l;
    }

    /* What the C wait functions take for obj: a reference or UH_WAIT_ROOTS. */
    private long waitTarget(Object obj) {
        Objects.requireNonNull(obj, "obj");
        if (obj == ROOTS || obj == roots)
            return WAIT_ROOTS;
        if (obj instanceof PObject p)
            return refOf(p);
        throw new InvalidValueException("wait for a change of a " + obj.getClass().getName()
                + ": only proxies of this heap and Heap.ROOTS have change tokens");
    }

    private static long timeoutNanos(Duration timeout) {
        if (timeout == null)
            return Long.MAX_VALUE;
        if (timeout.isNegative())
            throw new IllegalArgumentException("timeout is negative: " + timeout);
        try {
            return timeout.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    // ---- introspection ----

    /** Facts of the heap and of this connection. */
    public HeapInfo info() {
        BlockState b = current();
        Session s = acquire(b);
        try {
            int rc = (int) Native.HEAP_INFO.invokeExact(s.h, s.at + Session.INFO);
            if (rc != 0)
                throw Errors.of(rc, "heap info");
            MemorySegment m = s.scratch;
            long i = Session.INFO;
            long durName = (long) Native.DURABILITY_NAME.invokeExact(m.get(JAVA_INT, i + 12));
            return new HeapInfo(m.get(JAVA_LONG, i), m.get(JAVA_INT, i + 8),
                    Native.cString(durName, 64), m.get(JAVA_INT, i + 20) != 0,
                    m.getString(i + 24), m.getString(i + 88), pool.opened(),
                    m.get(JAVA_LONG, i + 4184), m.get(JAVA_LONG, i + 4192),
                    m.get(JAVA_LONG, i + 4200));
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        } finally {
            release(b, s);
        }
    }

    /** libuniheap's counters, summed over this heap's sessions (counters of
     * sessions other threads are using may lag a little); gcCycles, which
     * each session counts, is the most any one session took part in. */
    public HeapStats stats() {
        if (closed)
            throw closedError();
        long[] sum = new long[HeapStats.COUNT];
        long gcCycles = 0;
        try (Arena a = Arena.ofConfined()) {
            // uh_stats grows at its end: room for counters this binding
            // does not know yet, so a newer libuniheap never writes past it
            MemorySegment out = a.allocate(8L * STATS_ROOM, 8);
            for (Session s : pool.sessions()) {
                int rc = (int) Native.STATS_GET.invokeExact(s.h, out.address());
                if (rc != 0)
                    continue;
                for (int i = 0; i < sum.length; i++)
                    sum[i] += out.getAtIndex(JAVA_LONG, i);
                // one cycle is seen by every session: count it once
                gcCycles = Math.max(gcCycles, out.getAtIndex(JAVA_LONG, GC_CYCLES));
            }
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        }
        sum[GC_CYCLES] = gcCycles;
        return new HeapStats(sum);
    }

    /**
     * Check the heap: every object reachable from the roots must be valid,
     * every reference of the right class, every map sound. Meant for a
     * quiet heap. Not inside a block.
     * @return the number of objects visited
     * @throws UniheapException naming the first problem
     */
    public long check() {
        BlockState b = current();
        Session s = acquire(b);
        try {
            int rc = (int) Native.HEAP_CHECK.invokeExact(s.h, s.at + Session.OUT);
            if (rc != 0)
                throw Errors.of(rc, "heap check");
            return s.outLong();
        } catch (Throwable t) {
            throw Errors.rethrow(t);
        } finally {
            release(b, s);
        }
    }

    /** The heap's class table.
     * @throws UniheapException if a field has a type this binding does not
     *         know (a newer libuniheap's, or damage) */
    public List<ClassInfo> classes() {
        List<ClassInfo> out = new ArrayList<>();
        for (int id = 1; id < HeapClasses.CAP; id++) {
            ProxyType t = classes.typeIfExists(id);
            if (t == null)
                continue;
            List<ClassInfo.Field> fields = new ArrayList<>();
            for (int i = 0; i < t.names.length; i++) {
                FieldType ft = FieldType.of(t.types[i]);
                if (ft == null)
                    throw Values.unknown(t.whats[i], "field type", t.types[i]);
                fields.add(new ClassInfo.Field(t.names[i], ft, t.offsets[i], t.refClass[i]));
            }
            out.add(new ClassInfo(id, t.name, t.kind, t.payload, List.copyOf(fields)));
        }
        return out;
    }

    @Override
    public String toString() {
        if (closed)
            return "Heap[closed]";
        HeapInfo i = info();
        return "Heap[" + i.name() + ", " + i.durability() + ", " + i.size() + " bytes"
                + (readOnly ? ", read-only" : "") + "]";
    }
}
