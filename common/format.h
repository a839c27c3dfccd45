/*
 * format.h -- the persistent layout of a uniheap heap file, format version 4.
 *
 * This header is the C mirror of schemas/FORMAT.md; the two must agree byte
 * for byte (the _Static_asserts at the bottom pin every offset the spec
 * names). It is shared by heapd and libuniheap and by nothing else: bindings
 * see only include/uniheap.h.
 *
 * Invariants every writer keeps:
 *  - Every persistent reference is a 64-bit offset from the start of the
 *    file. 0 is null. No absolute pointer is ever stored.
 *  - Only heapd writes the heap header's immutable part, the class table,
 *    the session table and the arena directory (inside libpmemobj
 *    transactions). Clients write only inside what heapd leased to them:
 *    their log area, objects in arenas, arena bitmaps (atomic ops), object
 *    lock words (atomic ops) and the global clock (atomic add).
 *  - Arena bitmaps and lock words are run-time state: recovery rebuilds
 *    the bitmaps from reachability and clears every lock word, so neither
 *    is ever persisted on its own.
 */
#ifndef UH_FORMAT_H
#define UH_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "uniheap.h"	/* UH_T_*, UH_DUR_*, built-in class ids */

#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert	/* C++ spells it so */
#endif

#define UH_LAYOUT_NAME "uniheap"	/* libpmemobj layout name */
#define UH_MAGIC "UNIHEAP\0"		/* 8 bytes, heap header magic */
#define UH_FORMAT_VERSION 10u
/* Format 1 is format 2 with every generation 0 (class ids were < 4096 in
 * a u32, references had zero high bits), format 2 is format 3 without an
 * object of kind PACKED, format 3 is format 4 whose logs are marked
 * APPLIED before their locks are released (no lazy logs, checksums
 * without new objects), format 4 is format 5 whose log checksum runs in
 * one lane, format 5 is format 6 without packed sorted-map leaves,
 * format 6 is format 7 without inline string and bytes fields, format
 * 7 is format 8 without an arena of the size classes version 8 added,
 * format 8 is format 9 that has not grown past its pool (its growth
 * words say so or are 0), and format 9 is format 10 without a session
 * log in the extension (no redo pair set): heapd upgrades all nine in
 * place. */
#define UH_FORMAT_VERSION_V1 1u
#define UH_FORMAT_VERSION_V2 2u
#define UH_FORMAT_VERSION_V3 3u
#define UH_FORMAT_VERSION_V4 4u
#define UH_FORMAT_VERSION_V5 5u
#define UH_FORMAT_VERSION_V6 6u
#define UH_FORMAT_VERSION_V7 7u
#define UH_FORMAT_VERSION_V8 8u
#define UH_FORMAT_VERSION_V9 9u

#define UH_HDR_SIZE 4096u
#define UH_CLASS_CAP 4096u		/* class ids 1..4095 */
#define UH_CLASS_ID_MAX 0xffffu		/* class ids live in 16 bits */
#define UH_HEAP_SIZE_MAX (1ull << 48)	/* offsets live in 48 bits */
#define UH_SESSION_CAP 1024u		/* session slots 1..1023 */
#define UH_LAZY_WORDS (UH_SESSION_CAP / 64)	/* u64 words of uh_hdr.lazy_logs */
/* Change counters of collections (uh_hdr.changes, FORMAT.md 8.9): a
 * collection uses channel uh_change_channel(its offset). */
#define UH_CHANGE_CHANNELS 768u
#define UH_ARENA_SIZE_DEFAULT (1u << 20)
#define UH_LOG_SIZE_DEFAULT (1u << 20)

/* ------------------------------------------------------------------ */
/* Heap header: the libpmemobj root object.                            */

struct uh_hdr {
	/* Immutable after creation; covered by hdr_checksum. */
	char magic[8];			/* 0   "UNIHEAP\0" */
	uint32_t format_version;	/* 8   UH_FORMAT_VERSION */
	uint32_t hdr_size;		/* 12  UH_HDR_SIZE */
	uint64_t heap_size;		/* 16  pool file size in bytes */
	uint32_t durability;		/* 24  UH_DUR_* */
	uint32_t arena_size;		/* 28  bytes per small-object arena */
	uint64_t created_ns;		/* 32  CLOCK_REALTIME at creation */
	uint64_t self_off;		/* 40  offset of this header */
	char name[64];			/* 48  heap name, NUL padded */
	uint64_t class_tab_off;		/* 112 u64[class_cap]: descriptor offsets */
	uint32_t class_cap;		/* 120 */
	uint32_t session_cap;		/* 124 */
	uint64_t session_tab_off;	/* 128 struct uh_session_ent[session_cap] */
	uint64_t arena_dir_off;		/* 136 struct uh_arena_ent[arena_cap] */
	uint32_t arena_cap;		/* 144 */
	uint32_t log_size;		/* 148 bytes of each session log area */
	uint64_t rootmap_off;		/* 152 the root map object */
	uint64_t hdr_checksum;		/* 160 uh_fnv1a64 of bytes [0,160) */
	uint8_t pad0[88];		/* 168 */

	/* Mutable, written by heapd in libpmemobj transactions. */
	uint32_t class_count;		/* 256 highest class id in use */
	uint32_t arena_count;		/* 260 directory entries in use */
	uint64_t gc_runs;		/* 264 recovery GCs completed */
	uint64_t last_recovery_ns;	/* 272 CLOCK_REALTIME of last recovery */
	uint32_t gen_seed;		/* 280 generation of the next arena's fresh slots */
	uint32_t reserved1;		/* 284 */
	uint64_t heapd_starts;		/* 288 heapd opens of this heap: a new heapd bumps it
					 * before recovery (clients check it at commit) */
	/* Growth (FORMAT.md 1.1): the file's bytes now (pool + extension),
	 * the most they may become, the extension's chunk map. All three 0
	 * in a heap that predates them: read them through uh_hdr_cur_size
	 * and uh_hdr_max_size. */
	uint64_t cur_size;		/* 296 */
	uint64_t max_size;		/* 304 */
	uint64_t chunk_map_off;		/* 312 */

	/* Global version clock (time-based STM), own cache line. Advanced by
	 * committers with an atomic add; recovery persists max(version)+1. */
	uint64_t clock;			/* 320 */
	/* Waits in progress (FORMAT.md 8.9): a committer reads it right
	 * after it advanced the clock, so it shares the clock's line. */
	uint32_t waiters;		/* 328 */
	uint8_t pad2[52];		/* 332 */

	/* Lazy logs (format 4), own cache lines: bit s is set by session s
	 * once it leaves a log marked APPLIED without a barrier; every
	 * barrier of every client first flushes the log headers named here
	 * (FORMAT.md 8.4). Run-time state: recovery does not read it. */
	uint64_t lazy_logs[UH_LAZY_WORDS];	/* 384 */
	/* Change notifications (FORMAT.md 8.9), run-time state like
	 * lazy_logs: bit s = session s is waiting; then one change counter
	 * per channel, advanced by every commit that changed a collection of
	 * the channel. */
	uint64_t waiting[UH_LAZY_WORDS];	/* 512 */
	/* Online GC (FORMAT.md 9.3), run-time state, written by heapd only:
	 * the cycle and its phase (uh_gc_phase, uh_gc_cycle); the clock when
	 * the cycle's mark began (objects whose lock word version is at
	 * least gc_v0 are not swept by it); the session slot whose lock
	 * word the sweep takes on the objects it frees (0: none yet). */
	uint64_t gc_state;			/* 640 */
	uint64_t gc_v0;				/* 648 */
	uint32_t gc_session;			/* 656 */
	uint32_t reserved2;			/* 660 */
	/* Where the heap's bytes were last served (FORMAT.md 9.4), run-time
	 * state written by heapd after its recovery: uh_fnv1a64 of the
	 * kernel's boot id, and the heap file's st_dev and st_ino. A start
	 * that finds all three unchanged knows that no power loss came
	 * between (only processes died) and leaves the mark to an online
	 * cycle after it serves. */
	uint64_t run_boot;			/* 664 */
	uint64_t run_dev;			/* 672 */
	uint64_t run_ino;			/* 680 */
	/* The sweep's batch (FORMAT.md 9.3, run-time, heapd only): every
	 * object its session holds locked lies in [gc_sweep_lo, gc_sweep_hi);
	 * both 0 when it holds none. A heapd that died sweeping leaves its
	 * locks there; the next one releases them (9.4). */
	uint64_t gc_sweep_lo;			/* 688 */
	uint64_t gc_sweep_hi;			/* 696 */
	uint8_t pad3[320];			/* 704 */
	uint32_t changes[UH_CHANGE_CHANNELS];	/* 1024 */
};

#define UH_HDR_CHECKSUM_LEN 160u

/* A heap file stays inside libpmemobj's first zone (~16 GiB past the
 * pool's start): a longer file makes libpmemobj take the rest for a zone
 * of its own (FORMAT.md 1.1). */
#define UH_GROW_FILE_MAX (15ull << 30)
/* The extension starts at the first multiple of UH_GROW_ALIGN at or past
 * the pool's end, and a growth ends on one (or at max_size): the 2 MiB a
 * DAX mapping is aligned to. Its chunks are arena_size bytes, so that a
 * small arena takes one (FORMAT.md 1.1). */
#define UH_GROW_ALIGN (2ull << 20)

/* The file's size now and the most it may grow to; a heap whose words
 * are still the zero padding is its pool, and does not grow. */
static inline uint64_t uh_hdr_cur_size(const struct uh_hdr *h)
{
	return h->cur_size ? h->cur_size : h->heap_size;
}

static inline uint64_t uh_hdr_max_size(const struct uh_hdr *h)
{
	return h->max_size ? h->max_size : uh_hdr_cur_size(h);
}

/* ------------------------------------------------------------------ */
/* Class table. uh_hdr.class_tab_off holds u64[class_cap]; entry i is the
 * offset of class i's descriptor (0 = unused). Descriptors are written
 * once, before their offset is published, and never change. */


/* Class kinds: how recovery GC finds references in an object. */
#define UH_K_RECORD 1u		/* fixed fields described by the descriptor */
#define UH_K_STRING 2u		/* payload = UTF-8 bytes, no refs */
#define UH_K_BYTES 3u		/* payload = raw bytes, no refs */
#define UH_K_REFTABLE 4u	/* payload = u64 refs; 1 is a tombstone */
#define UH_K_VALUES 5u		/* payload = typed slots (struct uh_slot) */
#define UH_K_ARRAY 6u		/* payload = struct uh_array_hdr + elements */
#define UH_K_PACKED 7u		/* payload = struct uh_packed_hdr, then the data
				 * type's own layout; typed values where it says */
#define UH_T_MAX UH_T_BYTES	/* the last type of a value (slots, arrays, keys) */
/* Field types 11 and 12 (UH_T_ISTRING, UH_T_IBYTES, uniheap.h) exist only
 * as record fields: a u32 length, then capacity bytes (FORMAT.md 3.2). */
#define UH_T_FIELD_MAX UH_T_IBYTES

/* Built-in class ids (UH_CLASS_STRING .. UH_CLASS_SMAP_LEAF,
 * UH_CLASS_FIRST_USER) are public: uniheap.h. */

#define UH_NAME_MAX 255u	/* class name bytes, without NUL */
#define UH_FIELD_NAME_MAX 63u	/* field name bytes, without NUL */
#define UH_FIELDS_MAX 1024u
#define UH_CLASS_MAGIC 0x4c434855u	/* "UHCL" */

struct uh_field_desc {
	char name[64];		/* 0  NUL padded */
	uint32_t type;		/* 64 UH_T_* */
	uint32_t offset;	/* 68 from the object start (header included) */
	uint32_t ref_class;	/* 72 UH_T_REF target class, 0 = any */
	uint32_t capacity;	/* 76 UH_T_ISTRING/IBYTES: value bytes, else 0 */
};

struct uh_class_desc {
	uint32_t magic;		/* 0   UH_CLASS_MAGIC */
	uint32_t class_id;	/* 4   */
	uint32_t kind;		/* 8   UH_K_* */
	uint32_t nfields;	/* 12  */
	uint32_t payload_size;	/* 16  fixed payload bytes (records), else 0 */
	uint32_t name_len;	/* 20  */
	char name[256];		/* 24  NUL padded */
	uint64_t reserved;	/* 280 */
	struct uh_field_desc fields[];	/* 288 */
};

/* ------------------------------------------------------------------ */
/* Objects. Every object starts with this 16-byte header; payload (the
 * fields) follows. A reference (uh_off) is the header's offset in bits
 * 0..47 and the object's generation in bits 48..63 (uniheap.h, "direct");
 * the generation counts the reuses of the slot, so a reference to a freed
 * object never names the slot's next object. */

struct uh_objhdr {
	uint64_t lock;		/* 0 lock word, see UH_LOCK_* */
	uint32_t class_word;	/* 8 class id (bits 0..15) | generation << 16 */
	uint32_t size;		/* 12 bit 31 valid; bits 0..30 payload bytes */
};

#define UH_OBJHDR_SIZE 16u
/* UH_OBJ_VALID (bit 31 of size) is public: uniheap.h, "direct". */
#define UH_OBJ_SIZE_MASK 0x7fffffffu
#define UH_GEN_MASK 0xffffu

static inline uint32_t uh_word_class(uint32_t w) { return w & 0xffffu; }
static inline uint32_t uh_word_gen(uint32_t w) { return w >> 16; }
static inline uint64_t uh_ref_make(uint64_t off, uint32_t gen)
{
	return off | (uint64_t)(gen & UH_GEN_MASK) << 48;
}
/* The generation a reused slot's next object gets: one more than the last
 * object's, or the arena's seed for a slot that never held one (class 0:
 * arenas are zeroed and every class id is at least 1). */
static inline uint32_t uh_next_gen(uint32_t old_word, uint32_t arena_seed)
{
	if (uh_word_class(old_word) == 0)
		return arena_seed & UH_GEN_MASK;
	return (uh_word_gen(old_word) + 1) & UH_GEN_MASK;
}

/* Lock word. Unlocked: bit 63 clear, bits 0..62 = version (the clock value
 * of the last commit that wrote the object; versions stay below 2^47).
 * Locked: bit 63 set, bits 16..62 the version the object had when it was
 * locked (what its bytes in place still are until the owner applies its
 * commit, so readers need not wait), bits 0..15 the owning session slot
 * (so heapd can release a dead session's locks). */
#define UH_LOCK_BIT (1ull << 63)
#define UH_LOCK_SESSION_MASK 0xffffull
#define UH_VERSION_MASK ((1ull << 47) - 1)
#define uh_lock_word(session, old) \
	(UH_LOCK_BIT | (((uint64_t)(old) & UH_VERSION_MASK) << 16) | (uint64_t)(session))
#define uh_lock_is_locked(w) (((w) & UH_LOCK_BIT) != 0)
#define uh_lock_owner(w) ((uint32_t)((w) & UH_LOCK_SESSION_MASK))
#define uh_lock_old_version(w) (((w) >> 16) & UH_VERSION_MASK)

/* Root map record (class UH_CLASS_ROOTMAP) payload. The table is a
 * UH_CLASS_REFTABLE object of 2*cap refs: pairs {name string, value}.
 * name 0 = empty slot, name 1 = tombstone. Open addressing, linear probe,
 * FNV-1a 64 of the name bytes. cap is a power of two. */
struct uh_rootmap {
	uint64_t table;		/* 16 ref to the reftable */
	uint64_t count;		/* 24 live entries */
	uint64_t used;		/* 32 live + tombstones */
};
#define UH_ROOT_TOMBSTONE 1ull
#define UH_ROOTMAP_MIN_CAP 16u

/* A typed slot of a VALUES object: tag's low 32 bits are a UH_T_* type
 * (0 = empty), the high 32 bits free for the data type's own use; value is
 * the value's 8 bytes (integers sign-extended to 64 bits, f32 widened to
 * f64, references as offsets). Recovery GC follows the value of every
 * slot tagged UH_T_REF, UH_T_STRING or UH_T_BYTES. */
struct uh_slot {
	uint64_t tag;
	uint64_t value;
};
#define uh_slot_type(tag) ((uint32_t)(tag))

/* Start of a PACKED object's payload. The object keeps nvals typed values
 * as two arrays at payload offsets it names: u8 types[nvals] (UH_T_*, 0 =
 * none) and u64 vals[nvals] (8-aligned), with the meaning of a typed
 * slot's tag and value; recovery GC follows every value typed ref, string
 * or bytes. Everything else in the payload, own included, is the data
 * type's (keys, counts, offsets), never read by the GC. */
struct uh_packed_hdr {
	uint16_t nvals;
	uint16_t vals_at;
	uint16_t types_at;
	uint16_t own;
};

/* Whether a packed object of payload bytes keeps its arrays inside the
 * payload, apart from each other and from the first six header bytes. */
static inline int uh_packed_ok(const struct uh_packed_hdr *p, uint32_t payload)
{
	uint64_t v0 = p->vals_at, v1 = v0 + 8ull * p->nvals;
	uint64_t t0 = p->types_at, t1 = t0 + p->nvals;

	return payload >= sizeof(*p) && v0 % 8 == 0 && v0 >= sizeof(*p) && t0 >= 6 &&
	       v1 <= payload && t1 <= payload && (t1 <= v0 || t0 >= v1);
}

/* Start of an ARRAY object's payload; elem_size(elem_type) * length bytes
 * of elements follow, each naturally aligned. */
struct uh_array_hdr {
	uint32_t elem_type;	/* UH_T_* */
	uint32_t reserved;
	uint64_t length;
};

/* ------------------------------------------------------------------ */
/* Sessions. Slot 0 is never used; lock words name slots 1..cap-1. */

#define UH_SESS_FREE 0u
#define UH_SESS_ACTIVE 1u

struct uh_session_ent {
	uint32_t state;		/* 0  UH_SESS_* */
	uint32_t pid;		/* 4  client process id */
	uint64_t token;		/* 8  random; proves ownership on control calls */
	uint64_t log_off;	/* 16 the session's log area */
	uint64_t log_size;	/* 24 */
	uint64_t attach_ns;	/* 32 CLOCK_REALTIME */
	uint64_t proc_start;	/* 40 /proc/<pid>/stat starttime, tells pid reuse */
	/* A log chain link in the extension that a committed transaction
	 * set and heapd may not have written yet (FORMAT.md 7): write
	 * redo_val at redo_off, then clear. 0 = none. Format 10. */
	uint64_t redo_off;	/* 48 */
	uint64_t redo_val;	/* 56 */
};

/* ------------------------------------------------------------------ */
/* Arena directory. Each entry names one arena: a libpmemobj allocation
 * holding slots of one size. A large object is an arena of one slot. */

#define UH_ARENA_UNUSED 0u	/* directory entry free */
#define UH_ARENA_SMALL 1u
#define UH_ARENA_LARGE 2u

struct uh_arena_ent {
	uint64_t off;		/* 0  arena header offset */
	uint32_t kind;		/* 8  UH_ARENA_* */
	uint32_t owner;		/* 12 leasing session slot, 0 = unleased */
	uint32_t slot_size;	/* 16 bytes per slot, header included */
	uint32_t nslots;	/* 20 */
	uint64_t size;		/* 24 bytes of the whole arena */
};

#define UH_ARENA_MAGIC 0x414e5241u	/* "ARNA" */

/* At an arena's offset; the bitmap (u64[bitmap_words], bit set = slot in
 * use) follows it, then the slots from first_slot on (64-byte aligned). */
struct uh_arena_hdr {
	uint32_t magic;		/* 0  UH_ARENA_MAGIC */
	uint32_t slot_size;	/* 4  */
	uint32_t nslots;	/* 8  */
	uint32_t bitmap_words;	/* 12 */
	uint64_t first_slot;	/* 16 offset (from file start) of slot 0 */
	uint64_t dir_index;	/* 24 this arena's directory entry */
	uint32_t gen_seed;	/* 32 generation of a slot's first object */
	uint8_t pad[28];	/* 36 */
};

/* Small-object size classes: slot sizes, header included, ascending.
 * Four classes per doubling from 64 on (steps of a quarter of the power
 * of two below), so a slot wastes less than a fifth of itself at worst
 * (FORMAT.md 5); a superset of version 7's sixteen classes, so every
 * arena of an older heap has a class of this list. */
#define UH_SIZE_CLASSES 35u
static const uint32_t uh_size_class_slot[UH_SIZE_CLASSES] = {
	32, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320,
	384, 448, 512, 640, 768, 896, 1024, 1280, 1536, 1792, 2048, 2560,
	3072, 3584, 4096, 5120, 6144, 7168, 8192, 10240, 12288, 14336, 16384,
};
#define UH_SMALL_MAX 16384u	/* bigger objects get a large-object arena */

/* ------------------------------------------------------------------ */
/* Session log: one redo log per session, in a region heapd leased at
 * attach, grown by extents heapd leases on demand and chains from the
 * log header (next) in the order they are filled. Entries are appended
 * during a block, each whole inside one segment (the log area or an
 * extent); commit persists them, the block's new objects and the header
 * with state COMMITTED and a checksum of all of these, in one barrier;
 * recovery replays the COMMITTED logs whose checksum matches (replay is
 * idempotent) in commit version order, and discards anything else. */

#define UH_LOG_MAGIC 0x474f4c55u	/* "ULOG" */
#define UH_LOG_IDLE 0u
#define UH_LOG_ACTIVE 1u		/* a block is filling the log */
#define UH_LOG_COMMITTED 2u		/* entries are the block's redo */
#define UH_LOG_APPLIED 3u		/* redo applied; locks may still be held */

struct uh_log_hdr {
	uint32_t magic;		/* 0  UH_LOG_MAGIC */
	uint32_t state;		/* 4  UH_LOG_* */
	uint64_t seq;		/* 8  block sequence number */
	uint64_t nbytes;	/* 16 bytes of entries after the header */
	uint64_t nentries;	/* 24 */
	uint64_t checksum;	/* 32 lane sum of seq, entries, new objects (8.3) */
	uint32_t session;	/* 40 owning session slot */
	uint32_t reserved;	/* 44 */
	uint64_t next;		/* 48 first log extent, 0 = none; written by heapd */
	uint64_t version;	/* 56 the block's replay order (a clock value) */
};

/* A log extent: this header, then entries in [64, size). nbytes counts
 * the entries of this extent only (the log header's nbytes those of the
 * log area). heapd writes magic, session, size and next (when it leases
 * or trims); the client writes nbytes and the entries. */
#define UH_LOG_EXT_MAGIC 0x58474c55u	/* "ULGX" */
struct uh_log_ext {
	uint32_t magic;		/* 0  UH_LOG_EXT_MAGIC */
	uint32_t session;	/* 4  owning session slot */
	uint64_t size;		/* 8  bytes of the extent, header included */
	uint64_t nbytes;	/* 16 bytes of entries after the header */
	uint64_t next;		/* 24 next extent, 0 = last */
	uint8_t pad[32];	/* 32 */
};
#define UH_LOG_EXT_MIN 4096u	/* smallest extent heapd leases */

/* Entry kinds. WRITE carries len bytes of new data for [off, off+len).
 * ALLOC and FREE name an object; LOCK records the version an object had
 * before this session locked it (so a rollback can restore it). */
#define UH_LE_WRITE 1u
#define UH_LE_ALLOC 2u
#define UH_LE_FREE 3u
#define UH_LE_LOCK 4u

struct uh_log_ent {
	uint32_t kind;		/* 0  UH_LE_* */
	uint32_t len;		/* 4  data bytes following (WRITE), else 0 */
	uint64_t obj;		/* 8  object offset (no generation bits) */
	uint64_t arg;		/* 16 WRITE: target offset; LOCK: old word */
};				/* data, padded to 8 bytes, follows */

#define UH_LOG_ENT_SIZE 24u

/* ------------------------------------------------------------------ */
/* Helpers shared by heapd and libuniheap. */

static inline uint64_t uh_fnv1a64(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = (const uint8_t *)p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
#define UH_FNV_INIT 0xcbf29ce484222325ull
/* The word hash of hash-map keys (FORMAT.md 11.3; value.c). */
#define UH_WORDS_HASH_INIT 0x9e3779b97f4a7c15ull
#define UH_WORDS_HASH_MUL 0xff51afd7ed558ccdull
#define UH_WORDS_HASH_FIN 0xc4ceb9fe1a85ec53ull

static inline uint32_t uh_type_size(uint32_t type)
{
	switch (type) {
	case UH_T_BOOL: case UH_T_I8: return 1;
	case UH_T_I16: return 2;
	case UH_T_I32: case UH_T_F32: return 4;
	case UH_T_I64: case UH_T_F64: case UH_T_REF:
	case UH_T_STRING: case UH_T_BYTES: return 8;
	default: return 0;
	}
}

/* The change channel of the collection whose header is at off (FORMAT.md
 * 8.9): every writer and waiter must compute the same one. */
static inline uint32_t uh_change_channel(uint64_t off)
{
	return (uint32_t)(((off >> 4) * 0x9e3779b97f4a7c15ull) >> 32) % UH_CHANGE_CHANNELS;
}

static inline int uh_type_is_inline(uint32_t type)
{
	return type == UH_T_ISTRING || type == UH_T_IBYTES;
}

/* Bytes a field takes in its object (FORMAT.md 3.2): an inline field's
 * length word and capacity, else its type's size. */
static inline uint32_t uh_field_size(uint32_t type, uint32_t capacity)
{
	return uh_type_is_inline(type) ? UH_INLINE_LEN_SIZE + capacity : uh_type_size(type);
}

/* Its alignment (the layout rule, FORMAT.md 3.3). */
static inline uint32_t uh_field_align(uint32_t type)
{
	return uh_type_is_inline(type) ? UH_INLINE_LEN_SIZE : uh_type_size(type);
}

static inline int uh_type_is_ref(uint32_t type)
{
	return type == UH_T_REF || type == UH_T_STRING || type == UH_T_BYTES;
}

#define UH_ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((uint64_t)(a) - 1))

/* Layout pins: these are the byte offsets FORMAT.md specifies. */
_Static_assert(sizeof(struct uh_hdr) == UH_HDR_SIZE, "heap header size");
_Static_assert(offsetof(struct uh_hdr, hdr_checksum) == UH_HDR_CHECKSUM_LEN,
	       "checksum follows the immutable part");
_Static_assert(offsetof(struct uh_hdr, class_count) == 256, "mutable part");
_Static_assert(offsetof(struct uh_hdr, gen_seed) == 280, "generation seed");
_Static_assert(offsetof(struct uh_hdr, heapd_starts) == 288, "heapd starts");
_Static_assert(offsetof(struct uh_hdr, lazy_logs) == 384, "lazy logs");
_Static_assert(offsetof(struct uh_hdr, waiters) == 328, "waiters");
_Static_assert(offsetof(struct uh_hdr, cur_size) == 296, "current size");
_Static_assert(offsetof(struct uh_hdr, max_size) == 304, "maximum size");
_Static_assert(offsetof(struct uh_hdr, chunk_map_off) == 312, "chunk map");
_Static_assert(offsetof(struct uh_hdr, clock) == 320, "clock line");
_Static_assert(offsetof(struct uh_hdr, gc_state) == 640, "gc state");
_Static_assert(offsetof(struct uh_hdr, gc_session) == 656, "gc session");
_Static_assert(offsetof(struct uh_hdr, waiting) == 512, "waiting sessions");
_Static_assert(offsetof(struct uh_hdr, changes) == 1024, "change counters");
_Static_assert(sizeof(struct uh_field_desc) == 80, "field descriptor");
_Static_assert(sizeof(struct uh_class_desc) == 288, "class descriptor");
_Static_assert(sizeof(struct uh_objhdr) == UH_OBJHDR_SIZE, "object header");
_Static_assert(sizeof(struct uh_rootmap) == 24, "root map payload");
_Static_assert(sizeof(struct uh_slot) == 16, "typed slot");
_Static_assert(sizeof(struct uh_array_hdr) == 16, "array header");
_Static_assert(sizeof(struct uh_packed_hdr) == 8, "packed header");
_Static_assert(sizeof(struct uh_session_ent) == 64, "session entry");
_Static_assert(sizeof(struct uh_arena_ent) == 32, "arena entry");
_Static_assert(sizeof(struct uh_arena_hdr) == 64, "arena header");
_Static_assert(offsetof(struct uh_arena_hdr, gen_seed) == 32, "arena generation seed");
_Static_assert(offsetof(struct uh_objhdr, class_word) == UH_OBJ_WORD_AT, "class word");
_Static_assert(offsetof(struct uh_objhdr, size) == UH_OBJ_SIZE_AT, "size word");
_Static_assert(sizeof(struct uh_log_hdr) == 64, "log header");
_Static_assert(offsetof(struct uh_log_hdr, next) == 48, "log chain");
_Static_assert(offsetof(struct uh_log_hdr, version) == 56, "log version");
_Static_assert(sizeof(struct uh_log_ext) == 64, "log extent header");
_Static_assert(sizeof(struct uh_log_ent) == UH_LOG_ENT_SIZE, "log entry");

#endif /* UH_FORMAT_H */
