/*
 * map_check.c -- uh_map_check: walk a whole hash map in one snapshot and
 * verify every invariant listed at the top of map.c. The first problem
 * found is returned as UH_EINTERNAL with a message naming it.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "map_int.h"
#include "utf8.h"

struct seen {
	uint64_t hash;
	uh_off e;
	uh_off parent;		/* where it was found, to load it again */
	uint64_t at;
};

struct chk {
	const struct dt_map_view *v;
	struct seen *ents;	/* every entry met, at most count of them */
	uint64_t n;
};

static int damaged(const struct chk *c, const char *fmt, unsigned long long a,
		   unsigned long long b)
{
	char what[256];

	snprintf(what, sizeof(what), fmt, a, b);
	return uh_err_set(UH_EINTERNAL, "uh_map_check: map %llu: %s",
			  (unsigned long long)c->v->m, what);
}

/* The key of entry d: of the map's kind, well-formed, and hashing to the
 * hash the entry keeps (slot encoding). */
static int check_key(uh_heap *h, struct chk *c, const struct dt_entry *d, uint64_t hash)
{
	if (d->key.kind != c->v->kind)
		return damaged(c, "entry %llu holds a key of kind %llu", d->ref, d->key.kind);
	if (uh_key_check(c->v->kind, &d->key) != 0)
		return damaged(c, "entry %llu holds a malformed key (%llu bytes)", d->ref,
			       d->key.len);
	if (dt_key_hash(c->v, &d->key) != hash)
		return damaged(c, "entry %llu keeps hash %llu, not its key's", d->ref, hash);
	return 0;
}

/* The fields around the value and next of an entry: typed slots, or the
 * packed header and types of an inline entry. */
static int check_layout(uh_heap *h, struct chk *c, const struct dt_entry *d)
{
	struct uh_slot hs, ns;
	int rc;

	if (d->inl) {
		const char *p = h->base + UH_REF_OFFSET(d->ref) + UH_OBJHDR_SIZE;
		struct uh_packed_hdr ph;
		uint8_t nt;
		memcpy(&ph, p, sizeof(ph));
		if ((rc = uh_tx_read(h, d->ref, d->ref + UH_OBJHDR_SIZE + DT_IE_NTYPE, &nt, 1)) != 0)
			return rc;
		int ok = d->vtype ? ph.nvals == 1 && ph.vals_at == DT_IE_NEXT &&
				    ph.types_at == DT_IE_NTYPE :
			 ph.nvals == 2 && ph.vals_at == DT_IE_VALUE && ph.types_at == DT_IE_TYPE;
		if (!ok || nt != UH_T_REF)
			return damaged(c, "entry %llu: packed header (%llu values) is not an "
				       "entry's", d->ref, ph.nvals);
		return 0;
	}
	if ((rc = uh_slot_read(h, d->ref, DT_ME_HASH, &hs)) != 0 ||
	    (rc = uh_slot_read(h, d->ref, DT_ME_NEXT, &ns)) != 0)
		return rc;
	if (uh_slot_type(hs.tag) != UH_T_I64)
		return damaged(c, "entry %llu: hash slot has type %llu", d->ref, uh_slot_type(hs.tag));
	if (uh_slot_type(ns.tag) != UH_T_REF && (ns.tag || ns.value))
		return damaged(c, "entry %llu: next slot has type %llu", d->ref, uh_slot_type(ns.tag));
	return 0;
}

/* An inline value (its length checked by dt_entry_load): a string one is
 * UTF-8, as every string a map hands out. */
static int check_inline_value(struct chk *c, const struct dt_entry *d)
{
	const char *p = (const char *)d->key.data + d->key.len;
	size_t bad;

	if (d->vtype == UH_T_ISTRING && !uh_utf8_valid(p, d->vlen, &bad))
		return damaged(c, "entry %llu: inline string value is not UTF-8 (at byte %llu)",
			       d->ref, bad);
	return 0;
}

/* Entry d, referenced at byte at of parent, met in bucket b of a table
 * whose buckets are mask+1. */
static int check_entry(uh_heap *h, struct chk *c, const struct dt_entry *d, uh_off parent,
		       uint64_t at, uint64_t b, uint64_t mask, int in_old)
{
	const struct dt_map_view *v = c->v;
	struct uh_slot vs;
	uint64_t hash;
	int rc;

	if ((rc = check_layout(h, c, d)) != 0 || (rc = dt_entry_hash(h, c->v, d, &hash)) != 0 ||
	    (rc = dt_entry_value(h, d, &vs)) != 0)
		return rc;
	if (d->vtype)
		rc = check_inline_value(c, d);
	else if (uh_slot_type(vs.tag) < UH_T_BOOL || uh_slot_type(vs.tag) > UH_T_BYTES)
		return damaged(c, "entry %llu: value has type %llu", d->ref, uh_slot_type(vs.tag));
	if (rc)
		return rc;
	if ((hash & mask) != b)
		return damaged(c, "entry %llu is in bucket %llu, not the one its hash names",
			       d->ref, b);
	if (!in_old && v->old.ref && (hash & (v->old.size - 1)) >= v->cursor)
		return damaged(c, "entry %llu is in the new table before its old bucket %llu "
			       "was migrated", d->ref, hash & (v->old.size - 1));
	c->ents[c->n].hash = hash;
	c->ents[c->n].e = d->ref;
	c->ents[c->n].parent = parent;
	c->ents[c->n].at = at;
	c->n++;
	return check_key(h, c, d, hash);
}

static int check_chain(uh_heap *h, struct chk *c, const struct dt_table *t, uint64_t b,
		       int in_old)
{
	struct dt_entry d;
	uh_off e, parent = t->ref;
	uint64_t at = dt_table_at(t, b);
	int rc;

	if ((rc = dt_table_get(h, c->v->m, t, b, &e)) != 0)
		return rc;
	while (e) {	/* bound: count entries in all, checked */
		if (c->n >= c->v->count)
			return damaged(c, "more entries are linked than its count %llu (or a "
				       "cycle, in bucket %llu)", c->v->count, b);
		if ((rc = dt_entry_load(h, c->v, parent, at, e, &d)) != 0 ||
		    (rc = check_entry(h, c, &d, parent, at, b, t->size - 1, in_old)) != 0)
			return rc;
		parent = e;
		at = dt_entry_next_at(&d);
		e = d.next;
	}
	return 0;
}

static int check_tables(uh_heap *h, struct chk *c)
{
	const struct dt_map_view *v = c->v;
	uh_off e;
	int rc;

	for (uint64_t b = 0; b < v->old.size; b++) {	/* bound: old buckets */
		if (b < v->cursor) {
			if ((rc = dt_table_get(h, v->m, &v->old, b, &e)) != 0)
				return rc;
			if (e)
				return damaged(c, "old bucket %llu is below the cursor %llu but "
					       "not empty", b, v->cursor);
		} else if ((rc = check_chain(h, c, &v->old, b, 1)) != 0) {
			return rc;
		}
	}
	for (uint64_t b = 0; b < v->table.size; b++)	/* bound: buckets */
		if ((rc = check_chain(h, c, &v->table, b, 0)) != 0)
			return rc;
	if (c->n != v->count)
		return damaged(c, "count is %llu but %llu entries are linked", v->count, c->n);
	return 0;
}

static int by_entry(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;
	return x->e < y->e ? -1 : x->e > y->e;
}

static int by_hash(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;
	return x->hash < y->hash ? -1 : x->hash > y->hash;
}

/* No entry twice, no key twice (equal keys have equal hashes). */
static int check_unique(uh_heap *h, struct chk *c)
{
	struct dt_entry da, db;
	int rc;

	qsort(c->ents, c->n, sizeof(*c->ents), by_entry);
	for (uint64_t i = 1; i < c->n; i++)	/* bound: entries */
		if (c->ents[i].e == c->ents[i - 1].e)
			return damaged(c, "entry %llu is linked twice (%llu)", c->ents[i].e, i);
	qsort(c->ents, c->n, sizeof(*c->ents), by_hash);
	for (uint64_t i = 0; i < c->n; i++) {	/* bound: entries x equal hashes */
		for (uint64_t j = i + 1; j < c->n && c->ents[j].hash == c->ents[i].hash; j++) {
			const struct seen *x = &c->ents[i], *y = &c->ents[j];
			if ((rc = dt_entry_load(h, c->v, x->parent, x->at, x->e, &da)) != 0 ||
			    (rc = dt_entry_load(h, c->v, y->parent, y->at, y->e, &db)) != 0)
				return rc;
			if (uh_key_cmp(&da.key, &db.key) == 0)
				return damaged(c, "entries %llu and %llu hold the same key",
					       c->ents[i].e, c->ents[j].e);
		}
	}
	return 0;
}

struct check_args {
	uh_off m;
};

static int check_body(uh_heap *h, void *arg)
{
	struct check_args *a = arg;
	struct dt_map_view v;
	struct chk c = { &v, NULL, 0 };
	int rc;

	if ((rc = dt_map_view(h, a->m, 0, &v)) != 0)
		return rc;
	/* An entry takes at least 64 bytes: a bigger count is a lie, and
	 * must not size our allocation. */
	if (v.count > h->size / 64)
		return damaged(&c, "count %llu is more than the heap could hold (%llu)",
			       v.count, h->size / 64);
	c.ents = malloc((v.count ? v.count : 1) * sizeof(*c.ents));
	if (!c.ents)
		return uh_err_set(UH_ENOMEM, "uh_map_check: no memory for %llu entries",
				  (unsigned long long)v.count);
	rc = check_tables(h, &c);
	if (rc == 0)
		rc = check_unique(h, &c);
	free(c.ents);
	return rc;
}

int uh_map_check(uh_heap *h, uh_off m)
{
	struct check_args a = { m };
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	return uh_in_implicit_block(h, check_body, &a);
}
