/*
 * map_int.h -- what the hash map's files share (map.c: layout, lookup,
 * put/remove and online resizing; map_get.c: get, len, key kind;
 * map_iter.c: uh_map_next; map_check.c: uh_map_check). The persistent
 * layout is described at the top of map.c.
 *
 * Every function here runs inside a block (an implicit one if the user is
 * outside) or in an optimistic read (optread.c), so every read is
 * validated against the block's snapshot or at the end of the read, and
 * every write commits or rolls back with the block.
 *
 * Tables and entries have two encodings each (map.c): the accessors below
 * read and write either, so one algorithm serves maps written by any
 * version, and a map may hold both while old objects are still there.
 */
#ifndef UH_MAP_INT_H
#define UH_MAP_INT_H

#include "value.h"

/* Header slots (class UH_CLASS_MAP). */
#define DT_MH_KIND 0u		/* I64: UH_KEY_*, | DT_KIND_WORDS */
#define DT_MH_COUNT 1u		/* I64: live entries */
#define DT_MH_TABLE 2u		/* REF: current bucket table */
#define DT_MH_OLD 3u		/* REF or empty: table being migrated from */
#define DT_MH_CURSOR 4u		/* I64: old buckets [0, cursor) are migrated */
#define DT_MH_SLOTS 5u
/* In the kind slot of a map created since format 4's word hash: its keys
 * hash with it (uh_key_hash). Readers that predate it see an unknown kind
 * and refuse the map instead of looking in the wrong buckets. */
#define DT_KIND_WORDS 0x100u
/* In the kind slot of a map created since inline values: its entries may
 * keep a string or bytes value inside (types[0] UH_T_ISTRING or
 * UH_T_IBYTES). Readers that predate it refuse the map, as for 0x100. */
#define DT_KIND_INLINE 0x200u

/* Entry slots (class UH_CLASS_MAP_ENTRY, the typed-slot encoding). */
#define DT_ME_KEY 0u		/* I64, or STRING/BYTES ref to a key object */
#define DT_ME_VALUE 1u		/* any typed value */
#define DT_ME_NEXT 2u		/* REF or empty: next entry of the chain */
#define DT_ME_HASH 3u		/* I64: uh_key_hash() of the key */
#define DT_ME_SLOTS 4u

/* Entry with its key inline (class UH_CLASS_MAP_IENTRY, kind PACKED):
 * payload offsets. The packed header says nvals 2, vals_at 8, types_at 6. */
#define DT_IE_TYPE 6u		/* u8: the value's type (types[0]) */
#define DT_IE_NTYPE 7u		/* u8: UH_T_REF, the next entry's (types[1]) */
#define DT_IE_VALUE 8u		/* u64: the value (vals[0]) */
#define DT_IE_NEXT 16u		/* u64: next entry of the chain, 0 = none (vals[1]) */
#define DT_IE_KEY UH_MAP_ENTRY_KEY_AT	/* the key's bytes, to the end of the payload */
/* An entry with its value inline has one typed value, next (packed
 * header: nvals 1, vals_at 16, types_at 7), so that any reader's GC and
 * heap check see a valid packed object; byte 6 says the value's type
 * (UH_T_ISTRING or UH_T_IBYTES, never a typed value's there), bytes 8..16
 * the key's length (low 32 bits) and the value's (high 32). The value's
 * bytes follow the key's, to the end of the payload. */
#define DT_IE_LENS 8u

#define DT_MAP_MIN_BUCKETS 8u	/* a new map's table */
#define DT_MAP_STEP 8u		/* old buckets migrated per put/remove */

/* A bucket table: class UH_CLASS_MAP_RTABLE (references) or, written by
 * format 2, UH_CLASS_MAP_TABLE (typed slots). */
struct dt_table {
	uh_off ref;		/* 0: none */
	int refs;		/* the reference encoding */
	uint64_t size;		/* buckets, a power of two */
};

/* A map header as read in the current block, checked for sanity. */
struct dt_map_view {
	uh_off m;
	uint32_t kind;
	int words;		/* keys hash with the word hash (DT_KIND_WORDS) */
	int inl;		/* entries may keep values inline (DT_KIND_INLINE) */
	uint64_t count;
	struct dt_table table;	/* current table */
	struct dt_table old;	/* during a migration (size = table.size / 2), else ref 0 */
	uint64_t cursor;
};

/* An entry as the current operation read it. */
struct dt_entry {
	uh_off ref;
	int inl;		/* key inline (class UH_CLASS_MAP_IENTRY) */
	uh_key key;		/* data points into the mapping: immutable while the entry lives */
	uh_off next;
	uint32_t vtype;		/* UH_T_ISTRING/UH_T_IBYTES: the value is inline, else 0 */
	uint32_t vlen;		/* its length; its bytes follow the key's */
};

/* A string or bytes value to store as bytes (uh_map_put_bytes). */
struct dt_bytes {
	uint32_t type;		/* UH_T_STRING or UH_T_BYTES */
	const void *data;
	size_t len;
};

/* Read map m's header into *v (validated reads; with lock, lock the
 * header first). UH_ETYPE/UH_EFREED when m is not a live map,
 * UH_EINTERNAL when the header is damaged, UH_ECONFLICT when the block
 * was doomed by a concurrent change. */
int dt_map_view(uh_heap *h, uh_off m, int lock, struct dt_map_view *v);

/* The reference slot i of obj holds (0 for an empty slot). A slot that
 * holds something else is UH_EINTERNAL. */
int dt_map_ref(uh_heap *h, uh_off m, uh_off obj, uint64_t i, uh_off *out);

/* Bucket b of table t: its first entry (0: empty), or set it to e. */
int dt_table_get(uh_heap *h, uh_off m, const struct dt_table *t, uint64_t b, uh_off *e);
int dt_table_set(uh_heap *h, const struct dt_table *t, uint64_t b, uh_off e);
/* Where bucket b of t keeps its reference, in bytes from t's start. */
uint64_t dt_table_at(const struct dt_table *t, uint64_t b);

/* Entry e, read at byte at of object parent (a bucket, or the previous
 * entry's next): its key and next. If e is not a live entry, parent is read
 * again: a concurrent change dooms the block (UH_ECONFLICT), else the map
 * is damaged (UH_EINTERNAL naming both). */
int dt_entry_load(uh_heap *h, const struct dt_map_view *v, uh_off parent, uint64_t at,
		  uh_off e, struct dt_entry *out);
/* Inside a block, after the entry's key bytes were compared in place:
 * read the entry again, so that a concurrent free of it (and reuse of its
 * slot) dooms the block instead of having fed the comparison garbage. */
int dt_entry_recheck(uh_heap *h, const struct dt_entry *e);
/* Where e keeps its next reference, in bytes from its start. */
uint64_t dt_entry_next_at(const struct dt_entry *e);
/* e's value as a slot; an inline value as uh_slot_to_value turns into an
 * inline uh_value (uniheap.h): its type, where its bytes lie in e and
 * their length in the tag's high half, e's reference as the value. */
int dt_entry_value(uh_heap *h, const struct dt_entry *e, struct uh_slot *out);
/* The hash of e's key in map v (kept by the slot encoding, computed
 * otherwise). */
int dt_entry_hash(uh_heap *h, const struct dt_map_view *v, const struct dt_entry *e,
		  uint64_t *hash);

/* The hash of key k in map v. */
static inline uint64_t dt_key_hash(const struct dt_map_view *v, const uh_key *k)
{
	return uh_key_hash(k, v->words);
}

/* Where a key is, or would be inserted (dt_find). */
struct dt_find {
	const struct dt_table *table;
	uint64_t bucket;
	struct dt_entry prev;	/* entry before it in the chain; ref 0: the bucket */
	struct dt_entry entry;	/* ref 0: not found */
};

/* Look key k (of this hash) up in map v through validated reads: *f says
 * where it is (f->entry.ref 0: not there). UH_EINTERNAL on a chain longer
 * than the count or a damaged entry. */
int dt_find(uh_heap *h, const struct dt_map_view *v, const uh_key *k, uint64_t hash,
	    struct dt_find *f);

/* One step along a chain of inline-key entries, read in place (outside
 * blocks, for the get shortcuts): 1 with *s when entry e (header o) holds
 * the key (kd, klen), 0 with *next when it does not, -1 when its lengths
 * do not fit its payload or map v (the general code then says why). */
int dt_ie_step(uh_off e, const struct uh_objhdr *o, const struct dt_map_view *v,
	       const void *kd, size_t klen, struct uh_slot *s, uh_off *next);

/* Where a key of this hash lives: the old table for buckets not yet
 * migrated, else the current one. Can't fail. */
void dt_map_bucket_of(const struct dt_map_view *v, uint64_t hash,
		      const struct dt_table **table, uint64_t *bucket);

#endif /* UH_MAP_INT_H */
