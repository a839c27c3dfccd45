/*
 * map_get.c -- reads of a hash map: uh_map_get, uh_map_len and
 * uh_map_key_kind. Outside blocks a get tries two shortcuts before the
 * general lookup (dt_find, map.c) in an optimistic read: the lean path,
 * with the header's view kept from an earlier read and no read set, and
 * the fast path, one pass over a chain of inline-key entries. Both read
 * entries through dt_ie_step and hand anything unusual to the general
 * code, which says what it is. The layout is at the top of map.c.
 */
#include <string.h>

#include "map_int.h"

struct get_args {
	uh_off m;
	const uh_key *k;
	uint64_t hash;
	uh_value *val;
	int missing;	/* set instead of failing: see uh_map_get */
};

/* get_fast could not answer: run the general code. */
#define GET_GENERAL 1

/* Outside blocks (an optimistic try), the common case in one pass with
 * none of dt_find()'s layers: a reference table, entries that keep their key
 * inline. Each entry still goes through uh_obj_get (its slot, noted before
 * its first byte is read, valid bit, generation) and the same bounds as
 * dt_entry_load; anything else (the slot encoding, a key of a bad length,
 * a chain longer than the count, a bad reference) answers GET_GENERAL, and
 * the general code, reading the same objects, says what it is. 0 with
 * *found (and *s when found), or the error of a lost try. */
static int get_fast(uh_heap *h, const struct dt_map_view *v, const struct get_args *a,
		    struct uh_slot *s, int *found)
{
	const uh_key *k = a->k;
	size_t klen;
	const void *kd = uh_key_bytes(k, &klen);
	const struct dt_table *t;
	uint64_t b;
	uh_off e;
	int rc;

	if (k->kind != v->kind)
		return GET_GENERAL;
	dt_map_bucket_of(v, a->hash, &t, &b);
	if (!t->refs)
		return GET_GENERAL;
	if ((rc = uh_tx_read(h, t->ref, t->ref + dt_table_at(t, b), &e, 8)) != 0)
		return rc;
	for (uint64_t n = 0; e; n++) {	/* bound: count entries */
		const struct uh_objhdr *o;
		uh_off at = e;
		if (n >= v->count || !(o = uh_obj_get(h, e, 0, &rc)) ||
		    uh_word_class(__atomic_load_n(&o->class_word, __ATOMIC_RELAXED)) !=
			    UH_CLASS_MAP_IENTRY)
			return GET_GENERAL;
		int step = dt_ie_step(at, o, v, kd, klen, s, &e);
		if (step < 0)
			return GET_GENERAL;
		if (step) {
			*found = 1;
			return 0;
		}
	}
	*found = 0;
	return 0;
}

static int get_body(uh_heap *h, void *arg)
{
	struct get_args *a = arg;
	struct dt_map_view v;
	struct uh_slot s;
	struct dt_find f;
	int found = 0, rc;

	if ((rc = dt_map_view(h, a->m, 0, &v)) != 0)
		return rc;
	a->hash = dt_key_hash(&v, a->k);
	if (h->opt.on && (rc = get_fast(h, &v, a, &s, &found)) != GET_GENERAL) {
		a->missing = !found;
		if (rc == 0 && found && a->val)
			uh_slot_to_value(&s, a->val);
		return rc;
	}
	if ((rc = uh_key_kind_check(v.kind, a->k)) != 0 ||
	    (rc = dt_find(h, &v, a->k, a->hash, &f)) != 0)
		return rc;
	a->missing = !f.entry.ref;
	if (!f.entry.ref)
		return 0;
	if ((rc = dt_entry_value(h, &f.entry, &s)) != 0)
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

int uh_map_key_kind(uh_heap *h, uh_off m, uint32_t *key_kind)
{
	struct header_args a = { .m = m };
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (!key_kind)
		return uh_err_set(UH_EINVAL, "uh_map_key_kind: key_kind is NULL");
	if ((rc = uh_opt_run(h, header_body, &a)) == 0)
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
	if ((rc = uh_opt_run(h, header_body, &a)) == 0)
		*len = a.v.count;
	return rc;
}

/* ---- get outside blocks, lean ---- */

/* What get_lean notes: the header, the table, up to six entries. */
#define LEAN_MAX 8

/* Entry e, checked as dt_entry_load checks an inline-key entry (valid,
 * its generation, its class; ie_step checks its lengths), its lock word
 * noted in *w first;
 * else NULL. No arena lookup: e was read from a table or entry the final
 * check vouches for, so it names a live entry if that check passes, and
 * until then only the bounds of what is read matter (uh_obj_in_map). */
static const struct uh_objhdr *lean_entry(uh_heap *h, uh_off e, uint64_t *w)
{
	const struct uh_objhdr *o = uh_obj_in_map(h, e, 0);
	uint64_t v;
	uint32_t payload;

	if (!o || !uh_lock_note(h, UH_REF_OFFSET(e), w, &v) ||
	    !uh_obj_live_in_place(h, o, e, UH_CLASS_MAP_IENTRY, &payload))
		return NULL;
	return o;
}

/* Where a lean get looks: the header's view kept from an earlier read,
 * the lock word it was kept at, and the bucket of the key's hash in it
 * (hashed as that view says). */
struct lean {
	struct dt_map_view v;
	uint64_t kept_word;
	const struct dt_table *t;	/* in v */
	uint64_t b;
};

/* Outside blocks, with a view of m kept: fill *l and start loading the
 * bucket's line, so that the cache miss overlaps the work before the
 * lookup (a prefetch reads nothing and never faults; the view may be
 * stale, get_lean checks it). 0 when there is no view to go by. */
static int lean_begin(uh_heap *h, uh_off m, const uh_key *k, struct lean *l)
{
	const void *kept = h->tx.depth ? NULL : uh_opt_kept(h, m, UH_CLASS_MAP, &l->kept_word);

	if (!kept)
		return 0;
	memcpy(&l->v, kept, sizeof(l->v));
	dt_map_bucket_of(&l->v, dt_key_hash(&l->v, k), &l->t, &l->b);
	__builtin_prefetch((const void *)((uintptr_t)h->base + UH_REF_OFFSET(l->t->ref) +
					  dt_table_at(l->t, l->b)));
	return 1;
}

/* A get outside blocks in the common case, without an optimistic try's
 * bookkeeping: the header's view kept from an earlier read (optread.c), a
 * reference table, a short chain of inline-key entries, no commit being
 * applied to them. The protocol is uh_opt_run's (optread.c says why it is
 * linearizable): every object's lock word is loaded before its first
 * byte, and after an acquire fence every object must pass uh_lock_still;
 * the header's bytes must still be the version its view was kept at, so
 * the view (table, sizes, count) is the header's state too. Anything else
 * answers GET_GENERAL and the general path runs, which retries, waits for
 * appliers or reports damage. 0 with *found (and *s when found). */
static int get_lean(uh_heap *h, uh_off m, const struct lean *l, const uh_key *k,
		    struct uh_slot *s, int *found)
{
	uint64_t obj[LEAN_MAX], word[LEAN_MAX], ver;
	size_t klen;
	const void *kd = uh_key_bytes(k, &klen);
	const uint64_t kept_word = l->kept_word;
	const struct dt_map_view *v = &l->v;
	const struct dt_table *t = l->t;
	uint32_t n = 0;
	uh_off e;

	if (v->kind != k->kind || !t->refs)
		return GET_GENERAL;
	/* The view is the header's state at kept_word: the table it names is
	 * live and of that size while the word stays (freeing or replacing
	 * the table writes the header). */
	obj[n] = UH_REF_OFFSET(m);
	if (!uh_lock_note(h, obj[n], &word[n], &ver) ||
	    ver != (uh_lock_is_locked(kept_word) ? uh_lock_old_version(kept_word) : kept_word))
		return GET_GENERAL;
	obj[++n] = UH_REF_OFFSET(t->ref);
	if (!uh_lock_note(h, obj[n], &word[n], &ver))
		return GET_GENERAL;
	uh_load(&e, h->base + obj[n] + dt_table_at(t, l->b), 8);
	*found = 0;
	while (e) {	/* bound: LEAN_MAX - 2 entries */
		if (++n == LEAN_MAX || n - 2 >= v->count)
			return GET_GENERAL;
		const struct uh_objhdr *o = lean_entry(h, e, &word[n]);
		if (!o)
			return GET_GENERAL;
		obj[n] = UH_REF_OFFSET(e);
		int step = dt_ie_step(e, o, v, kd, klen, s, &e);
		if (step < 0)
			return GET_GENERAL;
		if (step) {
			*found = 1;
			break;
		}
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i <= n; i++)	/* bound: LEAN_MAX */
		if (!uh_lock_still(h, obj[i], word[i]))
			return GET_GENERAL;
	h->st.opt_reads++;
	return 0;
}

int uh_map_get(uh_heap *h, uh_off m, const uh_key *k, uh_value *v)
{
	struct get_args a = { m, k, 0, v, 0 };
	int found, rc = uh_check_handle(h);
	struct uh_slot s;
	struct lean l;

	if (rc || (rc = uh_key_check_shape(k ? k->kind : 0, k)) != 0)
		return rc;
	/* The UTF-8 check runs while the bucket's line is on its way. */
	int lean = lean_begin(h, m, k, &l);
	if ((rc = uh_key_check_utf8(k)) != 0)
		return rc;
	if (lean && get_lean(h, m, &l, k, &s, &found) == 0) {
		if (!found)
			return uh_err_set(UH_ENOTFOUND, "uh_map_get: key not in map %llu",
					  (unsigned long long)m);
		if (v)
			uh_slot_to_value(&s, v);
		uh_prefetch_value(h, &s);
		return 0;
	}
	/* A miss is an answer, not a failure: the read-only block ends
	 * normally instead of counting as an aborted one. */
	if ((rc = uh_opt_run(h, get_body, &a)) == 0 && a.missing)
		rc = uh_err_set(UH_ENOTFOUND, "uh_map_get: key not in map %llu",
				(unsigned long long)m);
	return rc;
}
