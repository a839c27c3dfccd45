/*
 * map_int.h -- what the hash map's files share (map.c: layout, lookup,
 * put/remove and online resizing; map_iter.c: uh_map_next; map_check.c:
 * uh_map_check). The persistent layout is described at the top of map.c.
 *
 * Every function here runs inside a block (an implicit one if the user is
 * outside), so every read is validated against the block's snapshot and
 * every write commits or rolls back with the block.
 */
#ifndef UH_MAP_INT_H
#define UH_MAP_INT_H

#include "value.h"

/* Header slots (class UH_CLASS_MAP). */
#define DT_MH_KIND 0u		/* I64: UH_KEY_* */
#define DT_MH_COUNT 1u		/* I64: live entries */
#define DT_MH_TABLE 2u		/* REF: current bucket table */
#define DT_MH_OLD 3u		/* REF or empty: table being migrated from */
#define DT_MH_CURSOR 4u		/* I64: old buckets [0, cursor) are migrated */
#define DT_MH_SLOTS 5u

/* Entry slots (class UH_CLASS_MAP_ENTRY). */
#define DT_ME_KEY 0u		/* I64, or STRING/BYTES ref to a key object */
#define DT_ME_VALUE 1u		/* any typed value */
#define DT_ME_NEXT 2u		/* REF or empty: next entry of the chain */
#define DT_ME_HASH 3u		/* I64: uh_key_hash() of the key */
#define DT_ME_SLOTS 4u

#define DT_MAP_MIN_BUCKETS 8u	/* a new map's table */
#define DT_MAP_STEP 8u		/* old buckets migrated per put/remove */

/* A map header as read in the current block, checked for sanity. */
struct dt_map_view {
	uh_off m;
	uint32_t kind;
	uint64_t count;
	uh_off table;		/* current table */
	uint64_t size;		/* its buckets (a power of two) */
	uh_off old;		/* 0 when no migration is under way */
	uint64_t old_size;	/* size / 2 during a migration, else 0 */
	uint64_t cursor;
};

/* Read map m's header into *v (validated reads; with lock, lock the
 * header first). UH_ETYPE/UH_EFREED when m is not a live map,
 * UH_EINTERNAL when the header is damaged, UH_ECONFLICT when the block
 * was doomed by a concurrent change. */
int dt_map_view(uh_heap *h, uh_off m, int lock, struct dt_map_view *v);

/* The reference slot i of obj holds (0 for an empty slot). A slot that
 * holds something else is UH_EINTERNAL. */
int dt_map_ref(uh_heap *h, uh_off m, uh_off obj, uint64_t i, uh_off *out);

/* child, read from slot i of parent, must be a live object of class cls
 * with at least min_slots slots. If it is not, parent is read again:
 * a concurrent change dooms the block (UH_ECONFLICT), else the map is
 * damaged (UH_EINTERNAL naming both). */
int dt_map_deref(uh_heap *h, uh_off m, uh_off parent, uint64_t i, uh_off child,
		 uint32_t cls, uint64_t min_slots);

/* Where a key of this hash lives: the old table for buckets not yet
 * migrated, else the current one. Can't fail. */
void dt_map_bucket_of(const struct dt_map_view *v, uint64_t hash, uh_off *table,
		      uint64_t *bucket);

/* The key held by entry e (data points into the mapping). */
int dt_map_entry_key(uh_heap *h, uh_off m, uh_off e, uh_key *k);

/* Run body as one atomic step: in the caller's block if there is one,
 * else in an implicit block re-run on conflicts (uh_run). */
int dt_map_run(uh_heap *h, int (*body)(uh_heap *, void *), void *arg);

#endif /* UH_MAP_INT_H */
