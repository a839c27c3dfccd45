/*
 * arena.c -- sorted snapshot of the arena directory, offset -> slot lookup.
 */
#include <stdlib.h>

#include "arena.h"

static int span_cmp(const void *a, const void *b)
{
	const struct uh_arena_span *x = a, *y = b;
	return x->first_slot < y->first_slot ? -1 : x->first_slot > y->first_slot;
}

/* An entry is indexed only if its arena header agrees with it and every
 * slot lies inside the heap: lookups then never leave the mapping. */
static int entry_sane(const char *base, uint64_t heap_size, const struct uh_arena_ent *e,
		      uint32_t dir_index, struct uh_arena_span *out)
{
	if (e->kind != UH_ARENA_SMALL && e->kind != UH_ARENA_LARGE)
		return 0;
	/* Arenas are libpmemobj allocations: 16-byte aligned. A damaged
	 * offset must not even be read from. */
	if (e->off < UH_HDR_SIZE || e->off % 16 || e->off > heap_size - sizeof(struct uh_arena_hdr))
		return 0;
	const struct uh_arena_hdr *a = (const void *)(base + e->off);
	if (a->magic != UH_ARENA_MAGIC || a->slot_size < 32 || a->nslots == 0)
		return 0;
	uint64_t bytes = (uint64_t)a->slot_size * a->nslots;
	if (a->first_slot < e->off + uh_arena_first_slot_rel(a->nslots) ||
	    a->first_slot > heap_size || bytes > heap_size - a->first_slot)
		return 0;
	out->first_slot = a->first_slot;
	out->end = a->first_slot + bytes;
	out->arena_off = e->off;
	out->slot_size = a->slot_size;
	out->nslots = a->nslots;
	out->recip = UINT64_MAX / a->slot_size + 1;
	out->dir_index = dir_index;
	return 1;
}

void uh_arena_index_init(struct uh_arena_index *ix, const char *base,
			 uint64_t heap_size, const struct uh_hdr *hdr)
{
	ix->base = base;
	ix->heap_size = heap_size;
	ix->hdr = hdr;
	ix->v = NULL;
	ix->n = ix->cap = 0;
	ix->pm = NULL;
	ix->npages = 0;
	/* Pages of 1 MiB (an arena's size), fewer but bigger beyond 1 TiB. */
	ix->more = NULL;
	ix->more_ctx = NULL;
	ix->pm_shift = 20;
	while ((heap_size >> ix->pm_shift) > (1u << 20))	/* bound: 28 doublings */
		ix->pm_shift++;
}

/* The page map for the sorted spans; without memory for it lookups
 * fall back to the binary search (npages 0). */
static void page_map_build(struct uh_arena_index *ix)
{
	uint64_t np = (ix->heap_size >> ix->pm_shift) + 1;

	if (np != ix->npages) {
		uint32_t *pm = realloc(ix->pm, np * sizeof(*pm));
		if (!pm) {
			ix->npages = 0;
			return;
		}
		ix->pm = pm;
		ix->npages = np;
	}
	uint32_t i = 0;
	for (uint64_t p = 0; p < np; p++) {	/* bound: pages + spans */
		uint64_t start = p << ix->pm_shift;
		while (i < ix->n && ix->v[i].end <= start)
			i++;
		ix->pm[p] = i;
	}
}

int uh_arena_index_build(struct uh_arena_index *ix)
{
	const struct uh_hdr *h = ix->hdr;
	uint32_t cap = h->arena_cap;

	if (h->arena_dir_off == 0 || h->arena_dir_off % 8 || h->arena_dir_off > ix->heap_size ||
	    (uint64_t)cap * sizeof(struct uh_arena_ent) > ix->heap_size - h->arena_dir_off)
		return UH_EINTERNAL;
	if (cap > ix->cap) {
		struct uh_arena_span *v = realloc(ix->v, cap * sizeof(*v));
		if (!v)
			return UH_ENOMEM;
		ix->v = v;
		ix->cap = cap;
	}
	const struct uh_arena_ent *dir = (const void *)(ix->base + h->arena_dir_off);
	uint32_t n = 0;
	for (uint32_t i = 0; i < cap; i++) {	/* bound: directory capacity */
		struct uh_arena_ent e = dir[i];	/* heapd may change it meanwhile */
		if (entry_sane(ix->base, ix->heap_size, &e, i, &ix->v[n]))
			n++;
	}
	qsort(ix->v, n, sizeof(*ix->v), span_cmp);
	ix->n = n;
	page_map_build(ix);
	return 0;
}

void uh_arena_index_free(struct uh_arena_index *ix)
{
	free(ix->v);
	free(ix->pm);
	ix->v = NULL;
	ix->pm = NULL;
	ix->n = ix->cap = 0;
	ix->npages = 0;
}

const struct uh_arena_span *uh_arena_lookup(const struct uh_arena_index *ix, uint64_t off)
{
	uint64_t page = off >> ix->pm_shift;

	if (page < ix->npages) {
		/* Spans do not overlap: walk from the page's first one. */
		for (uint32_t i = ix->pm[page]; i < ix->n; i++) {	/* bound: spans in the page */
			const struct uh_arena_span *s = &ix->v[i];
			if (off < s->first_slot)
				return NULL;
			if (off < s->end)
				return s;
		}
		return NULL;
	}
	uint32_t lo = 0, hi = ix->n;

	while (lo < hi) {	/* bound: log2(n) steps */
		uint32_t mid = lo + (hi - lo) / 2;
		const struct uh_arena_span *s = &ix->v[mid];
		if (off < s->first_slot)
			hi = mid;
		else if (off >= s->end)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}

/* s's directory entry still names s's arena (dir_index was checked
 * against arena_cap when the index was built). heapd clears an entry in
 * the transaction that frees its arena, before the memory can be handed
 * out again; an entry taken by a new arena names another offset, or the
 * same offset with the same layout (an equivalent span). The arena header
 * would not do: the bytes of a freed one stay as they were until
 * something new covers them, and a new arena may start elsewhere. */
static int span_current(const struct uh_arena_index *ix, const struct uh_arena_span *s)
{
	const struct uh_arena_ent *e =
		(const struct uh_arena_ent *)(ix->base + ix->hdr->arena_dir_off) + s->dir_index;
	return __atomic_load_n(&e->kind, __ATOMIC_ACQUIRE) != UH_ARENA_UNUSED &&
	       __atomic_load_n(&e->off, __ATOMIC_ACQUIRE) == s->arena_off &&
	       __atomic_load_n(&e->slot_size, __ATOMIC_ACQUIRE) == s->slot_size &&
	       __atomic_load_n(&e->nslots, __ATOMIC_ACQUIRE) == s->nslots;
}

const struct uh_arena_span *uh_arena_slot_of(struct uh_arena_index *ix, uint64_t off,
					     uint32_t *slot)
{
	const struct uh_arena_span *s = uh_arena_lookup(ix, off);

	/* A span of an arena heapd has freed since the index was built (a
	 * large region, or a small arena the online GC emptied, FORMAT.md
	 * 6.3) may cover a new arena of another layout: its directory entry
	 * no longer names it. Rebuild then, as on a miss. */
	if (!s && ix->more && off >= ix->heap_size) {
		uint64_t size = ix->more(ix->more_ctx);
		if (size > ix->heap_size)
			ix->heap_size = size;
	}
	if ((!s || !span_current(ix, s)) && uh_arena_index_build(ix) == 0)
		s = uh_arena_lookup(ix, off);
	return s && uh_span_slot(s, off, slot) ? s : NULL;
}
