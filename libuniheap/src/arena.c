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
		      struct uh_arena_span *out)
{
	if (e->kind != UH_ARENA_SMALL && e->kind != UH_ARENA_LARGE)
		return 0;
	if (e->off < UH_HDR_SIZE || e->off > heap_size - sizeof(struct uh_arena_hdr))
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
}

int uh_arena_index_build(struct uh_arena_index *ix)
{
	const struct uh_hdr *h = ix->hdr;
	uint32_t cap = h->arena_cap;

	if (h->arena_dir_off == 0 || h->arena_dir_off > ix->heap_size ||
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
		if (entry_sane(ix->base, ix->heap_size, &e, &ix->v[n]))
			n++;
	}
	qsort(ix->v, n, sizeof(*ix->v), span_cmp);
	ix->n = n;
	return 0;
}

void uh_arena_index_free(struct uh_arena_index *ix)
{
	free(ix->v);
	ix->v = NULL;
	ix->n = ix->cap = 0;
}

const struct uh_arena_span *uh_arena_lookup(const struct uh_arena_index *ix, uint64_t off)
{
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

const struct uh_arena_span *uh_arena_slot_of(struct uh_arena_index *ix, uint64_t off,
					     uint32_t *slot)
{
	const struct uh_arena_span *s = uh_arena_lookup(ix, off);

	if (!s && uh_arena_index_build(ix) == 0)
		s = uh_arena_lookup(ix, off);
	if (!s || (off - s->first_slot) % s->slot_size != 0)
		return NULL;
	*slot = (uint32_t)((off - s->first_slot) / s->slot_size);
	return s;
}
