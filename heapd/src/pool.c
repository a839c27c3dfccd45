/*
 * pool.c -- creating, opening and validating the heap file.
 *
 * A heap is a single-file libpmemobj pool (layout "uniheap") whose root
 * object is the uniheap heap header (struct uh_hdr). Creation is two steps:
 * pmemobj_create + pmemobj_root make an all-zero header, then ONE
 * transaction fills it together with the tables, the built-in classes and
 * the root map. A crash between the two leaves a pool with a zero header;
 * opening it with create set finishes the job, without it the message says
 * so.
 *
 * Opening checks, in this order, so that each kind of bad file gets its own
 * message and nothing is ever read beyond the file: the file exists and is
 * regular, it is at least PMEMOBJ_MIN_POOL bytes, it starts with
 * libpmemobj's signature, libpmemobj's check of it and a transaction on
 * each lane heapd uses survive in a sacrificial child (probe.c), libpmemobj
 * opens it, the root object is a uniheap header (magic, format version,
 * checksum), and every table it names lies inside the heap.
 *
 * Once open, heapd reads and writes the heap through a view of its own
 * (map_view: a reservation of max_size bytes, FORMAT.md 1.1), not through
 * libpmemobj's mapping, so that a heap grown past its pool can map in
 * after it; transactions name ranges by offset (hd_tx_add).
 *
 * heapd uses HD_NLANES of libpmemobj's 1024 lanes (PMEMOBJ_NLANES, set by
 * hd_open), so that the probe can try every lane it will use.
 *
 * libpmemobj's unsafe-shutdown (SDS) and bad-block checks exist for
 * NVDIMMs. A heap that is not created for pmem is created with
 * sds.at_create off: its unsafe shutdown count would mean nothing, and a
 * copy of the file moved to other hardware must still open. Bad-block
 * checking (a pool feature libpmemobj enables at creation) needs no
 * override: on an ordinary file it finds no NVDIMM and passes (checked on
 * ext4 and tmpfs with libpmemobj 1.12).
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core.h"

#define PMEMOBJ_SIGNATURE "PMEMOBJ\0"	/* first 8 bytes of every pool */
#define PMEMOBJ_LAYOUT_AT 4096u		/* layout name follows the 4 KiB pool header */

/* ------------------------------------------------------------------ */
/* Persisting run-time state (log replay, bitmaps, clock). */

static void persist_flush(void *ctx, const void *addr, size_t len)
{
	pmemobj_flush((PMEMobjpool *)ctx, addr, len);
}

static void persist_drain(void *ctx)
{
	pmemobj_drain((PMEMobjpool *)ctx);
}

/* memory mode promises survival of process crashes only: the page cache
 * already has every store, so no flush is needed. */
static void persist_none(void *ctx, const void *addr, size_t len)
{
}

static void drain_none(void *ctx)
{
}

static void persist_setup(struct hd *hd)
{
	hd->persist.ctx = hd->pop;
	if (hd->hdr->durability == UH_DUR_MEMORY) {
		hd->persist.flush = persist_none;
		hd->persist.drain = drain_none;
	} else {
		hd->persist.flush = persist_flush;
		hd->persist.drain = persist_drain;
	}
}

/* ------------------------------------------------------------------ */
/* Creation. */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Copy a heap name into the header's 64-byte field, cutting at a UTF-8
 * character boundary so a long file name never leaves half a character. */
static void copy_name(char dst[64], const char *src)
{
	size_t n = strlen(src);
	if (n > 63) {
		n = 63;
		while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
			n--;	/* at most 3 steps back: a UTF-8 char is <= 4 bytes */
	}
	memset(dst, 0, 64);
	memcpy(dst, src, n);
}

/* Measured with libpmemobj 1.12: an 11 MiB pool fits header, tables,
 * one 1 MiB log and one 1 MiB arena; 2 MiB of slack covers the tables and
 * libpmemobj's runs for small allocations (descriptors, root map). */
#define HD_MIN_SLACK (2ull << 20)

uint64_t hd_min_heap_size(uint32_t log_size, uint32_t arena_size)
{
	return PMEMOBJ_MIN_POOL + HD_MIN_SLACK + (log_size ? log_size : UH_LOG_SIZE_DEFAULT) +
	       (arena_size ? arena_size : UH_ARENA_SIZE_DEFAULT);
}

static int check_create_opts(const struct hd_opts *o, char *err, size_t errlen)
{
	char a[32], b[32];
	uint64_t min = hd_min_heap_size(o->log_size, o->arena_size);
	if (o->size < min)
		return hd_err(err, errlen, UH_EINVAL, "heap size %s is too small: minimum %s",
			      hd_fmt_bytes(a, sizeof(a), o->size), hd_fmt_bytes(b, sizeof(b), min));
	if (o->size >= UH_HEAP_SIZE_MAX)
		return hd_err(err, errlen, UH_EINVAL, "heap size %s is too big: references "
			      "hold 48-bit offsets", hd_fmt_bytes(a, sizeof(a), o->size));
	if (o->max_size && o->max_size < o->size)
		return hd_err(err, errlen, UH_EINVAL, "--max-size %s is below --size %s",
			      hd_fmt_bytes(a, sizeof(a), o->max_size),
			      hd_fmt_bytes(b, sizeof(b), o->size));
	if (o->max_size > o->size && o->max_size > UH_GROW_FILE_MAX)
		return hd_err(err, errlen, UH_EINVAL, "--max-size %s is too big: a heap file "
			      "grows to at most %s (FORMAT.md 1.1)",
			      hd_fmt_bytes(a, sizeof(a), o->max_size),
			      hd_fmt_bytes(b, sizeof(b), UH_GROW_FILE_MAX));
	if (o->durability > UH_DUR_MEMORY)
		return hd_err(err, errlen, UH_EINVAL, "unknown durability mode %u", o->durability);
	if (o->name && (!o->name[0] || strlen(o->name) > 63))
		return hd_err(err, errlen, UH_EINVAL, "heap name must be 1..63 bytes");
	if (o->log_size && (o->log_size < 65536 || o->log_size > (1u << 30)))
		return hd_err(err, errlen, UH_EINVAL,
			      "log size %s is out of range: 64 KiB .. 1 GiB",
			      hd_fmt_bytes(a, sizeof(a), o->log_size));
	if (o->arena_size && (o->arena_size < 65536 || o->arena_size > (1u << 30) ||
			      (o->arena_size & (o->arena_size - 1))))
		return hd_err(err, errlen, UH_EINVAL,
			      "arena size %s must be a power of two, 64 KiB .. 1 GiB",
			      hd_fmt_bytes(a, sizeof(a), o->arena_size));
	return 0;
}

/* The growth words (FORMAT.md 1.1, 2.2) of a heap that has no extension:
 * the file is the pool and may not grow. Inside a transaction that has
 * added the words' range. */
static void size_words_fill(struct uh_hdr *h)
{
	h->cur_size = h->heap_size;
	h->max_size = h->heap_size;
	h->chunk_map_off = 0;
}

/* A new heap that may grow to max bytes: its cap, and its chunk map (one
 * bit per chunk of the extension, all clear), in the creation tx. */
static void size_words_grow_tx(struct uh_hdr *h, uint64_t max)
{
	uint64_t chunk = hd_chunk_size(h), ext = hd_ext_start(h);
	h->max_size = max;
	if (max <= ext)
		return;
	uint64_t words = ((max - ext) / chunk + 63) / 64;
	if (words)
		h->chunk_map_off = pmemobj_tx_zalloc(words * 8, HD_TYPE_TABLE).off;
}

/* The most a new heap may grow to (FORMAT.md 1.1, "Sizes"): --max-size,
 * else what the file system holding it has free on top of the pool, at
 * most UH_GROW_FILE_MAX. A user should not have to guess a size; the cost
 * of a generous cap is address space, which every process reserves once,
 * and an arena directory sized for it (32 bytes per arena). A full file
 * system still ends a growth cleanly (posix_fallocate, grow.c). */
static uint64_t max_size_of(const struct hd *hd, const struct hd_opts *o)
{
	if (o->max_size)
		return o->max_size > hd->heap_size ? o->max_size : hd->heap_size;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", hd->path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		slash[slash == dir] = '\0';	/* "/heap" -> "/" */
	struct statvfs fs;
	uint64_t free_bytes = 0;
	if (statvfs(dir, &fs) == 0)
		free_bytes = (uint64_t)fs.f_bavail * fs.f_frsize;
	uint64_t room = UH_GROW_FILE_MAX > hd->heap_size ? UH_GROW_FILE_MAX - hd->heap_size : 0;
	uint64_t max = (hd->heap_size + (free_bytes < room ? free_bytes : room)) /
		       UH_GROW_ALIGN * UH_GROW_ALIGN;
	return max > hd->heap_size ? max : hd->heap_size;
}

/* Header fields, tables and checksum; runs inside the creation tx. */
static void init_header_tx(struct hd *hd, const struct hd_opts *o)
{
	struct uh_hdr *h = hd->hdr;
	uint32_t arena_size = o->arena_size ? o->arena_size : UH_ARENA_SIZE_DEFAULT;
	/* Sized for the largest the heap may grow to: the directory never
	 * moves (FORMAT.md 1.1). */
	uint64_t max = max_size_of(hd, o);
	uint64_t arena_cap = max / arena_size + 64;
	if (arena_cap > UINT32_MAX)
		arena_cap = UINT32_MAX;

	/* Snapshot only the bytes written (up to the clock): a 4 KiB undo
	 * copy needs a log extension that a minimum-size pool cannot spare.
	 * The rest of a fresh root object is zero already. */
	size_t used = offsetof(struct uh_hdr, clock) + sizeof(h->clock);
	hd_tx_add(hd, h, used);
	memset(h, 0, used);
	memcpy(h->magic, UH_MAGIC, 8);
	h->format_version = UH_FORMAT_VERSION;
	h->hdr_size = UH_HDR_SIZE;
	h->heap_size = hd->heap_size;
	h->durability = o->durability ? o->durability : UH_DUR_SYNC;
	h->arena_size = arena_size;
	h->created_ns = hd_now_ns();
	h->self_off = hd->hdr_off;
	copy_name(h->name, o->name ? o->name : base_name(hd->path));
	h->class_cap = UH_CLASS_CAP;
	h->session_cap = UH_SESSION_CAP;
	h->arena_cap = (uint32_t)arena_cap;
	h->log_size = o->log_size ? o->log_size : UH_LOG_SIZE_DEFAULT;
	size_words_fill(h);
	if (max > h->heap_size)
		size_words_grow_tx(h, max);
	/* The three tables share one allocation: libpmemobj carves each size
	 * class out of its own run of chunks, and three classes of runs do
	 * not fit the ~4 MiB a minimum-size (8 MiB) pool leaves. Each table
	 * starts on a cache line. tx_zalloc aborts the transaction (to the
	 * caller's ONABORT) when the pool has no room. */
	uint64_t ct = UH_ALIGN_UP((uint64_t)h->class_cap * 8, 64);
	uint64_t st = UH_ALIGN_UP((uint64_t)h->session_cap * sizeof(struct uh_session_ent), 64);
	uint64_t dt = (uint64_t)h->arena_cap * sizeof(struct uh_arena_ent);
	uint64_t tables = pmemobj_tx_zalloc(ct + st + dt, HD_TYPE_TABLE).off;
	h->class_tab_off = tables;
	h->session_tab_off = tables + ct;
	h->arena_dir_off = tables + ct + st;
	h->clock = 1;
}

static void init_builtin_classes_tx(struct hd *hd)
{
	struct uh_field_desc rm[3];
	memset(rm, 0, sizeof(rm));
	strcpy(rm[0].name, "table");
	rm[0].type = UH_T_REF;
	rm[0].offset = 16;
	rm[0].ref_class = UH_CLASS_REFTABLE;
	strcpy(rm[1].name, "count");
	rm[1].type = UH_T_I64;
	rm[1].offset = 24;
	strcpy(rm[2].name, "used");
	rm[2].type = UH_T_I64;
	rm[2].offset = 32;

	hd_class_write_tx(hd, UH_CLASS_STRING, UH_K_STRING, "uniheap.string", NULL, 0, 0);
	hd_class_write_tx(hd, UH_CLASS_BYTES, UH_K_BYTES, "uniheap.bytes", NULL, 0, 0);
	hd_class_write_tx(hd, UH_CLASS_ROOTMAP, UH_K_RECORD, "uniheap.rootmap", rm, 3,
			  (uint32_t)sizeof(struct uh_rootmap));
	hd_class_write_tx(hd, UH_CLASS_REFTABLE, UH_K_REFTABLE, "uniheap.reftable", NULL, 0, 0);
	hd->hdr->class_count = UH_CLASS_REFTABLE;
}

/* The data types' classes (ids 5..15). Their layouts live in the data
 * types' code and FORMAT.md; the class table only needs their kinds so
 * that any process and recovery GC can walk them. */
static const struct {
	uint32_t id, kind;
	const char *name;
} datatype_classes[] = {
	{ UH_CLASS_ARRAY, UH_K_ARRAY, "uniheap.array" },
	{ UH_CLASS_LIST, UH_K_VALUES, "uniheap.list" },
	{ UH_CLASS_VALUES, UH_K_VALUES, "uniheap.values" },
	{ UH_CLASS_MAP, UH_K_VALUES, "uniheap.map" },
	{ UH_CLASS_MAP_TABLE, UH_K_VALUES, "uniheap.map.table" },
	{ UH_CLASS_MAP_ENTRY, UH_K_VALUES, "uniheap.map.entry" },
	{ UH_CLASS_SMAP, UH_K_VALUES, "uniheap.sortedmap" },
	{ UH_CLASS_SMAP_NODE, UH_K_VALUES, "uniheap.sortedmap.node" },
	{ UH_CLASS_SMAP_LEAF, UH_K_PACKED, "uniheap.sortedmap.leaf" },
	{ UH_CLASS_MAP_IENTRY, UH_K_PACKED, "uniheap.map.entry.inline" },
	{ UH_CLASS_MAP_RTABLE, UH_K_REFTABLE, "uniheap.map.table.refs" },
};
#define N_DATATYPE_CLASSES (sizeof(datatype_classes) / sizeof(datatype_classes[0]))

static int datatype_class_missing(struct hd *hd, uint32_t id)
{
	const uint64_t *tab = (const uint64_t *)(hd->base + hd->hdr->class_tab_off);
	return tab[id] == 0;
}

static void add_datatype_classes_tx(struct hd *hd)
{
	for (size_t i = 0; i < N_DATATYPE_CLASSES; i++)	/* bound: 11 */
		if (datatype_class_missing(hd, datatype_classes[i].id))
			hd_class_write_tx(hd, datatype_classes[i].id, datatype_classes[i].kind,
					  datatype_classes[i].name, NULL, 0, 0);
}

/* A heap made before the data types existed gets their classes on open:
 * the ids are reserved for them, so no user class can hold them. */
static int upgrade_datatype_classes(struct hd *hd, char *err, size_t errlen)
{
	int missing = 0;
	volatile int rc = 0;

	for (size_t i = 0; i < N_DATATYPE_CLASSES; i++)	/* bound: 11 */
		missing |= datatype_class_missing(hd, datatype_classes[i].id);
	if (!missing)
		return 0;
	TX_BEGIN(hd->pop) {
		add_datatype_classes_tx(hd);
	} TX_ONABORT {
		rc = hd_err(err, errlen, UH_ENOSPC, "cannot add the data types' classes to %s: %s",
			    hd->path, pmemobj_errormsg());
	} TX_END
	if (!rc)
		hd_log("info", "upgrade", "heap=%s added=data_type_classes", hd->path);
	return rc;
}

/* A new heapd is starting on this heap: clients of the previous one see
 * heapd_starts move before their next commit (and re-attach). The full
 * fence orders this store before recovery reads their logs' states. */
static int count_start(struct hd *hd, char *err, size_t errlen)
{
	struct uh_hdr *h = hd->hdr;
	volatile int rc = 0;

	TX_BEGIN(hd->pop) {
		hd_tx_add(hd, &h->heapd_starts, sizeof(h->heapd_starts));
		__atomic_add_fetch(&h->heapd_starts, 1, __ATOMIC_SEQ_CST);
	} TX_ONABORT {
		rc = hd_err(err, errlen, UH_EIO, "cannot update the header of %s: %s", hd->path,
			    pmemobj_errormsg());
	} TX_END
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* Waiters of the previous heapd count themselves anew, on a session
	 * of this one, when they see heapd_starts move (FORMAT.md 8.9); this
	 * also drops counts that processes killed mid-registration left. */
	for (uint32_t i = 0; i < UH_LAZY_WORDS; i++)
		__atomic_store_n(&h->waiting[i], 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&h->waiters, 0, __ATOMIC_SEQ_CST);
	return rc;
}

/* No collector runs yet: a cycle the previous heapd left half done is
 * over (its clients see the phase IDLE and stop pushing greys); the
 * cycle number goes on, so a cycle is never taken for an older one. A
 * run-time word: not persisted (every start sets it). */
static void gc_state_idle(struct hd *hd)
{
	uint64_t s = __atomic_load_n(&hd->hdr->gc_state, __ATOMIC_ACQUIRE);
	__atomic_store_n(&hd->hdr->gc_state, uh_gc_state_make(uh_gc_cycle(s), UH_GC_IDLE),
			 __ATOMIC_SEQ_CST);
}

/* Format 1 is format 2 with every generation 0, format 2 is format 3
 * without a packed object, format 3 is format 4 without lazy logs,
 * format 4 is format 5 with every log IDLE (recovery has already replayed
 * or rolled back every log, by the rules of the heap's own version),
 * format 5 is format 6 without a class-15 sorted-map leaf (the class
 * itself was added by upgrade_datatype_classes), format 6 is format 7
 * without an inline field in its class table, format 7 is format 8
 * without an arena of a size class version 8 added, format 8 is format 9
 * that has not grown past its pool, and format 9 is format 10 without a
 * session log or log extent in the extension (a version 9 heapd places
 * none there, and its session entries' redo pair is the zero it
 * reserved), so the upgrade is one
 * transaction: the version and the checksum that covers it (FORMAT.md
 * 13), the generation seed of a version 1 heap, and the growth words (the
 * pool, no growth). A client of the
 * previous heapd still running maps the heap as its old version (without
 * generations, with a library that cannot read packed maps or packed
 * sorted-map leaves, that sums its logs by an older rule, that knows no
 * inline field, whose heapd would refuse the new size classes, that
 * would not map what the heap grows by, or whose heapd would free a log
 * in the extension as a pool allocation): the upgrade waits for it. */
static int upgrade_format(struct hd *hd, char *err, size_t errlen)
{
	struct uh_hdr *h = hd->hdr;
	uint32_t from = h->format_version;
	volatile int rc = 0;

	if (hd->ninherited)
		return hd_err(err, errlen, UH_EIO,
			      "%s has heap format version %u and clients of the previous heapd "
			      "still use it; stop them, then start heapd again to upgrade it "
			      "to version %u", hd->path, from, UH_FORMAT_VERSION);
	TX_BEGIN(hd->pop) {
		hd_tx_add(hd, h, UH_HDR_CHECKSUM_LEN + sizeof(h->hdr_checksum));
		hd_tx_add(hd, &h->gen_seed, sizeof(h->gen_seed));
		hd_tx_add(hd, &h->cur_size, 3 * sizeof(uint64_t));
		h->format_version = UH_FORMAT_VERSION;
		if (!h->cur_size)
			size_words_fill(h);
		if (from == UH_FORMAT_VERSION_V1)
			h->gen_seed = 1;	/* every slot of a version 1 heap is at generation 0 */
		h->hdr_checksum = uh_fnv1a64(h, UH_HDR_CHECKSUM_LEN, UH_FNV_INIT);
	} TX_ONABORT {
		rc = hd_err(err, errlen, UH_EIO, "cannot upgrade %s to format version %u: %s",
			    hd->path, UH_FORMAT_VERSION, pmemobj_errormsg());
	} TX_END
	if (!rc)
		hd_log("info", "upgrade", "heap=%s format_from=%u format_to=%u", hd->path, from,
		       UH_FORMAT_VERSION);
	return rc;
}

/* The root map record lives in its own one-slot (large-kind) arena so that
 * recovery GC finds it like any other object. Its table stays 0 until the
 * first root is set (libuniheap allocates it then). */
static void init_rootmap_tx(struct hd *hd)
{
	uint32_t obj_bytes = UH_OBJHDR_SIZE + (uint32_t)sizeof(struct uh_rootmap);
	uint32_t slot = (uint32_t)UH_ALIGN_UP(obj_bytes, 64);
	uint32_t dir_index;
	uint64_t arena = hd_arena_new_tx(hd, UH_ARENA_LARGE, slot, 0, &dir_index);
	struct uh_arena_hdr *ah = (struct uh_arena_hdr *)(hd->base + arena);
	struct uh_objhdr *oh = (struct uh_objhdr *)(hd->base + ah->first_slot);
	oh->lock = 0;
	oh->class_word = UH_CLASS_ROOTMAP;	/* generation 0: rootmap_off is its reference */
	oh->size = UH_OBJ_VALID | (uint32_t)sizeof(struct uh_rootmap);
	uh_bitmap_set(uh_arena_bitmap(hd->base, arena), 0);
	hd->hdr->rootmap_off = ah->first_slot;
}

int hd_pool_init_locked(struct hd *hd, const struct hd_opts *o, char *err, size_t errlen)
{
	volatile int rc = 0;
	TX_BEGIN(hd->pop) {
		init_header_tx(hd, o);
		init_builtin_classes_tx(hd);
		add_datatype_classes_tx(hd);
		init_rootmap_tx(hd);
		hd->hdr->hdr_checksum = uh_fnv1a64(hd->hdr, UH_HDR_CHECKSUM_LEN, UH_FNV_INIT);
	} TX_ONABORT {
		rc = hd_err(err, errlen, UH_ENOSPC,
			    "cannot initialize heap %s: %s (is --size too small?)", hd->path,
			    pmemobj_errormsg()[0] ? pmemobj_errormsg() : strerror(pmemobj_tx_errno()));
	} TX_END
	return rc;
}

static int create_pool(struct hd *hd, const struct hd_opts *o, char *err, size_t errlen)
{
	int rc = check_create_opts(o, err, errlen);
	if (rc)
		return rc;
	if (o->durability != UH_DUR_PMEM) {
		int off = 0;
		pmemobj_ctl_set(NULL, "sds.at_create", &off);
	}
	hd->pop = pmemobj_create(hd->path, UH_LAYOUT_NAME, (size_t)o->size, 0600);
	if (!hd->pop)
		return hd_err(err, errlen, UH_EIO, "cannot create %s: %s", hd->path,
			      pmemobj_errormsg());
	hd->base = (char *)hd->pop;
	hd->heap_size = o->size;
	PMEMoid root = pmemobj_root(hd->pop, sizeof(struct uh_hdr));
	if (OID_IS_NULL(root)) {
		rc = hd_err(err, errlen, UH_ENOSPC, "cannot create %s: no room for the header: %s",
			    hd->path, pmemobj_errormsg());
	} else {
		hd->hdr = (struct uh_hdr *)pmemobj_direct(root);
		hd->hdr_off = root.off;
		hd->pool_uuid_lo = root.pool_uuid_lo;
		rc = hd_pool_init_locked(hd, o, err, errlen);
	}
	if (rc) {
		/* We made the file and it is of no use: do not leave it behind
		 * for the next start to trip over. */
		pmemobj_close(hd->pop);
		hd->pop = NULL;
		unlink(hd->path);
		return rc;
	}
	hd_log("info", "create", "heap=%s size=%llu durability=%s", hd->path,
	       (unsigned long long)hd->heap_size, uh_durability_name(hd->hdr->durability));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Opening. */

/* Checks on the raw file that keep libpmemobj from ever seeing something
 * that is plainly not a pool (it maps what it is given). */
static int check_file(const char *path, const struct stat *st, char *err, size_t errlen)
{
	if (!S_ISREG(st->st_mode))
		return hd_err(err, errlen, UH_EIO, "%s is not a regular file", path);
	if ((uint64_t)st->st_size < PMEMOBJ_MIN_POOL)
		return hd_err(err, errlen, UH_EIO, "%s is truncated or not a heap (%llu bytes)",
			      path, (unsigned long long)st->st_size);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return hd_err(err, errlen, UH_EIO, "cannot open %s: %s", path, strerror(errno));
	char sig[8];
	ssize_t n = pread(fd, sig, sizeof(sig), 0);
	close(fd);
	if (n != (ssize_t)sizeof(sig) || memcmp(sig, PMEMOBJ_SIGNATURE, 8) != 0)
		return hd_err(err, errlen, UH_EIO,
			      "%s is not a uniheap heap (no libpmemobj pool signature)", path);
	return 0;
}

/* After libpmemobj refused a file: look for our own header in its first
 * HD_SCAN_MAX bytes, by magic plus a matching checksum and self offset.
 * A truncated heap makes libpmemobj fail with a vague "pool initialization
 * failed"; our header still says how big the file should be. Returns 1
 * and fills *h if found. */
#define HD_SCAN_MAX (64ull << 20)
#define HD_SCAN_CHUNK (1u << 20)

static int header_at(int fd, uint64_t off, struct uh_hdr *h)
{
	if (pread(fd, h, sizeof(*h), (off_t)off) != (ssize_t)sizeof(*h))
		return 0;
	return h->self_off == off &&
	       uh_fnv1a64(h, UH_HDR_CHECKSUM_LEN, UH_FNV_INIT) == h->hdr_checksum;
}

static int find_header(const char *path, uint64_t file_size, struct uh_hdr *h)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char *buf = malloc(HD_SCAN_CHUNK);
	int found = 0;
	uint64_t end = file_size < HD_SCAN_MAX ? file_size : HD_SCAN_MAX;
	/* At most HD_SCAN_MAX / HD_SCAN_CHUNK reads; the header is 8-byte
	 * aligned, so its magic never straddles two chunks. */
	for (uint64_t at = 0; buf && !found && at < end; at += HD_SCAN_CHUNK) {
		ssize_t n = pread(fd, buf, HD_SCAN_CHUNK, (off_t)at);
		for (ssize_t i = 0; !found && i + 8 <= n; i += 8) {
			if (memcmp(buf + i, UH_MAGIC, 8) == 0)
				found = header_at(fd, at + (uint64_t)i, h);
		}
		if (n <= 0)
			break;
	}
	free(buf);
	close(fd);
	return found;
}

static int layout_mismatch(const char *path, char *err, size_t errlen)
{
	char layout[64] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (pread(fd, layout, sizeof(layout) - 1, PMEMOBJ_LAYOUT_AT) < 0)
			layout[0] = '\0';
		close(fd);
	}
	char q[96];
	return hd_err(err, errlen, UH_EIO,
		      "%s is not a uniheap heap (a libpmemobj pool of layout %s)", path,
		      hd_log_quote(q, sizeof(q), layout));
}

/* Turn a pmemobj_open failure into a message a user can act on. */
static int open_failed(const char *path, uint64_t file_size, int e, const char *msg,
		       char *err, size_t errlen)
{
	if (e == EAGAIN || e == EWOULDBLOCK)
		return hd_err(err, errlen, UH_EIO,
			      "%s is in use by another process (is another heapd serving it?)",
			      path);
	if (strstr(msg, "layout"))
		return layout_mismatch(path, err, errlen);
	if (e == EACCES || e == EPERM || e == EROFS)
		return hd_err(err, errlen, UH_EIO, "cannot open %s: %s (heapd needs read and write)",
			      path, strerror(e));
	struct uh_hdr h;
	if (find_header(path, file_size, &h) && uh_hdr_cur_size(&h) != file_size)
		return hd_err(err, errlen, UH_EIO, "%s is %s: header says %llu bytes, file has %llu",
			      path, file_size < uh_hdr_cur_size(&h) ? "truncated" : "resized",
			      (unsigned long long)uh_hdr_cur_size(&h),
			      (unsigned long long)file_size);
	return hd_err(err, errlen, UH_EIO,
		      "%s is damaged: libpmemobj cannot open it (%s)", path,
		      msg && msg[0] ? msg : strerror(e));
}

static int header_is_zero(const struct uh_hdr *h)
{
	static const char zero[8];
	return memcmp(h->magic, zero, 8) == 0 && h->format_version == 0 &&
	       h->class_tab_off == 0;
}

/* A table of n entries: inside the heap and 8-byte aligned (its entries
 * hold u64s; a misaligned one would be read with misaligned loads). */
static int table_ok(const struct hd *hd, uint64_t off, uint64_t n, uint64_t entsize)
{
	return off != 0 && off % 8 == 0 && n != 0 && hd_in_heap(hd, off, n * entsize);
}

/* Everything the rest of heapd relies on to never read outside the heap. */
static int check_header_bounds(struct hd *hd, char *err, size_t errlen)
{
	const struct uh_hdr *h = hd->hdr;
	const char *what = NULL;
	if (h->hdr_size != UH_HDR_SIZE)
		what = "header size";
	else if (h->self_off != hd->hdr_off)
		what = "header offset";
	else if (h->durability < UH_DUR_PMEM || h->durability > UH_DUR_MEMORY)
		what = "durability mode";
	else if (h->arena_size < 4096 || h->arena_size > h->heap_size)
		what = "arena size";
	else if (h->log_size < sizeof(struct uh_log_hdr) || h->log_size > h->heap_size)
		what = "log size";
	else if (h->class_cap <= UH_CLASS_FIRST_USER || h->class_cap > UH_CLASS_ID_MAX + 1 ||
		 !table_ok(hd, h->class_tab_off, h->class_cap, 8))
		what = "class table";
	else if (h->session_cap < 2 || h->session_cap > UH_LOCK_SESSION_MASK + 1 ||
		 !table_ok(hd, h->session_tab_off, h->session_cap, sizeof(struct uh_session_ent)))
		what = "session table";
	else if (!table_ok(hd, h->arena_dir_off, h->arena_cap, sizeof(struct uh_arena_ent)))
		what = "arena directory";
	else if (!table_ok(hd, h->rootmap_off, 1, UH_OBJHDR_SIZE + sizeof(struct uh_rootmap)))
		what = "root map offset";
	else if (h->class_count >= h->class_cap)
		what = "class count";
	else if (h->arena_count > h->arena_cap)
		what = "arena count";
	if (what)
		return hd_err(err, errlen, UH_EIO, "heap header of %s is corrupt (bad %s)",
			      hd->path, what);
	return 0;
}

/* The pool and the growth words (FORMAT.md 1.1, 2.2), in order. */
static int check_sizes(struct hd *hd, char *err, size_t errlen)
{
	const struct uh_hdr *h = hd->hdr;
	uint64_t cur = uh_hdr_cur_size(h), max = uh_hdr_max_size(h);
	if (h->heap_size >= UH_HEAP_SIZE_MAX || cur < h->heap_size || max < cur ||
	    max >= UH_HEAP_SIZE_MAX || (max > h->heap_size && max > UH_GROW_FILE_MAX))
		return hd_err(err, errlen, UH_EIO, "heap header of %s is corrupt (bad heap size)",
			      hd->path);
	return 0;
}

/* A file longer than cur_size, up to max_size, is a growth that did not
 * publish its size (FORMAT.md 1.1, step 4): cut back to cur_size.
 * libpmemobj uses no byte past its pool, so its mapping of the longer
 * file never reads the cut part. Returns the file's size after. */
static uint64_t trim_unpublished(struct hd *hd, uint64_t file_size)
{
	const struct uh_hdr *h = hd->hdr;
	uint64_t cur = uh_hdr_cur_size(h);
	if (file_size <= cur || file_size > uh_hdr_max_size(h) || truncate(hd->path, (off_t)cur))
		return file_size;
	hd_log("info", "grow", "heap=%s trimmed=%llu reason=unpublished_growth", hd->path,
	       (unsigned long long)(file_size - cur));
	return cur;
}

static int check_header(struct hd *hd, uint64_t file_size, char *err, size_t errlen)
{
	const struct uh_hdr *h = hd->hdr;
	if (memcmp(h->magic, UH_MAGIC, 8) != 0)
		return hd_err(err, errlen, UH_EIO, "%s is not a uniheap heap: bad magic", hd->path);
	int sum_ok = uh_fnv1a64(h, UH_HDR_CHECKSUM_LEN, UH_FNV_INIT) == h->hdr_checksum;
	/* Versions 1 to 9 are read too: hd_open upgrades them after recovery. */
	if (h->format_version < UH_FORMAT_VERSION_V1 || h->format_version > UH_FORMAT_VERSION)
		/* A later format may checksum differently, so a mismatch
		 * here cannot tell a newer heap from a corrupt one. */
		return hd_err(err, errlen, UH_EIO,
			      "%s has heap format version %u%s; this heapd reads versions %u to %u",
			      hd->path, h->format_version,
			      sum_ok ? "" : " (or a corrupt header)", UH_FORMAT_VERSION_V1,
			      UH_FORMAT_VERSION);
	if (!sum_ok)
		return hd_err(err, errlen, UH_EIO,
			      "heap header of %s is corrupt (checksum mismatch)", hd->path);
	uint64_t cur = uh_hdr_cur_size(h);
	file_size = trim_unpublished(hd, file_size);
	if (cur != file_size)
		return hd_err(err, errlen, UH_EIO, "%s is %s: header says %llu bytes, file has %llu",
			      hd->path, file_size < cur ? "truncated" : "resized",
			      (unsigned long long)cur, (unsigned long long)file_size);
	int rc = check_sizes(hd, err, errlen);
	if (rc)
		return rc;
	hd->heap_size = cur;
	return check_header_bounds(hd, err, errlen);
}

static int never_initialized(struct hd *hd, char *err, size_t errlen)
{
	return hd_err(err, errlen, UH_EIO,
		      "heap %s was never initialized (its creation was interrupted); "
		      "run with --create to finish it", hd->path);
}

/* Find the header; finish an interrupted creation when create is set. */
static int open_root(struct hd *hd, const struct hd_opts *o, uint64_t file_size,
		     char *err, size_t errlen)
{
	size_t rsize = pmemobj_root_size(hd->pop);
	if (rsize != 0 && rsize < sizeof(struct uh_hdr))
		return hd_err(err, errlen, UH_EIO,
			      "%s is not a uniheap heap (root object of %zu bytes)", hd->path, rsize);
	/* pmemobj_root() creates a missing root object: only call it when
	 * there is one, or when we were asked to create. */
	if (rsize == 0 && !o->create)
		return never_initialized(hd, err, errlen);
	PMEMoid root = pmemobj_root(hd->pop, sizeof(struct uh_hdr));
	if (OID_IS_NULL(root))
		return hd_err(err, errlen, UH_EIO, "%s: cannot read the heap header: %s", hd->path,
			      pmemobj_errormsg());
	/* libpmemobj takes the root's offset from the pool descriptor without
	 * checking it against the file (found by test_damaged_heap). */
	if (root.off % 8 || root.off > file_size || file_size - root.off < sizeof(struct uh_hdr))
		return hd_err(err, errlen, UH_EIO,
			      "%s is damaged: libpmemobj's pool descriptor puts the root object at "
			      "offset %llu, outside the %llu-byte file; restore the file from a backup",
			      hd->path, (unsigned long long)root.off, (unsigned long long)file_size);
	hd->hdr = (struct uh_hdr *)pmemobj_direct(root);
	hd->hdr_off = root.off;
	hd->pool_uuid_lo = root.pool_uuid_lo;
	if (!header_is_zero(hd->hdr))
		return check_header(hd, file_size, err, errlen);
	if (!o->create)
		return never_initialized(hd, err, errlen);
	hd->heap_size = file_size;
	struct hd_opts co = *o;
	co.size = file_size;
	int rc = check_create_opts(&co, err, errlen);
	if (!rc)
		rc = hd_pool_init_locked(hd, &co, err, errlen);
	if (!rc)
		hd_log("info", "create", "heap=%s finished=interrupted_creation", hd->path);
	return rc;
}

static int open_pool(struct hd *hd, const struct hd_opts *o, const struct stat *st,
		     char *err, size_t errlen)
{
	int rc = check_file(hd->path, st, err, errlen);
	if (rc)
		return rc;
	hd->heap_size = (uint64_t)st->st_size;
	if ((rc = hd_probe_pool(hd->path, err, errlen)) != 0)
		return rc;
	errno = 0;
	hd->pop = pmemobj_open(hd->path, UH_LAYOUT_NAME);
	if (!hd->pop)
		return open_failed(hd->path, (uint64_t)st->st_size, errno, pmemobj_errormsg(), err,
				   errlen);
	hd->base = (char *)hd->pop;
	return open_root(hd, o, (uint64_t)st->st_size, err, errlen);
}

/* ------------------------------------------------------------------ */

/* heapd's own view of the file (struct hd, FORMAT.md 1.1): reserve
 * max_size bytes of address space, map the file's heap_size bytes at its
 * start, shared, and read and write the heap there from now on. Until
 * then base is libpmemobj's mapping (creation and the header's checks ran
 * there). On DAX the mapping is synchronous, as libpmemobj's is, so that
 * a cache flush alone makes a store durable; elsewhere an msync of either
 * mapping writes back the same page-cache pages. */
static int map_view(struct hd *hd, char *err, size_t errlen)
{
	uint64_t max = uh_hdr_max_size(hd->hdr);
	int fd = open(hd->path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return hd_err(err, errlen, UH_EIO, "cannot open %s: %s", hd->path, strerror(errno));
	char *r = mmap(NULL, (size_t)max, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	void *v = MAP_FAILED;
	if (r != MAP_FAILED) {
		int prot = PROT_READ | PROT_WRITE;
		if (hd->hdr->durability == UH_DUR_PMEM)
			v = mmap(r, (size_t)hd->heap_size, prot,
				 MAP_SHARED_VALIDATE | MAP_SYNC | MAP_FIXED, fd, 0);
		if (v == MAP_FAILED)	/* not DAX, or not asked for pmem */
			v = mmap(r, (size_t)hd->heap_size, prot, MAP_SHARED | MAP_FIXED, fd, 0);
	}
	int e = errno;
	close(fd);	/* the mapping keeps the file */
	if (v == MAP_FAILED) {
		if (r != MAP_FAILED)
			munmap(r, (size_t)max);
		return hd_err(err, errlen, UH_EIO, "cannot map %s (%llu bytes reserved): %s",
			      hd->path, (unsigned long long)max, strerror(e));
	}
	hd->base = r;
	hd->reserved = max;
	hd->hdr = (struct uh_hdr *)(hd->base + hd->hdr_off);
	return 0;
}

static void hd_free(struct hd *hd)
{
	hd_gcfile_close(hd);
	if (hd->reserved)
		munmap(hd->base, (size_t)hd->reserved);
	if (hd->pop)
		pmemobj_close(hd->pop);
	uh_arena_index_free(&hd->ix);
	free(hd->inherited);
	free(hd->gc_asking);
	pthread_mutex_destroy(&hd->mu);
	free(hd->path);
	free(hd);
}

static int open_or_create(struct hd *hd, const struct hd_opts *o, char *err, size_t errlen)
{
	struct stat st;
	if (stat(hd->path, &st) == 0)
		return open_pool(hd, o, &st, err, errlen);
	if (errno != ENOENT)
		return hd_err(err, errlen, UH_EIO, "cannot open %s: %s", hd->path, strerror(errno));
	if (!o->create)
		return hd_err(err, errlen, UH_EIO,
			      "heap file %s does not exist (use --create to make one)", hd->path);
	return create_pool(hd, o, err, errlen);
}

/* The online GC's trigger (struct hd_opts): the defaults unless set. */
static void gc_options(struct hd *hd, const struct hd_opts *o)
{
	/* A managed heap collects by itself: by default a cycle runs once
	 * the slots in use hold HD_GC_FILL_DEFAULT % of what the pool can
	 * hold (and always when a lease finds no space). The leased-bytes
	 * rule stays off unless asked for. A C program that keeps objects
	 * without a root or a pin must pin them or give --gc-fill off
	 * (FORMAT.md 9.3). */
	hd->gc_opts.gc_every = o->gc_every == HD_GC_OFF ? 0 : o->gc_every;
	hd->gc_opts.gc_fill_pct = o->gc_fill_pct == HD_GC_OFF ? 0 :
				  o->gc_fill_pct ? o->gc_fill_pct : HD_GC_FILL_DEFAULT;
	hd->gc_opts.gc_nice = o->gc_nice;
}

int hd_open(const struct hd_opts *o, struct hd **out, char *err, size_t errlen)
{
	if (!o || !o->heap_path || !o->heap_path[0] || !out)
		return hd_err(err, errlen, UH_EINVAL, "no heap file given");
	struct hd *hd = calloc(1, sizeof(*hd));
	if (!hd)
		return hd_err(err, errlen, UH_ENOMEM, "out of memory");
	pthread_mutex_init(&hd->mu, NULL);
	hd->path = strdup(o->heap_path);
	if (!hd->path) {
		hd_free(hd);
		return hd_err(err, errlen, UH_ENOMEM, "out of memory");
	}
	hd->start_mono_ns = hd_mono_ns();
	/* libpmemobj reads PMEMOBJ_NLANES when it opens or creates a pool
	 * (the probe's child inherits it); a value from the environment is
	 * replaced, as the probe tries HD_NLANES lanes. Set here, before heapd
	 * starts any thread: setenv is not thread-safe. */
	char nlanes[16];
	snprintf(nlanes, sizeof(nlanes), "%d", HD_NLANES);
	setenv("PMEMOBJ_NLANES", nlanes, 1);
	int rc = open_or_create(hd, o, err, errlen);
	if (!rc)
		rc = map_view(hd, err, errlen);
	if (!rc) {
		persist_setup(hd);
		uh_arena_index_init(&hd->ix, hd->base, hd->heap_size, hd->hdr);
		rc = upgrade_datatype_classes(hd, err, errlen);
	}
	if (!rc)
		gc_options(hd, o);
	if (!rc)
		rc = count_start(hd, err, errlen);
	if (!rc)
		rc = hd_recover_logs_locked(hd, err, errlen);
	/* The GC file before the mark: whether it was reused for clients of
	 * the previous heapd decides whether the mark may wait (9.4). */
	if (!rc) {
		gc_state_idle(hd);
		if (o->gc_path && o->gc_path[0])
			rc = hd_gcfile_open(hd, o->gc_path, err, errlen);
	}
	if (!rc)
		rc = hd_recover_gc_locked(hd, o->recovery_gc, err, errlen);
	if (!rc && hd->hdr->format_version != UH_FORMAT_VERSION)
		rc = upgrade_format(hd, err, errlen);
	if (rc) {
		hd_free(hd);
		return rc;
	}
	char q[96];
	hd_log("info", "open", "heap=%s name=%s size=%llu durability=%s format=%u",
	       hd->path, hd_log_quote(q, sizeof(q), hd->hdr->name),
	       (unsigned long long)hd->heap_size, uh_durability_name(hd->hdr->durability),
	       hd->hdr->format_version);
	*out = hd;
	return 0;
}

void hd_close(struct hd *hd)
{
	if (!hd)
		return;
	hd_spare_stop(hd);
	hd_gc_stop(hd);
	pthread_mutex_lock(&hd->mu);
	hd_log("info", "close", "heap=%s", hd->path);
	pthread_mutex_unlock(&hd->mu);
	hd_free(hd);
}
