/*
 * map.c -- the persistent hash map (uh_map_*): separate chaining in a
 * power-of-two bucket table that grows online, a bounded number of
 * buckets per update, so no single operation pauses for the whole map.
 * Iteration is in map_iter.c, the structural check in map_check.c.
 *
 * FORMAT (every object is a VALUES object: an array of 16-byte typed
 * slots {tag, value} after the 16-byte object header; slot i is at byte
 * 16 + 16 * i of the object). Every reference is in a slot tagged REF,
 * STRING or BYTES, so recovery GC reaches every object of a map from its
 * header; every count in a slot tagged I64.
 *
 *   header, class UH_CLASS_MAP (8), 5 slots:
 *     [0] @16  I64  key kind: UH_KEY_STRING 1, UH_KEY_BYTES 2, UH_KEY_I64 3;
 *                   fixed at creation
 *     [1] @32  I64  count: live entries
 *     [2] @48  REF  table: the current UH_CLASS_MAP_TABLE, never empty
 *     [3] @64  REF  old table during a resize, else empty (tag 0, value 0)
 *     [4] @80  I64  migration cursor: old buckets [0, cursor) are migrated;
 *                   0 when no resize is under way
 *   bucket table, class UH_CLASS_MAP_TABLE (9), 2^k slots (k >= 3):
 *     [b]      REF  first entry of bucket b's chain, or empty
 *   entry, class UH_CLASS_MAP_ENTRY (10), 4 slots:
 *     [0] @16  the key: I64 inline, or STRING/BYTES ref to a string/bytes
 *              object the map owns (created by put, freed with the entry)
 *     [1] @32  the value: any typed slot (UH_T_*), not owned by the map
 *     [2] @48  REF  next entry of the chain, or empty
 *     [3] @64  I64  uh_key_hash() of the key (FNV-1a 64), so a resize
 *                   moves entries without reading their keys
 *
 * Invariants (uh_map_check verifies them all):
 *  - Without a resize, an entry of hash x is in bucket x & (size - 1) of
 *    the table. During a resize (old table non-empty, its size exactly
 *    half the table's): an entry whose old bucket ob = x & (old_size - 1)
 *    is >= cursor is still in old bucket ob; any other is in bucket
 *    x & (size - 1) of the new table. So every key has exactly one place,
 *    and lookups look only there. Old buckets below the cursor are empty.
 *  - Every entry is reachable exactly once; chains are acyclic; count is
 *    the number of entries; keys are unique.
 *
 * Resizing: a put that takes the load past 3/4 (and finds no resize under
 * way) allocates a table twice the size and makes the current one the
 * old table with cursor 0. Then every put and remove moves the chains of
 * DT_MAP_STEP old buckets (8) into the new table and clears them; the one
 * that moves the last bucket frees the old table. A put may therefore
 * take about 8 / 0.75 entry moves more than a lookup, never O(n).
 *
 * Crash safety: every operation, with its migration step, is one block:
 * its writes go through the redo log and its allocations and frees commit
 * with it, so a crash leaves the map before or after the whole operation,
 * never with an entry in two places or none. Nothing here orders stores
 * by hand; the block's commit does.
 *
 * Concurrency: put and remove lock the header first (every one of them
 * writes count or cursor), so writers of one map serialize on it; readers
 * (get, len, next) take no lock and read a consistent snapshot through
 * the block's validated reads. Outside a user's block each call runs in
 * an implicit block that is re-run when it loses a conflict.
 */
#include <stdio.h>
#include <string.h>

#include "map_int.h"

/* ---- slot helpers ---- */

static int put_ref(uh_heap *h, uh_off obj, uint64_t i, uh_off ref)
{
	struct uh_slot s = { ref ? UH_T_REF : 0, ref };
	return uh_slot_write(h, obj, i, &s);
}

static int put_i64(uh_heap *h, uh_off obj, uint64_t i, uint64_t v)
{
	struct uh_slot s = { UH_T_I64, v };
	return uh_slot_write(h, obj, i, &s);
}

int dt_map_ref(uh_heap *h, uh_off m, uh_off obj, uint64_t i, uh_off *out)
{
	struct uh_slot s;
	int rc = uh_slot_read(h, obj, i, &s);

	*out = 0;
	if (rc)
		return rc;
	if (uh_slot_type(s.tag) == UH_T_REF || (uh_slot_type(s.tag) == 0 && s.value == 0)) {
		*out = s.value;
		return 0;
	}
	return uh_err_set(UH_EINTERNAL, "map %llu: slot %llu of object %llu holds type %u, "
			  "not a reference", (unsigned long long)m, (unsigned long long)i,
			  (unsigned long long)obj, uh_slot_type(s.tag));
}

int dt_map_deref(uh_heap *h, uh_off m, uh_off parent, uint64_t i, uh_off child,
		 uint32_t cls, uint64_t min_slots)
{
	char why[512];
	struct uh_slot s;
	int rc;

	if (uh_obj_get(h, child, cls, &rc)) {
		if (!min_slots || uh_values_nslots(h, child) >= min_slots)
			return 0;
		return uh_err_set(UH_EINTERNAL, "map %llu: object %llu has %llu slots, want %llu",
				  (unsigned long long)m, (unsigned long long)child,
				  (unsigned long long)uh_values_nslots(h, child),
				  (unsigned long long)min_slots);
	}
	snprintf(why, sizeof(why), "%s", uh_errmsg());
	/* Freed by a commit after our snapshot? Then that commit also
	 * changed parent, and reading it again dooms the block. */
	if ((rc = uh_slot_read(h, parent, i, &s)) != 0)
		return rc;
	return uh_err_set(UH_EINTERNAL, "map %llu: slot %llu of object %llu references %llu: %s",
			  (unsigned long long)m, (unsigned long long)i,
			  (unsigned long long)parent, (unsigned long long)child, why);
}

void dt_map_bucket_of(const struct dt_map_view *v, uint64_t hash, uh_off *table,
		      uint64_t *bucket)
{
	if (v->old && (hash & (v->old_size - 1)) >= v->cursor) {
		*table = v->old;
		*bucket = hash & (v->old_size - 1);
	} else {
		*table = v->table;
		*bucket = hash & (v->size - 1);
	}
}

int dt_map_entry_key(uh_heap *h, uh_off m, uh_off e, uh_key *k)
{
	struct uh_slot s;
	int rc = uh_slot_read(h, e, DT_ME_KEY, &s);
	uint32_t t = uh_slot_type(s.tag);

	if (rc)
		return rc;
	if (t == UH_T_STRING || t == UH_T_BYTES) {
		rc = dt_map_deref(h, m, e, DT_ME_KEY, s.value,
				  t == UH_T_STRING ? UH_CLASS_STRING : UH_CLASS_BYTES, 0);
		if (rc)
			return rc;
	}
	if ((rc = uh_key_load(h, &s, k)) != 0)
		return uh_err_set(UH_EINTERNAL, "map %llu: entry %llu: %s", (unsigned long long)m,
				  (unsigned long long)e, uh_errmsg());
	return 0;
}

int dt_map_run(uh_heap *h, int (*body)(uh_heap *, void *), void *arg)
{
	if (h->tx.depth)
		return uh_in_implicit_block(h, body, arg);
	/* Alone, the operation is its own block: losing a conflict to
	 * another session is not the caller's business, so run it again. */
	return uh_run(h, body, arg, 0);
}

/* ---- header ---- */

static int bad_header(uh_off m, const char *what, uint64_t x)
{
	return uh_err_set(UH_EINTERNAL, "map %llu: header %s (%llu)", (unsigned long long)m,
			  what, (unsigned long long)x);
}

/* Table (slot i of the header) must be a bucket table of a power-of-two
 * size; its size goes to *size. */
static int view_table(uh_heap *h, uh_off m, uint64_t i, uh_off t, uint64_t *size)
{
	int rc = dt_map_deref(h, m, m, i, t, UH_CLASS_MAP_TABLE, 1);

	if (rc)
		return rc;
	*size = uh_values_nslots(h, t);
	if (*size & (*size - 1))
		return bad_header(m, "names a table whose size is not a power of two", *size);
	return 0;
}

static int view_check(uh_heap *h, const struct uh_slot *s, struct dt_map_view *v)
{
	uh_off m = v->m;
	int rc;

	if (uh_slot_type(s[DT_MH_KIND].tag) != UH_T_I64 || s[DT_MH_KIND].value < UH_KEY_STRING ||
	    s[DT_MH_KIND].value > UH_KEY_I64)
		return bad_header(m, "has a bad key kind", s[DT_MH_KIND].value);
	if (uh_slot_type(s[DT_MH_COUNT].tag) != UH_T_I64 ||
	    uh_slot_type(s[DT_MH_CURSOR].tag) != UH_T_I64)
		return bad_header(m, "count or cursor slot is not an I64", s[DT_MH_COUNT].tag);
	if (uh_slot_type(s[DT_MH_TABLE].tag) != UH_T_REF || !s[DT_MH_TABLE].value)
		return bad_header(m, "has no table", s[DT_MH_TABLE].tag);
	v->kind = (uint32_t)s[DT_MH_KIND].value;
	v->count = s[DT_MH_COUNT].value;
	v->table = s[DT_MH_TABLE].value;
	v->cursor = s[DT_MH_CURSOR].value;
	if ((rc = view_table(h, m, DT_MH_TABLE, v->table, &v->size)) != 0)
		return rc;
	if (uh_slot_type(s[DT_MH_OLD].tag) == 0 && s[DT_MH_OLD].value == 0)
		return v->cursor ? bad_header(m, "has a cursor but no old table", v->cursor) : 0;
	if (uh_slot_type(s[DT_MH_OLD].tag) != UH_T_REF || !s[DT_MH_OLD].value)
		return bad_header(m, "old table slot is not a reference", s[DT_MH_OLD].tag);
	v->old = s[DT_MH_OLD].value;
	if ((rc = view_table(h, m, DT_MH_OLD, v->old, &v->old_size)) != 0)
		return rc;
	if (v->old_size * 2 != v->size)
		return bad_header(m, "old table is not half the size of the table", v->old_size);
	if (v->cursor >= v->old_size)
		return bad_header(m, "migration cursor is past the old table", v->cursor);
	return 0;
}

int dt_map_view(uh_heap *h, uh_off m, int lock, struct dt_map_view *v)
{
	struct uh_slot s[DT_MH_SLOTS];
	int rc;

	memset(v, 0, sizeof(*v));
	v->m = m;
	if (!uh_obj_get(h, m, UH_CLASS_MAP, &rc))
		return rc;
	if (uh_values_nslots(h, m) < DT_MH_SLOTS)
		return bad_header(m, "has too few slots", uh_values_nslots(h, m));
	/* Writers lock before reading: they serialize here instead of
	 * finding out at commit that another writer got in between. */
	if (lock && (rc = uh_tx_lock(h, m)) != 0)
		return rc;
	for (uint64_t i = 0; i < DT_MH_SLOTS; i++)	/* bound: 5 */
		if ((rc = uh_slot_read(h, m, i, &s[i])) != 0)
			return rc;
	return view_check(h, s, v);
}

/* ---- lookup ---- */

/* Where a key is, or would be inserted. */
struct find {
	uh_off table;
	uint64_t bucket;
	uh_off prev;		/* entry before it in the chain; 0: the bucket */
	uh_off entry;		/* 0: not found */
};

/* Is entry e's key k? e's hash already matched. */
static int entry_is(uh_heap *h, const struct dt_map_view *v, uh_off e, const uh_key *k,
		    int *same)
{
	uh_key ek;
	struct uh_slot s;
	int rc = dt_map_entry_key(h, v->m, e, &ek);

	if (rc)
		return rc;
	if (ek.kind != k->kind)
		return uh_err_set(UH_EINTERNAL, "map %llu: entry %llu holds a key of kind %u, "
				  "the map's kind is %u", (unsigned long long)v->m,
				  (unsigned long long)e, ek.kind, k->kind);
	*same = uh_key_cmp(&ek, k) == 0;
	/* The key bytes were read in place, unvalidated; reading e again
	 * proves e (and so its immutable key) was not freed meanwhile. */
	return uh_slot_read(h, e, DT_ME_KEY, &s);
}

static int find(uh_heap *h, const struct dt_map_view *v, const uh_key *k, uint64_t hash,
		struct find *f)
{
	uh_off e, parent;
	uint64_t pi;
	int rc, same;

	dt_map_bucket_of(v, hash, &f->table, &f->bucket);
	f->prev = f->entry = 0;
	parent = f->table;
	pi = f->bucket;
	if ((rc = dt_map_ref(h, v->m, parent, pi, &e)) != 0)
		return rc;
	for (uint64_t n = 0; e; n++) {	/* bound: count entries */
		struct uh_slot hs;
		if (n >= v->count)
			return uh_err_set(UH_EINTERNAL, "map %llu: a chain of bucket %llu is "
					  "longer than the map's %llu entries (a cycle?)",
					  (unsigned long long)v->m, (unsigned long long)f->bucket,
					  (unsigned long long)v->count);
		if ((rc = dt_map_deref(h, v->m, parent, pi, e, UH_CLASS_MAP_ENTRY,
				       DT_ME_SLOTS)) != 0 ||
		    (rc = uh_slot_read(h, e, DT_ME_HASH, &hs)) != 0)
			return rc;
		if (hs.value == hash) {
			if ((rc = entry_is(h, v, e, k, &same)) != 0)
				return rc;
			if (same) {
				f->entry = e;
				return 0;
			}
		}
		f->prev = parent = e;
		pi = DT_ME_NEXT;
		if ((rc = dt_map_ref(h, v->m, e, DT_ME_NEXT, &e)) != 0)
			return rc;
	}
	return 0;
}

/* ---- online resize ---- */

/* Move the chain of old bucket b into the new table and clear b. */
static int migrate_bucket(uh_heap *h, const struct dt_map_view *v, uint64_t b)
{
	uh_off e, next, head, parent = v->old;
	uint64_t pi = b;
	int rc;

	if ((rc = dt_map_ref(h, v->m, v->old, b, &e)) != 0 || !e)
		return rc;
	for (uint64_t n = 0; e; n++) {	/* bound: count entries */
		struct uh_slot hs;
		if (n >= v->count)
			return uh_err_set(UH_EINTERNAL, "map %llu: old bucket %llu's chain is "
					  "longer than the map's %llu entries (a cycle?)",
					  (unsigned long long)v->m, (unsigned long long)b,
					  (unsigned long long)v->count);
		if ((rc = dt_map_deref(h, v->m, parent, pi, e, UH_CLASS_MAP_ENTRY,
				       DT_ME_SLOTS)) != 0 ||
		    (rc = dt_map_ref(h, v->m, e, DT_ME_NEXT, &next)) != 0 ||
		    (rc = uh_slot_read(h, e, DT_ME_HASH, &hs)) != 0)
			return rc;
		uint64_t nb = hs.value & (v->size - 1);
		if ((rc = dt_map_ref(h, v->m, v->table, nb, &head)) != 0 ||
		    (rc = put_ref(h, e, DT_ME_NEXT, head)) != 0 ||
		    (rc = put_ref(h, v->table, nb, e)) != 0)
			return rc;
		parent = e;
		pi = DT_ME_NEXT;
		e = next;
	}
	/* Cleared, not just left behind: a stale reference here would
	 * dangle once the entry is removed (recovery GC would null it). */
	return put_ref(h, v->old, b, 0);
}

/* One bounded step of a resize under way; the last one frees the old
 * table. Updates *v. */
static int migrate_step(uh_heap *h, struct dt_map_view *v)
{
	int rc;

	for (unsigned n = 0; n < DT_MAP_STEP && v->cursor < v->old_size; n++) {	/* bound: 8 */
		if ((rc = migrate_bucket(h, v, v->cursor)) != 0)
			return rc;
		v->cursor++;
	}
	if (v->cursor == v->old_size) {
		if ((rc = uh_tx_log_free(h, v->old)) != 0 || (rc = put_ref(h, v->m, DT_MH_OLD, 0)) != 0)
			return rc;
		v->old = 0;
		v->old_size = 0;
		v->cursor = 0;
	}
	return put_i64(h, v->m, DT_MH_CURSOR, v->cursor);
}

/* A new table for one more entry, if the load would pass 3/4 and no
 * resize is under way; *out = 0 if none is needed (or the table is as
 * big as an object can be: chains just get longer). */
static int grow_table(uh_heap *h, const struct dt_map_view *v, uh_off *out)
{
	*out = 0;
	if (v->old || (v->count + 1) * 4 <= v->size * 3)
		return 0;
	if (v->size > UH_OBJ_SIZE_MASK / sizeof(struct uh_slot) / 2)
		return 0;
	return uh_values_new(h, UH_CLASS_MAP_TABLE, v->size * 2, out);
}

/* Start the resize to table t: the current table becomes the old one. */
static int start_resize(uh_heap *h, struct dt_map_view *v, uh_off t)
{
	int rc;

	if ((rc = put_ref(h, v->m, DT_MH_OLD, v->table)) != 0 ||
	    (rc = put_ref(h, v->m, DT_MH_TABLE, t)) != 0 ||
	    (rc = put_i64(h, v->m, DT_MH_CURSOR, 0)) != 0)
		return rc;
	v->old = v->table;
	v->old_size = v->size;
	v->table = t;
	v->size *= 2;
	v->cursor = 0;
	return 0;
}

/* ---- put ---- */

struct put_args {
	uh_off m;
	const uh_key *k;
	const uh_value *val;
	uint32_t flags;
};

static int replace(uh_heap *h, uh_off e, const struct uh_slot *vs, uint32_t flags)
{
	struct uh_slot old;
	int rc;

	if ((rc = uh_slot_read(h, e, DT_ME_VALUE, &old)) != 0 ||
	    (rc = uh_slot_write(h, e, DT_ME_VALUE, vs)) != 0)
		return rc;
	return uh_slot_free_old(h, &old, vs, flags);
}

/* Free what insert allocated before it failed (all in this block). */
static void insert_undo(uh_heap *h, const struct uh_slot *ks, uh_off t)
{
	uh_key_free(h, ks);
	if (t)
		uh_tx_log_free(h, t);
}

/* Allocations first, then writes: a failed allocation (heap full) leaves
 * no half-linked entry behind, even inside the caller's block. */
static int insert(uh_heap *h, struct dt_map_view *v, const struct find *f, const uh_key *k,
		  uint64_t hash, const struct uh_slot *vs)
{
	struct uh_slot ks = { 0, 0 }, hs = { UH_T_I64, hash };
	uh_off t, e, head;
	int rc;

	if ((rc = grow_table(h, v, &t)) != 0)
		return rc;
	if ((rc = uh_key_store(h, k, &ks)) != 0 ||
	    (rc = uh_values_new(h, UH_CLASS_MAP_ENTRY, DT_ME_SLOTS, &e)) != 0) {
		insert_undo(h, &ks, t);
		return rc;
	}
	/* e is new in this block: these writes go in place, unlogged. */
	if ((rc = dt_map_ref(h, v->m, f->table, f->bucket, &head)) != 0 ||
	    (rc = uh_slot_write(h, e, DT_ME_KEY, &ks)) != 0 ||
	    (rc = uh_slot_write(h, e, DT_ME_VALUE, vs)) != 0 ||
	    (rc = put_ref(h, e, DT_ME_NEXT, head)) != 0 ||
	    (rc = uh_slot_write(h, e, DT_ME_HASH, &hs)) != 0 ||
	    (rc = put_ref(h, f->table, f->bucket, e)) != 0 ||
	    (rc = put_i64(h, v->m, DT_MH_COUNT, ++v->count)) != 0)
		return rc;
	return t ? start_resize(h, v, t) : 0;
}

static int put_body(uh_heap *h, void *arg)
{
	struct put_args *a = arg;
	struct dt_map_view v;
	struct uh_slot vs;
	struct find f;
	int rc;

	if ((rc = dt_map_view(h, a->m, 1, &v)) != 0 || (rc = uh_key_check(v.kind, a->k)) != 0 ||
	    (rc = uh_value_to_slot(h, a->val, 0, &vs)) != 0)
		return rc;
	uint64_t hash = uh_key_hash(a->k);
	if ((rc = find(h, &v, a->k, hash, &f)) != 0)
		return rc;
	rc = f.entry ? replace(h, f.entry, &vs, a->flags) : insert(h, &v, &f, a->k, hash, &vs);
	if (rc == 0 && v.old)
		rc = migrate_step(h, &v);
	return rc;
}

/* ---- remove ---- */

struct remove_args {
	uh_off m;
	const uh_key *k;
	uh_value *old;
	uint32_t flags;
};

/* Unlink entry f->entry, free it and its key, count one less. */
static int unlink_entry(uh_heap *h, struct dt_map_view *v, const struct find *f,
			struct uh_slot *val)
{
	struct uh_slot ks;
	uh_off next;
	int rc;

	if ((rc = uh_slot_read(h, f->entry, DT_ME_VALUE, val)) != 0 ||
	    (rc = uh_slot_read(h, f->entry, DT_ME_KEY, &ks)) != 0 ||
	    (rc = dt_map_ref(h, v->m, f->entry, DT_ME_NEXT, &next)) != 0)
		return rc;
	if (f->prev)
		rc = put_ref(h, f->prev, DT_ME_NEXT, next);
	else
		rc = put_ref(h, f->table, f->bucket, next);
	if (rc || (rc = put_i64(h, v->m, DT_MH_COUNT, --v->count)) != 0 ||
	    (rc = uh_key_free(h, &ks)) != 0)
		return rc;
	return uh_tx_log_free(h, f->entry);
}

static int remove_body(uh_heap *h, void *arg)
{
	struct remove_args *a = arg;
	struct dt_map_view v;
	struct uh_slot val;
	struct find f;
	int rc;

	if ((rc = dt_map_view(h, a->m, 1, &v)) != 0 || (rc = uh_key_check(v.kind, a->k)) != 0 ||
	    (rc = find(h, &v, a->k, uh_key_hash(a->k), &f)) != 0)
		return rc;
	if (!f.entry)
		return uh_err_set(UH_ENOTFOUND, "uh_map_remove: key not in map %llu",
				  (unsigned long long)a->m);
	if ((rc = unlink_entry(h, &v, &f, &val)) != 0 ||
	    (rc = uh_slot_free_old(h, &val, NULL, a->flags)) != 0)
		return rc;
	if (a->old)
		uh_slot_to_value(&val, a->old);
	return v.old ? migrate_step(h, &v) : 0;
}

/* ---- get, len, key kind ---- */

struct get_args {
	uh_off m;
	const uh_key *k;
	uh_value *val;
	int missing;	/* set instead of failing: see uh_map_get */
};

static int get_body(uh_heap *h, void *arg)
{
	struct get_args *a = arg;
	struct dt_map_view v;
	struct uh_slot s;
	struct find f;
	int rc;

	if ((rc = dt_map_view(h, a->m, 0, &v)) != 0 || (rc = uh_key_check(v.kind, a->k)) != 0 ||
	    (rc = find(h, &v, a->k, uh_key_hash(a->k), &f)) != 0)
		return rc;
	a->missing = !f.entry;
	if (!f.entry)
		return 0;
	if ((rc = uh_slot_read(h, f.entry, DT_ME_VALUE, &s)) != 0)
		return rc;
	if (a->val)
		uh_slot_to_value(&s, a->val);
	return 0;
}

struct header_args {
	uh_off m;
	struct dt_map_view v;
};

static int header_body(uh_heap *h, void *arg)
{
	struct header_args *a = arg;
	return dt_map_view(h, a->m, 0, &a->v);
}

/* ---- new ---- */

struct new_args {
	uint32_t kind;
	uh_off out;
};

static int new_body(uh_heap *h, void *arg)
{
	struct new_args *a = arg;
	uh_off m, t;
	int rc;

	a->out = 0;
	if ((rc = uh_values_new(h, UH_CLASS_MAP_TABLE, DT_MAP_MIN_BUCKETS, &t)) != 0)
		return rc;
	if ((rc = uh_values_new(h, UH_CLASS_MAP, DT_MH_SLOTS, &m)) != 0) {
		uh_tx_log_free(h, t);
		return rc;
	}
	/* Both objects are new in this block: written in place. */
	if ((rc = put_i64(h, m, DT_MH_KIND, a->kind)) != 0 ||
	    (rc = put_i64(h, m, DT_MH_COUNT, 0)) != 0 ||
	    (rc = put_ref(h, m, DT_MH_TABLE, t)) != 0 ||
	    (rc = put_i64(h, m, DT_MH_CURSOR, 0)) != 0)
		return rc;
	a->out = m;
	return 0;
}

/* ---- public calls ---- */

int uh_map_new(uh_heap *h, uint32_t key_kind, uh_off *out)
{
	struct new_args a = { key_kind, 0 };
	int rc = uh_check_writable(h, "uh_map_new");

	if (rc)
		return rc;
	if (!out)
		return uh_err_set(UH_EINVAL, "uh_map_new: out is NULL");
	if (key_kind < UH_KEY_STRING || key_kind > UH_KEY_I64)
		return uh_err_set(UH_EINVAL, "uh_map_new: key kind %u is not UH_KEY_STRING (1), "
				  "UH_KEY_BYTES (2) or UH_KEY_I64 (3)", key_kind);
	if ((rc = dt_map_run(h, new_body, &a)) == 0)
		*out = a.out;
	return rc;
}

int uh_map_key_kind(uh_heap *h, uh_off m, uint32_t *key_kind)
{
	struct header_args a = { .m = m };
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (!key_kind)
		return uh_err_set(UH_EINVAL, "uh_map_key_kind: key_kind is NULL");
	if ((rc = dt_map_run(h, header_body, &a)) == 0)
		*key_kind = a.v.kind;
	return rc;
}

int uh_map_len(uh_heap *h, uh_off m, uint64_t *len)
{
	struct header_args a = { .m = m };
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (!len)
		return uh_err_set(UH_EINVAL, "uh_map_len: len is NULL");
	if ((rc = dt_map_run(h, header_body, &a)) == 0)
		*len = a.v.count;
	return rc;
}

int uh_map_get(uh_heap *h, uh_off m, const uh_key *k, uh_value *v)
{
	struct get_args a = { m, k, v, 0 };
	int rc = uh_check_handle(h);

	if (rc || (rc = uh_key_check(k ? k->kind : 0, k)) != 0)
		return rc;
	/* A miss is an answer, not a failure: the read-only block ends
	 * normally instead of counting as an aborted one. */
	if ((rc = dt_map_run(h, get_body, &a)) == 0 && a.missing)
		rc = uh_err_set(UH_ENOTFOUND, "uh_map_get: key not in map %llu",
				(unsigned long long)m);
	return rc;
}

int uh_map_put(uh_heap *h, uh_off m, const uh_key *k, const uh_value *v, uint32_t flags)
{
	struct put_args a = { m, k, v, flags };
	int rc = uh_check_writable(h, "uh_map_put");

	if (rc || (rc = uh_key_check(k ? k->kind : 0, k)) != 0)
		return rc;
	if (!v)
		return uh_err_set(UH_EINVAL, "uh_map_put: value is NULL");
	if ((rc = uh_free_flags_check(flags, "uh_map_put")) != 0)
		return rc;
	return dt_map_run(h, put_body, &a);
}

int uh_map_remove(uh_heap *h, uh_off m, const uh_key *k, uh_value *old, uint32_t flags)
{
	struct remove_args a = { m, k, old, flags };
	int rc = uh_check_writable(h, "uh_map_remove");

	if (rc || (rc = uh_key_check(k ? k->kind : 0, k)) != 0)
		return rc;
	if ((rc = uh_free_flags_check(flags, "uh_map_remove")) != 0)
		return rc;
	return dt_map_run(h, remove_body, &a);
}
