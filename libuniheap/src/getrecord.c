/*
 * getrecord.c -- a map lookup and the copy of the record it finds, in one
 * call (uh_map_get_record, uh_smap_get_record): what a binding's "read the
 * record stored under this key" is, without a crossing per step; and the
 * write of one inline field of that record (uh_map_set_inline,
 * uh_smap_set_inline), the lookup and the write in one block; and a new
 * record stored under a key (uh_map_put_record, uh_smap_put_record): the
 * allocation, its inline fields and the put in one block; and the records
 * of a sorted-map scan copied a leaf at a time (uh_smap_next_records).
 *
 * The lookup and the copy are two reads. References carry their object's
 * generation, so a record freed (and its slot reused) between them fails
 * the copy with UH_EFREED rather than copying another object; a record
 * is freed only by the change that gives its key another value or removes
 * it, so one still valid at its copy was still the key's value then: the
 * pair reads as one read at the instant of the copy. Outside a block a
 * lost race is looked up again (a bounded number of times); inside one
 * the block's snapshot cannot lose it, and UH_EFREED is returned as is.
 */
#include "smap_int.h"
#include "uhint.h"
#include "value.h"

/* Entries a scan's call reads at most: more than a sorted-map leaf holds
 * (SM_F), as a call reads one leaf. */
#define SCAN_RECORDS_MAX 32

/* Lookups after a record was freed under its copy: each one means another
 * session replaced the key's record meanwhile. */
#define GET_RECORD_TRIES 64

/* A record's copy asks for its lines first (prefetch_record): as many as
 * the handle's last record copied spanned (a map's records are mostly of
 * one class), at most PREFETCH_LINES_MAX, PREFETCH_LINES_FIRST before the
 * first; a scan asks PREFETCH_AHEAD records on. */
#define PREFETCH_AHEAD 2
#define PREFETCH_LINES_FIRST 4
#define PREFETCH_LINES_MAX 32

/* Ask for the lines of the record v references, if any, ahead of its
 * copy (as many as the handle's last record spanned): its header, read
 * first, and the payload's lines would each wait for the one before;
 * asked at once they overlap, and in a scan, asked a few records ahead,
 * they overlap the copies before them too (measured on 1 KiB records
 * beyond the cache: a get of one a quarter less time, a scan a third). A
 * prefetch never faults; an offset past the mapping is left out all the
 * same (the copy reports it). */
UH_PREFETCH_FN void prefetch_record(uh_heap *h, const uh_value *v)
{
	uint32_t lines = h->record_lines ? h->record_lines : PREFETCH_LINES_FIRST;
	uh_off off = UH_REF_OFFSET(v->u.ref);

	if (v->type == UH_T_REF && off < __atomic_load_n(&h->size, __ATOMIC_RELAXED))
		uh_prefetch(h->base + off, 64 * lines);
}

/* The lines a record of len payload bytes spans (from its header on),
 * at most PREFETCH_LINES_MAX. */
static uint32_t record_lines(size_t len)
{
	size_t lines = (UH_OBJHDR_SIZE + len + 63) / 64;
	return lines < PREFETCH_LINES_MAX ? (uint32_t)lines : PREFETCH_LINES_MAX;
}

/* The record a map value v references, copied to dst (its class into
 * *class_id, its reference into *ref): as uh_record_read, or UH_ETYPE
 * when v is not a reference to one. */
static int value_record(uh_heap *h, const uh_value *v, void *dst, size_t cap, size_t *len,
			uint32_t *class_id, uh_off *ref)
{
	if (v->type != UH_T_REF || !v->u.ref)
		return uh_err_set(UH_ETYPE, "the value under the key is not a record");
	*ref = v->u.ref;
	prefetch_record(h, v);
	int rc = uh_obj_class(h, v->u.ref, class_id);
	if (rc == 0 && ((rc = uh_record_read(h, v->u.ref, dst, cap, len)) == 0 || rc == UH_ERANGE))
		h->record_lines = record_lines(*len);
	return rc;
}

/* The record under key k of m, copied (its reference into *ref), looked
 * up again while it is freed under the copy outside a block. */
static int get_record(uh_heap *h, uh_off m, int sorted, const uh_key *k, void *dst,
		      size_t cap, size_t *len, uint32_t *class_id, uh_off *ref)
{
	if (!len || !class_id || (!dst && cap))
		return uh_err_set(UH_EINVAL, "get_record: NULL argument");
	for (int t = 0;; t++) {	/* bound: GET_RECORD_TRIES */
		uh_value v;
		int rc = sorted ? uh_smap_get(h, m, k, &v) : uh_map_get(h, m, k, &v);

		if (rc == 0)
			rc = value_record(h, &v, dst, cap, len, class_id, ref);
		if (rc != UH_EFREED || h->tx.depth || t + 1 >= GET_RECORD_TRIES)
			return rc;
	}
}

int uh_map_get_record(uh_heap *h, uh_off m, const uh_key *k, void *dst, size_t cap,
		      size_t *len, uint32_t *class_id)
{
	uh_off ref;

	return get_record(h, m, 0, k, dst, cap, len, class_id, &ref);
}

int uh_smap_get_record(uh_heap *h, uh_off m, const uh_key *k, void *dst, size_t cap,
		       size_t *len, uint32_t *class_id)
{
	uh_off ref;

	return get_record(h, m, 1, k, dst, cap, len, class_id, &ref);
}

struct set_field_op {
	uh_off m;
	int sorted;
	const uh_key *k;
	const char *field;
	const void *data;
	size_t len;
};

/* In the caller's block or an implicit one: the record the key has at
 * the commit is the one written. */
static int set_field_body(uh_heap *h, void *arg)
{
	const struct set_field_op *s = arg;
	uh_value v;
	uint32_t cls = 0, index = 0;
	int rc = s->sorted ? uh_smap_get(h, s->m, s->k, &v) : uh_map_get(h, s->m, s->k, &v);

	if (rc)
		return rc;
	if (v.type != UH_T_REF || !v.u.ref)
		return uh_err_set(UH_ETYPE, "the value under the key is not a record");
	rc = uh_obj_class(h, v.u.ref, &cls);
	if (rc)
		return rc;
	if (uh_field_find(h, cls, s->field, &index) != 0)   /* not UH_ENOTFOUND: that is the key's */
		return uh_err_set(UH_EINVAL, "the record under the key has no field '%s'", s->field);
	return uh_set_inline(h, v.u.ref, index, s->data, s->len);
}

static int set_field(uh_heap *h, uh_off m, int sorted, const uh_key *k, const char *field,
		     const void *data, size_t len)
{
	if (!k || !field || (!data && len))
		return uh_err_set(UH_EINVAL, "set_inline: NULL argument");
	struct set_field_op s = { m, sorted, k, field, data, len };
	return uh_in_implicit_block(h, set_field_body, &s);
}

int uh_map_set_inline(uh_heap *h, uh_off m, const uh_key *k, const char *field,
		      const void *data, size_t len)
{
	return set_field(h, m, 0, k, field, data, len);
}

int uh_smap_set_inline(uh_heap *h, uh_off m, const uh_key *k, const char *field,
		       const void *data, size_t len)
{
	return set_field(h, m, 1, k, field, data, len);
}

struct put_record_op {
	uh_off m;
	int sorted;
	const uh_key *k;
	uint32_t class_id;
	const uh_inline_value *vals;
	uint32_t n;
	uint32_t flags;
};

static int put_record_body(uh_heap *h, void *arg)
{
	const struct put_record_op *p = arg;
	uh_off obj = 0;
	int rc = uh_alloc(h, p->class_id, &obj);

	if (rc || (rc = uh_record_set_inlines(h, obj, p->vals, p->n)) != 0)
		return rc;
	uh_value v = { .type = UH_T_REF, .u.ref = obj };
	return p->sorted ? uh_smap_put(h, p->m, p->k, &v, p->flags)
			 : uh_map_put(h, p->m, p->k, &v, p->flags);
}

static int put_record(uh_heap *h, uh_off m, int sorted, const uh_key *k, uint32_t class_id,
		      const uh_inline_value *vals, uint32_t n, uint32_t flags)
{
	if (!k || (!vals && n))
		return uh_err_set(UH_EINVAL, "put_record: NULL argument");
	struct put_record_op p = { m, sorted, k, class_id, vals, n, flags };
	return uh_in_implicit_block(h, put_record_body, &p);
}

int uh_map_put_record(uh_heap *h, uh_off m, const uh_key *k, uint32_t class_id,
		      const uh_inline_value *vals, uint32_t n, uint32_t flags)
{
	return put_record(h, m, 0, k, class_id, vals, n, flags);
}

int uh_smap_put_record(uh_heap *h, uh_off m, const uh_key *k, uint32_t class_id,
		       const uh_inline_value *vals, uint32_t n, uint32_t flags)
{
	return put_record(h, m, 1, k, class_id, vals, n, flags);
}

/* The key's record now, looked up again by key after the scan's copy of
 * it was freed (outside a block: another session replaced or removed
 * it). The key's bytes may lie in a leaf the writer may change: the
 * lookup takes a copy of its own. */
static int record_again(uh_heap *h, uh_off m, const uh_key *key, void *dst, size_t cap,
			size_t *len, uint32_t *cls, uh_off *ref)
{
	struct sm_kbuf kb;
	const uh_key *k = key;

	if (key->kind != UH_KEY_I64) {	/* an i64 key is all in *key */
		sm_kbuf_set(&kb, key->kind, key->data, key->len);
		k = &kb.k;
	}
	return get_record(h, m, 1, k, dst, cap, len, cls, ref);
}

/* Copy the record of one scanned entry into dst + *at; 0 or UH_ERANGE
 * (in r->status), UH_ENOTFOUND when its key is gone, or an error. */
static int scan_record(uh_heap *h, uh_off m, const uh_value *v, char *dst, size_t cap,
		       size_t *at, uh_scan_record *r)
{
	size_t len = 0;
	int rc = value_record(h, v, dst + *at, cap - *at, &len, &r->class_id, &r->ref);

	if (rc == UH_EFREED && !h->tx.depth)
		rc = record_again(h, m, &r->key, dst + *at, cap - *at, &len, &r->class_id,
				  &r->ref);
	if (rc && rc != UH_ERANGE)
		return rc;
	r->status = rc;
	r->at = *at;
	r->len = len;
	if (rc == 0)
		*at = (*at + len + 7) & ~(size_t)7;
	return 0;
}

int uh_smap_next_records(uh_heap *h, uh_off m, uh_iter *it, const uh_key *to, uint32_t flags,
			 void *dst, size_t cap, uh_scan_record *recs, uint32_t max,
			 uint32_t *n)
{
	uh_key keys[SCAN_RECORDS_MAX];
	uh_value vals[SCAN_RECORDS_MAX];
	size_t at = 0;
	uint32_t got = 0;

	if (!n || !recs || (!dst && cap) || max < 1)
		return uh_err_set(UH_EINVAL, "scan records: NULL argument or max 0");
	*n = 0;
	if (max > SCAN_RECORDS_MAX)
		max = SCAN_RECORDS_MAX;
	while (got == 0) {	/* bound: the scan's end (each round takes >= 1 entry) */
		uint32_t k = 0;
		int rc = uh_smap_next_until(h, m, it, to, flags, keys, vals, max, &k);
		if (rc)
			return rc;
		for (uint32_t i = 0; i < k && i < PREFETCH_AHEAD; i++)	/* bound: PREFETCH_AHEAD */
			prefetch_record(h, &vals[i]);
		for (uint32_t i = 0; i < k; i++) {	/* bound: max */
			if (i + PREFETCH_AHEAD < k)
				prefetch_record(h, &vals[i + PREFETCH_AHEAD]);
			uh_scan_record *r = &recs[got];
			r->key = keys[i];
			rc = scan_record(h, m, &vals[i], dst, cap, &at, r);
			if (rc == UH_ENOTFOUND)
				continue;	/* removed since the scan read it */
			if (rc)
				return rc;
			got++;
		}
	}
	*n = got;
	return 0;
}
