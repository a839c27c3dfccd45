/**
 * @file uniheap.h
 * @mainpage uniheap client library
 *
 * libuniheap maps a heap owned by heapd into this process and works on
 * persistent objects in place. Only control traffic (attach, class
 * registration, arena leases) goes to heapd, over gRPC on a UNIX socket.
 *
 * Guarantees:
 *  - A failure-atomic block (uh_begin() .. uh_commit()) makes all of its
 *    writes, allocations, frees and root changes durable together or not at
 *    all, whatever process or machine crash happens. Blocks nest; inner
 *    blocks are flattened into the outermost one.
 *  - A commit issues a fixed number of persist barriers (2 for a block that
 *    changed something, whether or not it allocated; 0 for one that did
 *    not), however many fields it wrote (schemas/FORMAT.md 8.4);
 *    uh_stats_get() counts them.
 *  - A single field write outside a block is atomic and durable on return.
 *    An aligned field read outside a block is never torn, but reading
 *    several fields outside a block may mix two commits.
 *  - Every persistent reference is a 64-bit offset from the start of the
 *    heap file (#uh_off); 0 is null.
 *  - A heapd restart (crash, upgrade, service restart) is invisible beyond
 *    a retry: the session notices heapd's end, keeps its mapping, and at
 *    its next block (or next call that needs heapd) attaches anew to the
 *    same socket on its own, waiting up to 60 s for heapd to come back.
 *    References and pointers into the mapping stay valid. A block that was
 *    open when heapd ended is rolled back with #UH_ECONFLICT ("heapd
 *    restarted"), which uh_run() re-runs; a commit that passed its
 *    durability barrier completes. If heapd now serves another heap file,
 *    calls fail with #UH_EIO and the mapping is left alone. uh_stats counts
 *    the re-attaches and the time they took.
 *
 * Caveats:
 *  - A #uh_heap is a session. Use it from one thread at a time; open one
 *    session per thread that runs blocks concurrently. Sessions opened
 *    with uh_session_open() share their process's one mapping of the heap,
 *    so offsets, and pointers into the mapping, are the same in all of
 *    them and may be handed between threads.
 *  - fork(): a child may go on using the handles it inherited. The first
 *    call on each one in the child attaches it anew, as a new session of
 *    the same heap over the mapping the child inherited (the same base
 *    address: every reference, offset and pointer into the mapping stays
 *    valid); uh_fork_attach() does so at once. The parent's sessions go on
 *    as before. See @ref forking for what the child keeps and what not.
 *  - A block's redo log grows as the block needs (beyond the session's
 *    log area, 1 MiB by default, with extents heapd leases on demand), so
 *    a block is bounded only by the heap's free space: one that fills the
 *    heap fails with #UH_ENOSPC and is rolled back. Short blocks are still
 *    cheaper: they hold their locks for less time.
 *  - Writers lock the objects they write until commit; a block that meets
 *    a lock held by another session fails with #UH_ECONFLICT after a
 *    bounded wait and must be re-run by the caller.
 *  - A block that fails (#UH_ECONFLICT, #UH_ENOSPC) is rolled back at
 *    once but stays open: every later call in it returns the same error,
 *    so nested code cannot mistake it for success, until the caller ends
 *    it with uh_abort() (or uh_commit(), which returns the error).
 *  - Pointers returned into the mapping (strings, bytes) stay valid until
 *    the object is freed or the heap disconnected.
 */
#ifndef UNIHEAP_H
#define UNIHEAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UH_VERSION_MAJOR 0
#define UH_VERSION_MINOR 1
#define UH_VERSION_PATCH 0

/** Library version string, e.g. "0.1.0". Can't fail. */
const char *uh_version(void);
/** Heap format version this library reads and writes. Can't fail. */
uint32_t uh_format_version(void);

/** @defgroup errors Error codes
 * Every call returns 0 or one of these (negative). The thread-local
 * uh_errmsg() then names what was wrong. @{ */
#define UH_OK 0
#define UH_EINVAL (-1)		/**< bad argument */
#define UH_ENOMEM (-2)		/**< process memory exhausted */
#define UH_ENOSPC (-3)		/**< heap full */
#define UH_ENOTFOUND (-4)	/**< no such root, class or field */
#define UH_ECONFLICT (-5)	/**< lost a conflict; block rolled back; retry */
#define UH_ECLASSMISMATCH (-6)	/**< class registered with another layout */
#define UH_EFREED (-7)		/**< freed, invalid or out-of-range object */
#define UH_ETYPE (-8)		/**< wrong field type or wrong class */
#define UH_ERANGE (-9)		/**< field offset or index out of range */
#define UH_EDISCONNECTED (-10)	/**< heapd unreachable (and did not come back) */
#define UH_EPROTO (-11)		/**< heapd answered something unexpected */
#define UH_EIO (-12)		/**< open/map of the heap file failed */
#define UH_EFORK (-13)		/**< a block open at fork, used in the child; or no
				 * control client in a forked child (@ref forking) */
#define UH_ELOGFULL (-14)	/**< kept for compatibility: logs now grow (UH_ENOSPC) */
#define UH_EREADONLY (-15)	/**< write on a read-only handle */
#define UH_ESTATE (-16)		/**< call not valid now (e.g. commit w/o begin) */
#define UH_EUTF8 (-17)		/**< string is not valid UTF-8 */
#define UH_EINTERNAL (-18)	/**< broken invariant; please report */
#define UH_LAST_ERRCODE UH_EINTERNAL
/** @} */

/** Static description of an error code (or of a positive errno). */
const char *uh_strerror(int err);
/** Message of the last failed call on this thread ("" if none). The
 * pointer is valid until the next libuniheap call on this thread. */
const char *uh_errmsg(void);

/** A reference to an object: its offset from the start of the heap file
 * and its generation (see @ref direct); 0 is null. */
typedef uint64_t uh_off;

/** A session: a mapped heap plus a control connection to heapd. */
typedef struct uh_heap uh_heap;

/** @defgroup connflags uh_connect() flags @{ */
#define UH_READONLY 0x1u	/**< map read-only; writes fail UH_EREADONLY */
/** @} */

/**
 * Attach to heapd and map its heap: uh_connect_timeout() with
 * #UH_CONNECT_DEFAULT, so it waits up to 5 s (or
 * $UNIHEAP_CONNECT_TIMEOUT_MS) for a heapd that is not running yet.
 * @param[in] socket heapd's socket path, or NULL (or "") for the default
 *            path, uh_default_socket().
 * @param[in] flags UH_READONLY or 0.
 * @param[out] out the new handle; set only on success.
 * @return 0, or UH_EDISCONNECTED (no heapd, or an unsafe default socket
 *         folder), UH_EPROTO (protocol version mismatch), UH_EIO (heap
 *         file could not be opened or mapped).
 *         On failure nothing needs to be released.
 */
int uh_connect(const char *socket, uint32_t flags, uh_heap **out);

/** uh_connect_timeout(): wait as long as $UNIHEAP_CONNECT_TIMEOUT_MS
 * says (milliseconds, 0 or more), else 5000 ms. */
#define UH_CONNECT_DEFAULT (-1)

/**
 * uh_connect(), waiting for heapd: while the socket file is missing or
 * nobody accepts on it (ENOENT, ECONNREFUSED: heapd not started yet, or
 * being restarted by its service manager), or heapd is stopping, the
 * attach is tried again (short sleeps growing to 100 ms) until heapd
 * welcomes the session or timeout_ms have passed. Other failures (heapd
 * refused the session, another protocol version, the heap file) return
 * at once. After the timeout uh_errmsg() names the socket, says that heapd
 * is not running there and how to start it.
 * @param[in] socket as for uh_connect().
 * @param[in] flags as for uh_connect().
 * @param[in] timeout_ms how long to wait for heapd: 0 fails at once (one
 *            attempt), #UH_CONNECT_DEFAULT (any negative value) is
 *            $UNIHEAP_CONNECT_TIMEOUT_MS if set to a number, else 5000.
 * @param[out] out the new handle; set only on success.
 * @return as uh_connect(); #UH_EDISCONNECTED when heapd did not come up
 *         within timeout_ms.
 */
int uh_connect_timeout(const char *socket, uint32_t flags, int timeout_ms, uh_heap **out);

/**
 * Open one more session over h's mapping: a new attach to the same heapd
 * (its own session slot, redo log, locks and arenas), without mapping the
 * heap again. Meant for threads: each thread that runs blocks uses its
 * own session, and objects, offsets and pointers into the mapping are
 * shared by all of them. The new session is independent of h: either may
 * be disconnected first; the mapping goes away with the last of them.
 * @param[in] h any open session of this process.
 * @param[in] flags UH_READONLY or 0; a session opened from a read-only
 *            one is read-only whatever the flags.
 * @param[out] out the new session; set only on success.
 * @return 0, UH_EDISCONNECTED (heapd gone), UH_EIO (heapd now serves
 *         another heap file than the one mapped), UH_EPROTO (heapd refused
 *         the session, e.g. every session slot is taken), UH_EFORK.
 *         On failure nothing needs to be released.
 */
int uh_session_open(uh_heap *h, uint32_t flags, uh_heap **out);

/**
 * @anchor forking
 * In a child forked from the process that connected h (or from a process
 * that used h since): attach h anew now, as a new session of the same
 * heap; every other call does the same on its first use of h in the child,
 * so calling this is never needed, only a way to meet a failure at a
 * chosen place. 0 at once where h needs nothing.
 *
 * What a child forked from a connected process gets:
 *  - its own session, on first use of each inherited handle (or a new
 *    uh_connect()); the parent's sessions are the parent's and go on;
 *  - the parent's mapping: references read before the fork are valid;
 *  - outside any block, unless a block was open at the fork: that block is
 *    the parent's (its locks and its log), so in the child it is rolled
 *    back but stays open, every call in it failing with #UH_EFORK, until
 *    the child ends it with uh_abort() (or uh_commit(), which returns
 *    #UH_EFORK); the parent's block goes on in the parent;
 *  - none of the parent's arenas, log extents or pins: the child's pins
 *    are its own session's (their ids carry a higher tag), and releasing
 *    with uh_unpin() a pin the parent took does nothing in the child. So
 *    an object the child reaches only through a reference it inherited is
 *    kept from the online collector by the parent's pin while the parent
 *    holds it; a child that keeps such an object past that pins it itself.
 * gRPC cannot run in a child forked after the parent used it, so such a
 * child runs its control calls on a fresh copy of libuniheap that it loads
 * once into a new link-map namespace (dlmopen: tens of milliseconds, and the copy's
 * memory). Each generation of nested forks that uses the heap loads one,
 * and glibc has room for a few: a chain of more than about 3 nested forks
 * may get #UH_EFORK. So does a child whose libuniheap was linked
 * statically (there is no file to load again).
 * @return 0, or what connecting returns (#UH_EDISCONNECTED, #UH_EIO,
 *         #UH_EPROTO), or #UH_EFORK (no copy could be loaded).
 */
int uh_fork_attach(uh_heap *h);

/** Detach this session. An open block is rolled back. NULL is ignored.
 * The mapping is unmapped when its last session disconnects; then every
 * pointer into it dies. Can't fail. */
void uh_disconnect(uh_heap *h);

/**
 * The default socket path: the one rule by which heapd, heapctl,
 * uniheap-check, libuniheap (uh_connect(NULL, ...)) and every binding
 * find each other when no socket is given, wherever they were started:
 *  1. $UNIHEAP_SOCKET, if set and not empty, as it is;
 *  2. else $XDG_RUNTIME_DIR/uniheap/heapd.sock, if XDG_RUNTIME_DIR is an
 *     absolute path (the per-login runtime folder systemd provides);
 *  3. else /tmp/uniheap-<euid>/heapd.sock. That folder is created (mode
 *     0700) when missing, and refused (#UH_EDISCONNECTED, uh_errmsg()
 *     says why) unless it is a directory, not a symbolic link, owned by
 *     the effective uid and writable by nobody else: another user must
 *     not be able to slip a socket of theirs in front of our clients.
 * heapd creates the folder of its socket (0700) when it is missing.
 * The system service (heapd.service, from packaging/systemd) serves
 * /run/uniheap/heapd.sock; its clients set UNIHEAP_SOCKET to that path.
 * @param[out] buf receives the path, NUL terminated.
 * @param[in] len bytes of buf (4096 holds any path the system accepts).
 * @return 0, #UH_ERANGE (buf too small), #UH_EDISCONNECTED (the /tmp
 *         folder is unsafe or cannot be created), #UH_EINVAL (buf NULL).
 */
int uh_default_socket(char *buf, size_t len);

/** What uh_heap_info() reports. */
typedef struct uh_info {
	uint64_t heap_size;		/**< bytes of the heap this session has mapped
					 * from base: its size at connect, more once a
					 * lease or a reference reached past that */
	uint32_t format_version;
	uint32_t durability;		/**< UH_DUR_PMEM/SYNC/MEMORY */
	uint32_t session;		/**< this session's slot */
	uint32_t readonly;
	char name[64];			/**< heap name */
	char path[4096];		/**< heap file path */
	/* A heap that grows (FORMAT.md 1.1); heapctl status shows the same. */
	uint64_t cur_size;		/**< bytes of the heap now (heapd may have
					 * grown it past heap_size) */
	uint64_t max_size;		/**< the most it may grow to (cur_size: it
					 * does not grow) */
	uint64_t used_size;		/**< bytes held by arenas */
	uint64_t reserved;		/**< bytes of address space reserved at base
					 * (>= max_size): a view of them never moves;
					 * only [base, base + heap_size) may be read */
} uh_info;

#define UH_DUR_PMEM 1u
#define UH_DUR_SYNC 2u
#define UH_DUR_MEMORY 3u

/** Fill *out. Can't fail on a valid handle. */
int uh_heap_info(uh_heap *h, uh_info *out);
/** Name of a durability mode ("pmem", "sync", "memory"). */
const char *uh_durability_name(uint32_t mode);

/** Base address of this process's mapping (for bindings that read fields
 * directly; see @ref direct). The same for every session opened from one
 * another with uh_session_open().
 * @note valid until the mapping's last session disconnects. */
void *uh_base(uh_heap *h);

/** @defgroup direct Direct access for bindings
 * Bindings read fields straight from the mapping instead of calling
 * uh_get_*() outside blocks. A reference (#uh_off) names an object and its
 * generation: bits 0..47 are the byte offset of the object's header in
 * the heap file, bits 48..63 the generation the object had when the
 * reference was made. Every object starts with a 16-byte header:
 *  - bytes [8, 12): u32, class id in bits 0..15, generation in 16..31;
 *  - bytes [12, 16): u32, bit 31 set while the object is valid, bits
 *    0..30 the payload size (a record's payload size is its class's
 *    uh_class_info.payload_size).
 * A direct read of field f of the object named by reference r is safe
 * once the reference was checked once (uh_obj_class(), or it came from
 * libuniheap) and, before each read, the u32 at offset+8 equals
 * UH_OBJ_CLASS_WORD(class, UH_REF_GEN(r)) and the u32 at offset+12 has
 * UH_OBJ_VALID: then the object is the one the reference was made for
 * (a freed slot reused for a new object has another generation). Field
 * address = base + UH_REF_OFFSET(r) + field offset. To be sure the bytes
 * read belong to that object, copy them and then check the header word
 * again (an acquire fence between): the allocator writes the new
 * generation before the new object's bytes. A string or bytes value read
 * in place is immutable while its header says so: copy it, then check its
 * header again. Offsets of fields come from uh_field_info_get().
 * Every reference libuniheap returns, and every reference stored in the
 * heap, carries its generation; keep all 64 bits, never use them as an
 * address. @{ */
#define UH_REF_OFFSET(r) ((uint64_t)(r) & 0xffffffffffffull)
#define UH_REF_GEN(r) ((uint32_t)((uint64_t)(r) >> 48))
#define UH_OBJ_CLASS_WORD(class_id, gen) ((uint32_t)(class_id) | (uint32_t)(gen) << 16)
#define UH_OBJ_WORD_AT 8u	/**< byte of the class/generation word */
#define UH_OBJ_SIZE_AT 12u	/**< byte of the valid bit + payload size */
#define UH_OBJ_VALID 0x80000000u
/** @} */

/* ------------------------------------------------------------------ */
/** @defgroup classes Classes @{ */

#define UH_T_BOOL 1u
#define UH_T_I8 2u
#define UH_T_I16 3u
#define UH_T_I32 4u
#define UH_T_I64 5u
#define UH_T_F32 6u
#define UH_T_F64 7u
#define UH_T_REF 8u
#define UH_T_STRING 9u
#define UH_T_BYTES 10u
/** Inline string and bytes fields (record fields only, FORMAT.md 3.2): the
 * value lives inside its object, a u32 length then capacity bytes, so a
 * record of such fields is one object. Declared with a capacity
 * (uh_field_spec.capacity, 1..UH_INLINE_MAX); read and written with
 * uh_get_inline / uh_set_inline. */
#define UH_T_ISTRING 11u
#define UH_T_IBYTES 12u
#define UH_INLINE_MAX 65535u	/**< the largest capacity of an inline field */
#define UH_INLINE_LEN_SIZE 4u	/**< the length word before an inline value */
/** The name of field type t ("bool", "i8", ..., "bytes"), or "?" for a
 * code that names none; for messages. */
const char *uh_type_name(uint32_t t);

/** Built-in class ids, fixed by the heap format (schemas/FORMAT.md):
 * every heap has them, with these ids, whatever registered first. User
 * classes start at UH_CLASS_FIRST_USER. */
#define UH_CLASS_STRING 1u	/**< a string value (UTF-8 bytes) */
#define UH_CLASS_BYTES 2u	/**< a bytes value */
#define UH_CLASS_ROOTMAP 3u	/* record: table, count, used */
#define UH_CLASS_REFTABLE 4u	/* table of refs (root map buckets) */
/* The persistent data types. Their objects are of kind VALUES (typed
 * slots), ARRAY, PACKED or REFTABLE, so recovery GC finds every reference
 * in them without knowing their algorithms; the class id says what they
 * are. */
#define UH_CLASS_ARRAY 5u	/* ARRAY: fixed-length array */
#define UH_CLASS_LIST 6u	/* VALUES: list header */
#define UH_CLASS_VALUES 7u	/* VALUES: generic typed slots (list storage) */
#define UH_CLASS_MAP 8u		/* VALUES: hash map header */
#define UH_CLASS_MAP_TABLE 9u	/* VALUES: hash map bucket table */
#define UH_CLASS_MAP_ENTRY 10u	/* VALUES: hash map entry */
#define UH_CLASS_SMAP 11u	/* VALUES: sorted map header */
#define UH_CLASS_SMAP_NODE 12u	/* VALUES: sorted map node */
/* Format 3: the hash map's compact encoding (keys inline); new maps are
 * made of it, old objects stay readable. */
#define UH_CLASS_MAP_IENTRY 13u	/* PACKED: hash map entry, key inline */
#define UH_CLASS_MAP_RTABLE 14u	/* REFTABLE: hash map bucket table of references */
/* Format 6: sorted-map leaves with their keys inline; new string and
 * bytes maps are made of them, class-12 leaves stay readable. */
#define UH_CLASS_SMAP_LEAF 15u	/* PACKED: sorted map leaf, keys inline */
#define UH_CLASS_BUILTIN_LAST 15u
#define UH_CLASS_FIRST_USER 32u

/** One field of a class declaration: { "v", UH_T_IBYTES, 100 } declares
 * an inline bytes field of capacity 100, { "next", UH_T_REF, id } a
 * reference to class id. The third word means what the type says, so the
 * struct and its initializers stay as they were (bindings lay it out by
 * hand; the heap's descriptor keeps the two apart, FORMAT.md 3.2). */
typedef struct uh_field_spec {
	const char *name;	/**< 1..63 bytes: [A-Za-z_][A-Za-z0-9_]* */
	uint32_t type;		/**< UH_T_* */
	/** for UH_T_REF: target class id, 0 = any; for UH_T_ISTRING and
	 * UH_T_IBYTES: the capacity, 1..UH_INLINE_MAX bytes; else 0 */
	uint32_t ref_class;
} uh_field_spec;

/**
 * Register a class with heapd (idempotent for the same name and layout).
 * Field offsets are assigned by heapd: declaration order, natural
 * alignment, the first field right after the 16-byte object header.
 * @param[out] class_id the class id, also for an existing identical class.
 * @return 0, UH_ECLASSMISMATCH (same name, other layout; uh_errmsg() names
 *         the first differing field), UH_EINVAL (bad name, type, count),
 *         UH_ENOSPC (class table full), UH_EDISCONNECTED.
 */
int uh_class_register(uh_heap *h, const char *name, const uh_field_spec *fields,
		      uint32_t nfields, uint32_t *class_id);

/** Find a class by name in the heap's class table (no RPC).
 * @return 0 or UH_ENOTFOUND. */
int uh_class_find(uh_heap *h, const char *name, uint32_t *class_id);

/** A class as the heap's class table describes it. */
typedef struct uh_class_info {
	uint32_t class_id;
	uint32_t kind;		/**< 1 record, 2 string, 3 bytes, 4 ref table */
	uint32_t nfields;
	uint32_t payload_size;	/**< bytes after the object header */
	const char *name;	/**< @note points into the mapping */
} uh_class_info;

typedef struct uh_field_info {
	const char *name;	/**< @note points into the mapping */
	uint32_t type;
	uint32_t offset;	/**< from the object start */
	uint32_t ref_class;
	uint32_t capacity;	/**< inline fields: value bytes; else 0 */
} uh_field_info;

/** @return 0 or UH_ENOTFOUND for an unused id. */
int uh_class_info_get(uh_heap *h, uint32_t class_id, uh_class_info *out);
/** @return 0, UH_ENOTFOUND, or UH_ERANGE for index >= nfields. */
int uh_field_info_get(uh_heap *h, uint32_t class_id, uint32_t index,
		      uh_field_info *out);
/** Field index by name. @return 0 or UH_ENOTFOUND. */
int uh_field_find(uh_heap *h, uint32_t class_id, const char *name,
		  uint32_t *index);
/** @} */

/* ------------------------------------------------------------------ */
/** @defgroup objects Objects and fields @{ */

/**
 * Allocate a zeroed object of a record class inside this session's
 * arenas (an RPC only when a new arena must be leased). Inside a block the
 * allocation commits or rolls back with the block; outside one it is
 * unreachable, and reclaimed by recovery, until published by a reference.
 * @return 0, UH_ENOTFOUND (class), UH_ENOSPC (heap full), UH_EREADONLY.
 */
int uh_alloc(uh_heap *h, uint32_t class_id, uh_off *out);

/** Free an object (deferred to commit inside a block). Readers holding
 * its reference then get UH_EFREED, also once its slot holds a new object
 * (which has another generation). @return 0, UH_EFREED, UH_ECONFLICT. */
int uh_free(uh_heap *h, uh_off obj);

/**
 * Pin an object for the online garbage collector (FORMAT.md 9.3): an
 * object that no root reaches is kept while a pin of any session holds
 * it. Every binding pins one entry per live proxy. A C program pins what
 * it keeps across blocks without a root: a GC cycle that starts after a
 * reference was obtained may reclaim the object unless a root, a pin or
 * the block in progress (its own new objects) holds it. Thread-safe
 * against uh_unpin on the same handle (a finalizer thread may unpin).
 * No system call, no lock shared with other processes. Works on a
 * read-only session too (a pin is no heap write). Pins survive a heapd
 * restart under the same ids.
 * @param[out] pin the pin's id, for uh_unpin; never 0, except from a
 * heapd without a GC file, where nothing needs pinning and 0 is given.
 * @return 0; UH_EFREED when the object was already freed (then nothing
 * is pinned); UH_ENOSPC when the session holds UH_PIN_MAX - 1 pins.
 */
int uh_pin(uh_heap *h, uh_off obj, uint32_t *pin);
/** Release a pin (any thread). uh_unpin(h, 0) does nothing, nor does any
 * unpin on a session whose heapd has no GC file, nor, in a forked child,
 * the unpin of a pin the parent took (@ref forking).
 * @return 0, UH_EINVAL for an id not pinned (or unpinned already). */
int uh_unpin(uh_heap *h, uint32_t pin);
/** Pins one session may hold at once. */
#define UH_PIN_MAX (1u << 24)

/** Class id of a valid object. @return 0 or UH_EFREED. */
int uh_obj_class(uh_heap *h, uh_off obj, uint32_t *class_id);

/**
 * Read len bytes at obj+offset into dst: 1, 2, 4 or 8 (one field, aligned
 * to its length), or a multiple of 8 at an 8-byte boundary (several
 * fields): all len bytes as they were at one instant, outside a block as
 * one optimistic read of the object (tried again if a commit changed it
 * meanwhile), inside one in the block's snapshot. Inside a block the
 * block's own writes are seen.
 * @return 0, UH_EFREED (not a valid object), UH_ERANGE (outside the
 *         object's payload or misaligned), UH_EINVAL (len).
 */
int uh_read(uh_heap *h, uh_off obj, uint32_t offset, void *dst, uint32_t len);

/**
 * Write len (1, 2, 4 or 8) bytes at obj+offset. Inside a block: buffered in
 * the redo log, visible to others at commit. Outside: one atomic store,
 * durable on return.
 * @return 0, UH_EFREED, UH_ERANGE, UH_ECONFLICT (object locked by another
 *         session; the block was rolled back), UH_ENOSPC (the block's log
 *         could not grow: heap full; rolled back), UH_EREADONLY.
 */
int uh_write(uh_heap *h, uh_off obj, uint32_t offset, const void *src, uint32_t len);

/** Typed field access by field index. The i64 pair serves every integer
 * field (bool, i8, i16, i32, i64): reads sign-extend, writes are
 * range-checked (UH_ERANGE names the field). The f64 pair serves f32 and
 * f64 fields. The ref pair serves ref, string and bytes fields.
 * @return as uh_read()/uh_write(), plus UH_ETYPE when the field is of
 *         another kind (e.g. uh_get_i64 on an f64 field). */
int uh_get_i64(uh_heap *h, uh_off obj, uint32_t field, int64_t *v);
int uh_set_i64(uh_heap *h, uh_off obj, uint32_t field, int64_t v);
int uh_get_f64(uh_heap *h, uh_off obj, uint32_t field, double *v);
int uh_set_f64(uh_heap *h, uh_off obj, uint32_t field, double v);
int uh_get_ref(uh_heap *h, uh_off obj, uint32_t field, uh_off *v);
/** Stores a reference; checks that v is null or a valid object of the
 * field's class (UH_ETYPE otherwise). */
int uh_set_ref(uh_heap *h, uh_off obj, uint32_t field, uh_off v);

/**
 * Copy the value of an inline string or bytes field (UH_T_ISTRING,
 * UH_T_IBYTES) into dst: the value as it was at one instant (outside a
 * block one optimistic read of the object, inside one the block's
 * snapshot with its own writes). *len is the value's length.
 * @param cap bytes at dst; the field's capacity always suffices.
 * @return 0; UH_ERANGE when the value is longer than cap (*len says how
 *         long); UH_ETYPE (not an inline field); as uh_read().
 */
int uh_get_inline(uh_heap *h, uh_off obj, uint32_t field, void *dst, size_t cap,
		  size_t *len);
/**
 * Replace the value of an inline field in place: the length word, the
 * value and zeros to the capacity, one write (in the block's redo log
 * inside a block; outside one, a block of its own). A string is checked
 * to be UTF-8.
 * @return 0; UH_ERANGE when len exceeds the field's capacity (the message
 *         names the field, its capacity and len); UH_EUTF8; UH_ETYPE; as
 *         uh_write().
 */
int uh_set_inline(uh_heap *h, uh_off obj, uint32_t field, const void *data, size_t len);
/**
 * Copy a record's whole payload (every field, inline values included) to
 * dst as it was at one instant: one contiguous copy, which a binding then
 * decodes with the class's field offsets (uh_field_info_get). *len is the
 * payload size (the class's payload_size).
 * @return 0; UH_ERANGE when cap < the payload (*len says how much);
 *         UH_ETYPE (not a record); UH_EFREED.
 */
int uh_record_read(uh_heap *h, uh_off obj, void *dst, size_t cap, size_t *len);

/** New immutable string (validated UTF-8) or bytes object. Inside a block
 * it commits with the block. @return 0, UH_EUTF8, UH_ENOSPC, UH_EINVAL. */
int uh_string_new(uh_heap *h, const char *utf8, size_t len, uh_off *out);
int uh_bytes_new(uh_heap *h, const void *data, size_t len, uh_off *out);
/** Contents of a string or bytes object, in place.
 * @note *data points into the mapping: valid until the object is freed.
 * @return 0, UH_EFREED, UH_ETYPE (not a string/bytes object). */
int uh_string_get(uh_heap *h, uh_off s, const char **data, size_t *len);
int uh_bytes_get(uh_heap *h, uh_off b, const void **data, size_t *len);
/** @} */

/* ------------------------------------------------------------------ */
/** @defgroup blocks Failure-atomic blocks @{ */

/** Begin a block, or nest one more level. On a UH_READONLY handle the
 * block reads a consistent snapshot and any write in it fails with
 * UH_EREADONLY. @return 0, or UH_EFORK. */
int uh_begin(uh_heap *h);
/**
 * End one nesting level; the outermost commit makes the block durable and
 * visible. @return 0, UH_ESTATE (no block), UH_ECONFLICT (rolled back).
 * On failure the whole block has been rolled back.
 */
int uh_commit(uh_heap *h);
/** Roll the whole block back (all nesting levels). Can't fail on a valid
 * handle; UH_ESTATE without a block. */
int uh_abort(uh_heap *h);
/** Nesting depth, 0 outside a block. */
int uh_in_block(uh_heap *h);

/** A block body for uh_run(): return 0 to commit, anything else to roll
 * the block back and make uh_run() return it. */
typedef int (*uh_block_fn)(uh_heap *h, void *arg);

/**
 * Run fn(h, arg) inside a block and commit it, re-running the whole block
 * when it loses a conflict (UH_ECONFLICT from fn or from the commit), with
 * randomized exponential backoff (10 us doubling to 10 ms) between tries.
 * fn must be safe to run again: its effects on the heap are rolled back
 * before each retry, anything else it does is not.
 * {@code rc = uh_run(h, transfer, &args, 0);}
 * @param[in] max_tries 0 for the default (100).
 * @return 0 once a try committed; fn's own error (the block rolled back);
 *         UH_ECONFLICT after max_tries lost conflicts (uh_errmsg() says how
 *         many); UH_ESTATE if called inside a block.
 */
int uh_run(uh_heap *h, uh_block_fn fn, void *arg, unsigned max_tries);

/**
 * Sleep before re-running a block that lost a conflict: the randomized
 * backoff uh_run() uses (a random time below 10 us << (tries - 1), capped
 * at 10 ms), counted in uh_stats.retries. For bindings that run the retry
 * loop themselves (the block body is code of their language):
 * {@code for (t = 0; t < max; t++) { uh_retry_wait(h, t); uh_begin(h); ... }}
 * @param[in] tries blocks tried so far; 0 returns at once.
 * @return 0, or UH_EFORK / UH_EINVAL for a bad handle.
 */
int uh_retry_wait(uh_heap *h, unsigned tries);
/** @} */

/* ------------------------------------------------------------------ */
/** @defgroup roots Named durable roots @{ */

#define UH_ROOT_NAME_MAX 1024u

/** @return 0 or UH_ENOTFOUND. */
int uh_root_get(uh_heap *h, const char *name, uh_off *out);
/** Set a root (inside a block it commits with the block, so allocate and
 * publish is one atomic step). obj 0 is refused: use uh_root_del().
 * @return 0, UH_EFREED, UH_EINVAL, UH_ECONFLICT, UH_ENOSPC. */
int uh_root_set(uh_heap *h, const char *name, uh_off obj);
/** @return 0 or UH_ENOTFOUND. */
int uh_root_del(uh_heap *h, const char *name);
/** Iterate roots: start with *cursor = 0; each call returns the next root
 * and advances it. {@code while (uh_root_next(h, &c, &n, &nl, &v) == 0)}.
 * @note *name points into the mapping.
 * @return 0, or UH_ENOTFOUND when there are no more. */
int uh_root_next(uh_heap *h, uint64_t *cursor, const char **name, size_t *name_len,
		 uh_off *value);
/** Number of roots. */
int uh_root_count(uh_heap *h, uint64_t *count);
/** @} */

/* ------------------------------------------------------------------ */
/** @defgroup wait Waiting for changes
 *
 * A process sleeps until another process's commit changes an object, a
 * collection or the roots, and wakes within microseconds of it, with no
 * request to heapd and no polling (schemas/FORMAT.md 8.9). Each watched
 * thing has a *token* that every commit changing it moves:
 *  - a record, a string or bytes value, an array: its version; any commit
 *    that writes it (a field, an element) moves it;
 *  - a list, hash map or sorted map (its header reference): a change
 *    counter that any commit changing the collection moves (put, remove,
 *    set, insert, append, pop, a resize). Counters are shared by hashing
 *    between collections, so a waiter of a collection may also wake when
 *    another one changed: compare the contents if that matters;
 *  - #UH_WAIT_ROOTS: a counter that any root set or removed moves.
 * Pattern: take the token, read what you need, wait for a token other
 * than the one you read with; a change committed in between is not lost.
 * Changes are seen from clients of this library version on; a waiter
 * killed while it waits leaves nothing behind, and a wait survives a
 * heapd restart (it re-attaches, as a block would). Waiting is not
 * allowed inside a block (UH_ESTATE); waits use the handle like any call
 * (one thread at a time): open a session per waiting thread (read-only is
 * enough, and spares the session a log).
 * @{ */

/** Wait on the roots instead of an object: uh_wait(h, UH_WAIT_ROOTS, ...). */
#define UH_WAIT_ROOTS ((uh_off)1)
/** At most this many objects in one uh_wait_any(). */
#define UH_WAIT_MAX 64u

/** The current token of obj (an object, a collection or #UH_WAIT_ROOTS).
 * @return 0, UH_EFREED. */
int uh_change_token(uh_heap *h, uh_off obj, uint64_t *token);
/** Sleep until obj's token differs from since, or timeout_ns passes (< 0:
 * no timeout; 0: just look). *now (may be NULL) gets the token then.
 * @return 1 (changed), 0 (timed out, *now == since), UH_EFREED (obj was
 * freed), UH_ESTATE (inside a block), UH_EDISCONNECTED (heapd restarted
 * and did not come back). */
int uh_wait(uh_heap *h, uh_off obj, uint64_t since, int64_t timeout_ns, uint64_t *now);
/** uh_wait() on n (1..#UH_WAIT_MAX) things at once: returns 1 as soon as
 * any token differs from its since[i]; now[i] gets every token. */
int uh_wait_any(uh_heap *h, uint32_t n, const uh_off *objs, const uint64_t *since,
		int64_t timeout_ns, uint64_t *now);
/** Make the uh_wait()/uh_wait_any() in progress on h return 0 at once (as
 * for a timeout); the one call that may come from another thread than
 * the one using h. A wait that starts after it is not affected. */
void uh_wait_cancel(uh_heap *h);
/** @} */

/* ------------------------------------------------------------------ */
/** @defgroup types Persistent data types
 *
 * Arrays, lists, hash maps and sorted maps, implemented once here and
 * shared by every language. Every operation is failure-atomic on its own
 * (outside a block it runs in an implicit one, run again when it loses a
 * conflict, as uh_run does) and composes inside a block: a block that puts
 * to two maps and frees a value commits all or nothing, and concurrent
 * blocks in other processes are serialized with it like any other block
 * (UH_ECONFLICT when they collide).
 * Iteration outside a block may see or miss concurrent changes but never
 * returns a torn entry; inside a block it sees the block's snapshot.
 * Map and sorted-map reads outside a block (get, len, key kind, each
 * iteration or scan step) take no block: they read optimistically, check
 * once at the end that nothing they read changed, and try again if it
 * did, a few times, before running as a read-only block (FORMAT.md 8.8;
 * uh_stats opt_*): each is linearizable on its own, and readers that do
 * not lose to writers write nothing to shared memory.
 * @{ */

/** A value held by a data type: a field type and its 8 bytes. Integers
 * (bool, i8..i64) travel as i, floats (f32, f64) as f, references (ref,
 * string, bytes: a string or bytes object) as ref. */
typedef struct uh_value {
	uint32_t type;		/**< UH_T_*; 0 = none */
	/** 0, but for an inline value (UH_T_ISTRING, UH_T_IBYTES: a string
	 * or bytes value a hash map keeps in its entry, uh_map_put_bytes):
	 * where its bytes lie in the object u.ref names, their offset from
	 * the object's start in the low 16 bits (UH_VALUE_AT), their length
	 * in the high 16 (UH_VALUE_LEN). Valid while that object lives: a
	 * put or remove of the key frees it, as replacing a bytes value
	 * frees the old bytes object. */
	uint32_t reserved;
	union {
		int64_t i;
		double f;
		uh_off ref;
	} u;
} uh_value;
#define UH_VALUE_AT(v) ((v)->reserved & 0xffffu)
#define UH_VALUE_LEN(v) ((v)->reserved >> 16)

/**
 * The bytes of a string or bytes value: an object's (UH_T_STRING,
 * UH_T_BYTES) or an inline value's (UH_T_ISTRING, UH_T_IBYTES), in place
 * in the mapping, after checking that the object holding them is live
 * and of the reference's generation. Inside a block the block holds them
 * still; outside one another session may free them after this returns
 * (uh_copy_values is the loop that copies them safely).
 * @return 0; UH_ETYPE (another type); UH_EFREED.
 */
int uh_value_bytes(uh_heap *h, const uh_value *v, const void **data, size_t *len);

/** @defgroup copy Copying string and bytes values out
 * A binding turns a string or bytes value into its runtime's own (a
 * Python str, a JS string, a Java byte[]) by copying the object's bytes
 * from the mapping. Outside a block another session may replace the value
 * meanwhile: the commit that replaces it frees the old object, and its
 * slot may hold a new object by the time the copy ends. uh_copy_values()
 * is the one loop for it: it reads where the values are kept (a field, a
 * map or list entry, a record's fields at once), copies every string and
 * bytes value among them, checks after the copies that each object is
 * still the one its reference named, and reads again, the whole set, at
 * most #UH_READ_TRIES times, while one was replaced under its copy.
 * @{ */

/** Reads of one set of values uh_copy_values() makes before it gives up
 * with #UH_ECONFLICT: a writer could replace a value between every two. */
#define UH_READ_TRIES 1000

/** Reads the values where they are kept, again on every try: stores up to
 * the capacity given to uh_copy_values() into vals, their number in *n.
 * Not 0: uh_copy_values() returns this code at once (a libuniheap error,
 * or a positive code of the caller's own, e.g. "key not found"). */
typedef int (*uh_values_fetch_fn)(uh_heap *h, void *arg, uh_value *vals, uint32_t *n);
/** Makes the caller's copy of value i: len bytes at data, in the mapping.
 * They may change under the copy: copy them, and fail (not 0) only as a
 * copy may, e.g. on bytes that are not UTF-8. Called again for the same i
 * in a later try, it replaces the earlier call's copy (free that one). */
typedef int (*uh_bytes_copy_fn)(void *arg, uint32_t i, const void *data, size_t len);

/**
 * Read a set of values with fetch and copy out each string or bytes
 * value among them (type UH_T_STRING or UH_T_BYTES, reference not 0, or
 * an inline value, UH_T_ISTRING or UH_T_IBYTES) with copy; then check
 * that each copied object (an inline value's: its map entry) is still
 * live and of the reference's generation. One was freed before or during its copy
 * (replaced by another session): outside a block, fetch and copy run
 * again for the whole set, at most UH_READ_TRIES times; inside a block,
 * the error stands (UH_ECONFLICT when a commit made the block's read
 * stale, which the block's retry answers). Other values are left in vals
 * for the caller to convert. A fetch whose values cannot change (a
 * reference the caller holds) should return UH_EFREED when called a
 * second time: uh_errmsg() then still names the freed object.
 * @param vals room for cap values, filled by fetch.
 * @return 0 (vals as the last fetch left them, every copy made and
 *         checked), fetch's code, copy's code (its bytes were the
 *         value's), UH_ETYPE (a string or bytes reference names another
 *         class), UH_EFREED (inside a block), UH_ECONFLICT (inside a
 *         block; outside, the values were replaced under the copy
 *         UH_READ_TRIES times in a row: read them inside a block, which
 *         holds them still), UH_EINVAL (a NULL function, or fetch gave
 *         more than cap values).
 */
int uh_copy_values(uh_heap *h, uh_values_fetch_fn fetch, uh_bytes_copy_fn copy, void *arg,
		   uh_value *vals, uint32_t cap);
/** @} */

/** Map key kinds, fixed when a map is created. */
#define UH_KEY_STRING 1u	/**< UTF-8 bytes; sorted maps order them bytewise */
#define UH_KEY_BYTES 2u		/**< raw bytes; sorted bytewise */
#define UH_KEY_I64 3u		/**< signed 64-bit; sorted numerically */
#define UH_KEY_MAX_LEN 4096u	/**< bytes of a string or bytes key */
/** uh_key flag: the caller vouches that a STRING key's bytes are valid
 * UTF-8 (they were encoded from a runtime's string), so libuniheap does
 * not check them again. Keys returned by libuniheap have flags 0. */
#define UH_KEY_VALID_UTF8 0x1u

/** A key passed to or returned by a map. For STRING/BYTES keys data and
 * len; for I64 keys i64. @note a returned key's data points into the
 * mapping (a sorted-map key kept in an object of its own: valid while the
 * entry lives) or into a buffer of the calling thread: a hash-map key
 * (valid until its next uh_map_next call: a put of the key may free the
 * entry it was read from) and a sorted-map key kept inline in its leaf
 * (until its next uh_smap_next or uh_smap_next_n call). */
typedef struct uh_key {
	uint32_t kind;		/**< UH_KEY_* */
	uint32_t flags;		/**< 0, or UH_KEY_VALID_UTF8 */
	const void *data;
	size_t len;
	int64_t i64;
} uh_key;

/** Flag for put/set/remove/pop: also free the object the old value
 * referenced (J-NVM's update-and-free), in the same atomic step. Never use
 * it on an object that is still reachable some other way. */
#define UH_FREE_OLD 0x1u
/** Flag for put/set/remove/pop: free the old value only if it is a string
 * or bytes value (stored with type UH_T_STRING or UH_T_BYTES), never an
 * object stored as UH_T_REF. For bindings whose string and bytes values
 * belong to the one slot that holds them (Python str, Java String, ...). */
#define UH_FREE_OLD_VALUE 0x2u

/** Iteration state for uh_*_next(); zero it (or use *_iter_init) to start.
 * Opaque; valid only for the collection it was started on. */
typedef struct uh_iter {
	uint64_t s[8];
} uh_iter;

/* ---- array: fixed length, elements of one type ---- */

/** New array of length elements of elem_type (any UH_T_*), zeroed.
 * @return 0, UH_EINVAL (type), UH_ENOSPC. */
int uh_array_new(uh_heap *h, uint32_t elem_type, uint64_t length, uh_off *out);
int uh_array_len(uh_heap *h, uh_off a, uint64_t *len);
int uh_array_elem_type(uh_heap *h, uh_off a, uint32_t *elem_type);
/** @return 0, UH_ERANGE (index), UH_ETYPE (v->type does not fit the
 * element type, or a reference to the wrong class), UH_EFREED. */
int uh_array_get(uh_heap *h, uh_off a, uint64_t index, uh_value *v);
int uh_array_set(uh_heap *h, uh_off a, uint64_t index, const uh_value *v, uint32_t flags);

/* ---- list: growable sequence of values of any type ---- */

int uh_list_new(uh_heap *h, uh_off *out);
int uh_list_len(uh_heap *h, uh_off l, uint64_t *len);
int uh_list_get(uh_heap *h, uh_off l, uint64_t index, uh_value *v);
int uh_list_set(uh_heap *h, uh_off l, uint64_t index, const uh_value *v, uint32_t flags);
int uh_list_append(uh_heap *h, uh_off l, const uh_value *v);
/** Insert before index (index == len appends). */
int uh_list_insert(uh_heap *h, uh_off l, uint64_t index, const uh_value *v);
/** Remove the element at index, returning it in *v (may be NULL). */
int uh_list_pop(uh_heap *h, uh_off l, uint64_t index, uh_value *v, uint32_t flags);

/* ---- map: hash map ---- */

/** New hash map whose keys are of key_kind. */
int uh_map_new(uh_heap *h, uint32_t key_kind, uh_off *out);
int uh_map_key_kind(uh_heap *h, uh_off m, uint32_t *key_kind);
int uh_map_len(uh_heap *h, uh_off m, uint64_t *len);
/** @return 0 or UH_ENOTFOUND; UH_ETYPE for a key of another kind;
 * UH_EINVAL for a key longer than UH_KEY_MAX_LEN; UH_EUTF8 for a string
 * key that is not valid UTF-8. A value stored in the entry itself
 * (uh_map_put_bytes) comes back as an inline value (UH_T_ISTRING or
 * UH_T_IBYTES, see uh_value): read its bytes with uh_value_bytes() or
 * uh_copy_values(). */
int uh_map_get(uh_heap *h, uh_off m, const uh_key *k, uh_value *v);
/** Insert or replace. The map keeps its own copy of the key. v may not
 * be an inline value (UH_ETYPE): store bytes with uh_map_put_bytes(). */
int uh_map_put(uh_heap *h, uh_off m, const uh_key *k, const uh_value *v, uint32_t flags);
/** The largest string or bytes value a hash map keeps inside its entry. */
#define UH_MAP_INLINE_MAX 128u
/**
 * Insert or replace key k's value with a string (type UH_T_STRING: UTF-8,
 * checked) or bytes (UH_T_BYTES) value of len bytes at data. A hash map
 * created by this version keeps a value of up to UH_MAP_INLINE_MAX bytes
 * inside the key's entry, so a get finds key and value on one object and
 * a put allocates one object; a longer value, or any value in a map made
 * before (FORMAT.md 11.3), becomes a string or bytes object of its own,
 * as uh_string_new / uh_bytes_new would make it. flags as uh_map_put
 * (UH_FREE_OLD or UH_FREE_OLD_VALUE frees an old value's object; an old
 * inline value goes with its entry in any case).
 * @return 0; UH_EINVAL (type, NULL data with len); UH_EUTF8; as
 *         uh_map_put and uh_alloc.
 */
int uh_map_put_bytes(uh_heap *h, uh_off m, const uh_key *k, uint32_t type, const void *data,
		     size_t len, uint32_t flags);
/** @return 0 or UH_ENOTFOUND. The old value goes to *old (may be NULL);
 * an inline one is freed with its entry when the block commits, so read
 * its bytes in the same block. */
int uh_map_remove(uh_heap *h, uh_off m, const uh_key *k, uh_value *old, uint32_t flags);
/** Next entry in unspecified order; UH_ENOTFOUND at the end. Values as
 * uh_map_get returns them. */
int uh_map_next(uh_heap *h, uh_off m, uh_iter *it, uh_key *k, uh_value *v);
/** Structural check (counts, hashing, reachability of every entry).
 * @return 0 or UH_EINTERNAL with uh_errmsg() naming the first problem. */
int uh_map_check(uh_heap *h, uh_off m);

/* ---- sorted map: ordered keys, range scans ---- */

int uh_smap_new(uh_heap *h, uint32_t key_kind, uh_off *out);
int uh_smap_key_kind(uh_heap *h, uh_off m, uint32_t *key_kind);
int uh_smap_len(uh_heap *h, uh_off m, uint64_t *len);
int uh_smap_get(uh_heap *h, uh_off m, const uh_key *k, uh_value *v);
int uh_smap_put(uh_heap *h, uh_off m, const uh_key *k, const uh_value *v, uint32_t flags);
int uh_smap_remove(uh_heap *h, uh_off m, const uh_key *k, uh_value *old, uint32_t flags);
/**
 * The record stored under key k of hash map (uh_map_get_record) or sorted
 * map (uh_smap_get_record) m, copied whole as uh_record_read copies it:
 * the lookup and the copy in one call. Outside a block, a record replaced
 * between the two is looked up again; the copy is the key's record at one
 * instant. *class_id is the record's class (to decode the payload with).
 * @return 0; UH_ENOTFOUND (no such key); UH_ETYPE (the value is not a
 *         record: null, a number, a string...); UH_ERANGE when cap is
 *         smaller than the payload (*len says how much); as uh_map_get /
 *         uh_smap_get.
 */
int uh_map_get_record(uh_heap *h, uh_off m, const uh_key *k, void *dst, size_t cap,
		      size_t *len, uint32_t *class_id);
int uh_smap_get_record(uh_heap *h, uh_off m, const uh_key *k, void *dst, size_t cap,
		       size_t *len, uint32_t *class_id);
/**
 * Replace inline field `field` (by name) of the record stored under key k
 * of hash map (uh_map_set_inline) or sorted map (uh_smap_set_inline) m,
 * as uh_set_inline does: the lookup and the write in the caller's block,
 * else in one implicit block (durable on return, re-run after a lost
 * conflict).
 * @return 0; UH_ENOTFOUND (no such key); UH_ETYPE (the value is not a
 *         record, or the field is not inline); UH_EINVAL (no such field);
 *         as uh_set_inline.
 */
int uh_map_set_inline(uh_heap *h, uh_off m, const uh_key *k, const char *field,
		      const void *data, size_t len);
int uh_smap_set_inline(uh_heap *h, uh_off m, const uh_key *k, const char *field,
		       const void *data, size_t len);
/** One inline field's value of a new record (uh_map_put_record): field
 * index, bytes (a string field's UTF-8). */
typedef struct uh_inline_value {
	uint32_t field;		/**< index of an inline field of the class */
	uint32_t len;		/**< bytes at data, at most the field's capacity */
	const void *data;
} uh_inline_value;
/**
 * Store a new record of class class_id under key k of hash map
 * (uh_map_put_record) or sorted map (uh_smap_put_record) m: the object
 * allocated, its inline fields vals[0..n) written (the others zero: empty
 * values), and the put with flags (UH_FREE_OLD frees the record the key
 * held), in the caller's block, else in one implicit block (durable on
 * return, re-run after a lost conflict). What a binding's "insert this
 * record" is, without a crossing per field.
 * @return 0; as uh_alloc, uh_set_inline (UH_ETYPE: a field not inline,
 *         UH_ERANGE: past its capacity) and uh_map_put / uh_smap_put.
 */
int uh_map_put_record(uh_heap *h, uh_off m, const uh_key *k, uint32_t class_id,
		      const uh_inline_value *vals, uint32_t n, uint32_t flags);
int uh_smap_put_record(uh_heap *h, uh_off m, const uh_key *k, uint32_t class_id,
		       const uh_inline_value *vals, uint32_t n, uint32_t flags);
#define UH_SCAN_REVERSE 0x1u	/**< descending order */
/** Start a scan at the first key >= from (descending: <= from); from NULL
 * starts at the smallest (descending: largest) key. */
int uh_smap_scan(uh_heap *h, uh_off m, const uh_key *from, uint32_t flags, uh_iter *it);
/** Next entry of a scan; UH_ENOTFOUND at the end. */
int uh_smap_next(uh_heap *h, uh_off m, uh_iter *it, uh_key *k, uh_value *v);
/** The next entries of a scan at once, up to max (>= 1): what as many
 * uh_smap_next calls would return, in order, into keys[0..*n) and
 * vals[0..*n) (either may be NULL); 0 with *n >= 1, or UH_ENOTFOUND and
 * *n = 0 at the end. A call may return fewer than max before the end (its
 * entries come from one leaf, read at one instant: fewer checks than one
 * call per entry, and their cache misses overlap). Keys' bytes are where
 * uh_smap_next's are (uh_key): in place, or copied for this call. */
int uh_smap_next_n(uh_heap *h, uh_off m, uh_iter *it, uh_key *keys, uh_value *vals,
		   uint32_t max, uint32_t *n);
/** Flag of uh_smap_next_until: a key equal to the bound is still returned. */
#define UH_SCAN_INCLUSIVE 0x2u
/** uh_smap_next_n up to a bound: only the entries whose keys lie before to
 * in the scan's order (ascending: < to, descending: > to; with
 * UH_SCAN_INCLUSIVE also = to); the first key past it ends the scan
 * (UH_ENOTFOUND, *n = 0, then and on every later call). to NULL: no bound.
 * A binding keeps to beside its iterator and passes it on every call, so
 * key order is decided here, never again in the binding. keys may be NULL
 * (then at most one leaf's run is returned per call, as ever).
 * @return as uh_smap_next_n; UH_ETYPE for a bound of another key kind. */
int uh_smap_next_until(uh_heap *h, uh_off m, uh_iter *it, const uh_key *to, uint32_t flags,
		       uh_key *keys, uh_value *vals, uint32_t max, uint32_t *n);
/** One record of a scan, as uh_smap_next_records returns it. */
typedef struct uh_scan_record {
	uh_key key;		/**< its key, as uh_smap_next_n returns keys */
	uh_off ref;		/**< the record (copied, or past the rest of dst) */
	uint32_t class_id;	/**< its class, to decode the payload with */
	int32_t status;		/**< 0: copied; UH_ERANGE: past the rest of dst, not copied */
	uint64_t at;		/**< its payload's offset in dst (8-byte aligned) when copied */
	uint64_t len;		/**< its payload's bytes */
} uh_scan_record;
/**
 * The next entries of a scan (as uh_smap_next_until returns them, to the
 * optional bound to) with each value's record copied whole, as
 * uh_record_read copies it, into dst one after the other at 8-byte
 * aligned offsets: what a binding's "read the records of a key range" is,
 * a call per leaf instead of one per record. Each record is copied at its
 * own instant (in a block: the block's snapshot). Outside a block, a
 * record replaced since the scan read its entry is the key's record now
 * (looked up again, as uh_smap_get_record would), and one whose key has
 * been removed since is left out. A record past the rest of dst has
 * status UH_ERANGE and len its size (the caller reads it by its key or
 * ref); the next ones may still fit.
 * @return 0 with *n >= 1 (at most max); UH_ENOTFOUND and *n = 0 at the
 *         end; UH_ETYPE when a value is not a record (null, a number...);
 *         as uh_smap_next_until.
 */
int uh_smap_next_records(uh_heap *h, uh_off m, uh_iter *it, const uh_key *to, uint32_t flags,
			 void *dst, size_t cap, uh_scan_record *recs, uint32_t max,
			 uint32_t *n);
/** Structural check (order, fill, depth, counts). */
int uh_smap_check(uh_heap *h, uh_off m);

/** @} */

/**
 * Check the heap: walk every object reachable from the roots; each must be
 * a valid object, each reference must name a valid object of the class its
 * field or slot requires, and every map and sorted map must pass its
 * structural check. Read-only; meant for a quiet heap (a concurrent writer
 * can make it report a problem that is not one). `heapctl check` runs it.
 * @param[out] objects objects visited (may be NULL).
 * @return 0, or UH_EINTERNAL with uh_errmsg() naming the first problem
 *         (object offset and what is wrong); UH_ESTATE inside a block.
 */
int uh_heap_check(uh_heap *h, uint64_t *objects);

/* ------------------------------------------------------------------ */
/** Counters of this session. */
typedef struct uh_stats {
	uint64_t allocs;
	uint64_t frees;
	uint64_t commits;		/**< outermost commits that wrote */
	uint64_t empty_commits;		/**< outermost commits with nothing to write */
	uint64_t aborts;		/**< blocks rolled back, all causes */
	uint64_t conflicts;		/**< aborts_locked + aborts_stale */
	uint64_t barriers;		/**< persist barriers (fences/msync rounds) */
	uint64_t flushes;		/**< cache-line/range flushes */
	uint64_t log_bytes;		/**< redo bytes written */
	uint64_t arena_leases;		/**< arenas leased from heapd */
	uint64_t lock_waits;		/**< spins on a lock held by another session */
	uint64_t aborts_locked;		/**< ... because an object stayed locked */
	uint64_t aborts_stale;		/**< ... because an object read had changed */
	uint64_t aborts_logfull;	/**< ... because the block's log could not grow (heap full) */
	uint64_t aborts_user;		/**< uh_abort() and failed uh_run() bodies */
	uint64_t retries;		/**< re-runs by uh_run() */
	uint64_t read_waits;		/**< reads that waited for a committing writer */
	uint64_t reattaches;		/**< new sessions after heapd ended or restarted */
	uint64_t reattach_ns;		/**< time spent re-attaching (waiting for heapd) */
	uint64_t opt_reads;		/**< read-only calls outside blocks answered optimistically */
	uint64_t opt_retries;		/**< ... tries of them lost to a concurrent change */
	uint64_t opt_fallbacks;		/**< ... that then ran in an implicit block */
	uint64_t pins;			/**< pins held now (uh_pin less uh_unpin) */
	uint64_t gc_cycles;		/**< GC marks this session's commits or pins took part in */
	uint64_t gc_greys;		/**< references handed to the GC's mark (write barrier, pins) */
	uint64_t gc_busy_waits;		/**< pushes that waited for the collector to drain */
	uint64_t gc_pin_waits;		/**< pins that waited for the GC's sweep to release their object */
	uint64_t gc_wait_ns;		/**< time spent in those two waits (measured only when one happens) */
	uint64_t gc_wait_max_ns;	/**< the longest of them */
	uint64_t gc_greys_skipped;	/**< grey pushes skipped: the same reference was pushed already in the cycle */
} uh_stats;

/** Copy this session's counters. */
int uh_stats_get(uh_heap *h, uh_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* UNIHEAP_H */
