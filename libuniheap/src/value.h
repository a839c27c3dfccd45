/*
 * value.h -- what the data types share: typed slots (struct uh_slot) read
 * and written through the current block, values and keys converted to and
 * from slots, key order and hashing. One implementation for array, list,
 * map and sorted map.
 *
 * All reads and writes here go through the block (uh_tx_read/uh_tx_write):
 * callers run inside a block (an implicit one if the user is outside).
 */
#ifndef UH_VALUE_H
#define UH_VALUE_H

#include "uhint.h"

/* Slot i of a VALUES object obj (bounds are the caller's). */
static inline uint64_t uh_slot_off(uh_off obj, uint64_t i)
{
	return obj + UH_OBJHDR_SIZE + i * sizeof(struct uh_slot);
}
int uh_slot_read(uh_heap *h, uh_off obj, uint64_t i, struct uh_slot *out);
int uh_slot_write(uh_heap *h, uh_off obj, uint64_t i, const struct uh_slot *in);

/* A new VALUES object of class cls with nslots empty slots. */
int uh_values_new(uh_heap *h, uint32_t cls, uint64_t nslots, uh_off *out);
/* Number of slots of a VALUES object. */
uint64_t uh_values_nslots(uh_heap *h, uh_off obj);

/* v checked and turned into a slot: integer types must be in range, a
 * string/bytes value must reference a string/bytes object, a ref a valid
 * object (of want_class if not 0). UH_ETYPE/UH_ERANGE/UH_EFREED else. */
int uh_value_to_slot(uh_heap *h, const uh_value *v, uint32_t want_class,
		     struct uh_slot *out);
void uh_slot_to_value(const struct uh_slot *s, uh_value *v);
/* Ask for the first two lines of the object a found value s references
 * (a string's or bytes' header and first bytes): a get's caller reads it
 * next, and the miss then overlaps the end of the get. Never faults. */
UH_PREFETCH_FN void uh_prefetch_value(uh_heap *h, const struct uh_slot *s)
{
	uint64_t off = UH_REF_OFFSET(s->value);

	if (uh_type_is_ref(uh_slot_type(s->tag)) && off < __atomic_load_n(&h->size, __ATOMIC_RELAXED))
		uh_prefetch(h->base + off, 128);
}
/* Flags of put/set/remove/pop. */
#define UH_FREE_FLAGS (UH_FREE_OLD | UH_FREE_OLD_VALUE)
/* Whether flags ask to free a replaced value of this type. */
static inline int uh_free_wanted(uint32_t type, uint32_t flags)
{
	if (flags & UH_FREE_OLD)
		return uh_type_is_ref(type);
	return (flags & UH_FREE_OLD_VALUE) && (type == UH_T_STRING || type == UH_T_BYTES);
}
/* UH_EINVAL naming fn unless flags are UH_FREE_FLAGS only. */
int uh_free_flags_check(uint32_t flags, const char *fn);
/* Free what old referenced if flags ask for it (inside the caller's
 * block), unless now (may be NULL) references the same object. */
int uh_slot_free_old(uh_heap *h, const struct uh_slot *old, const struct uh_slot *now,
		     uint32_t flags);

/* k must be of kind, at most UH_KEY_MAX_LEN bytes, UTF-8 for strings. */
int uh_key_check(uint32_t kind, const uh_key *k);
/* uh_key_check in two steps: everything but the UTF-8 (after which the
 * key's bytes may be read, e.g. hashed), then the UTF-8 of a string key. */
int uh_key_check_shape(uint32_t kind, const uh_key *k);
int uh_key_check_utf8(const uh_key *k);
/* A key uh_key_check accepted for its own kind: of this map's kind too? */
int uh_key_kind_check(uint32_t kind, const uh_key *k);
/* A slot holding k: i64 inline, string/bytes as a new object the data
 * type owns (freed with the entry). */
int uh_key_store(uh_heap *h, const uh_key *k, struct uh_slot *out);
/* The key a slot holds (data points into the mapping). */
int uh_key_load(uh_heap *h, const struct uh_slot *s, uh_key *out);
/* Free a stored key's object, if it has one. */
int uh_key_free(uh_heap *h, const struct uh_slot *s);
/* <0, 0, >0: bytewise for string/bytes (shorter prefix first), numeric
 * for i64. Both keys of the same kind. */
int uh_key_cmp(const uh_key *a, const uh_key *b);
/* The hash of a key in a hash map (FORMAT.md 11.3): FNV-1a 64 of its bytes
 * in maps created by formats 1-3, the word hash in maps created since
 * (words; their header's kind carries DT_KIND_WORDS). An i64 key hashes
 * its 8 bytes. */
uint64_t uh_key_hash(const uh_key *k, int words);
/* The bytes a key stands for: a string or bytes key's, an i64 key's 8
 * (little-endian). */
const void *uh_key_bytes(const uh_key *k, size_t *len);

/* Run body(h, arg) in the caller's block, or alone as an implicit block
 * of its own, run again while it loses conflicts (uh_run's tries). */
int uh_in_implicit_block(uh_heap *h, int (*body)(uh_heap *, void *), void *arg);

#endif /* UH_VALUE_H */
