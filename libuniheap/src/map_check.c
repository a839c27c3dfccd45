/*
 * map_check.c -- uh_map_check: walk a whole hash map in one snapshot and
 * verify every invariant listed at the top of map.c. The first problem
 * found is returned as UH_EINTERNAL with a message naming it.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "map_int.h"

struct seen {
	uint64_t hash;
	uh_off e;
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

/* The key of entry e: of the map's kind, loadable, well-formed, and
 * hashing to the hash the entry keeps. */
static int check_key(uh_heap *h, struct chk *c, uh_off e, uint64_t hash)
{
	uh_key k;
	int rc = dt_map_entry_key(h, c->v->m, e, &k);

	if (rc)
		return rc;
	if (k.kind != c->v->kind)
		return damaged(c, "entry %llu holds a key of kind %llu", e, k.kind);
	if (uh_key_check(c->v->kind, &k) != 0)
		return damaged(c, "entry %llu holds a malformed key (%llu bytes)", e, k.len);
	if (uh_key_hash(&k) != hash)
		return damaged(c, "entry %llu keeps hash %llu, not its key's", e, hash);
	return 0;
}

/* Entry e met in bucket b of a table whose buckets are mask+1. */
static int check_entry(uh_heap *h, struct chk *c, uh_off e, uint64_t b, uint64_t mask,
		       int in_old)
{
	const struct dt_map_view *v = c->v;
	struct uh_slot hs, vs, ns;
	int rc;

	if ((rc = uh_slot_read(h, e, DT_ME_HASH, &hs)) != 0 ||
	    (rc = uh_slot_read(h, e, DT_ME_VALUE, &vs)) != 0 ||
	    (rc = uh_slot_read(h, e, DT_ME_NEXT, &ns)) != 0)
		return rc;
	if (uh_slot_type(hs.tag) != UH_T_I64)
		return damaged(c, "entry %llu: hash slot has type %llu", e, uh_slot_type(hs.tag));
	if (uh_slot_type(vs.tag) < UH_T_BOOL || uh_slot_type(vs.tag) > UH_T_BYTES)
		return damaged(c, "entry %llu: value slot has type %llu", e, uh_slot_type(vs.tag));
	if (uh_slot_type(ns.tag) != UH_T_REF && (ns.tag || ns.value))
		return damaged(c, "entry %llu: next slot has type %llu", e, uh_slot_type(ns.tag));
	if ((hs.value & mask) != b)
		return damaged(c, "entry %llu is in bucket %llu, not the one its hash names",
			       e, b);
	if (!in_old && v->old && (hs.value & (v->old_size - 1)) >= v->cursor)
		return damaged(c, "entry %llu is in the new table before its old bucket %llu "
			       "was migrated", e, hs.value & (v->old_size - 1));
	c->ents[c->n].hash = hs.value;
	c->ents[c->n].e = e;
	c->n++;
	return check_key(h, c, e, hs.value);
}

static int check_chain(uh_heap *h, struct chk *c, uh_off t, uint64_t b, uint64_t mask,
		       int in_old)
{
	uh_off e, parent = t;
	uint64_t pi = b;
	int rc;

	if ((rc = dt_map_ref(h, c->v->m, t, b, &e)) != 0)
		return rc;
	while (e) {	/* bound: count entries in all, checked */
		if (c->n >= c->v->count)
			return damaged(c, "more entries are linked than its count %llu (or a "
				       "cycle, in bucket %llu)", c->v->count, b);
		if ((rc = dt_map_deref(h, c->v->m, parent, pi, e, UH_CLASS_MAP_ENTRY,
				       DT_ME_SLOTS)) != 0 ||
		    (rc = check_entry(h, c, e, b, mask, in_old)) != 0)
			return rc;
		parent = e;
		pi = DT_ME_NEXT;
		if ((rc = dt_map_ref(h, c->v->m, e, DT_ME_NEXT, &e)) != 0)
			return rc;
	}
	return 0;
}

static int check_tables(uh_heap *h, struct chk *c)
{
	const struct dt_map_view *v = c->v;
	uh_off e;
	int rc;

	for (uint64_t b = 0; b < v->old_size; b++) {	/* bound: old buckets */
		if (b < v->cursor) {
			if ((rc = dt_map_ref(h, v->m, v->old, b, &e)) != 0)
				return rc;
			if (e)
				return damaged(c, "old bucket %llu is below the cursor %llu but "
					       "not empty", b, v->cursor);
		} else if ((rc = check_chain(h, c, v->old, b, v->old_size - 1, 1)) != 0) {
			return rc;
		}
	}
	for (uint64_t b = 0; b < v->size; b++)	/* bound: buckets */
		if ((rc = check_chain(h, c, v->table, b, v->size - 1, 0)) != 0)
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
	uh_key ka, kb;
	int rc;

	qsort(c->ents, c->n, sizeof(*c->ents), by_entry);
	for (uint64_t i = 1; i < c->n; i++)	/* bound: entries */
		if (c->ents[i].e == c->ents[i - 1].e)
			return damaged(c, "entry %llu is linked twice (%llu)", c->ents[i].e, i);
	qsort(c->ents, c->n, sizeof(*c->ents), by_hash);
	for (uint64_t i = 0; i < c->n; i++) {	/* bound: entries x equal hashes */
		for (uint64_t j = i + 1; j < c->n && c->ents[j].hash == c->ents[i].hash; j++) {
			if ((rc = dt_map_entry_key(h, c->v->m, c->ents[i].e, &ka)) != 0 ||
			    (rc = dt_map_entry_key(h, c->v->m, c->ents[j].e, &kb)) != 0)
				return rc;
			if (uh_key_cmp(&ka, &kb) == 0)
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
	return dt_map_run(h, check_body, &a);
}
