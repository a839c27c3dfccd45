/*
 * smap_leaf.h -- the sorted map's packed leaf (format 6, class
 * UH_CLASS_SMAP_LEAF, kind PACKED): a leaf whose keys lie inside it, so
 * that a search compares keys without leaving the leaf and a scan reads
 * no object per entry. smap*.c build the tree of it; the functions here
 * only lay out one leaf's bytes (a copy, an image in the block's log, or
 * the leaf in place) and never touch the heap otherwise.
 *
 * Payload (1008 bytes; with the object header, one 1024-byte slot):
 *   [0, 8)      struct uh_packed_hdr: nvals 2C + 1, vals_at 16,
 *               types_at 392, own 0 (C = PL_CAP = 23 entries)
 *   [8, 12)     u32 n, the number of entries (0..C)
 *   [12, 16)    0
 *   [16, 392)   u64 vals[2C + 1]:  [i] value of entry i (i < n);
 *               [C + i] the key object of entry i if its key is long,
 *               [2C] the next leaf in key order (0: the last)
 *   [392, 439)  u8 types[2C + 1], the field types of vals (0 = none):
 *               a value's type, STRING/BYTES for a key object, REF for
 *               the next leaf
 *   [440, 992)  cell i (24 bytes) at 440 + 24 i: u8 len, then 23 bytes.
 *               len <= 23: the key is inline, its bytes first, zeros after;
 *               len = 0xff: a long key: its first 23 bytes, the whole key
 *               in its key object (vals[C + i])
 *   [992, 1008) 0
 * Entries past n are all zero (types 0, values 0, cells 0), so GC never
 * follows a stale reference, and the leaf's meaning is the same whatever
 * its earlier contents. Keys strictly increase with i.
 *
 * Key order is bytewise (a shorter prefix first), so a cell decides a
 * comparison by itself unless it holds a long key whose 23 bytes equal
 * the search key's first 23: only then is the key object read.
 */
#ifndef UH_SMAP_LEAF_H
#define UH_SMAP_LEAF_H

#include <stdint.h>
#include <string.h>

#include "value.h"

#define PL_CAP 23u			/* entries per leaf */
#define PL_NVALS (2u * PL_CAP + 1u)	/* values, key objects, next */
#define PL_N_AT 8u
#define PL_VALS_AT 16u
#define PL_TYPES_AT (PL_VALS_AT + 8u * PL_NVALS)	/* 392 */
#define PL_CELLS_AT 440u
#define PL_CELL 24u
#define PL_INLINE_MAX (PL_CELL - 1u)	/* 23: longer keys have objects */
#define PL_LONG 0xffu
#define PL_PAYLOAD 1008u
#define PL_KOBJ(i) (PL_CAP + (i))	/* vals/types index of a key object */
#define PL_NEXT (2u * PL_CAP)		/* ... and of the next leaf */

_Static_assert(PL_TYPES_AT + PL_NVALS <= PL_CELLS_AT, "types end before the cells");
_Static_assert(PL_CELLS_AT + PL_CAP * PL_CELL <= PL_PAYLOAD, "cells fit the payload");

/* A key as a leaf holds it: in a cell (inline or a long key's first 23
 * bytes, cell[0] its length byte), and for a long key, an i64 key or a
 * class-12 leaf's key the slot s (a key object or an inline i64). inl:
 * the cell is the whole key. */
struct sm_kref {
	struct uh_slot s;
	int inl;
	unsigned char cell[PL_CELL];
};

static inline uint32_t pl_n(const unsigned char *p)
{
	uint32_t n;
	memcpy(&n, p + PL_N_AT, 4);
	return n;
}

/* vals[i] and types[i] as a typed slot. */
static inline void pl_slot(const unsigned char *p, uint32_t i, struct uh_slot *s)
{
	s->tag = p[PL_TYPES_AT + i];
	memcpy(&s->value, p + PL_VALS_AT + 8 * i, 8);
}

static inline const unsigned char *pl_cell(const unsigned char *p, uint32_t i)
{
	return p + PL_CELLS_AT + PL_CELL * i;
}

/* Whether p is a leaf this format describes (header, n, next). */
int pl_ok(const unsigned char *p);
/* An empty leaf (the chain ends at it) into p. */
void pl_init(unsigned char *p);
void pl_set_slot(unsigned char *p, uint32_t i, const struct uh_slot *s);
/* Entry i's key k into its cell; kobj: k's key object if k is longer than
 * PL_INLINE_MAX (a STRING/BYTES slot), else ignored. */
void pl_set_key(unsigned char *p, uint32_t i, const uh_key *k, const struct uh_slot *kobj);
/* Entry i's key as a kref. */
void pl_kref(const unsigned char *p, uint32_t i, struct sm_kref *kr);
/* Entry i from a kref (a long key's object in kr->s). */
void pl_set_kref(unsigned char *p, uint32_t i, const struct sm_kref *kr);
/* A search key as the cells compare it: its first 23 bytes, zero-padded,
 * as three big-endian words (bytes [0, 8), [8, 16), [15, 23): the last
 * two overlap by one), and its length. Zero padding orders as bytewise
 * order does (a key sorts before one it is a proper prefix of), since a
 * cell is zero past its key too. */
struct pl_skey {
	uint64_t w[3];
	size_t len;
};

void pl_skey_of(const uh_key *k, struct pl_skey *sk);

static inline uint64_t pl_be64(const unsigned char *b)
{
	uint64_t x;
	memcpy(&x, b, 8);
	return __builtin_bswap64(x);
}

/* The search key against entry i's cell: -1, 0 or 1 as it sorts before,
 * as, after the entry's key; 2 when the cell cannot tell (a long key whose
 * first 23 bytes are the search key's: read its object). */
static inline int pl_cmp(const unsigned char *p, uint32_t i, const struct pl_skey *sk)
{
	const unsigned char *c = pl_cell(p, i);
	static const uint8_t at[3] = { 1, 9, 16 };

	for (int j = 0; j < 3; j++) {	/* bound: 3 */
		uint64_t x = pl_be64(c + at[j]);
		if (x != sk->w[j])
			return sk->w[j] < x ? -1 : 1;
	}
	if (c[0] > PL_INLINE_MAX)	/* long (PL_LONG; anything else is damage) */
		return sk->len <= PL_INLINE_MAX ? -1 : 2;
	return sk->len < c[0] ? -1 : sk->len > c[0];
}
/* Entries [from, from + n) to [to, to + n), as memmove would. */
void pl_move(unsigned char *p, uint32_t from, uint32_t to, uint32_t n);
/* n entries from src's entry si on into dst from entry di on. */
void pl_copy(unsigned char *dst, uint32_t di, const unsigned char *src, uint32_t si, uint32_t n);
/* Entries [from, PL_CAP) zeroed. */
void pl_clear(unsigned char *p, uint32_t from);
void pl_set_n(unsigned char *p, uint32_t n);
void pl_set_next(unsigned char *p, uh_off next);

#endif
