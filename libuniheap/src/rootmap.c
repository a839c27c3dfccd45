/*
 * rootmap.c -- named durable roots: an open-addressing hash table in the
 * heap (layout in format.h), changed only inside blocks, so publishing a
 * new object under a name commits atomically with the object itself.
 *
 * Writers lock the root map object first, so concurrent setters in other
 * sessions serialize on it; readers outside a block read optimistically
 * (optread.c), inside one through the block's validated reads.
 */
#include <stdio.h>
#include <string.h>

#include "rootmap_read.h"
#include "uhint.h"

#define RM_TABLE 16u	/* field offsets in the root map record */
#define RM_COUNT 24u
#define RM_USED 32u

struct probe {
	uint64_t table;		/* table object, 0 if none yet */
	uint64_t cap;
	uint64_t slot;		/* match, or where to insert */
	int found;
	int slot_empty;		/* insert slot was never used (not a tombstone) */
};

static uint64_t pair_off(uint64_t table, uint64_t i)
{
	return table + UH_OBJHDR_SIZE + 16 * i;
}

static int name_is(uh_heap *h, uint64_t s, const char *name, size_t len)
{
	int rc;
	struct uh_objhdr *o = uh_obj_get(h, s, UH_CLASS_STRING, &rc);
	return o && (o->size & UH_OBJ_SIZE_MASK) == len && memcmp(o + 1, name, len) == 0;
}

/* The table we read from the root map is not a valid table. Another
 * session that grew the map since may have freed it (its block changes
 * the map's table field and frees the old table in one commit): then our
 * read of the map is stale, and the block is doomed with UH_ECONFLICT
 * (by uh_obj_get, or by reading the map again here); outside a block the
 * map just names another table now: read again. Only a map that still
 * names the bad table is damaged. Returns the error, or 1: read again. */
static int table_gone(uh_heap *h, uint64_t rm, uint64_t table)
{
	char why[256];

	if (h->tx.doomed)
		return h->tx.doomed;
	snprintf(why, sizeof(why), "%s", uh_errmsg());
	uint64_t now = uh_rd64(h, rm, rm + RM_TABLE);
	if (h->tx.doomed)
		return h->tx.doomed;	/* the stale read set the message */
	if (now != table && !h->tx.depth)
		return 1;
	return uh_err_set(UH_EINTERNAL, "root map table is damaged: %s", why);
}

static int probe_once(uh_heap *h, const char *name, size_t len, struct probe *p)
{
	uint64_t rm = h->hdr->rootmap_off;
	int rc;

	memset(p, 0, sizeof(*p));
	p->table = uh_rd64(h, rm, rm + RM_TABLE);
	if (!p->table)
		return 0;
	struct uh_objhdr *t = uh_obj_get(h, p->table, UH_CLASS_REFTABLE, &rc);
	if (!t)
		return table_gone(h, rm, p->table);
	p->cap = (t->size & UH_OBJ_SIZE_MASK) / 16;
	if (p->cap == 0 || (p->cap & (p->cap - 1)))
		return uh_err_set(UH_EINTERNAL, "root map table has bad capacity %llu",
				  (unsigned long long)p->cap);
	uint64_t i = uh_fnv1a64(name, len, UH_FNV_INIT) & (p->cap - 1);
	int64_t tomb = -1;
	for (uint64_t n = 0; n < p->cap; n++, i = (i + 1) & (p->cap - 1)) {	/* bound: cap */
		uint64_t k = uh_rd64(h, p->table, pair_off(p->table, i));
		if (k == 0) {
			p->slot = tomb >= 0 ? (uint64_t)tomb : i;
			p->slot_empty = tomb < 0;
			return 0;
		}
		if (k == UH_ROOT_TOMBSTONE) {
			if (tomb < 0)
				tomb = (int64_t)i;
		} else if (name_is(h, k, name, len)) {
			p->slot = i;
			p->found = 1;
			return 0;
		}
	}
	p->slot = tomb >= 0 ? (uint64_t)tomb : 0;
	p->slot_empty = 0;
	return 0;
}

static int probe(uh_heap *h, const char *name, size_t len, struct probe *p)
{
	int rc = 1;

	/* Again only outside a block, and only while the map keeps
	 * naming new tables under us: a handful of rounds at most. */
	for (int round = 0; rc == 1 && round < 100; round++)	/* bound: 100 */
		rc = probe_once(h, name, len, p);
	return rc == 1 ? uh_err_set(UH_ECONFLICT, "root map kept changing while read "
				    "outside a block; read it again") : rc;
}

/* probe() and its reads may have doomed the block (a conflict). */
static int probe_checked(uh_heap *h, const char *name, size_t len, struct probe *p)
{
	int rc = probe(h, name, len, p);
	if (rc == 0 && h->tx.doomed)
		rc = uh_err_set(h->tx.doomed, "block was rolled back: %s",
				uh_strerror(h->tx.doomed));
	return rc;
}

static int check_name(const char *name, size_t *len)
{
	if (!name)
		return uh_err_set(UH_EINVAL, "root name is NULL");
	*len = strnlen(name, UH_ROOT_NAME_MAX + 1);
	if (*len == 0 || *len > UH_ROOT_NAME_MAX)
		return uh_err_set(UH_EINVAL, "root name must have 1..%u bytes", UH_ROOT_NAME_MAX);
	return 0;
}

struct get_op {
	const char *name;
	size_t len;
	uh_off value;
};

static int get_body(uh_heap *h, void *arg)
{
	struct get_op *g = arg;
	struct probe p;
	int rc = probe_checked(h, g->name, g->len, &p);

	if (rc)
		return rc;
	if (!p.found)
		return uh_err_set(UH_ENOTFOUND, "no root named '%s'", g->name);
	g->value = uh_rd64(h, p.table, pair_off(p.table, p.slot) + 8);
	return h->tx.doomed ? uh_err_set(h->tx.doomed, "block was rolled back") : 0;
}

/* Outside a block the probe and the value are read optimistically
 * (optread.c) and validated: plain loads alone could pair a name with a
 * value of another state of the table (a commit applying the pair, name
 * first; a table being replaced by a larger one and freed), and return 0
 * for a root that has a value. */
int uh_root_get(uh_heap *h, const char *name, uh_off *out)
{
	struct get_op g = { name, 0, 0 };
	int rc = uh_check_handle(h);

	if (rc || (rc = check_name(name, &g.len)) != 0 || (rc = uh_opt_run(h, get_body, &g)) != 0)
		return rc;
	*out = g.value;
	return 0;
}

static int wr64(uh_heap *h, uh_off obj, uint64_t target, uint64_t v)
{
	return uh_tx_write(h, obj, target, &v, 8);
}

/* Rehash into a table big enough for one more entry at load <= 1/2. The
 * new table is written in place (nobody sees it before commit); the old
 * one is freed with the block. */
static int grow(uh_heap *h, const struct probe *old)
{
	uint64_t rm = h->hdr->rootmap_off;
	uint64_t count = 0, cap = UH_ROOTMAP_MIN_CAP, table;
	int rc;

	/* Size by the names the old table holds, not by the stored count: a
	 * damaged count must neither make this loop overflow nor leave the
	 * new table too small for the rehash below to find an empty pair. */
	for (uint64_t i = 0; i < old->cap; i++) {	/* bound: old capacity */
		uint64_t k = uh_rd64(h, old->table, pair_off(old->table, i));
		count += k != 0 && k != UH_ROOT_TOMBSTONE;
	}
	while (cap < 2 * (count + 1))	/* bound: count <= old capacity */
		cap *= 2;
	if ((rc = uh_alloc_raw(h, UH_CLASS_REFTABLE, cap * 16, NULL, &table)) != 0)
		return rc;
	uint64_t *pairs = (uint64_t *)(h->base + UH_REF_OFFSET(table) + UH_OBJHDR_SIZE);
	for (uint64_t i = 0; i < old->cap; i++) {	/* bound: old capacity */
		uint64_t k = uh_rd64(h, old->table, pair_off(old->table, i));
		if (k == 0 || k == UH_ROOT_TOMBSTONE)
			continue;
		const struct uh_objhdr *s = (const void *)(h->base + UH_REF_OFFSET(k));
		uint64_t j = uh_fnv1a64(s + 1, s->size & UH_OBJ_SIZE_MASK, UH_FNV_INIT) & (cap - 1);
		while (pairs[2 * j])	/* bound: cap, load <= 1/2 */
			j = (j + 1) & (cap - 1);
		pairs[2 * j] = k;
		pairs[2 * j + 1] = uh_rd64(h, old->table, pair_off(old->table, i) + 8);
	}
	if ((rc = wr64(h, rm, rm + RM_TABLE, table)) != 0 ||
	    (rc = wr64(h, rm, rm + RM_USED, count)) != 0)
		return rc;
	if (old->table)
		return uh_tx_log_free(h, old->table);
	return 0;
}

static int root_set(uh_heap *h, const char *name, size_t len, uh_off obj)
{
	uint64_t rm = h->hdr->rootmap_off;
	struct probe p;
	int rc;

	if ((rc = uh_tx_lock(h, rm)) != 0 || (rc = uh_tx_changed(h, rm)) != 0 ||
	    (rc = probe_checked(h, name, len, &p)) != 0)
		return rc;
	if (p.found)
		return wr64(h, p.table, pair_off(p.table, p.slot) + 8, obj);
	uint64_t used = uh_rd64(h, rm, rm + RM_USED);
	if (!p.table || (used + 1) * 4 > p.cap * 3) {
		if ((rc = grow(h, &p)) != 0 || (rc = probe_checked(h, name, len, &p)) != 0)
			return rc;
	}
	uh_off s;
	if ((rc = uh_string_new(h, name, len, &s)) != 0)
		return rc;
	uint64_t count = uh_rd64(h, rm, rm + RM_COUNT);
	if ((rc = wr64(h, p.table, pair_off(p.table, p.slot), s)) != 0 ||
	    (rc = wr64(h, p.table, pair_off(p.table, p.slot) + 8, obj)) != 0 ||
	    (rc = wr64(h, rm, rm + RM_COUNT, count + 1)) != 0)
		return rc;
	if (p.slot_empty)
		rc = wr64(h, rm, rm + RM_USED, uh_rd64(h, rm, rm + RM_USED) + 1);
	return rc;
}

int uh_root_set(uh_heap *h, const char *name, uh_off obj)
{
	size_t len;
	int implicit, rc = uh_check_handle(h);

	if (rc || (rc = check_name(name, &len)) != 0)
		return rc;
	if (h->readonly)
		return uh_err_set(UH_EREADONLY, "uh_root_set: heap is connected read-only");
	if (obj == 0)
		return uh_err_set(UH_EINVAL, "uh_root_set('%s', 0): use uh_root_del", name);
	if (!uh_obj_get(h, obj, 0, &rc))
		return rc;
	if ((rc = uh_tx_begin_implicit(h, &implicit)) != 0)
		return rc;
	return uh_tx_end_implicit(h, implicit, root_set(h, name, len, obj));
}

static int root_del(uh_heap *h, const char *name, size_t len)
{
	uint64_t rm = h->hdr->rootmap_off;
	struct probe p;
	int rc;

	if ((rc = uh_tx_lock(h, rm)) != 0 || (rc = uh_tx_changed(h, rm)) != 0 ||
	    (rc = probe_checked(h, name, len, &p)) != 0)
		return rc;
	if (!p.found)
		return uh_err_set(UH_ENOTFOUND, "no root named '%s'", name);
	uint64_t key = uh_rd64(h, p.table, pair_off(p.table, p.slot));
	uint64_t count = uh_rd64(h, rm, rm + RM_COUNT);
	if ((rc = wr64(h, p.table, pair_off(p.table, p.slot), UH_ROOT_TOMBSTONE)) != 0 ||
	    (rc = wr64(h, p.table, pair_off(p.table, p.slot) + 8, 0)) != 0 ||
	    (rc = wr64(h, rm, rm + RM_COUNT, count - 1)) != 0)
		return rc;
	return uh_tx_log_free(h, key);
}

int uh_root_del(uh_heap *h, const char *name)
{
	size_t len;
	int implicit, rc = uh_check_handle(h);

	if (rc || (rc = check_name(name, &len)) != 0)
		return rc;
	if (h->readonly)
		return uh_err_set(UH_EREADONLY, "uh_root_del: heap is connected read-only");
	if ((rc = uh_tx_begin_implicit(h, &implicit)) != 0)
		return rc;
	return uh_tx_end_implicit(h, implicit, root_del(h, name, len));
}

int uh_root_next(uh_heap *h, uint64_t *cursor, const char **name, size_t *name_len,
		 uh_off *value)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	if (!cursor || !name || !name_len || !value)
		return uh_err_set(UH_EINVAL, "uh_root_next: NULL argument");
	if ((rc = uh_map_more(h)) != 0)	/* names may lie in a grown part */
		return rc;
	rc = uh_rootmap_next(h->base, h->size, h->hdr->rootmap_off, cursor, name, name_len,
			     value);
	return rc ? uh_err_set(rc, "no more roots") : 0;
}

int uh_root_count(uh_heap *h, uint64_t *count)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	*count = uh_rd64(h, h->hdr->rootmap_off, h->hdr->rootmap_off + RM_COUNT);
	return 0;
}
