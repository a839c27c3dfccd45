/*
 * uhint.h -- libuniheap's private state: the session handle, its block
 * (transaction) state and the helpers the client files share.
 *
 * Ownership: a uh_heap owns its control session (uhc), its arena lists
 * and its block state. Its mapping (struct uh_mapping) is shared with the
 * sessions opened from it and reference counted; nothing else is shared.
 *
 * Layers. A file calls only files on its own line or the lines above it,
 * never below (scripts/cycles.py checks it, with the #include graph and
 * the symbols of the object files):
 *   shared     common/ (format.h, arena, persist.h, logapply, error,
 *              pmtrace, sockpath, utf8, rootmap_read, names, u64:
 *              heapd's too); control.cc (the gRPC client), ctlcopy.c
 *              (its fresh copy in a forked child)
 *   handle     handle.c (NULL and fork checks), barrier.c (flush,
 *              barrier, lazy logs, test hooks), session.c (a Welcome
 *              bound to the handle), wake.c (after a commit: change
 *              counters, waking waiters), gcring.c (the online GC's
 *              busy sections and grey ring: the mapping and the header
 *              only)
 *   log        logchain.c (the redo log's segments)
 *   blocks     tx.c (blocks, lock words, uh_run)
 *   optimistic optread.c (reads outside blocks; falls back to uh_run)
 *   objects    object.c (references checked, class descriptors), pins.c
 *              (the GC file mapped, pins for the online GC)
 *   alloc      alloc.c (slots from leased arenas)
 *   API        field.c (fields, strings, bytes), copy.c (string and
 *              bytes values copied out), value.c (slots, keys), classes.c,
 *              array.c, list.c, map*.c, smap*.c, rootmap.c, check.c,
 *              wait.c (waiting for changes)
 *   recovery   reattach.c (re-attach after heapd restarted), forked.c
 *              (a handle's first use in a forked child: a new session)
 *   lifetime   info.c (versions, info, stats), heap.c (connect, close),
 *              connwait.c (a new connection waits for heapd)
 * The two ways down that would be calls up go through tables set at
 * connect, on rare paths only: reattach.c's recovery (h->recover:
 * uh_reattach, uh_ctl_ready, uh_ctl_failed; handle.c's fork check:
 * uh_fork_rebuild) and barrier.c's persist hooks
 * for logapply.c (h->persist; its overwrite hook, gcring.c's, is set per
 * commit while the collector marks).
 */
#ifndef UH_UHINT_H
#define UH_UHINT_H

#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "arena.h"
#include "control.h"
#include "error.h"
#include "format.h"
#include "gcfile.h"
#include "persist.h"
#include "u64.h"
#include "uniheap.h"

struct pmem2_map;
struct pmem2_source;

/* The block in progress (one per handle). */
struct uh_tx {
	int depth;			/* nesting; 0 = no block */
	int doomed;			/* error that rolled the block back, or 0 */
	/* The object the last block lost on (locked by another session, or
	 * changed since read), 0 if unknown: a block that starves waits for
	 * its lock before it retries (starve.c). */
	uint64_t lost_on;
	uint64_t pos;			/* bytes of log entries in use, all segments */
	uint64_t nentries;
	struct u64map writes;		/* target offset -> the entry's heap offset */
	uint64_t rv;			/* clock when the block began (snapshot) */
	struct u64map reads;		/* object -> version it had when read */
	struct u64vec reads_list;	/* the same objects, for validation */
	/* The object asked about last (0: none) and what the block holds of
	 * it (tx_how): a node's slots are read and written in runs, so this
	 * spares most lookups in the maps around it. */
	uint64_t last_obj;
	int last_how;			/* UH_TX_NEW, UH_TX_LOCKED or 0 (neither) */
	int last_seen;			/* 0 (neither): read, at version last_ver */
	uint64_t last_ver;
	uint64_t last_img;		/* locked: its image entry's offset, or 0 */
	struct u64map images;		/* object -> its image entry (uh_tx_write_image) */
	struct u64map locks;		/* object -> lock word before we took it */
	struct u64map news;		/* object -> slot bytes (allocated here) */
	struct u64vec news_list;	/* the same objects, in order */
	struct u64vec locked_list;	/* objects locked, for release */
	struct u64vec freed_list;	/* objects freed, for slot release */
	struct u64vec changed;		/* collections changed (wake.c), each once */
};

/* A data type's decoded header (a map's table, counts...), kept across
 * optimistic reads while the header's lock word stays what it was when
 * the header was read (optread.c). */
#define UH_VIEW_BYTES 96
/* Where a hash-map entry of class UH_CLASS_MAP_IENTRY keeps its key's
 * bytes, from the payload's start (map_int.h, DT_IE_KEY): an inline value
 * (uh_value_bytes) lies past it. */
#define UH_MAP_ENTRY_KEY_AT 24u
#define UH_VIEW_CACHE 4
struct uh_view {
	uh_off obj;			/* 0: empty */
	uint64_t word;
	uint32_t kind;			/* whose view: UH_CLASS_MAP, UH_CLASS_SMAP */
	unsigned char bytes[UH_VIEW_BYTES];
};

/* An optimistic read in progress (optread.c): the objects it read and the
 * lock word each had before its first byte was read. */
#define UH_OPT_MAX 64
struct uh_opt {
	struct uh_view cache[UH_VIEW_CACHE];
	struct uh_view pending;		/* a view read by this try, kept if it validates */
	int on;				/* a read-only operation runs outside any block */
	int lost;			/* this try cannot succeed: run it again */
	int full;			/* it read more objects than fit: take a block */
	uint32_t n;
	uint64_t last;			/* the object noted last (obj[n-1]), else ~0 */
	uint64_t obj[UH_OPT_MAX];
	uint64_t word[UH_OPT_MAX];
};

/* References that need no grey push in the cycle `cycle` (FORMAT.md
 * 9.3): pushed already in it. Direct-mapped by the
 * reference's hash: a collision forgets an entry (a redundant push
 * later), never adds one; cycle 0 (never a cycle's number) = empty. */
#define UH_GC_KNOWN 1024u
struct uh_gc_known {
	uint64_t cycle;
	uint64_t v[UH_GC_KNOWN];
};

/* This session's side of the online GC (FORMAT.md 9.3, common/gcfile.h):
 * its area of the GC file, and the pin table's private bookkeeping.
 * gcring.c (busy sections, grey pushes) and pins.c own it. */
struct uh_gc_client {
	struct uh_gc_sess *sess;	/* this session's control line; NULL: no GC file */
	const struct uh_gc_filehdr *file;	/* the GC file sess is in */
	uint64_t *ring;			/* [UH_GC_RING_CAP] */
	uint64_t *pins;			/* [UH_GC_PIN_CAP] */
	struct uh_gc_known known;	/* gcring.c: greys a push may skip */
	uint32_t busy_depth;		/* nested busy sections */
	uint64_t cycle_seen;		/* last cycle a busy section saw marking */
	int lock;			/* spin lock of pins/free/deferred: any thread unpins */
	uint64_t free_head;		/* first free pin id + 1, 0 = none */
	struct u64vec deferred;		/* pin ids released while the collector marked */
	uint64_t deferred_cycle;	/* the cycle they were released in */
	uint32_t nursery_next;		/* next nursery entry to overwrite */
	uint64_t *deferred_bits;	/* bit id set: id is in deferred (a second unpin
					 * of it is refused); owned, deferred_words words */
	uint64_t deferred_words;
	uint32_t pin_tag;		/* bits 24.. of the ids this session gives:
					 * forks of the handle (forked.c); an id of
					 * a lower tag is an ancestor's pin */
};

/* Arenas this session leased, per size class. */
struct uh_arena_ref {
	uint64_t arena_off;
	uint64_t first_slot;
	uint32_t slot_size;
	uint32_t nslots;
	uint32_t cursor;		/* next slot to look at (next fit) */
	uint32_t gen_seed;		/* the arena header's: first generation of a slot */
};
struct uh_size_arenas {
	struct uh_arena_ref *v;
	uint32_t n, cap;
	uint32_t current;
	uint32_t used;			/* a slot was claimed since the last give-back look */
};

/* The segments of this session's redo log (logchain.c): the log area,
 * then the extents heapd leased, in chain order. */
struct uh_logext { uint64_t off, size; };
struct uh_logchain {
	struct uh_logext *ext;		/* leased extents, in chain order; owned */
	uint32_t n, cap;
	uint32_t cur;			/* segment being filled: 0 = log area, i = ext[i-1] */
	uint64_t used;			/* bytes of entries in it */
	uint64_t ext_bytes;		/* sum of the extents' sizes */
};

/* Dirty ranges waiting for the next barrier (sync mode coalesces them
 * into as few msync calls as possible). */
struct uh_range { uint64_t start, end; };

/* Pieces a mapping may grow by: a growth doubles the heap by at most
 * 1 GiB (FORMAT.md 1.1), so a 15 GiB heap from a 16 MiB one is ~21. */
#define UH_MAP_PIECES 64

/* One mapping of a heap file, shared by every session opened from it
 * (uh_session_open); unmapped when the last of them disconnects. */
struct uh_mapping {
	int refs;			/* sessions using it; atomic */
	int fd;
	struct pmem2_source *src;	/* owned */
	struct pmem2_map *map;		/* owned */
	/* The address space the heap may grow into (FORMAT.md 1.1): max_size
	 * bytes reserved at connect, the file mapped at its start, so that a
	 * grown part maps in after it and base never moves. Owned. */
	struct pmem2_vm_reservation *rsv;
	uint64_t reserved;		/* bytes of rsv */
	char *base;
	uint64_t size;			/* bytes of the heap mapped from base; atomic */
	/* The parts a heap grew by while mapped (mapmore.c), each mapped
	 * right after the one before; mapped is where the last one ends (a
	 * multiple of the source's alignment, or the first mapping's end). */
	struct pmem2_map *more[UH_MAP_PIECES];	/* owned */
	uint32_t nmore;
	uint64_t mapped;
	int gran;			/* enum pmem2_granularity of every piece */
	int grow_lock;			/* spin lock of more, nmore, mapped, size */
	uint64_t header_off;
	uint64_t dev, ino;		/* the mapped file, to tell another heap */
	int readonly;			/* mapped without PROT_WRITE */
	char socket[4096];		/* heapd's socket, for more sessions */
	char *gc_base;			/* the GC file, mapped whole (pins.c); NULL: none */
	uint64_t gc_size;
	uint64_t gc_dev, gc_ino;	/* which file it is, to tell a new one at re-attach */
	int gc_lock;			/* spin lock of the gc_* fields: sessions of
					 * other threads re-attach too */
	struct uh_gc_oldmap *gc_old;	/* GC files replaced at a re-attach: sibling
					 * sessions may still be bound to them */
	uint32_t fork_gen;		/* fork generation whose first handle rebuild
					 * reset the inherited gc_lock (forked.c) */
};

/* Test-only mutants (UH_MUTANT): a persist of the commit protocol left out. */
enum { UH_MUTANT_APPLY_FLUSH = 1, UH_MUTANT_APPLY_BARRIER = 2, UH_MUTANT_LAZY_FLUSH = 3 };

/* What reattach.c does once heapd has gone away (uh_reattach,
 * uh_ctl_ready, uh_ctl_failed below): a table, like struct uh_persist,
 * so that the files below reattach.c reach it without calling up. */
struct uh_recovery {
	int (*reattach)(uh_heap *h);
	int (*lost)(uh_heap *h);		/* the session stream has ended */
	int (*failed)(uh_heap *h, int rc, int *again);	/* rc: UH_EDISCONNECTED */
	int (*forked)(uh_heap *h);	/* first use in a forked child (forked.c) */
};

struct uh_heap {
	pid_t pid;			/* process that connected */
	uint32_t fork_gen;		/* fork generation at connect */
	uhc *ctl;			/* owned */
	const struct uh_recovery *recover;	/* uh_reattach_recovery */
	struct uh_mapping *m;		/* shared with sibling sessions */
	char *base;			/* m->base, cached for the hot paths */
	uint64_t size;			/* m->size */
	struct uh_hdr *hdr;		/* inside the mapping */
	uint32_t session;
	int starving;			/* starve.c: this session holds the GC file's word */
	uint64_t token;			/* of the session: names it at re-attach */
	uint64_t starts;		/* hdr->heapd_starts at attach */
	uint32_t durability;
	int readonly;
	struct uh_log_hdr *log;		/* inside the mapping; NULL if readonly */
	uint64_t log_size;		/* bytes of the log area */
	struct uh_logchain chain;	/* the log's segments */
	uint64_t seq;
	uint64_t rng;			/* xorshift state for retry backoff */

	struct uh_persist persist;	/* flush/drain, counting barriers */
	struct uh_range *dirty;		/* sync mode: pending ranges */
	uint32_t ndirty, dirty_cap;
	uint64_t crash_at;		/* UH_CRASH_AT: die at this barrier */
	int pmtrace;			/* UH_PMTRACE: record flushes and barriers */
	int mutant;			/* UH_MUTANT: a persist the tests drop */
	/* UH_COMMIT_HOLD=path: the handle's first commit that writes stops
	 * right after validating its reads (in its busy section), creates
	 * path.in and waits (30 s at most) for path.go (tx.c). */
	char commit_hold[256];

	struct uh_arena_index ix;	/* owned */
	struct uh_size_arenas small[UH_SIZE_CLASSES];
	uint64_t arenas_reviewed;	/* last swept GC cycle leases.c looked after */
	uint64_t space_answered;	/* the GC file's space_asked leases.c last saw */
	struct uh_tx tx;
	struct uh_opt opt;
	struct uh_gc_client gc;
	uint32_t wait_cancel;		/* bumped by uh_wait_cancel (any thread) */
	uint32_t record_lines;		/* cache lines of the last record getrecord.c copied */
	uh_stats st;
	char path[4096];
	char name[64];
};

/* handle.c: the checks a public call makes first. uh_check_handle: not
 * NULL and not used across a fork (UH_EINVAL, UH_EFORK); uh_check_writable:
 * ... and not connected read-only (UH_EREADONLY naming fn). */
int uh_check_handle(uh_heap *h);
int uh_check_writable(uh_heap *h, const char *fn);
/* Once per process, before the first handle: count forks from now on. */
void uh_handle_watch_fork(void);
/* A new handle belongs to this process and its fork generation (a
 * release store: a handle rebuilt in a forked child is complete for every
 * thread that sees its new generation). */
void uh_handle_stamp(uh_heap *h);
/* The fork generation of this process (0 in one never forked from a
 * process that used libuniheap). */
uint32_t uh_fork_gen(void);
/* Nonzero for a handle connected before a fork (not yet attached anew
 * here); checks nothing else and attaches nothing. */
int uh_handle_inherited(const uh_heap *h);

/* barrier.c: uh_flush sends [addr, addr + len) towards the media,
 * uh_barrier makes every range flushed before it durable (after the lazy
 * logs' headers: uh_lazy_flush). uh_lazy_mark: this session leaves its
 * log APPLIED without a barrier (its lazy_logs bit set, before it
 * releases locks). uh_barrier_init: h->persist (logapply's callbacks)
 * and the test hooks UH_CRASH_AT, UH_PMTRACE and UH_MUTANT. */
void uh_flush(uh_heap *h, const void *addr, size_t len);
void uh_barrier(uh_heap *h);
void uh_lazy_mark(uh_heap *h);
void uh_lazy_flush(uh_heap *h);
void uh_barrier_init(uh_heap *h);

/* mapmore.c (FORMAT.md 1.1): map what the heap has grown by since the
 * handle last looked (cur_size), and update h->size and its arena index;
 * 0 when nothing new or mapped, UH_EIO when the mapping failed. The hook
 * makes the arena index call it on a miss past h->size; unmap deletes the
 * pieces before the reservation. */
int uh_map_more(uh_heap *h);
void uh_map_more_hook(uh_heap *h);
void uh_map_more_unmap(struct uh_mapping *m);
/* The log header of session s, if the session table names one inside the
 * mapping; else NULL. */
const struct uh_log_hdr *uh_session_log(uh_heap *h, uint32_t s);

/* session.c: bind h to the session heapd welcomed in w (the mapping m is
 * h's): log area, session, token. 0 or UH_EPROTO/UH_EIO. */
int uh_session_bind(uh_heap *h, const struct uhc_welcome *w);
/* UH_EIO naming both files unless w describes the heap m maps. */
int uh_same_heap(const struct uh_mapping *m, const struct uhc_welcome *w);
/* "c/<program>": how this process names itself to heapd. */
const char *uh_client_desc(char *buf, size_t len);

/* connwait.c: uhc_attach of a new session (no previous one), retried
 * while heapd is not there (UH_EDISCONNECTED) until timeout_ms have
 * passed (0: one attempt); then UH_EDISCONNECTED saying heapd is not
 * running at socket. uh_connect_timeout_resolve: a negative timeout
 * (UH_CONNECT_DEFAULT) becomes $UNIHEAP_CONNECT_TIMEOUT_MS, else 5000. */
int uh_attach_wait(const char *socket, int readonly, const char *client_desc,
		   int timeout_ms, uhc **out, struct uhc_welcome *w);
int uh_connect_timeout_resolve(int timeout_ms);

/* reattach.c's recovery, reached from the files below it through
 * h->recover (set at connect to uh_reattach_recovery), and only on the
 * rare path: heapd gone, or a control call failed. */
extern const struct uh_recovery uh_reattach_recovery;
/* heapd's end (the session stream closed) seen: attach anew to the same
 * socket as a new session of the same heap, heapd recovering the old
 * one; bounded retries with backoff. Keeps the mapping, the arenas and
 * every reference. UH_EDISCONNECTED (heapd did not come back in time),
 * UH_EIO (heapd now serves another heap). */
static inline int uh_reattach(uh_heap *h)
{
	return h->recover->reattach(h);
}
/* Before a call that needs heapd: 0 when the session stream is up; else
 * inside a block the block is doomed (UH_ECONFLICT, heapd restarted: the
 * caller's retry re-attaches), outside one uh_reattach(). */
static inline int uh_ctl_ready(uh_heap *h)
{
	if (!h->ctl || uhc_connected(h->ctl))
		return 0;
	return h->recover->lost(h);
}
/* After a control call failed with rc: when heapd went away during it
 * (UH_EDISCONNECTED and the session stream ends), inside a block the
 * block is doomed (UH_ECONFLICT), outside one the session re-attaches and
 * *again is set: make the call once more. Else rc. */
static inline int uh_ctl_failed(uh_heap *h, int rc, int *again)
{
	*again = 0;
	if (rc != UH_EDISCONNECTED || !h->ctl)
		return rc;
	return h->recover->failed(h, rc, again);
}
/* forked.c: h is used in a child forked from the process that connected
 * it (handle.c's check, under its lock): attach it anew, as a new session
 * of the same heap over the inherited mapping, and drop what was the
 * parent's session's (block, arenas, log extents, pins). A block open at
 * the fork stays open in the child, rolled back (doomed with UH_EFORK),
 * until the child ends it. 0, or the attach's error (h is left as it was
 * and the next use tries again). */
int uh_fork_rebuild(uh_heap *h);

/* The session's heapd has ended, or a new one started since we attached. */
static inline int uh_heapd_changed(const uh_heap *h)
{
	return (h->ctl && !uhc_connected(h->ctl)) ||
	       __atomic_load_n(&h->hdr->heapd_starts, __ATOMIC_ACQUIRE) != h->starts;
}

/* object.c: the valid object a reference names (offset and generation;
 * any class if cls == 0), or NULL with the error set (UH_EFREED for a
 * freed object or another generation, UH_ETYPE). */
struct uh_objhdr *uh_obj_get(uh_heap *h, uh_off off, uint32_t cls, int *rc);
const struct uh_class_desc *uh_class_desc(uh_heap *h, uint32_t class_id);
/* field.c: field index field of the record obj, checked to lie inside
 * it; NULL with *rc set (UH_ETYPE: not a record, UH_ERANGE: no such
 * field). uh_record_desc and uh_desc_field are its two halves, for a
 * caller that looks up several fields of one record: the class of
 * record obj (*payload its payload bytes), then a field of it. */
const struct uh_field_desc *uh_record_field(uh_heap *h, uh_off obj, uint32_t field, int *rc);
const struct uh_class_desc *uh_record_desc(uh_heap *h, uh_off obj, uint32_t *payload, int *rc);
const struct uh_field_desc *uh_desc_field(const struct uh_class_desc *d, uint32_t payload,
					  uint32_t field, int *rc);
/* inline.c: inline fields vals[0..n) of record obj written, in the
 * caller's block, each checked as uh_set_inline checks it; the record
 * looked up once (a new record's fields, uh_*_put_record). */
int uh_record_set_inlines(uh_heap *h, uh_off obj, const uh_inline_value *vals, uint32_t n);

/* alloc.c: a new object of payload bytes, copied from init (zeroed if
 * NULL); inside a block it commits with the block. *out is its reference
 * (offset and generation). */
int uh_alloc_raw(uh_heap *h, uint32_t class_id, uint64_t payload, const void *init,
		 uh_off *out);
void uh_alloc_release_all(uh_heap *h);
/* leases.c. After a re-attach: forget the arenas heapd did not hand to this session
 * (FORMAT.md 9.1: it hands over those of the previous session when it
 * recovers it; a session reaped before the re-attach lost its leases).
 * Only a leased arena is safe to allocate in: heapd may lease an unleased
 * one to another session, or free it once empty (FORMAT.md 6.3). */
void uh_alloc_keep_leased(uh_heap *h);
/* The directory entry names arena_off as a small arena this session
 * leases (FORMAT.md 6.1). */
int uh_alloc_leased_here(uh_heap *h, uint64_t arena_off);
/* Look at this session's small arenas once per GC cycle whose sweep is
 * over, or now with before_lease: when heapd has asked for space since
 * the last look, return those less than half full that it is not filling
 * (FORMAT.md 6.3, "Giving arenas back"). */
void uh_alloc_give_back(uh_heap *h, int before_lease);
/* A GC cycle's sweep has ended since this session last looked. */
int uh_alloc_swept_since_look(uh_heap *h);

/* wake.c: change notifications, the committing side (FORMAT.md 8.9).
 * uh_tx_changed: the block changes collection coll (its header); at
 * commit its change counter advances. uh_notify_commit: after a commit
 * released its locks on objs, advance those counters and, if anyone
 * waits, wake the waiters of objs and of the counters. */
int uh_tx_changed(uh_heap *h, uh_off coll);
void uh_notify_commit(uh_heap *h, const uint64_t *objs, uint32_t n);
void uh_futex_wake(uint32_t *word);

/* One more commit or conflict in this session's GC area (`commits`,
 * `conflicts`, FORMAT.md 9.3), which heapd sums for its metrics. This
 * session is the only writer: a plain load, then an atomic store that
 * heapd's loads never see torn. No-op without a GC file. */
static inline void uh_gc_count(uh_heap *h, int conflict)
{
	struct uh_gc_sess *s = h->gc.sess;
	if (!s)
		return;
	uint64_t *w = conflict ? &s->conflicts : &s->commits;
	__atomic_store_n(w, *w + 1, __ATOMIC_RELAXED);
}

/* gcring.c: the client's side of the online GC's write barrier
 * (FORMAT.md 9.3). uh_gc_enter opens a busy section (busy = 1, full
 * fence, then gc_state is loaded, stored in `seen` and returned); every
 * store in place of a commit's apply and of a single field write happens
 * inside one, and while the state it returned is MARK the old bytes go
 * grey first. Sections nest. Without a GC file: returns IDLE, no-ops. */
/* The section's first sight of cycle state's MARK: count it (gc_cycles),
 * clear an earlier cycle's overflow. */
void uh_gc_new_cycle(uh_heap *h, uint64_t state);
/* Inline: a commit and a single write each open one; the whole cost when
 * no collector runs is these few instructions and the fence. */
static inline uint64_t uh_gc_enter(uh_heap *h)
{
	struct uh_gc_sess *s = h->gc.sess;

	if (!s)
		return UH_GC_IDLE;
	if (h->gc.busy_depth++)
		return s->seen;
	__atomic_store_n(&s->busy, 1, __ATOMIC_RELAXED);
	/* busy visible before gc_state is read: heapd stores the state,
	 * fences, then reads busy; one of the two sees the other's store. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	uint64_t state = __atomic_load_n(&h->hdr->gc_state, __ATOMIC_ACQUIRE);
	__atomic_store_n(&s->seen, state, __ATOMIC_RELEASE);
	if (__builtin_expect(uh_gc_phase(state) == UH_GC_MARK, 0) &&
	    uh_gc_cycle(state) != h->gc.cycle_seen)
		uh_gc_new_cycle(h, state);
	return state;
}
static inline void uh_gc_leave(uh_heap *h)
{
	struct uh_gc_sess *s = h->gc.sess;

	if (!s || h->gc.busy_depth == 0 || --h->gc.busy_depth)
		return;
	__atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
}
/* Hand word to the collector's mark if it may be a reference (nonzero,
 * 8-aligned offset inside the heap): ring push; a full ring waits for
 * heapd (bounded), then sets overflow and drops it (the cycle is given
 * up). Only inside a busy section whose state was MARK. */
void uh_gc_grey(uh_heap *h, uint64_t word);
/* The cycle whose mark had begun (its first handshake over) as an
 * allocation begins, else 0 (always 0 without a GC file); passed to
 * uh_gc_note_new once the object exists. */
static inline uint64_t uh_gc_marking_now(const uh_heap *h)
{
	return h->gc.file ? __atomic_load_n(&h->gc.file->mark_begun, __ATOMIC_ACQUIRE) : 0;
}
/* ref was allocated after the mark of cycle `marking` had begun: no push
 * of ref is needed in that cycle (FORMAT.md 9.3, objects made during the
 * mark), so it goes into the table of pushes made. */
void uh_gc_note_new(uh_heap *h, uint64_t marking, uint64_t ref);
/* uh_gc_grey of every aligned 8-byte word of [p, p + len). */
void uh_gc_grey_range(uh_heap *h, const void *p, uint64_t len);
/* A wait for the collector (a full ring, a pin on an object the sweep
 * holds): its start (monotonic ns), and its end, which adds it to
 * h->st.gc_wait_ns and gc_wait_max_ns. Only called once a wait begins. */
int64_t uh_gc_wait_begin(void);
void uh_gc_wait_end(uh_heap *h, int64_t t0);
/* struct uh_persist's overwrite hook (ctx: h) for a commit's apply while
 * the collector marks: before [dst, dst + len) becomes src, grey every
 * word the store changes (src NULL, a FREE: every word it covers). */
void uh_gc_overwrite(void *ctx, const void *dst, const void *src, size_t len);

/* pins.c: the GC file mapped (shared by sibling sessions through the
 * mapping) and this session's area bound; after a re-attach the pins
 * move to the new session's area under the same ids. A re-attach holds
 * the pin lock (uh_gc_hold) from before its Attach call to after
 * uh_gc_reattach. */
int uh_gc_attach(uh_heap *h, const char *gc_path, uint32_t session);
void uh_gc_hold(uh_heap *h);
void uh_gc_unhold(uh_heap *h);
int uh_gc_reattach(uh_heap *h, const char *gc_path, uint32_t old_session,
		   uint32_t new_session);
/* A new object goes into the session's nursery (common/gcfile.h), in
 * place of the oldest; while the collector marks, that one goes grey. */
void uh_gc_nursery_add(uh_heap *h, uh_off ref);
void uh_gc_detach(uh_heap *h);
void uh_gc_unmap(struct uh_mapping *m);
/* In a forked child, before h attaches anew: drop the pin bookkeeping of
 * the parent's session (its area, its free list, locks a parent thread
 * may have held) and raise the pin tag, so that the parent's pin ids,
 * still held by inherited proxies, are never released on the child's
 * session. mapping_too: also reset the mapping's inherited gc_lock (the
 * first rebuild of the mapping's handles in this process). */
void uh_gc_forked(uh_heap *h, int mapping_too);

/* starve.c: a block that has lost tries times in a row claims the GC
 * file's starving word (1 if this session now holds it: retry at once);
 * an outermost uh_begin waits while another session holds it (bounded);
 * a commit or a give-up releases it. */
int uh_starve_claim(uh_heap *h, unsigned tries);
void uh_starve_wait(uh_heap *h);
void uh_starve_wait_lost_on(uh_heap *h);
/* This session waits in heapd for a lease (on) or no longer (GC file's
 * `calling` word): a block losing on one of its locks waits for it. */
void uh_starve_calling(uh_heap *h, int on);
void uh_starve_release(uh_heap *h);

/* logchain.c: the log's segments. start: a block's first entry (every
 * segment emptied, then ACTIVE); reserve: room for need bytes in the
 * segment being filled, leasing an extent when none is left (UH_ENOSPC
 * when the heap is full); publish: the entry at
 * the reserved place is complete; flush: every used segment; trim: give
 * extents back after a block when more than a few are kept. */
void uh_logchain_start(uh_heap *h);
int uh_logchain_reserve(uh_heap *h, uint64_t need, void **at);
void uh_logchain_publish(uh_heap *h, uint64_t need);
void uh_logchain_flush(uh_heap *h);
void uh_logchain_trim(uh_heap *h);
void uh_logchain_free(uh_heap *h);

/* tx.c */
int uh_tx_write(uh_heap *h, uh_off obj, uint64_t target, const void *src, uint32_t len);
/* uh_tx_write; when this write is the block's first to obj (it locks obj),
 * first an image of obj's bytes [img, img + img_len): one WRITE entry
 * holding them as they are, which then takes every write of the block to
 * those bytes, so that an object written many times in a block (a node
 * whose slots shift) costs one log entry and no write-set lookups. */
int uh_tx_write_image(uh_heap *h, uh_off obj, uint64_t target, const void *src, uint32_t len,
		      uint64_t img, uint32_t img_len);
/* The image part of uh_tx_write_image, without a write: *mem = where the
 * block's own bytes [img, img + img_len) of obj are, to be written in
 * place of uh_tx_write (a shift of many slots as one memmove): obj's
 * image, or the bytes in place if obj is new in the block; NULL if obj
 * was locked before without an image (then write with uh_tx_write). */
int uh_tx_image(uh_heap *h, uh_off obj, uint64_t img, uint32_t img_len, char **mem);
/* Where a block reads its own bytes [target, target + len) of obj in
 * place: obj's image, or the bytes in place if obj is new in the block;
 * NULL if it holds neither (read with uh_tx_read). Good until the block
 * writes them. */
const void *uh_tx_own_bytes(uh_heap *h, uh_off obj, uint64_t target, uint32_t len);
/* A read of obj at version v made in place inside a block (lock word
 * loaded before, unchanged after): 1 once it is in the block's read set,
 * as a validated read would leave it; 0 if the block holds obj, v is past
 * a snapshot that cannot move, or the block read obj at another version
 * (then read it the validated way, which tells a conflict). */
int uh_tx_note_read(uh_heap *h, uh_off obj, uint64_t v);
/* One write outside any block: lock, store, persist, unlock (1 barrier). */
int uh_tx_write_single(uh_heap *h, uh_off obj, uint64_t target, const void *src,
		       uint32_t len);
/* uh_tx_read inside a block (uh_tx_read, below, is the call to make). */
int uh_tx_read_in_block(uh_heap *h, uh_off obj, uint64_t target, void *dst, uint32_t len);
int uh_tx_lock(uh_heap *h, uh_off obj);
/* uh_lock_version and uh_lock_still (below) for a locked word w. */
int uh_lock_version_locked(uh_heap *h, uint64_t obj, uint64_t w, uint64_t *v);
int uh_lock_still_locked(uh_heap *h, uint64_t obj, uint64_t w);
/* The version the bytes in place of object obj are at, given its lock
 * word w (FORMAT.md 4.1): unlocked, w; locked by this session, the version
 * it had; locked by another whose block has not started to apply (log
 * ACTIVE), the version kept in w. Then 1 and *v set; 0 while the owner
 * applies its commit. An unlocked word (most objects, most of the time)
 * is answered here, without a call. */
static inline int uh_lock_version(uh_heap *h, uint64_t obj, uint64_t w, uint64_t *v)
{
	if (uh_lock_is_locked(w))
		return uh_lock_version_locked(h, obj, w, v);
	*v = w;
	return 1;
}
/* Before the first byte of obj is read: its lock word in *w (loaded with
 * acquire, so no byte read after it is older), and uh_lock_version's
 * answer for it. */
static inline int uh_lock_note(uh_heap *h, uint64_t obj, uint64_t *w, uint64_t *v)
{
	*w = __atomic_load_n(&((const struct uh_objhdr *)(h->base + obj))->lock,
			     __ATOMIC_ACQUIRE);
	return uh_lock_version(h, obj, *w, v);
}
/* After bytes of obj were read with lock word w (an acquire fence after
 * the reads): 1 when they were the bytes of the version w gives, because
 * the word is still w and, if another session holds the lock, its log is
 * still ACTIVE. */
static inline int uh_lock_still(uh_heap *h, uint64_t obj, uint64_t w)
{
	const struct uh_objhdr *o = (const void *)(h->base + obj);

	if (uh_lock_is_locked(w))
		return uh_lock_still_locked(h, obj, w);
	return __atomic_load_n(&o->lock, __ATOMIC_ACQUIRE) == w;
}
/* For reads in place that a later check of lock words vouches for
 * (optread.c; map.c, get_lean; smap_search.c, smap_scan.c): the header
 * of the object ref names, if it and `bytes` of payload after it lie
 * inside the mapping at an 8-byte boundary, as every object's header
 * does (a damaged or stale reference may be anything); else NULL. */
static inline const struct uh_objhdr *uh_obj_in_map(const uh_heap *h, uh_off ref,
						     uint64_t bytes)
{
	uint64_t off = UH_REF_OFFSET(ref);

	if (!off || (off & 7) || off > h->size - UH_OBJHDR_SIZE - bytes)
		return NULL;
	return (const void *)(h->base + off);
}
/* The header o of the object ref names (uh_obj_in_map), read in place: 1
 * if the object is live, of ref's generation and of class cls, and its
 * payload (*payload) fits inside the mapping. */
static inline int uh_obj_live_in_place(const uh_heap *h, const struct uh_objhdr *o, uh_off ref,
				       uint32_t cls, uint32_t *payload)
{
	uint32_t word = __atomic_load_n(&o->class_word, __ATOMIC_ACQUIRE);
	uint32_t size = __atomic_load_n(&o->size, __ATOMIC_ACQUIRE);

	*payload = size & UH_OBJ_SIZE_MASK;
	return (size & UH_OBJ_VALID) && uh_word_gen(word) == UH_REF_GEN(ref) &&
	       uh_word_class(word) == cls &&
	       *payload <= h->size - UH_REF_OFFSET(ref) - UH_OBJHDR_SIZE;
}
/* Whether this block (or optimistic read) read obj, or (own_ok) locked it:
 * then 1 and *v = the version it had. */
int uh_tx_seen(uh_heap *h, uh_off obj, int own_ok, uint64_t *v);
/* What the open block holds of obj: UH_TX_NEW (allocated in it: its bytes
 * in place are the block's), UH_TX_LOCKED (locked: its writes wait in the
 * log), or 0. */
#define UH_TX_NEW 1
#define UH_TX_LOCKED 2
int uh_tx_holds(uh_heap *h, uh_off obj);
/* Inside a block, an offset that turned out not to be a valid object may
 * come from a read another commit has made stale: then doom the block and
 * return UH_ECONFLICT; else return rc. */
int uh_tx_stale_or(uh_heap *h, int rc);
/* Doom the open block: heapd ended or restarted under it (UH_ECONFLICT). */
int uh_tx_heapd_restarted(uh_heap *h);
int uh_tx_log_alloc(uh_heap *h, uh_off obj, uint64_t slot_bytes);
int uh_tx_log_free(uh_heap *h, uh_off obj);
void uh_tx_free_state(uh_heap *h);
/* Run an implicit block around one change when the caller is not in
 * one: begin, then end_implicit(rc) commits on rc == 0, aborts otherwise,
 * and returns the first error. */
int uh_tx_begin_implicit(uh_heap *h, int *implicit);
int uh_tx_end_implicit(uh_heap *h, int implicit, int rc);

/* optread.c: read-only operations outside blocks, optimistically.
 * uh_opt_run runs body once per try with h->opt.on: every object is
 * noted (uh_opt_touch, from uh_tx_read and uh_obj_get) before its first
 * byte is read, and the whole set is validated at the end; a try that
 * saw a change is run again, a few times, then the body runs in an
 * implicit block (uh_run). Inside a block body simply joins it. */
int uh_opt_run(uh_heap *h, uh_block_fn body, void *arg);
/* Note obj before its first byte is read: 0, or UH_ECONFLICT when this try
 * is lost (obj being applied to, or too many objects). */
int uh_opt_touch(uh_heap *h, uint64_t obj);
/* The version obj had when this try first read it (1), or 0 if it did not.
 * Here, not in optread.c, because tx.c (below optread.c) asks it too. */
static inline int uh_opt_seen(const uh_heap *h, uint64_t obj, uint64_t *v)
{
	const struct uh_opt *o = &h->opt;

	obj = UH_REF_OFFSET(obj);
	for (uint32_t i = 0; i < o->n; i++) {	/* bound: UH_OPT_MAX */
		if (o->obj[i] != obj)
			continue;
		uint64_t w = o->word[i];
		*v = uh_lock_is_locked(w) ? uh_lock_old_version(w) : w;
		return 1;
	}
	return 0;
}
/* In an optimistic read, the view of kind kept for header obj (noting obj
 * first), if obj's lock word has not moved since: else NULL. */
const void *uh_opt_view(uh_heap *h, uh_off obj, uint32_t kind);
/* The view of kind kept for header obj and the lock word obj had when it
 * was read (*word), not noted: the view is obj's state while its lock
 * word is still *word. NULL if none is kept. */
const void *uh_opt_kept(uh_heap *h, uh_off obj, uint32_t kind, uint64_t *word);
/* Offer the view just read from header obj (a struct of len bytes, at most
 * UH_VIEW_BYTES) for keeping: kept if this optimistic try validates. */
void uh_opt_keep(uh_heap *h, uh_off obj, uint32_t kind, const void *view, size_t len);

/* A function that does nothing but prefetch has no effect the compiler
 * can see: GCC marks it const and drops every call to it, prefetches and
 * all (GCC 12 at -O2 did so to every prefetch of smap.c). Such functions
 * are always inlined into callers that do something, where they stay. */
#define UH_PREFETCH_FN static inline __attribute__((always_inline))

/* Start loading the lines of [p, p + bytes) into the cache. A prefetch
 * reads nothing and never faults, so p need not be checked. */
UH_PREFETCH_FN void uh_prefetch(const char *p, uint32_t bytes)
{
#pragma GCC unroll 16	/* a node: 16 prefetches, not a loop four times as long */
	for (uint32_t b = 0; b < bytes; b += 64)	/* bound: bytes / 64 */
		__builtin_prefetch(p + b);
}

/* A field of 1, 2, 4 or 8 aligned bytes is loaded in one access, never
 * torn; other lengths are copied. */
static inline void uh_load(void *dst, const char *src, uint32_t len)
{
	switch (len) {
	case 1: *(uint8_t *)dst = __atomic_load_n((const uint8_t *)src, __ATOMIC_ACQUIRE); break;
	case 2: *(uint16_t *)dst = __atomic_load_n((const uint16_t *)src, __ATOMIC_ACQUIRE); break;
	case 4: *(uint32_t *)dst = __atomic_load_n((const uint32_t *)src, __ATOMIC_ACQUIRE); break;
	case 8: *(uint64_t *)dst = __atomic_load_n((const uint64_t *)src, __ATOMIC_ACQUIRE); break;
	default: memcpy(dst, src, len);
	}
}

/* Read [target, target+len) of obj. Inside a block the read is recorded
 * and validated (a consistent snapshot, or the block is doomed with
 * UH_ECONFLICT and dst zeroed); outside, a plain load, noted first by an
 * optimistic read (optread.c: UH_ECONFLICT when its try is lost). */
static inline int uh_tx_read(uh_heap *h, uh_off obj, uint64_t target, void *dst, uint32_t len)
{
	if (h->tx.depth)
		return uh_tx_read_in_block(h, obj, target, dst, len);
	if (h->opt.on && UH_REF_OFFSET(obj) != h->opt.last && uh_opt_touch(h, obj) != 0) {
		memset(dst, 0, len);
		return UH_ECONFLICT;
	}
	uh_load(dst, h->base + UH_REF_OFFSET(target), len);
	return 0;
}

/* A u64 of obj at off; 0 if the read doomed the block (callers then see
 * the error from their next block call). */
static inline uint64_t uh_rd64(uh_heap *h, uh_off obj, uint64_t off)
{
	uint64_t v;
	if (h->tx.depth || h->opt.on)
		uh_tx_read(h, obj, off, &v, 8);
	else
		v = __atomic_load_n((uint64_t *)(h->base + UH_REF_OFFSET(off)), __ATOMIC_ACQUIRE);
	return v;
}

#endif /* UH_UHINT_H */
