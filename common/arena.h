/*
 * arena.h -- finding the arena and slot that hold an object offset, and
 * the atomic bitmap operations on arenas. Shared by heapd and libuniheap.
 *
 * The arena directory (struct uh_arena_ent[]) is unordered and only heapd
 * changes it. Readers keep a sorted snapshot (struct uh_arena_index) and
 * rebuild it when an offset falls in no indexed arena, since a miss may
 * mean heapd has leased a new arena since the snapshot, and when the
 * directory entry of the span an offset falls in no longer names that
 * arena: heapd has freed it since (a large region, or a small arena the
 * online GC emptied, FORMAT.md 6.3), and the memory may belong to another
 * arena now. The entry, not the arena header, says so: heapd clears the
 * entry in the transaction that frees the arena, before libpmemobj can
 * hand the memory out again, whereas the freed header's bytes stay as
 * they were until something new covers them.
 */
#ifndef UH_ARENA_H
#define UH_ARENA_H

#include <stdint.h>

#include "format.h"

struct uh_arena_span {
	uint64_t first_slot;	/* offset of slot 0 */
	uint64_t end;		/* first_slot + nslots * slot_size */
	uint64_t arena_off;
	uint32_t slot_size;
	uint32_t nslots;
	uint64_t recip;		/* 2^64 / slot_size rounded up: slot = offset * recip >> 64 */
	uint32_t dir_index;	/* its directory entry: the span is current while that
				 * entry still names this arena (uh_arena_slot_of) */
};

struct uh_arena_index {
	const char *base;		/* mapping start */
	uint64_t heap_size;
	const struct uh_hdr *hdr;	/* the validated heap header */
	struct uh_arena_span *v;	/* sorted by first_slot; owned */
	uint32_t n;
	uint32_t cap;
	/* Page map: pm[off >> pm_shift] is the first span that ends after
	 * the start of that page, so a lookup starts next to its span
	 * instead of searching (objects are looked up on every read). */
	uint32_t *pm;			/* owned; npages entries */
	uint64_t npages;
	uint32_t pm_shift;
	/* A heap that grows (FORMAT.md 1.1): on a miss at or past heap_size,
	 * more maps what the heap has grown by and returns the bytes mapped
	 * now (set by libuniheap; NULL: the size is fixed). */
	uint64_t (*more)(void *ctx);
	void *more_ctx;
};

/* Bind ix to a mapping (no allocation; can't fail). */
void uh_arena_index_init(struct uh_arena_index *ix, const char *base,
			 uint64_t heap_size, const struct uh_hdr *hdr);

/* Snapshot the directory into ix (reusing its buffer). Entries whose
 * arena header is not self-consistent are skipped, so a corrupt directory
 * entry can never make a lookup read outside the heap.
 * Returns 0 or UH_ENOMEM (ix unchanged). */
int uh_arena_index_build(struct uh_arena_index *ix);
void uh_arena_index_free(struct uh_arena_index *ix);

/* The span whose slots contain off, or NULL. Through the page map (a
 * binary search if it could not be built); can't fail. */
const struct uh_arena_span *uh_arena_lookup(const struct uh_arena_index *ix, uint64_t off);

/* If off is the start of a slot, return its span and set *slot; else NULL.
 * Rebuilds the snapshot once when off falls in no known arena (heapd may
 * have leased one since) or in a span whose directory entry no longer
 * names its arena (heapd has freed it since). Says nothing about the
 * slot's object. */
const struct uh_arena_span *uh_arena_slot_of(struct uh_arena_index *ix,
					     uint64_t off, uint32_t *slot);

/* If off (inside span s) is the start of a slot, set *slot and return 1;
 * else 0. A multiplication instead of a division (Lemire's fast division,
 * exact for 32-bit operands: a small arena is smaller than 4 GiB). */
static inline int uh_span_slot(const struct uh_arena_span *s, uint64_t off, uint32_t *slot)
{
	uint64_t rel = off - s->first_slot;
	uint64_t q = rel >> 32 ? rel / s->slot_size :
		     (uint64_t)(((unsigned __int128)s->recip * rel) >> 64);
	*slot = (uint32_t)q;
	return q * s->slot_size == rel;
}

static inline uint64_t *uh_arena_bitmap(char *base, uint64_t arena_off)
{
	return (uint64_t *)(base + arena_off + sizeof(struct uh_arena_hdr));
}

/* Atomically mark slot used; returns nonzero if it already was. */
static inline int uh_bitmap_set(uint64_t *bm, uint32_t slot)
{
	uint64_t bit = 1ull << (slot & 63);
	return (__atomic_fetch_or(&bm[slot >> 6], bit, __ATOMIC_ACQ_REL) & bit) != 0;
}

/* Atomically mark slot free (any session may free into any arena). */
static inline void uh_bitmap_clear(uint64_t *bm, uint32_t slot)
{
	__atomic_fetch_and(&bm[slot >> 6], ~(1ull << (slot & 63)), __ATOMIC_ACQ_REL);
}

static inline int uh_bitmap_test(const uint64_t *bm, uint32_t slot)
{
	return (__atomic_load_n(&bm[slot >> 6], __ATOMIC_ACQUIRE) >> (slot & 63)) & 1;
}

/* Bytes an arena needs for nslots of slot_size: header, bitmap, padding
 * to 64, slots. Used by heapd to size arenas and by both to check them. */
static inline uint64_t uh_arena_first_slot_rel(uint32_t nslots)
{
	uint64_t words = (nslots + 63u) / 64u;
	return UH_ALIGN_UP(sizeof(struct uh_arena_hdr) + words * 8u, 64u);
}

#endif /* UH_ARENA_H */
