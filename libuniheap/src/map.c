/*
 * map.c -- the persistent hash map (uh_map_*): separate chaining in a
 * power-of-two bucket table that grows online, a bounded number of
 * buckets per update, so no single operation pauses for the whole map.
 * Reads (get, len, key kind) are in map_get.c, iteration in map_iter.c,
 * the structural check in map_check.c.
 *
 * FORMAT. Every reference is where recovery GC finds it without knowing
 * the map (typed slots, a reference table, or a packed object's typed
 * values), and every count in a slot tagged I64.
 *
 *   header, class UH_CLASS_MAP (8), VALUES, 5 slots:
 *     [0] @16  I64  key kind: UH_KEY_STRING 1, UH_KEY_BYTES 2, UH_KEY_I64 3;
 *                   fixed at creation
 *     [1] @32  I64  count: live entries
 *     [2] @48  REF  table: the current bucket table, never empty
 *     [3] @64  REF  old table during a resize, else empty (tag 0, value 0)
 *     [4] @80  I64  migration cursor: old buckets [0, cursor) are migrated;
 *                   0 when no resize is under way
 *   bucket table, class UH_CLASS_MAP_RTABLE (14), REFTABLE, 2^k refs (k >= 3):
 *     [b] @16+8b   first entry of bucket b's chain, or 0
 *   entry, class UH_CLASS_MAP_IENTRY (13), PACKED, 24 + key length bytes:
 *     @16 u16 nvals = 2, @18 u16 vals_at = 8, @20 u16 types_at = 6
 *     @22 u8  the value's type (UH_T_*)      @23 u8 UH_T_REF
 *     @24 u64 the value (any typed value, not owned by the map)
 *     @32 u64 next entry of the chain, or 0
 *     @40     the key: its bytes (an i64 key: its 8 little-endian bytes),
 *             to the end of the payload. Immutable while the entry lives,
 *             so a key returned by uh_map_next points here.
 *   A lookup reads the bucket and then one object per entry of the chain
 *   (key, value and next on the entry's first line): no key object.
 *   entry with its value inline (a map whose kind has DT_KIND_INLINE,
 *   uh_map_put_bytes), class UH_CLASS_MAP_IENTRY, PACKED:
 *     @16 u16 nvals = 1, @18 u16 vals_at = 16, @20 u16 types_at = 7
 *     @22 u8  UH_T_ISTRING or UH_T_IBYTES   @23 u8 UH_T_REF
 *     @24 u64 key length (low 32 bits), value length (high 32, <= 128)
 *     @32 u64 next entry of the chain, or 0
 *     @40     the key's bytes, then the value's, to the end of the payload.
 *   Never written in place but for next: a put of the key relinks a new
 *   entry (relink), so a copy of the value is checked by the entry's
 *   generation alone (copy.c), and a get that finds the key has its value
 *   on the same object, usually the same page.
 *
 * Format 2 wrote tables of class UH_CLASS_MAP_TABLE (9, VALUES: bucket b
 * is slot b, tagged REF or empty) and entries of class UH_CLASS_MAP_ENTRY
 * (10, VALUES: [0] the key, I64 inline or a STRING/BYTES ref to a key
 * object the map owns, [1] the value, [2] REF next, [3] I64 the key's
 * hash). They stay valid: the accessors (dt_table_*, dt_entry_*) read and
 * write both encodings, and whatever a map creates from now on (entries,
 * the table of a resize) is of the new one, so old maps change over as
 * they are written.
 *
 * Invariants (uh_map_check verifies them all):
 *  - Without a resize, an entry of hash x (uh_key_hash: the word hash of
 *    the key bytes, or FNV-1a 64 in a map created before it) is
 *    in bucket x & (size - 1) of the table. During a resize (old table
 *    non-empty, its size exactly half the table's): an entry whose old
 *    bucket ob = x & (old_size - 1) is >= cursor is still in old bucket ob;
 *    any other is in bucket x & (size - 1) of the new table. So every key
 *    has exactly one place, and lookups look only there. Old buckets below
 *    the cursor are empty.
 *  - Every entry is reachable exactly once; chains are acyclic; count is
 *    the number of entries; keys are unique.
 *
 * Resizing: a put that would leave more entries than buckets (and finds
 * no resize under way) allocates a table twice the size and makes the
 * current one the old table with cursor 0. Then every put and remove
 * moves the chains of DT_MAP_STEP old buckets (8) into the new table and
 * clears them; the one that moves the last bucket frees the old table. A
 * put may therefore take about 8 entry moves more than a lookup, never
 * O(n). Why a load of up to 1 (as Redis's dict) rather than 3/4: chains
 * stay short (a hit visits 1 + load/2 entries on average, at most 1.5),
 * and the table costs 8 to 16 bytes per entry instead of 10.7 to 21.3.
 *
 * Crash safety: every operation, with its migration step, is one block:
 * its writes go through the redo log and its allocations and frees commit
 * with it, so a crash leaves the map before or after the whole operation,
 * never with an entry in two places or none. Nothing here orders stores
 * by hand; the block's commit does.
 *
 * Concurrency: put and remove lock the header first (every one of them
 * writes count or cursor), so writers of one map serialize on it. Readers
 * (get, len, next) take no lock: outside a block they read optimistically
 * (optread.c: validated once at the end, re-run on a change), inside one
 * through the block's validated reads. Writes outside a user's block run
 * in an implicit block that is re-run when it loses a conflict.
 */
#include <stdio.h>
#include <string.h>

#include "map_int.h"
#include "utf8.h"

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

/* The object the reference at byte `at` of parent names must be a live one
 * of class a or b; *o is its header. If it is not, parent is read again:
 * had a commit after our snapshot freed it, that commit also changed
 * parent, and reading it again dooms the block; else the map is damaged. */
static int map_deref(uh_heap *h, uh_off m, uh_off parent, uint64_t at, uh_off child,
		     uint32_t a, uint32_t b, const struct uh_objhdr **o)
{
	char why[512];
	uint64_t again;
	int rc;

	if ((*o = uh_obj_get(h, child, 0, &rc)) != NULL) {
		uint32_t c = uh_word_class(__atomic_load_n(&(*o)->class_word, __ATOMIC_RELAXED));
		if (c == a || (b && c == b))
			return 0;
		snprintf(why, sizeof(why), "it is of class %u", c);
	} else {
		snprintf(why, sizeof(why), "%s", uh_errmsg());
	}
	if ((rc = uh_tx_read(h, parent, parent + at, &again, 8)) != 0)
		return rc;
	return uh_err_set(UH_EINTERNAL, "map %llu: byte %llu of object %llu references %llu: %s",
			  (unsigned long long)m, (unsigned long long)at,
			  (unsigned long long)UH_REF_OFFSET(parent), (unsigned long long)child, why);
}

static uint32_t payload_of(const struct uh_objhdr *o)
{
	return __atomic_load_n(&o->size, __ATOMIC_RELAXED) & UH_OBJ_SIZE_MASK;
}

/* ---- tables ---- */

uint64_t dt_table_at(const struct dt_table *t, uint64_t b)
{
	return UH_OBJHDR_SIZE + (t->refs ? 8 * b : sizeof(struct uh_slot) * b + 8);
}

int dt_table_get(uh_heap *h, uh_off m, const struct dt_table *t, uint64_t b, uh_off *e)
{
	if (!t->refs)
		return dt_map_ref(h, m, t->ref, b, e);
	int rc = uh_tx_read(h, t->ref, t->ref + dt_table_at(t, b), e, 8);
	if (rc)
		*e = 0;
	return rc;
}

int dt_table_set(uh_heap *h, const struct dt_table *t, uint64_t b, uh_off e)
{
	if (!t->refs)
		return put_ref(h, t->ref, b, e);
	return uh_tx_write(h, t->ref, t->ref + dt_table_at(t, b), &e, 8);
}

/* A new, empty table of size buckets. */
static int table_new(uh_heap *h, uint64_t size, struct dt_table *t)
{
	t->refs = 1;
	t->size = size;
	return uh_alloc_raw(h, UH_CLASS_MAP_RTABLE, size * 8, NULL, &t->ref);
}

void dt_map_bucket_of(const struct dt_map_view *v, uint64_t hash,
		      const struct dt_table **table, uint64_t *bucket)
{
	if (v->old.ref && (hash & (v->old.size - 1)) >= v->cursor) {
		*table = &v->old;
		*bucket = hash & (v->old.size - 1);
	} else {
		*table = &v->table;
		*bucket = hash & (v->table.size - 1);
	}
}

/* ---- entries ---- */

static int bad_entry(uh_off m, uh_off e, const char *what)
{
	return uh_err_set(UH_EINTERNAL, "map %llu: entry %llu %s", (unsigned long long)m,
			  (unsigned long long)UH_REF_OFFSET(e), what);
}

/* The key of an entry in the slot encoding (kept in an object of its own,
 * or inline for i64 keys). */
static int slot_entry_key(uh_heap *h, const struct dt_map_view *v, struct dt_entry *d)
{
	const struct uh_objhdr *o;
	struct uh_slot s;
	int rc = uh_slot_read(h, d->ref, DT_ME_KEY, &s);
	uint32_t t = uh_slot_type(s.tag);

	if (rc)
		return rc;
	if ((t == UH_T_STRING || t == UH_T_BYTES) &&
	    (rc = map_deref(h, v->m, d->ref, uh_slot_off(0, DT_ME_KEY) + 8, s.value,
			    t == UH_T_STRING ? UH_CLASS_STRING : UH_CLASS_BYTES, 0, &o)) != 0)
		return rc;
	if ((rc = uh_key_load(h, &s, &d->key)) != 0)
		return bad_entry(v->m, d->ref, uh_errmsg());
	return 0;
}

/* The key's and the value's lengths in an inline-key entry of map v
 * whose payload is as long as its header says (read in place: a torn read
 * fails a check here, or the caller's final validation): 1 when they fit
 * the payload exactly, a key of a length the map's kind allows and an
 * inline value (only in a map that allows them) of at most
 * UH_MAP_INLINE_MAX bytes, else 0. *vtype is the inline value's type, 0
 * when the value is a typed value. */
static int ie_lens(const struct uh_objhdr *o, const struct dt_map_view *v, uint32_t *klen,
		   uint32_t *vtype, uint32_t *vlen)
{
	const char *p = (const char *)(o + 1);
	uint32_t payload = payload_of(o);
	uint64_t lens;
	uint8_t t;

	if (payload < DT_IE_KEY)
		return 0;
	uh_load(&t, p + DT_IE_TYPE, 1);
	*vtype = *vlen = 0;
	*klen = payload - DT_IE_KEY;
	if (uh_type_is_inline(t)) {
		uh_load(&lens, p + DT_IE_LENS, 8);
		*vtype = t;
		*klen = (uint32_t)lens;
		*vlen = (uint32_t)(lens >> 32);
		if (!v->inl || *vlen > UH_MAP_INLINE_MAX || *klen > payload - DT_IE_KEY ||
		    payload - DT_IE_KEY - *klen != *vlen)
			return 0;
	}
	return *klen <= UH_KEY_MAX_LEN && (v->kind != UH_KEY_I64 || *klen == 8);
}

/* An inline value as a slot (dt_entry_value): its type, and where its
 * bytes lie in entry e (from the object's start) and their length in the
 * tag's high half, as uh_value.reserved says them; e as the value. */
static void inline_slot(uh_off e, uint32_t vtype, uint32_t klen, uint32_t vlen,
			struct uh_slot *s)
{
	uint64_t at = UH_OBJHDR_SIZE + DT_IE_KEY + klen;

	s->tag = vtype | (at | (uint64_t)vlen << 16) << 32;
	s->value = e;
}

/* map_int.h: one step of the get shortcuts (map_get.c). */
int dt_ie_step(uh_off e, const struct uh_objhdr *o, const struct dt_map_view *v,
	       const void *kd, size_t klen, struct uh_slot *s, uh_off *next)
{
	const char *p = (const char *)(o + 1);
	uint32_t elen, vtype, vlen;

	if (!ie_lens(o, v, &elen, &vtype, &vlen))
		return -1;
	if (elen == klen && memcmp(p + DT_IE_KEY, kd, klen) == 0) {
		if (vtype) {
			inline_slot(e, vtype, elen, vlen, s);
			return 1;
		}
		uint8_t type;
		uh_load(&type, p + DT_IE_TYPE, 1);
		uh_load(&s->value, p + DT_IE_VALUE, 8);
		s->tag = type;
		return 1;
	}
	uh_load(next, p + DT_IE_NEXT, 8);
	return 0;
}

/* The key of an entry that keeps it inline: its bytes in place. */
static int inline_entry_key(const struct dt_map_view *v, const struct uh_objhdr *o,
			    struct dt_entry *d)
{
	const char *key = (const char *)(o + 1) + DT_IE_KEY;
	uint32_t klen;

	if (!ie_lens(o, v, &klen, &d->vtype, &d->vlen))
		return bad_entry(v->m, d->ref, "has a key or value of a bad length (or an "
				 "inline value in a map whose kind lacks 0x200)");
	memset(&d->key, 0, sizeof(d->key));
	d->key.kind = v->kind;
	if (v->kind == UH_KEY_I64)
		memcpy(&d->key.i64, key, 8);
	d->key.data = key;
	d->key.len = klen;
	return 0;
}

uint64_t dt_entry_next_at(const struct dt_entry *e)
{
	return e->inl ? UH_OBJHDR_SIZE + DT_IE_NEXT : uh_slot_off(0, DT_ME_NEXT) + 8;
}

int dt_entry_load(uh_heap *h, const struct dt_map_view *v, uh_off parent, uint64_t at,
		  uh_off e, struct dt_entry *d)
{
	const struct uh_objhdr *o;
	int rc = map_deref(h, v->m, parent, at, e, UH_CLASS_MAP_IENTRY, UH_CLASS_MAP_ENTRY, &o);

	if (rc)
		return rc;
	d->ref = e;
	d->vtype = d->vlen = 0;
	d->inl = uh_word_class(__atomic_load_n(&o->class_word, __ATOMIC_RELAXED)) ==
		 UH_CLASS_MAP_IENTRY;
	if (d->inl) {
		if ((rc = inline_entry_key(v, o, d)) != 0)
			return rc;
		return uh_tx_read(h, e, e + dt_entry_next_at(d), &d->next, 8);
	}
	if (payload_of(o) < DT_ME_SLOTS * sizeof(struct uh_slot))
		return bad_entry(v->m, e, "has too few slots");
	if ((rc = slot_entry_key(h, v, d)) != 0)
		return rc;
	return dt_map_ref(h, v->m, e, DT_ME_NEXT, &d->next);
}

int dt_entry_recheck(uh_heap *h, const struct dt_entry *e)
{
	uint64_t next;
	return h->tx.depth ? uh_tx_read(h, e->ref, e->ref + dt_entry_next_at(e), &next, 8) : 0;
}

int dt_entry_value(uh_heap *h, const struct dt_entry *e, struct uh_slot *out)
{
	uint8_t t;
	int rc;

	if (!e->inl)
		return uh_slot_read(h, e->ref, DT_ME_VALUE, out);
	if (e->vtype) {
		/* The value's bytes are the entry's, immutable while it lives. */
		inline_slot(e->ref, e->vtype, (uint32_t)e->key.len, e->vlen, out);
		return 0;
	}
	if ((rc = uh_tx_read(h, e->ref, e->ref + UH_OBJHDR_SIZE + DT_IE_TYPE, &t, 1)) != 0 ||
	    (rc = uh_tx_read(h, e->ref, e->ref + UH_OBJHDR_SIZE + DT_IE_VALUE, &out->value, 8)) != 0)
		return rc;
	out->tag = t;
	return 0;
}

static int entry_set_value(uh_heap *h, const struct dt_entry *e, const struct uh_slot *s)
{
	uint8_t t = (uint8_t)uh_slot_type(s->tag);
	int rc;

	if (!e->inl)
		return uh_slot_write(h, e->ref, DT_ME_VALUE, s);
	if ((rc = uh_tx_write(h, e->ref, e->ref + UH_OBJHDR_SIZE + DT_IE_TYPE, &t, 1)) != 0)
		return rc;
	return uh_tx_write(h, e->ref, e->ref + UH_OBJHDR_SIZE + DT_IE_VALUE, &s->value, 8);
}

static int entry_set_next(uh_heap *h, const struct dt_entry *e, uh_off next)
{
	if (!e->inl)
		return put_ref(h, e->ref, DT_ME_NEXT, next);
	return uh_tx_write(h, e->ref, e->ref + dt_entry_next_at(e), &next, 8);
}

int dt_entry_hash(uh_heap *h, const struct dt_map_view *v, const struct dt_entry *e,
		  uint64_t *hash)
{
	struct uh_slot s;
	int rc;

	if (e->inl) {
		*hash = dt_key_hash(v, &e->key);
		return 0;
	}
	if ((rc = uh_slot_read(h, e->ref, DT_ME_HASH, &s)) != 0)
		return rc;
	*hash = s.value;
	return 0;
}

/* A new entry for key k (its bytes inline), next, and the value: vs, or
 * when iv is not NULL iv's bytes inline (type UH_T_ISTRING/UH_T_IBYTES). */
static int entry_new(uh_heap *h, const uh_key *k, const struct uh_slot *vs,
		     const struct dt_bytes *iv, uh_off next, uh_off *out)
{
	static __thread unsigned char buf[DT_IE_KEY + UH_KEY_MAX_LEN + UH_MAP_INLINE_MAX];
	struct uh_packed_hdr ph = { 2, DT_IE_VALUE, DT_IE_TYPE, 0 };
	size_t klen;
	const void *kd = uh_key_bytes(k, &klen);
	size_t vlen = iv ? iv->len : 0;

	buf[DT_IE_NTYPE] = UH_T_REF;
	if (iv) {
		uint64_t lens = klen | (uint64_t)vlen << 32;
		ph = (struct uh_packed_hdr){ 1, DT_IE_NEXT, DT_IE_NTYPE, 0 };
		buf[DT_IE_TYPE] = iv->type == UH_T_STRING ? UH_T_ISTRING : UH_T_IBYTES;
		memcpy(buf + DT_IE_LENS, &lens, 8);
		if (vlen)
			memcpy(buf + DT_IE_KEY + klen, iv->data, vlen);
	} else {
		buf[DT_IE_TYPE] = (uint8_t)uh_slot_type(vs->tag);
		memcpy(buf + DT_IE_VALUE, &vs->value, 8);
	}
	memcpy(buf, &ph, 6);
	memcpy(buf + DT_IE_NEXT, &next, 8);
	memcpy(buf + DT_IE_KEY, kd, klen);
	return uh_alloc_raw(h, UH_CLASS_MAP_IENTRY, DT_IE_KEY + klen + vlen, buf, out);
}

/* Free an entry and, in the slot encoding, its key object. */
static int entry_free(uh_heap *h, const struct dt_entry *e)
{
	struct uh_slot ks;
	int rc;

	if (!e->inl && ((rc = uh_slot_read(h, e->ref, DT_ME_KEY, &ks)) != 0 ||
			(rc = uh_key_free(h, &ks)) != 0))
		return rc;
	return uh_tx_log_free(h, e->ref);
}

/* ---- header ---- */

static int bad_header(uh_off m, const char *what, uint64_t x)
{
	return uh_err_set(UH_EINTERNAL, "map %llu: header %s (%llu)", (unsigned long long)m,
			  what, (unsigned long long)x);
}

/* The table slot i of the header names: either encoding, a power-of-two
 * number of buckets. */
static int view_table(uh_heap *h, uh_off m, uint64_t i, uh_off ref, struct dt_table *t)
{
	const struct uh_objhdr *o;
	int rc = map_deref(h, m, m, uh_slot_off(0, i) + 8, ref, UH_CLASS_MAP_RTABLE,
			   UH_CLASS_MAP_TABLE, &o);

	if (rc)
		return rc;
	t->ref = ref;
	t->refs = uh_word_class(__atomic_load_n(&o->class_word, __ATOMIC_RELAXED)) ==
		  UH_CLASS_MAP_RTABLE;
	t->size = payload_of(o) / (t->refs ? 8 : sizeof(struct uh_slot));
	if (!t->size || (t->size & (t->size - 1)))
		return bad_header(m, "names a table whose size is not a power of two", t->size);
	return 0;
}

static int view_check(uh_heap *h, const struct uh_slot *s, struct dt_map_view *v)
{
	uh_off m = v->m;
	int rc;

	uint64_t kind = s[DT_MH_KIND].value & ~(uint64_t)(DT_KIND_WORDS | DT_KIND_INLINE);
	if (uh_slot_type(s[DT_MH_KIND].tag) != UH_T_I64 || kind < UH_KEY_STRING ||
	    kind > UH_KEY_I64)
		return bad_header(m, "has a bad key kind", s[DT_MH_KIND].value);
	if (uh_slot_type(s[DT_MH_COUNT].tag) != UH_T_I64 ||
	    uh_slot_type(s[DT_MH_CURSOR].tag) != UH_T_I64)
		return bad_header(m, "count or cursor slot is not an I64", s[DT_MH_COUNT].tag);
	if (uh_slot_type(s[DT_MH_TABLE].tag) != UH_T_REF || !s[DT_MH_TABLE].value)
		return bad_header(m, "has no table", s[DT_MH_TABLE].tag);
	v->kind = (uint32_t)kind;
	v->words = (s[DT_MH_KIND].value & DT_KIND_WORDS) != 0;
	v->inl = (s[DT_MH_KIND].value & DT_KIND_INLINE) != 0;
	v->count = s[DT_MH_COUNT].value;
	v->cursor = s[DT_MH_CURSOR].value;
	if ((rc = view_table(h, m, DT_MH_TABLE, s[DT_MH_TABLE].value, &v->table)) != 0)
		return rc;
	if (uh_slot_type(s[DT_MH_OLD].tag) == 0 && s[DT_MH_OLD].value == 0)
		return v->cursor ? bad_header(m, "has a cursor but no old table", v->cursor) : 0;
	if (uh_slot_type(s[DT_MH_OLD].tag) != UH_T_REF || !s[DT_MH_OLD].value)
		return bad_header(m, "old table slot is not a reference", s[DT_MH_OLD].tag);
	if ((rc = view_table(h, m, DT_MH_OLD, s[DT_MH_OLD].value, &v->old)) != 0)
		return rc;
	if (v->old.size * 2 != v->table.size)
		return bad_header(m, "old table is not half the size of the table", v->old.size);
	if (v->cursor >= v->old.size)
		return bad_header(m, "migration cursor is past the old table", v->cursor);
	return 0;
}

int dt_map_view(uh_heap *h, uh_off m, int lock, struct dt_map_view *v)
{
	struct uh_slot s[DT_MH_SLOTS];
	const void *kept;
	int rc;

	/* Outside blocks, a header unchanged since the last read is not read
	 * again (its table's class and size cannot change either: freeing
	 * the table writes the header). */
	if ((kept = uh_opt_view(h, m, UH_CLASS_MAP)) != NULL) {
		memcpy(v, kept, sizeof(*v));
		return 0;
	}
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
	if ((rc = view_check(h, s, v)) == 0)
		uh_opt_keep(h, m, UH_CLASS_MAP, v, sizeof(*v));
	return rc;
}

_Static_assert(sizeof(struct dt_map_view) <= UH_VIEW_BYTES, "a map view fits the cache");

/* ---- lookup ---- */

static int same_key(const uh_key *a, const uh_key *b)
{
	if (a->kind == UH_KEY_I64)
		return a->i64 == b->i64;
	return a->len == b->len && (!a->len || memcmp(a->data, b->data, a->len) == 0);
}

/* map_int.h: the general lookup, for puts, removes and map_get.c. */
int dt_find(uh_heap *h, const struct dt_map_view *v, const uh_key *k, uint64_t hash,
	    struct dt_find *f)
{
	struct dt_entry d;
	uh_off e, parent;
	uint64_t at;
	int rc;

	dt_map_bucket_of(v, hash, &f->table, &f->bucket);
	f->prev.ref = f->entry.ref = 0;
	parent = f->table->ref;
	at = dt_table_at(f->table, f->bucket);
	if ((rc = dt_table_get(h, v->m, f->table, f->bucket, &e)) != 0)
		return rc;
	for (uint64_t n = 0; e; n++) {	/* bound: count entries */
		if (n >= v->count)
			return uh_err_set(UH_EINTERNAL, "map %llu: a chain of bucket %llu is "
					  "longer than the map's %llu entries (a cycle?)",
					  (unsigned long long)v->m, (unsigned long long)f->bucket,
					  (unsigned long long)v->count);
		if ((rc = dt_entry_load(h, v, parent, at, e, &d)) != 0)
			return rc;
		int same = same_key(&d.key, k);
		/* The key bytes were read in place, unvalidated: reading e again
		 * proves it (and so its immutable key) was not freed meanwhile. */
		if ((rc = dt_entry_recheck(h, &d)) != 0)
			return rc;
		if (same) {
			f->entry = d;
			return 0;
		}
		f->prev = d;
		parent = e;
		at = dt_entry_next_at(&d);
		e = d.next;
	}
	return 0;
}

/* ---- online resize ---- */

/* Move the chain of old bucket b into the new table and clear b. */
static int migrate_bucket(uh_heap *h, const struct dt_map_view *v, uint64_t b)
{
	struct dt_entry d;
	uh_off e, head, parent = v->old.ref;
	uint64_t at = dt_table_at(&v->old, b), hash;
	int rc;

	if ((rc = dt_table_get(h, v->m, &v->old, b, &e)) != 0 || !e)
		return rc;
	for (uint64_t n = 0; e; n++) {	/* bound: count entries */
		if (n >= v->count)
			return uh_err_set(UH_EINTERNAL, "map %llu: old bucket %llu's chain is "
					  "longer than the map's %llu entries (a cycle?)",
					  (unsigned long long)v->m, (unsigned long long)b,
					  (unsigned long long)v->count);
		if ((rc = dt_entry_load(h, v, parent, at, e, &d)) != 0 ||
		    (rc = dt_entry_hash(h, v, &d, &hash)) != 0)
			return rc;
		uint64_t nb = hash & (v->table.size - 1);
		if ((rc = dt_table_get(h, v->m, &v->table, nb, &head)) != 0 ||
		    (rc = entry_set_next(h, &d, head)) != 0 ||
		    (rc = dt_table_set(h, &v->table, nb, e)) != 0)
			return rc;
		parent = e;
		at = dt_entry_next_at(&d);
		e = d.next;
	}
	/* Cleared, not just left behind: a stale reference here would
	 * dangle once the entry is removed (recovery GC would null it). */
	return dt_table_set(h, &v->old, b, 0);
}

/* One bounded step of a resize under way; the last one frees the old
 * table. Updates *v. */
static int migrate_step(uh_heap *h, struct dt_map_view *v)
{
	int rc;

	for (unsigned n = 0; n < DT_MAP_STEP && v->cursor < v->old.size; n++) {	/* bound: 8 */
		if ((rc = migrate_bucket(h, v, v->cursor)) != 0)
			return rc;
		v->cursor++;
	}
	if (v->cursor == v->old.size) {
		if ((rc = uh_tx_log_free(h, v->old.ref)) != 0 ||
		    (rc = put_ref(h, v->m, DT_MH_OLD, 0)) != 0)
			return rc;
		memset(&v->old, 0, sizeof(v->old));
		v->cursor = 0;
	}
	return put_i64(h, v->m, DT_MH_CURSOR, v->cursor);
}

/* A new table for one more entry, if there would be more entries than
 * buckets and no resize is under way; t->ref = 0 if none is needed (or
 * the table is as big as an object can be: chains just get longer). */
static int grow_table(uh_heap *h, const struct dt_map_view *v, struct dt_table *t)
{
	t->ref = 0;
	if (v->old.ref || v->count + 1 <= v->table.size)
		return 0;
	if (v->table.size > UH_OBJ_SIZE_MASK / 8 / 2)
		return 0;
	return table_new(h, v->table.size * 2, t);
}

/* Start the resize to table t: the current table becomes the old one. */
static int start_resize(uh_heap *h, struct dt_map_view *v, const struct dt_table *t)
{
	int rc;

	if ((rc = put_ref(h, v->m, DT_MH_OLD, v->table.ref)) != 0 ||
	    (rc = put_ref(h, v->m, DT_MH_TABLE, t->ref)) != 0 ||
	    (rc = put_i64(h, v->m, DT_MH_CURSOR, 0)) != 0)
		return rc;
	v->old = v->table;
	v->table = *t;
	v->cursor = 0;
	return 0;
}

/* ---- put ---- */

struct put_args {
	uh_off m;
	const uh_key *k;
	const uh_value *val;
	const struct dt_bytes *bytes;	/* uh_map_put_bytes: the value as bytes */
	uint32_t flags;
};

/* Make f->entry's successor, a new entry with the same key, value vs (iv:
 * inline), in f->entry's place in its chain, and free f->entry: an inline
 * value is never written in place, so that a reader copying it out needs
 * only the entry's generation to know the bytes were the value's
 * (uh_copy_values), as for a bytes object. */
static int relink(uh_heap *h, const struct dt_find *f, const struct uh_slot *vs,
		  const struct dt_bytes *iv)
{
	uh_off e;
	int rc;

	if ((rc = entry_new(h, &f->entry.key, vs, iv, f->entry.next, &e)) != 0)
		return rc;
	if (f->prev.ref)
		rc = entry_set_next(h, &f->prev, e);
	else
		rc = dt_table_set(h, f->table, f->bucket, e);
	return rc ? rc : entry_free(h, &f->entry);
}

static int replace(uh_heap *h, const struct dt_find *f, const struct uh_slot *vs,
		   const struct dt_bytes *iv, uint32_t flags)
{
	struct uh_slot old;
	int rc;

	if ((rc = dt_entry_value(h, &f->entry, &old)) != 0)
		return rc;
	if (iv || f->entry.vtype)
		rc = relink(h, f, vs, iv);
	else
		rc = entry_set_value(h, &f->entry, vs);
	return rc ? rc : uh_slot_free_old(h, &old, vs, flags);
}

/* Allocations first, then writes: a failed allocation (heap full) leaves
 * no half-linked entry behind, even inside the caller's block. */
static int insert(uh_heap *h, struct dt_map_view *v, const struct dt_find *f, const uh_key *k,
		  const struct uh_slot *vs, const struct dt_bytes *iv)
{
	struct dt_table t;
	uh_off e, head;
	int rc;

	if ((rc = grow_table(h, v, &t)) != 0)
		return rc;
	if ((rc = dt_table_get(h, v->m, f->table, f->bucket, &head)) != 0 ||
	    (rc = entry_new(h, k, vs, iv, head, &e)) != 0) {
		if (t.ref)
			uh_tx_log_free(h, t.ref);
		return rc;
	}
	/* e is new in this block: it was written in place, unlogged. */
	if ((rc = dt_table_set(h, f->table, f->bucket, e)) != 0 ||
	    (rc = put_i64(h, v->m, DT_MH_COUNT, ++v->count)) != 0)
		return rc;
	return t.ref ? start_resize(h, v, &t) : 0;
}

/* The value of a put: *vs, or for bytes that the map keeps inline *iv.
 * Bytes too long for the entry, or a map that predates inline values,
 * get an object of their own, new in this block. */
static int put_value(uh_heap *h, const struct dt_map_view *v, const struct put_args *a,
		     struct uh_slot *vs, const struct dt_bytes **iv)
{
	const struct dt_bytes *b = a->bytes;
	int rc;

	*iv = NULL;
	if (!b)
		return uh_value_to_slot(h, a->val, 0, vs);
	if (v->inl && b->len <= UH_MAP_INLINE_MAX) {
		*iv = b;
		memset(vs, 0, sizeof(*vs));
		vs->tag = b->type == UH_T_STRING ? UH_T_ISTRING : UH_T_IBYTES;
		return 0;
	}
	vs->tag = b->type;
	rc = uh_alloc_raw(h, b->type == UH_T_STRING ? UH_CLASS_STRING : UH_CLASS_BYTES, b->len,
			  b->data, &vs->value);
	return rc;
}

static int put_body(uh_heap *h, void *arg)
{
	struct put_args *a = arg;
	const struct dt_bytes *iv;
	struct dt_map_view v;
	struct uh_slot vs;
	struct dt_find f;
	int rc;

	if ((rc = dt_map_view(h, a->m, 1, &v)) != 0 || (rc = uh_key_kind_check(v.kind, a->k)) != 0 ||
	    (rc = uh_tx_changed(h, a->m)) != 0)
		return rc;
	if ((rc = dt_find(h, &v, a->k, dt_key_hash(&v, a->k), &f)) != 0 ||
	    (rc = put_value(h, &v, a, &vs, &iv)) != 0)
		return rc;
	rc = f.entry.ref ? replace(h, &f, &vs, iv, a->flags) : insert(h, &v, &f, a->k, &vs, iv);
	if (rc && a->bytes && !iv)
		uh_tx_log_free(h, vs.value);	/* the object put_value made */
	if (rc == 0 && v.old.ref)
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

/* Unlink entry f->entry, free it (and its key object), count one less. */
static int unlink_entry(uh_heap *h, struct dt_map_view *v, const struct dt_find *f,
			struct uh_slot *val)
{
	int rc;

	if ((rc = dt_entry_value(h, &f->entry, val)) != 0)
		return rc;
	if (f->prev.ref)
		rc = entry_set_next(h, &f->prev, f->entry.next);
	else
		rc = dt_table_set(h, f->table, f->bucket, f->entry.next);
	if (rc || (rc = put_i64(h, v->m, DT_MH_COUNT, --v->count)) != 0)
		return rc;
	return entry_free(h, &f->entry);
}

static int remove_body(uh_heap *h, void *arg)
{
	struct remove_args *a = arg;
	struct dt_map_view v;
	struct uh_slot val;
	struct dt_find f;
	int rc;

	if ((rc = dt_map_view(h, a->m, 1, &v)) != 0 || (rc = uh_key_kind_check(v.kind, a->k)) != 0 ||
	    (rc = dt_find(h, &v, a->k, dt_key_hash(&v, a->k), &f)) != 0)
		return rc;
	if (!f.entry.ref)
		return uh_err_set(UH_ENOTFOUND, "uh_map_remove: key not in map %llu",
				  (unsigned long long)a->m);
	if ((rc = uh_tx_changed(h, a->m)) != 0 || (rc = unlink_entry(h, &v, &f, &val)) != 0 ||
	    (rc = uh_slot_free_old(h, &val, NULL, a->flags)) != 0)
		return rc;
	if (a->old)
		uh_slot_to_value(&val, a->old);
	return v.old.ref ? migrate_step(h, &v) : 0;
}

/* ---- new ---- */

struct new_args {
	uint32_t kind;
	uh_off out;
};

static int new_body(uh_heap *h, void *arg)
{
	struct new_args *a = arg;
	struct dt_table t;
	uh_off m;
	int rc;

	a->out = 0;
	if ((rc = table_new(h, DT_MAP_MIN_BUCKETS, &t)) != 0)
		return rc;
	if ((rc = uh_values_new(h, UH_CLASS_MAP, DT_MH_SLOTS, &m)) != 0) {
		uh_tx_log_free(h, t.ref);
		return rc;
	}
	/* Both objects are new in this block: written in place. */
	if ((rc = put_i64(h, m, DT_MH_KIND, a->kind | DT_KIND_WORDS | DT_KIND_INLINE)) != 0 ||
	    (rc = put_i64(h, m, DT_MH_COUNT, 0)) != 0 ||
	    (rc = put_ref(h, m, DT_MH_TABLE, t.ref)) != 0 ||
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
	if ((rc = uh_in_implicit_block(h, new_body, &a)) == 0)
		*out = a.out;
	return rc;
}

int uh_map_put(uh_heap *h, uh_off m, const uh_key *k, const uh_value *v, uint32_t flags)
{
	struct put_args a = { m, k, v, NULL, flags };
	int rc = uh_check_writable(h, "uh_map_put");

	if (rc || (rc = uh_key_check(k ? k->kind : 0, k)) != 0)
		return rc;
	if (!v)
		return uh_err_set(UH_EINVAL, "uh_map_put: value is NULL");
	if ((rc = uh_free_flags_check(flags, "uh_map_put")) != 0)
		return rc;
	return uh_in_implicit_block(h, put_body, &a);
}

int uh_map_remove(uh_heap *h, uh_off m, const uh_key *k, uh_value *old, uint32_t flags)
{
	struct remove_args a = { m, k, old, flags };
	int rc = uh_check_writable(h, "uh_map_remove");

	if (rc || (rc = uh_key_check(k ? k->kind : 0, k)) != 0)
		return rc;
	if ((rc = uh_free_flags_check(flags, "uh_map_remove")) != 0)
		return rc;
	return uh_in_implicit_block(h, remove_body, &a);
}

int uh_map_put_bytes(uh_heap *h, uh_off m, const uh_key *k, uint32_t type, const void *data,
		     size_t len, uint32_t flags)
{
	struct dt_bytes b = { type, data, len };
	struct put_args a = { m, k, NULL, &b, flags };
	size_t bad;
	int rc = uh_check_writable(h, "uh_map_put_bytes");

	if (rc || (rc = uh_key_check(k ? k->kind : 0, k)) != 0)
		return rc;
	if (type != UH_T_STRING && type != UH_T_BYTES)
		return uh_err_set(UH_EINVAL, "uh_map_put_bytes: type %u is not UH_T_STRING (%u) "
				  "or UH_T_BYTES (%u)", type, UH_T_STRING, UH_T_BYTES);
	if (!data && len)
		return uh_err_set(UH_EINVAL, "uh_map_put_bytes: data is NULL");
	if (len > UH_OBJ_SIZE_MASK)
		return uh_err_set(UH_EINVAL, "uh_map_put_bytes: %zu bytes do not fit an object",
				  len);
	if (type == UH_T_STRING && !uh_utf8_valid(data, len, &bad))
		return uh_err_set(UH_EUTF8, "string is not valid UTF-8 (at byte %zu)", bad);
	if ((rc = uh_free_flags_check(flags, "uh_map_put_bytes")) != 0)
		return rc;
	return uh_in_implicit_block(h, put_body, &a);
}
