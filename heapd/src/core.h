/*
 * core.h -- private declarations shared by the files of heapd's C core.
 * The gRPC adapter (server*.cc) never sees this file: it uses heapd.h
 * only.
 *
 * Layers: a file of the core calls only files listed below it, never one
 * above (files on one line do not call each other), so no two files call
 * each other in a circle; scripts/cycles.py checks that. Top to bottom:
 *
 *   pool.c              create, open (check, upgrade, recover), close
 *   probe.c             libpmemobj's check of a pool, in a child
 *   status.c            read-only views: status, counters, roots
 *   recovery.c          start-up: session logs, then recovery GC
 *   collector.c         online GC: its thread, the cycle, the trigger
 *   gc.c                recovery GC: class digest, mark, sweep; online mark
 *   sessions.c          attach, detach, reap; the lock clock
 *   logs.c              session logs and their extents
 *   arenas.c classes.c  the arena directory and leases; the class table
 *   gcfile.c            the GC file (9.3): made or reused, areas zeroed
 *   util.c log.c        clocks, errors, heap bounds; the structured log
 *   growcrash.c         test hook: crash points of growth work
 *
 * The inline accessors of the header's tables below belong to the bottom
 * layer. A function a lower file needs moves down to where both can reach
 * it; should a lower file ever have to reach up on a rare path, it gets a
 * function pointer set at hd_open, not a call. main.c and the adapter
 * (through heapd.h) sit above all of them.
 *
 * Locking: struct hd has one mutex. Every public hd_* entry point takes it
 * (hd_open runs before anyone else can see the handle); functions named
 * *_locked expect the caller to hold it and never take it themselves, so
 * there is no lock order to get wrong.
 *
 * Writes: everything heapd changes in the heap header, class table,
 * session table and arena directory is changed inside a libpmemobj
 * transaction, except run-time state (bitmaps, lock words, the clock) which
 * is written in place and persisted through hd->persist.
 */
#ifndef HEAPD_CORE_H
#define HEAPD_CORE_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <libpmemobj.h>

#include "arena.h"
#include "format.h"
#include "gcfile.h"
#include "heapd.h"
#include "logapply.h"
#include "u64.h"
#include "persist.h"

/* libpmemobj type numbers of what heapd allocates (only for debugging
 * tools such as pmempool info; heapd never iterates by type). */
#define HD_TYPE_TABLE 1u	/* class table, session table, directory */
#define HD_TYPE_CLASS 2u	/* class descriptor */
#define HD_TYPE_ARENA 3u	/* arena (small or large) */
#define HD_TYPE_LOG 4u		/* session log area */

/* libpmemobj puts a 16-byte header in front of every allocation; an arena
 * request of arena_size - 16 fills its chunks exactly (a request of
 * arena_size would spill into one more unit and waste ~3%). */
#define HD_PMEMOBJ_ALLOC_HDR 16u

/* libpmemobj lanes heapd uses at run time (PMEMOBJ_NLANES, set by
 * hd_open; a pool has 1024). heapd's transactions are few and short
 * (sessions, arenas, classes, log extents, the header), and each runs
 * under hd->mu or in hd_open, so one lane at a time is in use and 16 are
 * plenty. The probe (probe.c) runs a transaction on each of these lanes
 * before heapd opens a pool. */
#define HD_NLANES 16

struct hd {
	pthread_mutex_t mu;
	PMEMobjpool *pop;
	/* heapd's own view of the file (FORMAT.md 1.1): a reservation of
	 * max_size bytes of address space whose first heap_size bytes map the
	 * file, shared, so that a grown part maps in after them and no
	 * pointer ever moves. libpmemobj keeps its own mapping of the same
	 * file for its calls: transactions name ranges by {pool uuid,
	 * offset} (hd_tx_add), never by a pointer into base. */
	char *base;			/* file start: offsets are from here */
	uint64_t reserved;		/* bytes of address space at base */
	uint64_t pool_uuid_lo;		/* for PMEMoids of offsets */
	uint64_t last_grow_us;		/* the last growth's time (grow.c) */
	uint64_t grow_points;		/* growth crash points passed (growcrash.c) */
	struct uh_hdr *hdr;		/* the root object */
	uint64_t hdr_off;
	uint64_t heap_size;
	char *path;			/* owned */
	struct uh_persist persist;	/* pmemobj_flush/drain, no-ops in memory mode */
	struct uh_arena_index ix;	/* arena lookups for log finish; rebuilt on a miss */
	uint64_t start_mono_ns;		/* CLOCK_MONOTONIC at open, for uptime */
	struct hd_recovery rec;		/* last start-up recovery */
	uint64_t rec_t0;		/* CLOCK_MONOTONIC when it began */
	int rec_alive;			/* clients of a previous heapd still run */
	struct hd_stats stats;		/* counters since start */
	/* Sessions of a previous heapd whose clients were still running at
	 * start (recovery left them alone). Nobody watches their streams, so
	 * each attach reaps the ones whose process has gone since.
	 * inherited[slot] != 0; owned, session_cap bytes, NULL if none. */
	uint8_t *inherited;
	uint32_t ninherited;
	/* The GC file (gcfile.c, common/gcfile.h), mapped whole; NULL if
	 * none. Clients map it too; heapd writes only each ring's tail and
	 * zeroes an area when its slot changes hands. */
	char *gcf;
	uint64_t gcf_size;
	int gcf_reused;			/* the file of a previous heapd, kept for its clients */
	char *gc_path;			/* owned */
	struct hd_collector *col;	/* the online collector (collector.c); NULL: not started */
	/* Hooks the collector sets when it starts, so arenas.c, below it,
	 * reaches it without a call up (see the layer list). gc_leased:
	 * bytes leased since the last cycle (atomic). gc_kick: an arena was
	 * leased, check the trigger (called with hd->mu held). gc_full: a
	 * lease found no space: run a cycle and wait for it, bounded (called
	 * WITHOUT hd->mu); 0 if none ended in time, 2 if it freed something, else 1. */
	uint64_t gc_leased;
	/* Arena bytes when a lease last found no space (0: never): what the
	 * pool really holds (libpmemobj's metadata, logs and fragmentation
	 * take their share of heap_size); the heap fill rule measures
	 * against it. Written by arenas.c under hd->mu. */
	uint64_t gc_arena_cap;
	/* Per session slot, nonzero while a lease or an attach of it waits
	 * for space (arenas.c): it cannot look at its arenas meanwhile, so
	 * another's wait for looks skips it. session_cap bytes, made under
	 * hd->mu at the first wait; read without it (atomic). */
	uint8_t *gc_asking;
	void (*gc_kick)(struct hd *hd);
	int (*gc_full)(struct hd *hd);
	/* A small arena's memory reserved ahead in the pool (arenas.c,
	 * hd_spare_start): volatile (libpmemobj drops an unpublished
	 * reservation at a crash), published by the next small arena's
	 * transaction, so that the lease does not wait for its zeroing;
	 * reserved again by spare_thread after each use. Under hd->mu. */
	struct hd_spare *spare;		/* NULL: not started */
	struct hd_opts gc_opts;		/* gc_every, gc_fill_pct (resolved at open) */
	/* Clients' commits and conflicts (their GC areas' counters, FORMAT.md
	 * 9.3) since this heapd started, for its metrics (gcfile.c, under
	 * hd->mu): gc_counted[slot] is what of slot's area is counted in
	 * gc_ended already (or, in a reused file, was there at start: a
	 * previous heapd's); owned, session_cap entries, NULL without a file. */
	uint64_t gc_ended[2];		/* commits, conflicts */
	uint64_t (*gc_counted)[2];
	/* Grey references a session pushed that the collector had not yet
	 * consumed when its area was zeroed (the session ended while a
	 * cycle marked): the old values its stores overwrote, maybe the
	 * only trace left of a reference it moved, so that cycle greys them
	 * at its next drain (collector.c). gc_left_lost: the cycle in which
	 * such a session had dropped pushes (its ring overflowed) or they
	 * could not be kept (no memory): that cycle is given up. Both
	 * under hd->mu; emptied when a cycle begins. */
	struct u64vec gc_left;
	uint64_t gc_left_lost;
};

/* ---- gcfile.c ---- the GC file (FORMAT.md 9.3): created, or reused
 * for the same heap when clients of a previous heapd still map it, at
 * hd_open; removed at hd_close unless sessions are still attached. A
 * session's area is zeroed when the slot is given to a new session and
 * after the session is reaped. */
int hd_gcfile_open(struct hd *hd, const char *path, char *err, size_t errlen);
void hd_gcfile_close(struct hd *hd);
void hd_gc_area_reset(struct hd *hd, uint32_t slot);
/* Re-attach: the old session's pins [0, pin_hwm) copied to the new
 * session's area before the old slot is freed, so no moment finds them
 * in neither active session, and what its ring holds kept for a running
 * cycle (FORMAT.md 9.3). The old area is left as it is (a client that
 * predates the move copies from it). */
void hd_gc_area_move_pins(struct hd *hd, uint32_t from, uint32_t to);
/* The clients' commits and conflicts since this heapd started: what
 * ended sessions' areas held, plus the active sessions' areas now.
 * Caller holds hd->mu. 0 without a GC file. */
void hd_gc_client_counts_locked(struct hd *hd, uint64_t *commits, uint64_t *conflicts);
/* Whether a session's grey ring lost pushes of cycle `cycle` (NULL if it
 * did not; else why), and its head and tail. A client clears overflow in
 * its first busy section that sees a new cycle's MARK: one that has seen
 * nothing of this cycle yet dropped nothing of it (a stale flag). Head
 * and tail further apart than the ring holds are a damaged line. The
 * collector's drain and a reset of an ended session's area both ask. */
const char *hd_gc_ring_lost(struct uh_gc_sess *gs, uint64_t cycle, uint64_t *head,
			    uint64_t *tail);
static inline struct uh_gc_sess *hd_gc_sess(struct hd *hd, uint32_t slot)
{
	return hd->gcf ? (struct uh_gc_sess *)(hd->gcf + UH_GC_AREA_OFF(slot)) : NULL;
}
static inline uint64_t *hd_gc_ring(struct hd *hd, uint32_t slot)
{
	return (uint64_t *)(hd->gcf + UH_GC_AREA_OFF(slot) + sizeof(struct uh_gc_sess));
}
static inline uint64_t *hd_gc_nursery(struct hd *hd, uint32_t slot)
{
	return (uint64_t *)(hd->gcf + UH_GC_AREA_OFF(slot) + UH_GC_NURSERY_OFF);
}
static inline uint64_t *hd_gc_looked(struct hd *hd, uint32_t slot)
{
	return (uint64_t *)(hd->gcf + UH_GC_AREA_OFF(slot) + UH_GC_LOOKED_OFF);
}
static inline uint64_t *hd_gc_pins(struct hd *hd, uint32_t slot)
{
	return (uint64_t *)(hd->gcf + UH_GC_AREA_OFF(slot) + UH_GC_PIN_OFF);
}

/* ---- util.c ---- */
uint64_t hd_now_ns(void);		/* CLOCK_REALTIME */
uint64_t hd_mono_ns(void);		/* CLOCK_MONOTONIC */
/* printf into err (if not NULL) and return code. */
int hd_err(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "1 MiB", "63.5 MiB", "512 KiB", "100 bytes": for messages. */
const char *hd_fmt_bytes(char *buf, size_t len, uint64_t n);
/* Nonzero if [off, off+len) lies inside the heap (overflow-safe). */
int hd_in_heap(const struct hd *hd, uint64_t off, uint64_t len);

/* Transactions name a range of the heap by its offset: a pointer into
 * heapd's view is not one libpmemobj knows (struct hd). */
static inline PMEMoid hd_oid(const struct hd *hd, const void *p)
{
	PMEMoid o = { hd->pool_uuid_lo, (uint64_t)((const char *)p - hd->base) };
	return o;
}
static inline void hd_tx_add(struct hd *hd, const void *p, size_t len)
{
	pmemobj_tx_add_range(hd_oid(hd, p), 0, len);
}
static inline void hd_tx_xadd(struct hd *hd, const void *p, size_t len, uint64_t flags)
{
	pmemobj_tx_xadd_range(hd_oid(hd, p), 0, len, flags);
}

/* Tables of the header, as pointers into the mapping. */
static inline uint64_t *hd_class_tab(struct hd *hd)
{
	return (uint64_t *)(hd->base + hd->hdr->class_tab_off);
}
static inline struct uh_session_ent *hd_session_tab(struct hd *hd)
{
	return (struct uh_session_ent *)(hd->base + hd->hdr->session_tab_off);
}
static inline struct uh_arena_ent *hd_arena_dir(struct hd *hd)
{
	return (struct uh_arena_ent *)(hd->base + hd->hdr->arena_dir_off);
}

/* 0 if slot names an attached session, else UH_EINVAL with err set. A
 * read of the session table, here rather than in sessions.c because
 * arenas.c and logs.c, below sessions.c, check the session a request
 * names before they serve it. */
static inline int hd_session_active_locked(struct hd *hd, uint32_t slot, char *err,
					   size_t errlen)
{
	if (slot == 0 || slot >= hd->hdr->session_cap ||
	    hd_session_tab(hd)[slot].state != UH_SESS_ACTIVE)
		return hd_err(err, errlen, UH_EINVAL, "unknown session %u", slot);
	return 0;
}

/* ---- log.c ---- */
/* Copy s into buf as one logfmt value: as is when it is a plain token,
 * else double-quoted with " and \ escaped and control bytes dropped.
 * Returns buf. Can't fail (truncates). */
const char *hd_log_quote(char *buf, size_t len, const char *s);

/* ---- pool.c ---- */
/* Smallest heap that holds libpmemobj's own metadata (PMEMOBJ_MIN_POOL
 * leaves only ~4 MiB of an 8 MiB pool to allocate), the header, the
 * tables, one session log and one arena. 0 means the defaults. */
uint64_t hd_min_heap_size(uint32_t log_size, uint32_t arena_size);
/* Fill a freshly created (all-zero) root object: header, tables, built-in
 * classes, root map. One transaction. */
int hd_pool_init_locked(struct hd *hd, const struct hd_opts *o, char *err, size_t errlen);

/* ---- grow.c ---- */
/* The most one growth on demand adds (FORMAT.md 1.1): a block waits on
 * its posix_fallocate, about 0.5 s for 1 GiB on tmpfs. */
#define HD_GROW_STEP_MAX (1ull << 30)
/* The file grown to at least want bytes and the size published; caller
 * holds hd->mu. */
int hd_grow_locked(struct hd *hd, uint64_t want, char *err, size_t errlen);

/* ---- growcrash.c ---- */
/* A crash point of growth work: with UNIHEAP_GROW_CRASH_AT=k, heapd is
 * SIGKILLed at the k-th (test hook). Caller holds hd->mu. */
void hd_grow_crash_point(struct hd *hd, const char *where);

/* ---- chunks.c ---- */
/* Bytes of a chunk of the extension, arena_size (FORMAT.md 1.1). */
uint64_t hd_chunk_size(const struct uh_hdr *h);
/* Where the extension starts (FORMAT.md 1.1); whether off lies in it. */
uint64_t hd_ext_start(const struct uh_hdr *h);
int hd_in_ext(const struct hd *hd, uint64_t off);
/* A zeroed, durable room of bytes in the extension, its chunks marked in
 * the caller's transaction; aborts it with ENOMEM when there is none.
 * Caller holds hd->mu. */
uint64_t hd_chunks_alloc_tx(struct hd *hd, uint64_t bytes);
/* Mark (on) or clear the chunks of [off, off + bytes) in the caller's
 * transaction. */
void hd_chunks_mark_tx(struct hd *hd, uint64_t off, uint64_t bytes, int on);

/* ---- probe.c ---- */
/* Run libpmemobj's check of path, then a transaction on each of the
 * HD_NLANES lanes of a copy-on-write open, in a child that may crash or
 * hang without taking heapd down. 0 when the pool looks sound or could not
 * be opened at all (pmemobj_open then says why); UH_EIO with err naming
 * the file, the damage and the remedy when the child died, hung or found
 * libpmemobj's metadata inconsistent. */
int hd_probe_pool(const char *path, char *err, size_t errlen);

/* ---- classes.c ---- */
/* Descriptor of class_id if its table entry names a well-formed descriptor
 * inside the heap, else NULL. Never reads outside the heap. */
const struct uh_class_desc *hd_class_desc_locked(struct hd *hd, uint32_t class_id);
/* Write a descriptor inside the caller's transaction and publish it in the
 * class table. Used for the built-ins at creation and by registration. */
int hd_class_write_tx(struct hd *hd, uint32_t class_id, uint32_t kind, const char *name,
		      const struct uh_field_desc *fields, uint32_t nfields,
		      uint32_t payload_size);
const char *hd_type_name(uint32_t type);

/* ---- sessions.c ---- */
/* Per-session outcome of a reap, for the caller's counters. */
struct hd_reap_result {
	int replayed;		/* a committed log was rolled forward */
	int rolled_back;	/* an in-flight block was rolled back */
	uint64_t locks_released;
};
/* Roll the session's log forward or back, release its locks, take its
 * arenas back (freeing unused large ones), free its log area, clear its
 * slot. Used by detach and by start-up recovery. The steps are ordered so
 * that a crash anywhere in between is repaired by doing it again. */
void hd_session_reap_locked(struct hd *hd, uint32_t slot, struct hd_reap_result *r);
/* The commit version of the session's log if recovery would replay it
 * (committed, checksum good), else 0: start-up recovery reaps dead
 * sessions in this order (FORMAT.md 9, step 1). */
uint64_t hd_session_replay_version(struct hd *hd, uint32_t slot);
/* Nonzero if the process that attached e is still running (same pid and
 * same /proc start time). */
int hd_session_owner_alive(const struct uh_session_ent *e);
/* Raise the clock to v unless it is there already (never lower it). The
 * clock is shared with clients, which may advance it at the same time:
 * an atomic compare-and-swap, not persisted here. */
void hd_clock_raise(struct hd *hd, uint64_t v);
/* Reap inherited sessions whose process has exited; see struct hd. */
void hd_reap_inherited_locked(struct hd *hd);
/* starttime (field 22) of /proc/PID/stat, 0 if unknown. */
uint64_t hd_proc_start(uint32_t pid);

/* ---- arenas.c ---- */
/* The header of directory entry idx if the entry is in use and agrees with
 * the arena header it names (magic, sizes, index, slots inside the
 * allocation), else NULL. Never reads outside the heap. */
const struct uh_arena_hdr *hd_arena_hdr_ok(struct hd *hd, uint32_t idx);
/* Sum of the sizes of all arenas; *count (if not NULL) = entries in use. */
uint64_t hd_arena_bytes_locked(struct hd *hd, uint32_t *count);
/* Bytes the arenas in the pool take, libpmemobj's headers included. */
uint64_t hd_pool_arena_bytes_locked(struct hd *hd);
/* What arenas and logs leave free of a growable heap's pool for class
 * descriptors and libpmemobj's overhead (FORMAT.md 1.1). */
#define HD_POOL_RESERVE_MORE (8ull << 20)
/* Inside the caller's transaction: every arena the session leases goes
 * back to nobody; large ones with no object in them are freed. */
void hd_arenas_release_tx(struct hd *hd, uint32_t session);
/* Allocate a zeroed arena and its directory entry inside the caller's
 * transaction; returns the arena offset. SMALL: header.arena_size bytes of
 * slot_size slots. LARGE: one slot of slot_size. Aborts the transaction
 * with ENOSPC when the pool or the directory is full. */
uint64_t hd_arena_new_tx(struct hd *hd, uint32_t kind, uint32_t slot_size, uint32_t owner,
			 uint32_t *dir_index);
/* Free a large arena whose slot is unused and clear its directory entry,
 * in one transaction. 0 or UH_EINTERNAL. */
int hd_large_free_locked(struct hd *hd, uint32_t dir_index);
/* A lease or attach found no space (hd->mu held, released meanwhile):
 * run a GC cycle, wait until the sessions holding small arenas other
 * than `session` (0: none) have looked at them after it, and say whether
 * to try again; t counts the cycles (zeroed at first), bounded (arenas.c). */
struct hd_space_try {
	int tried;		/* cycles run for this request */
	uint64_t c0;		/* the last cycle swept when the first one began */
	uint64_t t0;		/* when the first one began (hd_mono_ns) */
	int grew;		/* the heap was grown for it (arenas.c) */
};
int hd_gc_for_space_locked(struct hd *hd, uint32_t session, struct hd_space_try *t);
/* What a lease, an attach or a log extent does when the pool and the
 * extension had no room (tx_errno ENOMEM): a GC cycle, then once a
 * growth by at least need bytes of a heap that may grow (FORMAT.md 1.1).
 * Says whether to try again; *why is the growth's error if it was
 * refused (err says which limit). arenas.c. */
int hd_make_room_locked(struct hd *hd, uint32_t session, int tx_errno, uint64_t need,
			struct hd_space_try *t, int *why, char *err, size_t errlen);
/* Give every small arena that no session leases and that holds no object
 * (bitmap all clear, no valid bit) back to the pool (FORMAT.md 6.3), each
 * with its directory entry in one transaction under hd->mu (which the
 * caller does not hold); hd->ix follows. Returns how many. The online
 * collector's, after a sweep. */
uint32_t hd_arenas_free_empty(struct hd *hd);

/* ---- logs.c ---- */
/* The session's log header if its area lies in the heap and is its own. */
struct uh_log_hdr *hd_session_log_locked(struct hd *hd, uint32_t slot);
/* Where the session's log lives, to be read by the rules of the heap's own
 * format (a format 3 log's checksum has no new objects). */
struct uh_log_loc hd_log_loc(struct hd *hd, uint32_t slot, struct uh_log_hdr *log);
/* Inside the caller's transaction: free every extent chained from log and
 * clear its link. */
void hd_log_extents_free_tx(struct hd *hd, uint32_t slot, struct uh_log_hdr *log);
/* Room of bytes for a log area or extent inside the caller's transaction:
 * a pool allocation (zeroed if zero), else zeroed chunks of the extension;
 * aborts the transaction with ENOMEM when neither has room. Free it with
 * hd_log_room_free_tx (same transaction rules). hd_log_room_write_tx
 * copies len bytes (a header) to the room at off, fresh memory: flushed
 * at commit in the pool, persisted before it in the extension. */
uint64_t hd_log_room_tx(struct hd *hd, uint64_t bytes, int zero);
void hd_log_room_free_tx(struct hd *hd, uint64_t off, uint64_t bytes);
void hd_log_room_write_tx(struct hd *hd, uint64_t off, const void *src, size_t len);
/* Make the log chain link that session slot's redo pair records (a link in
 * the extension, set by a committed transaction), then clear the pair
 * (FORMAT.md 7). Called after such a commit, and at start for every slot. */
void hd_log_redo_locked(struct hd *hd, uint32_t slot);

/* ---- collector.c ---- the online GC's thread (FORMAT.md 9.3): hd_gc_start
 * and hd_gc_stop (heapd.h). Locks: the collector has its own mutex,
 * col->mu; hd->mu may be held when col->mu is taken (gc_kick), never the
 * other way round. */

/* ---- gc.c ---- */
/* Recovery GC (see gc.c): mark from the root map and from the arenas of
 * clients still running (hd->inherited), null invalid references, free
 * what is unreachable, unlease the arenas of the others, raise the clock.
 * Fills hd->rec's object counters. Needs hd->ix built. Fails, with err
 * set, when there is no memory for its tables or the root map is damaged
 * (collecting then would free every object). */
int hd_recovery_gc_locked(struct hd *hd, char *err, size_t errlen);

/* Online mark (collector.c): the recovery GC's digest, checks and scans
 * over a snapshot of the arena index, read-only (see gc.c). new digests
 * the class table (hold hd->mu) and gives every span of snap a side
 * bitmap; snap must outlive the mark. NULL: out of memory. */
struct gc;
struct gc *hd_mark_new_locked(struct hd *hd, struct uh_arena_index *snap);
void hd_mark_free(struct gc *g);
/* Grey word (a root, pin or ring entry): pushed unless it is no
 * reference or names a slot marked already; checked when popped, so a
 * word that is no valid reference to an object of the snapshot is ignored
 * (conservative). 0 or UH_ENOMEM. */
int hd_mark_grey(struct gc *g, uint64_t word);
/* Scan up to budget objects; *more: the stack is not empty yet. 0 or
 * UH_ENOMEM. */
int hd_mark_drain(struct gc *g, uint64_t budget, int *more);
/* The mark bit of slot of the snapshot's span number span. */
int hd_mark_test(const struct gc *g, uint32_t span, uint32_t slot);
uint64_t hd_mark_live(const struct gc *g);

/* ---- recovery.c ---- */
/* Start-up recovery, in two calls with the GC file opened between them
 * (whether it was reused decides the second): first the session logs
 * (FORMAT.md 9 step 1), then the recovery GC (steps 2-5), or, when 9.4
 * allows, nothing but a note that an online cycle is to run at once.
 * Together they fill hd->rec; the second logs one line and stamps the
 * header with where the heap is served. They fail only when the heap
 * cannot be made safe (damaged root map, no memory for the mark stack);
 * err says which. */
int hd_recover_logs_locked(struct hd *hd, char *err, size_t errlen);
int hd_recover_gc_locked(struct hd *hd, int mode, char *err, size_t errlen);

#endif /* HEAPD_CORE_H */
