/*
 * smap_leaf.c -- the bytes of one packed sorted-map leaf (smap_leaf.h has
 * the layout). Plain byte work: the caller decides where the bytes are
 * (a copy read at once, the block's image of the leaf, a leaf it made)
 * and makes the writes part of a block.
 */
#include "smap_leaf.h"

static const struct uh_packed_hdr pl_hdr = { PL_NVALS, PL_VALS_AT, PL_TYPES_AT, 0 };

int pl_ok(const unsigned char *p)
{
	struct uh_slot next;

	pl_slot(p, PL_NEXT, &next);
	return memcmp(p, &pl_hdr, sizeof(pl_hdr)) == 0 && pl_n(p) <= PL_CAP &&
	       uh_slot_type(next.tag) == UH_T_REF;
}

void pl_init(unsigned char *p)
{
	memset(p, 0, PL_PAYLOAD);
	memcpy(p, &pl_hdr, sizeof(pl_hdr));
	pl_set_next(p, 0);
}

void pl_set_slot(unsigned char *p, uint32_t i, const struct uh_slot *s)
{
	p[PL_TYPES_AT + i] = (unsigned char)uh_slot_type(s->tag);
	memcpy(p + PL_VALS_AT + 8 * i, &s->value, 8);
}

void pl_set_key(unsigned char *p, uint32_t i, const uh_key *k, const struct uh_slot *kobj)
{
	unsigned char *c = p + PL_CELLS_AT + PL_CELL * i;
	static const struct uh_slot none = { 0, 0 };
	size_t len = k->len < PL_INLINE_MAX ? k->len : PL_INLINE_MAX;

	memset(c, 0, PL_CELL);
	c[0] = k->len <= PL_INLINE_MAX ? (unsigned char)k->len : PL_LONG;
	memcpy(c + 1, k->data, len);
	pl_set_slot(p, PL_KOBJ(i), k->len <= PL_INLINE_MAX ? &none : kobj);
}

void pl_kref(const unsigned char *p, uint32_t i, struct sm_kref *kr)
{
	memcpy(kr->cell, pl_cell(p, i), PL_CELL);
	kr->inl = kr->cell[0] <= PL_INLINE_MAX;
	pl_slot(p, PL_KOBJ(i), &kr->s);
}

void pl_set_kref(unsigned char *p, uint32_t i, const struct sm_kref *kr)
{
	memcpy(p + PL_CELLS_AT + PL_CELL * i, kr->cell, PL_CELL);
	pl_set_slot(p, PL_KOBJ(i), &kr->s);
}

void pl_skey_of(const uh_key *k, struct pl_skey *sk)
{
	const unsigned char *d = k->data;
	unsigned char b[PL_CELL] = { 0 };

	sk->len = k->len;
	if (k->len < PL_INLINE_MAX) {	/* zero-padded in a copy */
		memcpy(b + 1, d, k->len);
		d = b + 1;
	}
	sk->w[0] = pl_be64(d);
	sk->w[1] = pl_be64(d + 8);
	sk->w[2] = pl_be64(d + 15);
}

/* Each of the leaf's three per-entry arrays, as (offset, bytes per entry). */
static const struct {
	uint32_t at, size;
} pl_arrays[] = {
	{ PL_VALS_AT, 8 },
	{ PL_VALS_AT + 8 * PL_CAP, 8 },
	{ PL_TYPES_AT, 1 },
	{ PL_TYPES_AT + PL_CAP, 1 },
	{ PL_CELLS_AT, PL_CELL },
};
#define PL_NARRAYS (sizeof(pl_arrays) / sizeof(pl_arrays[0]))

void pl_move(unsigned char *p, uint32_t from, uint32_t to, uint32_t n)
{
	for (uint32_t a = 0; n && a < PL_NARRAYS; a++) {	/* bound: 5 */
		uint32_t at = pl_arrays[a].at, sz = pl_arrays[a].size;
		memmove(p + at + sz * to, p + at + sz * from, (size_t)sz * n);
	}
}

void pl_copy(unsigned char *dst, uint32_t di, const unsigned char *src, uint32_t si, uint32_t n)
{
	for (uint32_t a = 0; n && a < PL_NARRAYS; a++) {	/* bound: 5 */
		uint32_t at = pl_arrays[a].at, sz = pl_arrays[a].size;
		memcpy(dst + at + sz * di, src + at + sz * si, (size_t)sz * n);
	}
}

void pl_clear(unsigned char *p, uint32_t from)
{
	for (uint32_t a = 0; from < PL_CAP && a < PL_NARRAYS; a++) {	/* bound: 5 */
		uint32_t at = pl_arrays[a].at, sz = pl_arrays[a].size;
		memset(p + at + sz * from, 0, (size_t)sz * (PL_CAP - from));
	}
}

void pl_set_n(unsigned char *p, uint32_t n)
{
	memcpy(p + PL_N_AT, &n, 4);
}

void pl_set_next(unsigned char *p, uh_off next)
{
	struct uh_slot s = { UH_T_REF, next };
	pl_set_slot(p, PL_NEXT, &s);
}
