/*
 * map_iter.c -- uh_map_next: iteration over a hash map's buckets.
 *
 * Order: during a resize, the old table's buckets not yet migrated
 * (cursor .. old_size-1), then every bucket of the current table; else
 * the current table's buckets. Inside a chain, chain order.
 *
 * The iterator (uh_iter.s) remembers where it is, not what it saw:
 *   s[0] the map it was started on (0: not started)
 *   s[1] phase: 1 old table, 2 current table, 3 done
 *   s[2] the table the phase walks (tells a table swapped since)
 *   s[3] bucket index in that table
 *   s[4] the entry returned last from that bucket (0: none yet)
 *   s[5] how many entries of that bucket were returned
 *   s[6] the hash of the key returned last, s[7] 1 when s[6] is set
 * Each call is one atomic read of the map (its own snapshot, or the
 * caller's block). Between calls the map may change: then the iterator
 * finds its place again by the entry offset (never dereferencing it: it
 * only compares it with what the chain holds now), or, if that entry is
 * gone, by its position, or, if its table is gone, starts that table over.
 * So it may skip or repeat entries changed meanwhile, but every entry it
 * returns is a live entry read through validated reads. Removing the
 * entry just returned, between calls, skips nothing; replacing its value
 * repeats nothing: a put of an inline value puts a new entry in the old
 * one's place (map.c), which the iterator knows by its key's hash.
 */
#include <string.h>

#include "map_int.h"

enum { IT_MAP, IT_PHASE, IT_TABLE, IT_BUCKET, IT_LAST, IT_NTH, IT_HASH, IT_HASHED };
enum { PH_OLD = 1, PH_TABLE = 2, PH_DONE = 3 };

struct next_args {
	uh_off m;
	uh_iter start;		/* where the call began (re-runs start here) */
	uh_iter it;		/* where it ends */
	int end;		/* no more entries (not a failure of the block) */
	uh_key *k;
	uh_value *val;
};

static void it_at(uint64_t *s, uint64_t phase, uh_off table, uint64_t bucket)
{
	s[IT_PHASE] = phase;
	s[IT_TABLE] = table;
	s[IT_BUCKET] = bucket;
	s[IT_LAST] = 0;
	s[IT_NTH] = 0;
	s[IT_HASH] = s[IT_HASHED] = 0;
}

/* From the start: the old table's unmigrated buckets first, if any. */
static void it_start(uint64_t *s, const struct dt_map_view *v)
{
	if (v->old.ref)
		it_at(s, PH_OLD, v->old.ref, v->cursor);
	else
		it_at(s, PH_TABLE, v->table.ref, 0);
}

/* Bring the iterator in line with the map as it is now. */
static void it_resync(uint64_t *s, const struct dt_map_view *v)
{
	if (s[IT_PHASE] == PH_OLD && s[IT_TABLE] != v->old.ref) {
		/* That resize finished: its entries are all in the table. */
		it_at(s, PH_TABLE, v->table.ref, 0);
	} else if (s[IT_PHASE] == PH_TABLE && s[IT_TABLE] != v->table.ref) {
		if (s[IT_TABLE] != v->old.ref) {
			it_start(s, v);	/* two resizes since: start over */
			return;
		}
		s[IT_PHASE] = PH_OLD;	/* a resize began: our table is the old one */
	}
	if (s[IT_PHASE] == PH_OLD && s[IT_BUCKET] < v->cursor) {
		/* Migrated meanwhile: the rest of it comes in phase 2. */
		it_at(s, PH_OLD, v->old.ref, v->cursor);
	}
}

/* Whether entry d, now at the position of the entry returned last, which
 * is gone, took its place with the same key (a replaced inline value):
 * then d was returned already, as that key. */
static int same_as_last(uh_heap *h, const struct dt_map_view *v, const uint64_t *s,
			const struct dt_entry *d, int *same)
{
	uint64_t hash;
	int rc;

	*same = 0;
	if (!s[IT_HASHED] || (rc = dt_entry_hash(h, v, d, &hash)) != 0)
		return s[IT_HASHED] ? rc : 0;
	*same = hash == s[IT_HASH];
	return 0;
}

/* In the chain of bucket b of table t, the first entry not returned
 * yet: the one after s[IT_LAST] if that is still there, else the one now
 * at s[IT_LAST]'s position (it was removed: those after it moved up),
 * or the one after that if it holds s[IT_LAST]'s key (it was replaced).
 * out->ref = 0 when the bucket is done; *pos = its position in the chain. */
static int resume(uh_heap *h, const struct dt_map_view *v, const uint64_t *s,
		  const struct dt_table *t, uint64_t b, struct dt_entry *out, uint64_t *pos)
{
	struct dt_entry d, by_pos = { 0 };
	uh_off e, parent = t->ref;
	uint64_t at = dt_table_at(t, b), by_n = 0;
	int rc, take = 0;

	out->ref = 0;
	if ((rc = dt_table_get(h, v->m, t, b, &e)) != 0)
		return rc;
	for (uint64_t n = 0; e; n++) {	/* bound: count entries */
		if (n >= v->count)
			return uh_err_set(UH_EINTERNAL, "map %llu: a chain of bucket %llu is "
					  "longer than the map's %llu entries (a cycle?)",
					  (unsigned long long)v->m, (unsigned long long)b,
					  (unsigned long long)v->count);
		if ((rc = dt_entry_load(h, v, parent, at, e, &d)) != 0)
			return rc;
		if (take || !s[IT_LAST]) {
			*out = d;
			*pos = n;
			return 0;
		}
		if (e == s[IT_LAST]) {
			take = 1;
		} else if (n + 1 == s[IT_NTH] && !by_pos.ref) {
			int same;
			if ((rc = same_as_last(h, v, s, &d, &same)) != 0)
				return rc;
			by_pos = d;
			by_n = n;
			take = same;	/* then the next one */
		}
		parent = e;
		at = dt_entry_next_at(&d);
		e = d.next;
	}
	if (!take) {
		*out = by_pos;
		*pos = by_n;
	}
	return 0;
}

/* Fill the caller's key and value from entry e. The key's bytes are
 * copied while this read is still to be validated: once it returns, a
 * put of the key (which relinks a new entry when a value is inline) or a
 * remove may free e under a caller still reading them. */
static int give(uh_heap *h, const struct next_args *a, const struct dt_entry *e)
{
	static __thread unsigned char keybuf[UH_KEY_MAX_LEN];
	struct uh_slot s;
	int rc;

	if ((rc = dt_entry_value(h, e, &s)) != 0)
		return rc;
	if (a->k) {
		*a->k = e->key;
		if (e->key.len)
			memcpy(keybuf, e->key.data, e->key.len);
		a->k->data = keybuf;
	}
	if (a->val)
		uh_slot_to_value(&s, a->val);
	return 0;
}

static int next_body(uh_heap *h, void *arg)
{
	struct next_args *a = arg;
	uint64_t *s = a->it.s;
	struct dt_map_view v;
	int rc;

	a->it = a->start;
	if ((rc = dt_map_view(h, a->m, 0, &v)) != 0)
		return rc;
	a->end = 0;
	if (s[IT_PHASE] == PH_DONE) {
		a->end = 1;
		return 0;
	}
	if (s[IT_PHASE] == 0)
		it_start(s, &v);
	else
		it_resync(s, &v);
	/* bound: one round per bucket of both tables, plus the switch */
	for (uint64_t round = 0; round <= v.old.size + v.table.size; round++) {
		const struct dt_table *t = s[IT_PHASE] == PH_OLD ? &v.old : &v.table;
		struct dt_entry e;
		uint64_t pos = 0;
		if (s[IT_BUCKET] >= t->size) {
			if (s[IT_PHASE] == PH_TABLE)
				break;
			it_at(s, PH_TABLE, v.table.ref, 0);
			continue;
		}
		if ((rc = resume(h, &v, s, t, s[IT_BUCKET], &e, &pos)) != 0)
			return rc;
		if (e.ref) {
			if ((rc = give(h, a, &e)) != 0 ||
			    (rc = dt_entry_hash(h, &v, &e, &s[IT_HASH])) != 0)
				return rc;
			s[IT_LAST] = e.ref;
			s[IT_NTH] = pos + 1;
			s[IT_HASHED] = 1;
			return 0;
		}
		s[IT_BUCKET]++;
		s[IT_LAST] = s[IT_NTH] = s[IT_HASHED] = 0;
	}
	it_at(s, PH_DONE, 0, 0);
	a->end = 1;
	return 0;
}

int uh_map_next(uh_heap *h, uh_off m, uh_iter *it, uh_key *k, uh_value *v)
{
	struct next_args a = { .m = m, .k = k, .val = v };
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (!it)
		return uh_err_set(UH_EINVAL, "uh_map_next: iterator is NULL");
	if (it->s[IT_MAP] && it->s[IT_MAP] != m)
		return uh_err_set(UH_EINVAL, "uh_map_next: iterator was started on map %llu, "
				  "not on map %llu", (unsigned long long)it->s[IT_MAP],
				  (unsigned long long)m);
	if (it->s[IT_PHASE] > PH_DONE)
		return uh_err_set(UH_EINVAL, "uh_map_next: iterator state is garbage (phase %llu)",
				  (unsigned long long)it->s[IT_PHASE]);
	a.start = *it;
	if ((rc = uh_opt_run(h, next_body, &a)) != 0)
		return rc;
	*it = a.it;
	it->s[IT_MAP] = m;
	return a.end ? uh_err_set(UH_ENOTFOUND, "uh_map_next: no more entries") : 0;
}
