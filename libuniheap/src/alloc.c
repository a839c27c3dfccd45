/*
 * alloc.c -- object allocation inside this session's leased arenas.
 *
 * Only the leasing session sets bits in an arena's bitmap, so claiming a
 * slot needs no lock shared with other processes; any session may clear a
 * bit (free). A new arena costs one RPC per arena (1 MiB), never one per
 * object. Objects bigger than UH_SMALL_MAX get a one-slot arena of their own.
 *
 * Locks: inside a block a new object's lock word is locked by this
 * session until the block ends (the online collector never sweeps it);
 * outside one it is the current clock, written in a busy section.
 *
 * Crash windows: inside a block the ALLOC entry is logged before the bit
 * is set, so a rollback (ours or heapd's) finds every slot to release. An
 * allocation outside a block is unreachable until published; if the
 * process dies first, recovery GC reclaims the slot.
 *
 * Generations: a claimed slot's object gets the generation after the
 * slot's last one (uh_next_gen), written into the header before anything
 * else, so a process still holding a reference to the slot's previous
 * object, which re-checks the header after each copy, never accepts the
 * new object's bytes as the old one's.
 */
#include <stdlib.h>
#include <string.h>

#include "uhint.h"

/* The smallest class that holds bytes (binary search over the ascending
 * list), -1 above UH_SMALL_MAX. */
static int size_class(uint64_t bytes)
{
	int lo = 0, hi = (int)UH_SIZE_CLASSES;

	if (bytes > UH_SMALL_MAX)
		return -1;
	while (lo < hi) {	/* bound: log2(UH_SIZE_CLASSES) + 1 steps */
		int mid = (lo + hi) / 2;
		if (uh_size_class_slot[mid] < bytes)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first generation of the arena's slots; checked against the heap
 * before the header is read (heapd named the arena). */
static uint32_t arena_seed(uh_heap *h, uint64_t arena_off)
{
	if (arena_off > h->size - sizeof(struct uh_arena_hdr))
		return 0;
	const struct uh_arena_hdr *ah = (const void *)(h->base + arena_off);
	return ah->gen_seed & UH_GEN_MASK;
}

static int add_arena(uh_heap *h, struct uh_size_arenas *sa, const struct uhc_arena *a)
{
	/* heapd may lease back an arena this session holds already (after a
	 * GC cycle freed slots there): it is listed once, so that a give-back
	 * (leases.c) leaves no copy behind to allocate in. */
	for (uint32_t k = 0; k < sa->n; k++) {	/* bound: arenas of the class */
		if (sa->v[k].arena_off == a->arena_off) {
			sa->current = k;
			h->st.arena_leases++;
			return 0;
		}
	}
	if (sa->n == sa->cap) {
		uint32_t cap = sa->cap ? sa->cap * 2 : 4;
		struct uh_arena_ref *v = realloc(sa->v, cap * sizeof(*v));
		if (!v)
			return uh_err_set(UH_ENOMEM, "uh_alloc: out of process memory");
		sa->v = v;
		sa->cap = cap;
	}
	/* An arena in what the heap has grown by since we mapped it. */
	int rc = a->first_slot + (uint64_t)a->slot_size * a->nslots > h->size ? uh_map_more(h) : 0;
	if (rc)
		return rc;
	if (a->first_slot > h->size || (uint64_t)a->slot_size * a->nslots > h->size - a->first_slot)
		return uh_err_set(UH_EPROTO, "heapd leased an arena outside the heap");
	sa->v[sa->n] = (struct uh_arena_ref){ a->arena_off, a->first_slot, a->slot_size,
					      a->nslots, 0, arena_seed(h, a->arena_off) };
	sa->current = sa->n++;
	h->st.arena_leases++;
	return 0;
}

/* Find a clear bit in arena a at or after its cursor (a slot index),
 * wrapping once; -1 if full. Next fit, not lowest first: a freed slot is
 * reused only after the allocator has gone round the arena, so a stale
 * reference to a just-freed object keeps failing as freed instead of
 * silently naming its successor. */
static int64_t find_free(uh_heap *h, struct uh_arena_ref *a)
{
	const uint64_t *bm = uh_arena_bitmap(h->base, a->arena_off);
	uint32_t words = (a->nslots + 63) / 64;
	uint32_t start = a->cursor < a->nslots ? a->cursor : 0;

	for (uint32_t k = 0; k <= words; k++) {	/* bound: bitmap words + 1 */
		uint32_t w = (start / 64 + k) % words;
		uint64_t free_bits = ~__atomic_load_n(&bm[w], __ATOMIC_ACQUIRE);
		if (k == 0)
			free_bits &= ~0ull << (start % 64);	/* at or after the cursor */
		else if (k == words)
			free_bits &= start % 64 ? ~(~0ull << (start % 64)) : 0;	/* wrapped */
		if (!free_bits)
			continue;
		uint32_t slot = w * 64 + (uint32_t)__builtin_ctzll(free_bits);
		if (slot >= a->nslots)
			continue;	/* padding bits of the last word */
		a->cursor = slot + 1;
		return slot;
	}
	return -1;
}

/* Returns the new object's generation. Inside a block the object is
 * locked by this session until the block ends (tx.c releases it): the
 * online collector's sweep takes only unlocked objects, and nothing
 * roots the object before its block commits. */
static uint32_t init_object(uh_heap *h, uint64_t obj, uint32_t seed, uint32_t class_id,
			    uint64_t payload, const void *init)
{
	struct uh_objhdr *o = (void *)(h->base + obj);
	uint64_t version = __atomic_load_n(&h->hdr->clock, __ATOMIC_ACQUIRE) & ~UH_LOCK_BIT;
	uint64_t lock = h->tx.depth ? uh_lock_word(h->session, version) : version;
	uint32_t gen = uh_next_gen(__atomic_load_n(&o->class_word, __ATOMIC_ACQUIRE), seed);

	/* The new generation first, fenced before the payload stores: a
	 * reader of the old object that copies payload bytes and then sees
	 * the old word again copied old bytes. */
	__atomic_store_n(&o->class_word, class_id | gen << 16, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (init)
		memcpy(o + 1, init, payload);
	else
		memset(o + 1, 0, payload);
	__atomic_store_n(&o->lock, lock, __ATOMIC_RELAXED);
	__atomic_store_n(&o->size, UH_OBJ_VALID | (uint32_t)payload, __ATOMIC_RELEASE);
	return gen;
}

/* Claim slot in arena a for an object of class_id, log it if in a block. */
static int claim(uh_heap *h, struct uh_arena_ref *a, uint32_t slot, uint32_t class_id,
		 uint64_t payload, const void *init, uh_off *out)
{
	uint64_t obj = a->first_slot + (uint64_t)slot * a->slot_size;
	int rc;

	/* Claim first, log second: a rollback must only ever release slots
	 * we own. Dying in between leaks the slot until recovery GC. */
	if (uh_bitmap_set(uh_arena_bitmap(h->base, a->arena_off), slot))
		return UH_ECONFLICT;	/* taken meanwhile: caller looks again */
	/* Loaded before the object exists: a mark that had begun by then
	 * need not be told of it (uh_gc_note_new). */
	uint64_t marking = uh_gc_marking_now(h);
	if (h->tx.depth && (rc = uh_tx_log_alloc(h, obj, a->slot_size)) != 0)
		return rc;	/* block doomed; this one slot waits for recovery GC */
	/* Outside a block, in a busy section (gcring.c): either the object's
	 * version is at least the collector's gc_v0 (not swept by a cycle
	 * that marks now), or it was complete before that cycle's mark. */
	if (!h->tx.depth)
		uh_gc_enter(h);
	uint32_t gen = init_object(h, obj, a->gen_seed, class_id, payload, init);
	if (!h->tx.depth) {
		uh_gc_leave(h);
		/* Outside a block the zeroed object must be durable before any
		 * later block publishes a reference to it. */
		uh_flush(h, h->base + obj, UH_OBJHDR_SIZE + payload);
		uh_barrier(h);
	}
	h->st.allocs++;
	*out = uh_ref_make(obj, gen);
	uh_gc_note_new(h, marking, *out);
	uh_gc_nursery_add(h, *out);
	return 0;
}

/* Leases one allocation asks for at most, each after a look at this
 * session's arenas (leases.c). */
#define LEASE_LOOKS 4

static int alloc_small(uh_heap *h, int sc, uint32_t class_id, uint64_t payload,
		       const void *init, uh_off *out)
{
	struct uh_size_arenas *sa = &h->small[sc];
	struct uhc_arena a;
	int64_t slot;
	int rc;

	uh_alloc_give_back(h, 0);	/* after a GC cycle: a load of gc_state */
	sa->used = 1;
	for (uint32_t k = 0; k < sa->n; k++) {	/* bound: arenas of this class */
		struct uh_arena_ref *r = &sa->v[(sa->current + k) % sa->n];
		/* bound: a slot is lost to a racing claim at most once per
		 * free slot, and only if heapd leased the arena twice. */
		while ((slot = find_free(h, r)) >= 0) {
			sa->current = (sa->current + k) % sa->n;
			rc = claim(h, r, (uint32_t)slot, class_id, payload, init, out);
			if (rc != UH_ECONFLICT)
				return rc;
		}
	}
	int again;
	/* bound: LEASE_LOOKS leases, each after a look */
	for (int tries = 1;; tries++) {
		/* Before taking more of the heap, give back what this session
		 * holds and does not fill: heapd may then lease it, or free it
		 * once empty. */
		uh_alloc_give_back(h, 1);
		uh_starve_calling(h, 1);	/* the block's locks are held meanwhile */
		if ((rc = uh_ctl_ready(h)) == 0)
			rc = uhc_lease_arena(h->ctl, uh_size_class_slot[sc], &a);
		if (rc && (rc = uh_ctl_failed(h, rc, &again)) == 0 && again)
			rc = uhc_lease_arena(h->ctl, uh_size_class_slot[sc], &a);
		uh_starve_calling(h, 0);
		/* Heap full after cycles that ran while this session waited in
		 * the lease, unable to look: the arenas they emptied here may be
		 * what the heap lacks (when every writer asks at once, nobody
		 * else can give any back). Look, then ask once more. */
		if (rc != UH_ENOSPC || tries >= LEASE_LOOKS || !uh_alloc_swept_since_look(h))
			break;
	}
	sa = &h->small[sc];
	if (rc)
		return rc;
	if ((rc = add_arena(h, sa, &a)) != 0)
		return rc;
	/* heapd may lease back a used arena: its live objects stay put. */
	struct uh_arena_ref *r = &sa->v[sa->current];
	while ((slot = find_free(h, r)) >= 0) {	/* bound: slots of the arena */
		rc = claim(h, r, (uint32_t)slot, class_id, payload, init, out);
		if (rc != UH_ECONFLICT)
			return rc;
	}
	return uh_err_set(UH_EPROTO, "heapd leased a full arena (%llu)",
			  (unsigned long long)r->arena_off);
}

static int alloc_large(uh_heap *h, uint32_t class_id, uint64_t payload, const void *init,
		       uh_off *out)
{
	struct uhc_arena a;
	int again, rc;

	uh_starve_calling(h, 1);	/* the block's locks are held meanwhile */
	if ((rc = uh_ctl_ready(h)) == 0)
		rc = uhc_lease_large(h->ctl, UH_OBJHDR_SIZE + payload, &a);
	if (rc && (rc = uh_ctl_failed(h, rc, &again)) == 0 && again)
		rc = uhc_lease_large(h->ctl, UH_OBJHDR_SIZE + payload, &a);
	uh_starve_calling(h, 0);
	if (rc == 0 && a.first_slot + (uint64_t)a.slot_size > h->size)
		rc = uh_map_more(h);	/* a region in what the heap has grown by */
	if (rc)
		return rc;
	if (a.nslots != 1 || a.first_slot > h->size || a.slot_size < UH_OBJHDR_SIZE + payload ||
	    a.slot_size > h->size - a.first_slot)
		return uh_err_set(UH_EPROTO, "heapd leased a bad large-object region");
	struct uh_arena_ref r = { a.arena_off, a.first_slot, a.slot_size, 1, 0,
				  arena_seed(h, a.arena_off) };
	h->st.arena_leases++;
	rc = claim(h, &r, 0, class_id, payload, init, out);
	if (rc == UH_ECONFLICT)
		return uh_err_set(UH_EPROTO, "heapd leased a large region already in use");
	return rc;
}

int uh_alloc_raw(uh_heap *h, uint32_t class_id, uint64_t payload, const void *init,
		 uh_off *out)
{
	if (h->readonly)
		return uh_err_set(UH_EREADONLY, "uh_alloc: heap is connected read-only");
	if (payload > UH_OBJ_SIZE_MASK || payload > h->size)
		return uh_err_set(UH_EINVAL, "uh_alloc: object of %llu bytes is too large",
				  (unsigned long long)payload);
	int sc = size_class(UH_OBJHDR_SIZE + payload);
	if (sc < 0)
		return alloc_large(h, class_id, payload, init, out);
	return alloc_small(h, sc, class_id, payload, init, out);
}

int uh_alloc(uh_heap *h, uint32_t class_id, uh_off *out)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	const struct uh_class_desc *d = uh_class_desc(h, class_id);
	if (!d)
		return uh_err_set(UH_ENOTFOUND, "uh_alloc: no class with id %u", class_id);
	if (d->kind != UH_K_RECORD)
		return uh_err_set(UH_ETYPE, "uh_alloc: class %u (%s) is not a record class; "
				  "use its own constructor", class_id, d->name);
	return uh_alloc_raw(h, class_id, d->payload_size, NULL, out);
}

void uh_alloc_release_all(uh_heap *h)
{
	/* heapd takes every arena back when the session ends; only our
	 * bookkeeping is released here. */
	for (uint32_t i = 0; i < UH_SIZE_CLASSES; i++) {
		free(h->small[i].v);
		memset(&h->small[i], 0, sizeof(h->small[i]));
	}
}

int uh_free(uh_heap *h, uh_off obj)
{
	int implicit, rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (h->readonly)
		return uh_err_set(UH_EREADONLY, "uh_free: heap is connected read-only");
	if (!uh_obj_get(h, obj, 0, &rc))
		return rc;
	if (UH_REF_OFFSET(obj) == h->hdr->rootmap_off)
		return uh_err_set(UH_EINVAL, "uh_free: the root map cannot be freed");
	if ((rc = uh_tx_begin_implicit(h, &implicit)) != 0)
		return rc;
	return uh_tx_end_implicit(h, implicit, uh_tx_log_free(h, obj));
}
