/*
 * gc.c -- recovery GC (J-NVM): marks every object reachable from the root
 * map, takes back the rest, and repairs what a crash or a damaged client
 * left behind: invalid references, held locks, stale leases. heapd runs
 * it at start (recovery.c), after every dead session's log is replayed or
 * rolled back and before any client attaches; an online GC is to build on
 * the same class digest, marking and sweeping.
 *
 * Clients of a previous heapd still running (hd->inherited, FORMAT.md 9)
 * are none of them in the middle of a commit (recovery.c waits for that
 * first); every valid object in their arenas is a root, their arenas are
 * neither cleared nor swept (their marks go to side bitmaps), and their
 * locks and leases are kept. The steps:
 *   - digest the class table: per class, its kind, payload size and the
 *     offsets of its references;
 *   - zero every arena bitmap;
 *   - mark from the root map with an explicit stack (never recursion: a
 *     long list would overflow the C stack). A reference is valid only if
 *     it names a slot start whose object has the valid bit, the
 *     reference's generation, an existing class, a payload that fits the
 *     slot and, for a record, the class's payload size; invalid and
 *     dangling references are nulled in place. Marking sets the bitmap bit
 *     and clears the lock word to its version (a held lock loses its
 *     version: 0);
 *   - sweep: a slot whose bit stayed clear but whose object is valid is
 *     garbage: its valid bit is cleared. Unmarked large regions go back to
 *     libpmemobj;
 *   - every arena becomes unleased; clock = max(clock, versions) + 1.
 * Linear in live objects plus arena slots: each object is pushed at most
 * once (only when its bitmap bit goes from 0 to 1), each slot is swept
 * once.
 *
 * Invariants: it runs under hd->mu (or in hd_open) and never reads outside
 * the heap: a reference is checked against the arena index (hd->ix, built
 * by the caller and not rebuilt here, so a miss is an invalid reference,
 * not a directory scan) before its target is read. The sweep's frees of
 * large regions leave the index stale: the caller rebuilds it.
 *
 * Crash safety: all of this is repeatable. Bitmaps and lock words are
 * run-time state; clearing a valid bit or nulling a reference that is
 * undone by a crash is simply done again at the next start.
 *
 * Root map entries get one special rule: nulling a name inside an
 * open-addressing table would cut the probe chains of the entries after
 * it, so a root whose name or value is invalid becomes a tombstone.
 *
 * The online mark (hd_mark_*, used by collector.c) shares the digest, the
 * reference check and the scans, with g->online set: it runs while
 * clients read and write, over a snapshot of the arena index, and never
 * writes the heap. Its marks go to side bitmaps (one per span of the
 * snapshot); an invalid reference is skipped, not nulled; a damaged root
 * is skipped, not dropped; lock words are left alone; every length read
 * from the heap is clamped to the object's slot, so a concurrent writer can make the mark
 * follow a stale word (conservative: it only keeps more alive) but never
 * read outside the heap. Its stack holds references, not yet checked:
 * each is checked, marked and scanned when popped, after a prefetch of
 * its header a few pops earlier (hd_mark_drain), so the cache misses of a
 * random graph overlap; a reference is pushed once per edge that names
 * it, an object is scanned once.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "u64.h"

#define GC_REPORT_MAX 10u	/* nulled references logged one by one */

struct gc_ref {
	uint32_t offset;	/* from the object start */
	uint32_t want;		/* required target class, 0 = any */
};

struct gc_class {
	uint32_t kind;		/* 0: no such class (objects of it are invalid) */
	uint32_t payload_size;
	uint32_t nrefs;
	const struct gc_ref *refs;
};

struct gc {
	struct hd *hd;
	int online;		/* the online mark: read-only, side bits everywhere */
	const uint8_t *running;	/* session slot -> 1: a client still running; may be NULL */
	/* Per span of the index: for an arena of a running client, the mark
	 * bits (its own bitmap is the client's, left as it is); else NULL. */
	uint64_t **side;
	char *base;
	struct uh_arena_index *ix;
	struct gc_class *cls;	/* [ncls], indexed by class id */
	uint32_t ncls;
	struct gc_ref *refbuf;
	struct u64vec stack;	/* objects marked, not yet scanned */
	uint64_t maxv;
	uint64_t live, freed, nulled, locks_cleared, roots_dropped;
};

/* ------------------------------------------------------------------ */
/* Class table digest: per class, where its references are. */

static uint32_t ref_target(const struct uh_field_desc *f)
{
	if (f->type == UH_T_STRING)
		return UH_CLASS_STRING;
	if (f->type == UH_T_BYTES)
		return UH_CLASS_BYTES;
	return f->ref_class;
}

/* A ref field we can follow: 8-aligned and inside the payload. Anything
 * else in a descriptor is damage; the field is ignored. */
static int ref_field_ok(const struct uh_class_desc *d, const struct uh_field_desc *f)
{
	return uh_type_is_ref(f->type) && f->offset >= UH_OBJHDR_SIZE && f->offset % 8 == 0 &&
	       (uint64_t)f->offset + 8 <= (uint64_t)UH_OBJHDR_SIZE + d->payload_size;
}

static int gc_classes(struct gc *g)
{
	struct hd *hd = g->hd;
	g->ncls = hd->hdr->class_count + 1;
	g->cls = calloc(g->ncls, sizeof(*g->cls));
	if (!g->cls)
		return UH_ENOMEM;
	size_t total = 0;
	for (uint32_t id = 1; id < g->ncls; id++) {	/* bounded by class_count */
		const struct uh_class_desc *d = hd_class_desc_locked(hd, id);
		for (uint32_t i = 0; d && i < d->nfields; i++)	/* <= UH_FIELDS_MAX */
			total += ref_field_ok(d, &d->fields[i]);
	}
	g->refbuf = calloc(total ? total : 1, sizeof(*g->refbuf));
	if (!g->refbuf)
		return UH_ENOMEM;
	struct gc_ref *r = g->refbuf;
	for (uint32_t id = 1; id < g->ncls; id++) {
		const struct uh_class_desc *d = hd_class_desc_locked(hd, id);
		if (!d)
			continue;
		g->cls[id].kind = d->kind;
		g->cls[id].payload_size = d->payload_size;
		g->cls[id].refs = r;
		for (uint32_t i = 0; i < d->nfields; i++) {
			if (!ref_field_ok(d, &d->fields[i]))
				continue;
			r->offset = d->fields[i].offset;
			r->want = ref_target(&d->fields[i]);
			r++;
			g->cls[id].nrefs++;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Marking. */

/* The object reference ref names if it is valid (a slot start, the valid
 * bit, ref's generation, a known class...), with its span and slot; else
 * NULL. want: required class id, 0 = any. */
static const struct uh_objhdr *gc_check(struct gc *g, uint64_t ref, uint32_t want,
					const struct uh_arena_span **sp, uint32_t *slot)
{
	uint64_t off = UH_REF_OFFSET(ref);
	/* uh_arena_lookup, not uh_arena_slot_of: nothing changes the
	 * directory during recovery, so a miss must not rebuild the index
	 * (that would make each invalid reference cost a directory scan). */
	const struct uh_arena_span *s = uh_arena_lookup(g->ix, off);
	if (!s || s->slot_size < UH_OBJHDR_SIZE || !uh_span_slot(s, off, slot))
		return NULL;
	const struct uh_objhdr *oh = (const struct uh_objhdr *)(g->base + off);
	uint32_t size = __atomic_load_n(&oh->size, __ATOMIC_ACQUIRE);
	uint32_t word = __atomic_load_n(&oh->class_word, __ATOMIC_RELAXED);
	uint32_t cid = uh_word_class(word);
	if (!(size & UH_OBJ_VALID) || cid >= g->ncls || g->cls[cid].kind == 0)
		return NULL;
	if (uh_word_gen(word) != UH_REF_GEN(ref))
		return NULL;	/* dangling: the slot holds a newer object */
	if (want && cid != want)
		return NULL;
	uint32_t payload = size & UH_OBJ_SIZE_MASK;
	if (payload > s->slot_size - UH_OBJHDR_SIZE)
		return NULL;
	if (g->cls[cid].kind == UH_K_RECORD && payload != g->cls[cid].payload_size)
		return NULL;
	/* A packed object whose header does not say where its values are
	 * cannot be walked: it counts as invalid. */
	if (g->cls[cid].kind == UH_K_PACKED && !uh_packed_ok((const void *)(oh + 1), payload))
		return NULL;
	*sp = s;
	return oh;
}

static int gc_push(struct gc *g, uint64_t off)
{
	return u64vec_push(&g->stack, off);
}

/* Set the object's bit. On the first visit clear its lock word (keeping
 * the highest version seen) and return 1; if it was marked already, 0. */
static int gc_set_bit(struct gc *g, uint64_t off, const struct uh_arena_span *s, uint32_t slot)
{
	if (g->online) {	/* side bits only, this thread's own: no atomic */
		uint64_t *w = &g->side[s - g->ix->v][slot >> 6], bit = 1ull << (slot & 63);
		if (*w & bit)
			return 0;
		*w |= bit;
		g->live++;
		return 1;	/* lock words are the clients' while they run */
	}
	uint64_t *bm = g->side && g->side[s - g->ix->v] ? g->side[s - g->ix->v] :
		       uh_arena_bitmap(g->base, s->arena_off);
	if (uh_bitmap_set(bm, slot))
		return 0;
	struct uh_objhdr *oh = (struct uh_objhdr *)(g->base + off);
	uint64_t w = oh->lock;
	if (uh_lock_is_locked(w) && g->running && g->running[uh_lock_owner(w)]) {
		w = uh_lock_old_version(w);	/* its owner runs and will release it */
	} else if (uh_lock_is_locked(w)) {
		w = uh_lock_old_version(w);	/* the bytes in place are of it */
		oh->lock = w;
		g->locks_cleared++;
	}
	if (w > g->maxv)
		g->maxv = w;
	g->live++;
	return 1;
}

/* Mark a valid object; push it if it is new and can hold references.
 * Returns 0 or UH_ENOMEM. */
static int gc_mark(struct gc *g, uint64_t off, const struct uh_arena_span *s, uint32_t slot)
{
	if (g->online) {	/* checked and marked when popped (online_visit) */
		uint32_t word = __atomic_load_n(&((const struct uh_objhdr *)(g->base + off))->class_word,
						__ATOMIC_RELAXED);
		return gc_push(g, uh_ref_make(off, uh_word_gen(word)));
	}
	if (!gc_set_bit(g, off, s, slot))
		return 0;
	uint32_t cid = uh_word_class(((const struct uh_objhdr *)(g->base + off))->class_word);
	uint32_t kind = g->cls[cid].kind;
	if (kind == UH_K_STRING || kind == UH_K_BYTES)
		return 0;	/* no references inside */
	return gc_push(g, off);
}

static void gc_null(struct gc *g, uint64_t *ref, uint64_t from)
{
	if (g->nulled < GC_REPORT_MAX)
		hd_log("warn", "ref_nulled", "object=%llu field_at=%llu target=%llu",
		       (unsigned long long)from, (unsigned long long)((char *)ref - g->base),
		       (unsigned long long)*ref);
	*ref = 0;
	g->hd->persist.flush(g->hd->persist.ctx, ref, sizeof(*ref));
	g->nulled++;
}

/* The online mark's push of a reference read from an object: one whose
 * slot is marked already is dropped here, without reading the heap (the
 * object there has been scanned; a stale reference to an older object of
 * that slot would fail its check anyway), so that each live object's
 * header is read about once, not once per reference to it. The rest is
 * checked when popped, after a prefetch. */
static int online_push(struct gc *g, uint64_t ref)
{
	uint64_t off = UH_REF_OFFSET(ref);
	const struct uh_arena_span *s = uh_arena_lookup(g->ix, off);
	uint32_t slot;
	if (!s || s->slot_size < UH_OBJHDR_SIZE || !uh_span_slot(s, off, &slot))
		return 0;	/* no object of the snapshot: skipped when popped too */
	if (uh_bitmap_test(g->side[s - g->ix->v], slot))
		return 0;
	return gc_push(g, ref);
}

/* Follow one reference slot of object from. */
static int gc_visit(struct gc *g, uint64_t *ref, uint32_t want, uint64_t from)
{
	uint64_t off = *ref;
	if (off == 0)
		return 0;
	if (g->online)
		return online_push(g, off);
	const struct uh_arena_span *s;
	uint32_t slot;
	if (!gc_check(g, off, want, &s, &slot)) {
		if (!g->online)
			gc_null(g, ref, from);
		return 0;
	}
	return gc_mark(g, UH_REF_OFFSET(off), s, slot);
}

/* Turn root pair p into a tombstone and drop it from the count. */
static void gc_drop_root(struct gc *g, struct uh_rootmap *rm, uint64_t *p)
{
	p[0] = UH_ROOT_TOMBSTONE;
	p[1] = 0;
	if (rm->count > 0)
		rm->count--;
	g->hd->persist.flush(g->hd->persist.ctx, p, 16);
	g->hd->persist.flush(g->hd->persist.ctx, &rm->count, sizeof(rm->count));
	g->roots_dropped++;
	g->nulled++;
}

/* The root map's table: pairs {name string, value}; 0 = empty slot,
 * 1 = tombstone. Both halves of a live pair must be valid or the root
 * goes. */
static int gc_root_table(struct gc *g, struct uh_rootmap *rm, uint64_t table, uint32_t payload)
{
	uint64_t *p = (uint64_t *)(g->base + UH_REF_OFFSET(table) + UH_OBJHDR_SIZE);
	uint64_t npairs = payload / 16;
	for (uint64_t i = 0; i < npairs; i++, p += 2) {	/* bounded by the table size */
		if (p[0] == 0 || p[0] == UH_ROOT_TOMBSTONE)
			continue;
		const struct uh_arena_span *ns, *vs;
		uint32_t nslot, vslot;
		if (!gc_check(g, p[0], UH_CLASS_STRING, &ns, &nslot) || p[1] == 0 ||
		    !gc_check(g, p[1], 0, &vs, &vslot)) {
			if (g->online)
				continue;	/* a root being written: skipped */
			hd_log("warn", "root_dropped", "table=%llu index=%llu name=%llu value=%llu",
			       (unsigned long long)table, (unsigned long long)i,
			       (unsigned long long)p[0], (unsigned long long)p[1]);
			gc_drop_root(g, rm, p);
			continue;
		}
		int rc = gc_mark(g, UH_REF_OFFSET(p[0]), ns, nslot);
		if (!rc)
			rc = gc_mark(g, UH_REF_OFFSET(p[1]), vs, vslot);
		if (rc)
			return rc;
	}
	return 0;
}

static int gc_rootmap(struct gc *g, uint64_t off)
{
	struct uh_rootmap *rm = (struct uh_rootmap *)(g->base + off + UH_OBJHDR_SIZE);
	uint64_t t = rm->table;
	if (t == 0)
		return 0;
	const struct uh_arena_span *s;
	uint32_t slot;
	const struct uh_objhdr *th = gc_check(g, t, UH_CLASS_REFTABLE, &s, &slot);
	if (!th && g->online)
		return 0;
	if (!th) {
		gc_null(g, &rm->table, off);
		rm->count = rm->used = 0;
		g->hd->persist.flush(g->hd->persist.ctx, rm, sizeof(*rm));
		return 0;
	}
	if (!gc_set_bit(g, UH_REF_OFFSET(t), s, slot))
		return 0;	/* already reached (as a plain table) */
	uint32_t payload = __atomic_load_n(&th->size, __ATOMIC_ACQUIRE) & UH_OBJ_SIZE_MASK;
	if (payload > s->slot_size - UH_OBJHDR_SIZE)
		payload = s->slot_size - UH_OBJHDR_SIZE;
	return gc_root_table(g, rm, t, payload);
}

/* The class a reference of field/slot type t must point to (0 = any). */
static uint32_t ref_want(uint32_t t)
{
	return t == UH_T_STRING ? UH_CLASS_STRING : t == UH_T_BYTES ? UH_CLASS_BYTES : 0;
}

/* Typed slots: follow those tagged as references. */
static int gc_scan_values(struct gc *g, uint64_t off, uint32_t payload)
{
	struct uh_slot *sl = (struct uh_slot *)(g->base + off + UH_OBJHDR_SIZE);
	uint64_t n = payload / sizeof(*sl);
	int rc = 0;

	for (uint64_t i = 0; i < n && !rc; i++) {	/* bounded by the payload */
		uint32_t t = uh_slot_type(sl[i].tag);
		if (uh_type_is_ref(t) && sl[i].value)
			rc = gc_visit(g, &sl[i].value, ref_want(t), off);
	}
	return rc;
}

/* An array of references: follow each element. */
static int gc_scan_array(struct gc *g, uint64_t off, uint32_t payload)
{
	const struct uh_array_hdr *a = (const void *)(g->base + off + UH_OBJHDR_SIZE);
	uint32_t t = a->elem_type;
	int rc = 0;

	if (!uh_type_is_ref(t) || payload < sizeof(*a))
		return 0;
	uint64_t *p = (uint64_t *)(a + 1);
	uint64_t n = (payload - sizeof(*a)) / 8;
	uint64_t len = __atomic_load_n(&a->length, __ATOMIC_RELAXED);
	if (len < n)
		n = len;
	for (uint64_t i = 0; i < n && !rc; i++)	/* bounded by the payload */
		if (p[i])
			rc = gc_visit(g, &p[i], ref_want(t), off);
	return rc;
}

/* A packed object (checked by gc_check): follow its values typed as
 * references. */
static int gc_scan_packed(struct gc *g, uint64_t off, uint32_t payload)
{
	char *p = g->base + off + UH_OBJHDR_SIZE;
	struct uh_packed_hdr ph;
	memcpy(&ph, p, sizeof(ph));	/* one copy: checked as it is used */
	if (!uh_packed_ok(&ph, payload))
		return 0;
	const uint8_t *types = (const uint8_t *)(p + ph.types_at);
	uint64_t *vals = (uint64_t *)(p + ph.vals_at);
	int rc = 0;

	for (uint32_t i = 0; i < ph.nvals && !rc; i++)	/* bounded by the payload */
		if (uh_type_is_ref(types[i]) && vals[i])
			rc = gc_visit(g, &vals[i], ref_want(types[i]), off);
	return rc;
}

/* References held by the (valid, marked) object at off, whose payload
 * is payload bytes (the online mark clamps it to the slot). */
static int gc_scan_obj(struct gc *g, uint64_t off, uint32_t payload)
{
	const struct uh_objhdr *oh = (const struct uh_objhdr *)(g->base + off);
	uint32_t cid = uh_word_class(__atomic_load_n(&oh->class_word, __ATOMIC_RELAXED));
	if (cid >= g->ncls || (g->online && payload == 0))
		return 0;
	const struct gc_class *c = &g->cls[cid];
	int rc = 0;
	if (cid == UH_CLASS_ROOTMAP)
		return gc_rootmap(g, off);
	if (c->kind == UH_K_RECORD) {
		for (uint32_t i = 0; i < c->nrefs && !rc; i++)	/* <= UH_FIELDS_MAX */
			if (c->refs[i].offset + 8u <= UH_OBJHDR_SIZE + payload)
				rc = gc_visit(g, (uint64_t *)(g->base + off + c->refs[i].offset),
					      c->refs[i].want, off);
	} else if (c->kind == UH_K_REFTABLE) {
		uint64_t *p = (uint64_t *)(g->base + off + UH_OBJHDR_SIZE);
		uint64_t n = payload / 8;
		for (uint64_t i = 0; i < n && !rc; i++) {	/* bounded by the payload */
			if (p[i] != 0 && p[i] != UH_ROOT_TOMBSTONE)
				rc = gc_visit(g, &p[i], 0, off);
		}
	} else if (c->kind == UH_K_VALUES) {
		rc = gc_scan_values(g, off, payload);
	} else if (c->kind == UH_K_ARRAY) {
		rc = gc_scan_array(g, off, payload);
	} else if (c->kind == UH_K_PACKED) {
		rc = gc_scan_packed(g, off, payload);
	}
	return rc;
}

/* Recovery GC: the object was checked when it was pushed. */
static int gc_scan(struct gc *g, uint64_t off)
{
	const struct uh_objhdr *oh = (const struct uh_objhdr *)(g->base + off);
	return gc_scan_obj(g, off, oh->size & UH_OBJ_SIZE_MASK);
}

/* Mark everything reachable from the root map. The loop pops one object
 * per round and each object is pushed at most once, so it runs at most
 * (number of arena slots) rounds. */
static int gc_mark_all(struct gc *g, char *err, size_t errlen)
{
	struct hd *hd = g->hd;
	uint64_t root = hd->hdr->rootmap_off;
	const struct uh_arena_span *s;
	uint32_t slot;
	if (!gc_check(g, root, UH_CLASS_ROOTMAP, &s, &slot))
		return hd_err(err, errlen, UH_EINTERNAL,
			      "root map of %s is damaged (no valid root map object at offset "
			      "%llu); refusing to collect garbage, which would free every object",
			      hd->path, (unsigned long long)root);
	int rc = gc_mark(g, root, s, slot);
	while (!rc && g->stack.n > 0)
		rc = gc_scan(g, g->stack.v[--g->stack.n]);
	if (rc)
		return hd_err(err, errlen, rc, "out of memory during recovery GC of %s "
			      "(%llu live objects marked)", hd->path, (unsigned long long)g->live);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Sweeping. */

/* Directory index of span s's arena, if the directory agrees. */
static int64_t span_dir_index(struct gc *g, const struct uh_arena_span *s);

/* Span s is an arena leased to a client still running: its bitmap is that
 * client's to set, and everything valid in it may be that client's. */
static int span_live(struct gc *g, const struct uh_arena_span *s)
{
	return g->side && g->side[s - g->ix->v];
}

/* Side mark bits for the arenas of running clients. 0 or UH_ENOMEM. */
static int side_bitmaps(struct gc *g)
{
	if (!g->running)
		return 0;
	g->side = calloc(g->ix->n ? g->ix->n : 1, sizeof(*g->side));
	if (!g->side)
		return UH_ENOMEM;
	for (uint32_t i = 0; i < g->ix->n; i++) {	/* bounded by the index */
		const struct uh_arena_span *s = &g->ix->v[i];
		int64_t idx = span_dir_index(g, s);
		uint32_t owner = idx < 0 ? 0 : hd_arena_dir(g->hd)[idx].owner;
		if (!owner || owner >= g->hd->hdr->session_cap || !g->running[owner])
			continue;
		if (!(g->side[i] = calloc(((size_t)s->nslots + 63) / 64, 8)))
			return UH_ENOMEM;
	}
	return 0;
}

static void zero_bitmaps(struct gc *g)
{
	for (uint32_t i = 0; i < g->ix->n; i++) {	/* bounded by the index */
		const struct uh_arena_span *s = &g->ix->v[i];
		if (span_live(g, s))
			continue;
		memset(uh_arena_bitmap(g->base, s->arena_off), 0,
		       ((size_t)s->nslots + 63) / 64 * 8);
	}
}

/* Every valid object of the arenas of clients still running is a root:
 * objects they allocated and have not published yet (or allocated in a
 * block still open) are unreachable from the root map. */
static int mark_live_arenas(struct gc *g)
{
	int rc = 0;
	for (uint32_t i = 0; i < g->ix->n && !rc; i++) {	/* bounded by the index */
		const struct uh_arena_span *s = &g->ix->v[i];
		if (!span_live(g, s))
			continue;
		for (uint32_t k = 0; k < s->nslots && !rc; k++) {	/* bounded by nslots */
			uint64_t off = s->first_slot + (uint64_t)k * s->slot_size;
			const struct uh_objhdr *oh = (const struct uh_objhdr *)(g->base + off);
			const struct uh_arena_span *sp;
			uint32_t slot;
			uint64_t ref = uh_ref_make(off, uh_word_gen(oh->class_word));
			if (gc_check(g, ref, 0, &sp, &slot))
				rc = gc_mark(g, off, sp, slot);
		}
	}
	while (!rc && g->stack.n > 0)
		rc = gc_scan(g, g->stack.v[--g->stack.n]);
	return rc;
}

static int64_t span_dir_index(struct gc *g, const struct uh_arena_span *s)
{
	const struct uh_arena_hdr *ah = (const struct uh_arena_hdr *)(g->base + s->arena_off);
	if (ah->dir_index >= g->hd->hdr->arena_cap ||
	    hd_arena_hdr_ok(g->hd, (uint32_t)ah->dir_index) != ah)
		return -1;
	return (int64_t)ah->dir_index;
}

/* Clear the valid bit of every unmarked object of a small arena; flush the
 * changed range once (one msync per arena on an ordinary file, not one
 * per object). */
static void sweep_small(struct gc *g, const struct uh_arena_span *s)
{
	const uint64_t *bm = uh_arena_bitmap(g->base, s->arena_off);
	uint64_t lo = UINT64_MAX, hi = 0;
	for (uint32_t i = 0; i < s->nslots; i++) {	/* bounded by nslots */
		if (uh_bitmap_test(bm, i))
			continue;
		uint64_t off = s->first_slot + (uint64_t)i * s->slot_size;
		struct uh_objhdr *oh = (struct uh_objhdr *)(g->base + off);
		if (!(oh->size & UH_OBJ_VALID))
			continue;
		oh->size &= ~UH_OBJ_VALID;
		g->freed++;
		lo = off < lo ? off : lo;
		hi = off + UH_OBJHDR_SIZE;
	}
	if (lo < hi)
		g->hd->persist.flush(g->hd->persist.ctx, g->base + lo, hi - lo);
}

static void gc_sweep(struct gc *g)
{
	for (uint32_t i = 0; i < g->ix->n; i++) {	/* bounded by the index */
		const struct uh_arena_span *s = &g->ix->v[i];
		int64_t idx = span_dir_index(g, s);
		if (idx < 0 || span_live(g, s))
			continue;
		if (hd_arena_dir(g->hd)[idx].kind == UH_ARENA_SMALL) {
			sweep_small(g, s);
			continue;
		}
		if (uh_bitmap_test(uh_arena_bitmap(g->base, s->arena_off), 0))
			continue;
		const struct uh_objhdr *oh = (const struct uh_objhdr *)(g->base + s->first_slot);
		g->freed += (oh->size & UH_OBJ_VALID) != 0;
		hd_large_free_locked(g->hd, (uint32_t)idx);
	}
	g->hd->persist.drain(g->hd->persist.ctx);
}

/* Leases do not survive a restart, except those of clients still running.
 * Writing owner 0 is idempotent, so plain stores plus one persist are
 * enough. */
static void unlease_all(struct hd *hd, const uint8_t *live)
{
	struct uh_arena_ent *dir = hd_arena_dir(hd);
	for (uint32_t i = 0; i < hd->hdr->arena_cap; i++) {	/* bounded by arena_cap */
		uint32_t o = dir[i].owner;
		if (o != 0 && !(live && o < hd->hdr->session_cap && live[o])) {
			dir[i].owner = 0;
			hd->persist.flush(hd->persist.ctx, &dir[i].owner, sizeof(dir[i].owner));
		}
	}
	hd->persist.drain(hd->persist.ctx);
}

static void count_skipped_arenas(struct hd *hd)
{
	const struct uh_arena_ent *dir = hd_arena_dir(hd);
	uint32_t bad = 0;
	for (uint32_t i = 0; i < hd->hdr->arena_cap; i++)	/* bounded by arena_cap */
		bad += dir[i].kind != UH_ARENA_UNUSED && !hd_arena_hdr_ok(hd, i);
	if (bad)
		hd_log("warn", "arenas_skipped", "count=%u reason=damaged_header "
		       "note=their_objects_are_unreachable", bad);
}

static int gc_finish_header(struct hd *hd, uint64_t maxv)
{
	struct uh_hdr *h = hd->hdr;
	volatile int rc = 0;
	hd_clock_raise(hd, maxv + 1);
	__atomic_add_fetch(&h->clock, 1, __ATOMIC_ACQ_REL);
	uh_persist_range(&hd->persist, &h->clock, sizeof(h->clock));
	TX_BEGIN(hd->pop) {
		hd_tx_add(hd, &h->gc_runs, 16);	/* gc_runs, last_recovery_ns */
		h->gc_runs++;
		h->last_recovery_ns = hd_now_ns();
	} TX_ONABORT {
		rc = UH_EINTERNAL;
	} TX_END
	return rc;
}

static void gc_free(struct gc *g)
{
	for (uint32_t i = 0; g->side && i < g->ix->n; i++)	/* bounded by the index */
		free(g->side[i]);
	free(g->side);
	free(g->cls);
	free(g->refbuf);
	free(g->stack.v);
}

int hd_recovery_gc_locked(struct hd *hd, char *err, size_t errlen)
{
	struct gc g;
	memset(&g, 0, sizeof(g));
	g.hd = hd;
	g.running = hd->ninherited ? hd->inherited : NULL;
	g.base = hd->base;
	g.ix = &hd->ix;
	int rc = (gc_classes(&g) || side_bitmaps(&g)) ? UH_ENOMEM : 0;
	if (rc) {
		gc_free(&g);
		return hd_err(err, errlen, rc, "out of memory before recovery GC of %s", hd->path);
	}
	count_skipped_arenas(hd);
	zero_bitmaps(&g);
	rc = mark_live_arenas(&g);
	if (rc)
		rc = hd_err(err, errlen, rc, "out of memory marking the arenas of running "
			    "clients of %s", hd->path);
	if (!rc)
		rc = gc_mark_all(&g, err, errlen);
	if (!rc) {
		gc_sweep(&g);
		unlease_all(hd, g.running);
		if (gc_finish_header(hd, g.maxv))
			rc = hd_err(err, errlen, UH_EINTERNAL, "cannot update the header of %s: %s",
				    hd->path, pmemobj_errormsg());
	}
	hd->rec.live_objects = g.live;
	hd->rec.freed_objects = g.freed;
	hd->rec.nulled_refs = g.nulled;
	hd->rec.locks_cleared = g.locks_cleared;
	if (g.roots_dropped)
		hd_log("warn", "roots_dropped", "count=%llu", (unsigned long long)g.roots_dropped);
	gc_free(&g);
	return rc;
}

/* ------------------------------------------------------------------ */
/* The online mark (collector.c): see the header comment. */

struct gc *hd_mark_new_locked(struct hd *hd, struct uh_arena_index *snap)
{
	struct gc *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->hd = hd;
	g->online = 1;
	g->base = hd->base;
	g->ix = snap;
	int rc = gc_classes(g);
	if (!rc && !(g->side = calloc(snap->n ? snap->n : 1, sizeof(*g->side))))
		rc = UH_ENOMEM;
	for (uint32_t i = 0; !rc && i < snap->n; i++)	/* bounded by the snapshot */
		if (!(g->side[i] = calloc(((size_t)snap->v[i].nslots + 63) / 64, 8)))
			rc = UH_ENOMEM;
	if (rc) {
		hd_mark_free(g);
		return NULL;
	}
	return g;
}

void hd_mark_free(struct gc *g)
{
	if (!g)
		return;
	gc_free(g);
	free(g);
}

/* A root, pin or ring entry: a candidate reference. One whose slot is
 * marked already is dropped without reading the heap (online_push); the
 * rest is checked when popped (online_visit), like a scanned reference. */
int hd_mark_grey(struct gc *g, uint64_t word)
{
	if (word == 0 || word % 8 != 0)
		return 0;	/* not a reference */
	return online_push(g, word);
}

/* A reference popped from the online stack: check it now (the object may
 * have changed since it was pushed), mark it, scan what it holds with its
 * payload clamped to its slot. */
static int online_visit(struct gc *g, uint64_t ref)
{
	const struct uh_arena_span *s;
	uint32_t slot;
	const struct uh_objhdr *oh = gc_check(g, ref, 0, &s, &slot);
	uint64_t off = UH_REF_OFFSET(ref);
	if (!oh || !gc_set_bit(g, off, s, slot))
		return 0;
	uint32_t kind = g->cls[uh_word_class(__atomic_load_n(&oh->class_word,
							      __ATOMIC_RELAXED))].kind;
	if (kind == UH_K_STRING || kind == UH_K_BYTES)
		return 0;	/* no references inside */
	uint32_t payload = __atomic_load_n(&oh->size, __ATOMIC_ACQUIRE) & UH_OBJ_SIZE_MASK;
	if (payload > s->slot_size - UH_OBJHDR_SIZE)
		payload = s->slot_size - UH_OBJHDR_SIZE;
	return gc_scan_obj(g, off, payload);
}

/* Popped references wait in a small ring after a prefetch of their
 * header, so that the cache misses of a random graph overlap. */
#define GC_PREFETCH 16u

int hd_mark_drain(struct gc *g, uint64_t budget, int *more)
{
	uint64_t ring[GC_PREFETCH];
	uint32_t n = 0, head = 0;
	int rc = 0;
	while (!rc && budget > 0 && (n > 0 || g->stack.n > 0)) {	/* <= budget */
		while (n < GC_PREFETCH && g->stack.n > 0) {	/* <= GC_PREFETCH */
			uint64_t r = g->stack.v[--g->stack.n];
			if (UH_REF_OFFSET(r) < g->hd->heap_size)
				__builtin_prefetch(g->base + UH_REF_OFFSET(r));
			ring[(head + n++) % GC_PREFETCH] = r;
		}
		uint64_t r = ring[head];
		head = (head + 1) % GC_PREFETCH;
		n--;
		budget--;
		rc = online_visit(g, r);
	}
	for (; n > 0 && !rc; n--, head = (head + 1) % GC_PREFETCH)	/* <= GC_PREFETCH */
		rc = gc_push(g, ring[head]);
	*more = g->stack.n > 0;
	return rc;
}

int hd_mark_test(const struct gc *g, uint32_t span, uint32_t slot)
{
	return uh_bitmap_test(g->side[span], slot);
}

uint64_t hd_mark_live(const struct gc *g)
{
	return g->live;
}
