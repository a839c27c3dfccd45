/*
 * check.c -- uh_heap_check: walk everything reachable from the roots and
 * check each object and each data type's structure. Read-only.
 *
 * Meant for a quiet heap (heapctl check): reads are plain loads outside a
 * block, so a concurrent writer can make it report a problem that is not
 * one. The walk uses an explicit stack and a visited set, so it is linear
 * in the reachable objects and never recurses.
 */
#include <stdlib.h>
#include <string.h>

#include "rootmap_read.h"
#include "uhint.h"

struct walk {
	uh_heap *h;
	struct u64map seen;
	struct u64vec stack;
	uint64_t objects;
};

/* Queue ref (found at from) if not seen; a bad ref is the first problem. */
static int visit(struct walk *w, uh_off ref, uint32_t want, uh_off from)
{
	int rc;

	if (ref == 0 || u64map_get(&w->seen, ref))
		return 0;
	if (!uh_obj_get(w->h, ref, want, &rc))
		return uh_err_set(UH_EINTERNAL, "object %llu refers to %llu: %s",
				  (unsigned long long)from, (unsigned long long)ref, uh_errmsg());
	if ((rc = u64map_put(&w->seen, ref, 1)) != 0 || (rc = u64vec_push(&w->stack, ref)) != 0)
		return uh_err_set(rc, "uh_heap_check: out of process memory");
	return 0;
}

static uint32_t want_of(uint32_t type, uint32_t ref_class)
{
	return type == UH_T_STRING ? UH_CLASS_STRING : type == UH_T_BYTES ? UH_CLASS_BYTES :
	       ref_class;
}

/* An inline field (FORMAT.md 3.2): its length within its capacity and
 * zeros after the value. It holds no reference. */
static int check_inline(struct walk *w, uh_off o, const struct uh_field_desc *f)
{
	const unsigned char *p = (const void *)(w->h->base + UH_REF_OFFSET(o) + f->offset);
	uint32_t n;

	memcpy(&n, p, UH_INLINE_LEN_SIZE);
	if (n > f->capacity)
		return uh_err_set(UH_EINTERNAL, "object %llu field '%.63s' holds %u bytes, its "
				  "capacity is %u", (unsigned long long)UH_REF_OFFSET(o), f->name,
				  n, f->capacity);
	for (uint32_t b = UH_INLINE_LEN_SIZE + n; b < UH_INLINE_LEN_SIZE + f->capacity; b++)
		if (p[b])	/* bound: capacity */
			return uh_err_set(UH_EINTERNAL, "object %llu field '%.63s' has a nonzero "
					  "byte past its %u-byte value",
					  (unsigned long long)UH_REF_OFFSET(o), f->name, n);
	return 0;
}

static int scan_record(struct walk *w, uh_off o, const struct uh_class_desc *d)
{
	for (uint32_t i = 0; i < d->nfields; i++) {	/* bound: nfields */
		const struct uh_field_desc *f = &d->fields[i];
		if (uh_type_is_inline(f->type)) {
			int rc = check_inline(w, o, f);
			if (rc)
				return rc;
		}
		if (!uh_type_is_ref(f->type))
			continue;
		uint64_t ref = *(const uint64_t *)(w->h->base + UH_REF_OFFSET(o) + f->offset);
		int rc = visit(w, ref, want_of(f->type, f->ref_class), o);
		if (rc)
			return rc;
	}
	return 0;
}

static int scan_slots(struct walk *w, uh_off o, uint32_t payload)
{
	const struct uh_slot *sl = (const void *)(w->h->base + UH_REF_OFFSET(o) + UH_OBJHDR_SIZE);
	for (uint64_t i = 0; i < payload / sizeof(*sl); i++) {	/* bound: payload */
		uint32_t t = uh_slot_type(sl[i].tag);
		if (t > UH_T_BYTES)
			return uh_err_set(UH_EINTERNAL, "object %llu slot %llu has bad type %u",
					  (unsigned long long)o, (unsigned long long)i, t);
		if (uh_type_is_ref(t)) {
			int rc = visit(w, sl[i].value, want_of(t, 0), o);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int scan_words(struct walk *w, uh_off o, const uint64_t *p, uint64_t n, uint32_t want,
		      int tombstones)
{
	for (uint64_t i = 0; i < n; i++) {	/* bound: n */
		if (tombstones && p[i] == UH_ROOT_TOMBSTONE)
			continue;
		int rc = visit(w, p[i], want, o);
		if (rc)
			return rc;
	}
	return 0;
}

/* The typed values of a packed object, where its header says. */
static int scan_packed(struct walk *w, uh_off o, uint32_t payload)
{
	const char *p = w->h->base + UH_REF_OFFSET(o) + UH_OBJHDR_SIZE;
	const struct uh_packed_hdr *ph = (const void *)p;

	if (!uh_packed_ok(ph, payload))
		return uh_err_set(UH_EINTERNAL, "packed object %llu keeps its values outside "
				  "its %u payload bytes", (unsigned long long)UH_REF_OFFSET(o),
				  payload);
	const uint8_t *types = (const uint8_t *)(p + ph->types_at);
	const uint64_t *vals = (const uint64_t *)(p + ph->vals_at);
	for (uint32_t i = 0; i < ph->nvals; i++) {	/* bound: nvals */
		if (types[i] > UH_T_BYTES)
			return uh_err_set(UH_EINTERNAL, "packed object %llu value %u has bad type %u",
					  (unsigned long long)UH_REF_OFFSET(o), i, types[i]);
		if (uh_type_is_ref(types[i])) {
			int rc = visit(w, vals[i], want_of(types[i], 0), o);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* The structure's own check, for the data types that have one. */
static int check_type(struct walk *w, uh_off o, uint32_t cls)
{
	int rc = 0;
	if (cls == UH_CLASS_MAP)
		rc = uh_map_check(w->h, o);
	else if (cls == UH_CLASS_SMAP)
		rc = uh_smap_check(w->h, o);
	return rc ? uh_err_set(rc, "object %llu: %s", (unsigned long long)o, uh_errmsg()) : 0;
}

static int scan(struct walk *w, uh_off o)
{
	const struct uh_objhdr *oh = (const void *)(w->h->base + UH_REF_OFFSET(o));
	uint32_t cls = uh_word_class(oh->class_word);
	const struct uh_class_desc *d = uh_class_desc(w->h, cls);
	uint32_t payload = oh->size & UH_OBJ_SIZE_MASK;
	int rc;

	if (!d)
		return uh_err_set(UH_EINTERNAL, "object %llu has unknown class %u",
				  (unsigned long long)UH_REF_OFFSET(o), cls);
	if ((rc = check_type(w, o, cls)) != 0)
		return rc;
	switch (d->kind) {
	case UH_K_RECORD:
		if (payload != d->payload_size)
			return uh_err_set(UH_EINTERNAL, "object %llu (%s) has %u payload bytes, "
					  "its class %u", (unsigned long long)o, d->name, payload,
					  d->payload_size);
		return scan_record(w, o, d);
	case UH_K_VALUES:
		return scan_slots(w, o, payload);
	case UH_K_REFTABLE:
		return scan_words(w, o, (const uint64_t *)(oh + 1), payload / 8, 0, 1);
	case UH_K_PACKED:
		return scan_packed(w, o, payload);
	case UH_K_ARRAY: {
		const struct uh_array_hdr *a = (const void *)(oh + 1);
		if (payload < sizeof(*a) || a->elem_type == 0 || a->elem_type > UH_T_BYTES ||
		    a->length > (payload - sizeof(*a)) / uh_type_size(a->elem_type))
			return uh_err_set(UH_EINTERNAL, "array %llu has a bad header",
					  (unsigned long long)o);
		if (!uh_type_is_ref(a->elem_type))
			return 0;
		return scan_words(w, o, (const uint64_t *)(a + 1), a->length,
				  want_of(a->elem_type, 0), 0);
	}
	default:
		return 0;	/* strings and bytes hold no references */
	}
}

int uh_heap_check(uh_heap *h, uint64_t *objects)
{
	struct walk w = { .h = h };
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (h->tx.depth)
		return uh_err_set(UH_ESTATE, "uh_heap_check: not inside a block");
	rc = visit(&w, h->hdr->rootmap_off, 0, 0);
	while (!rc && w.stack.n) {	/* bound: each object is pushed once */
		uh_off o = w.stack.v[--w.stack.n];
		w.objects++;
		rc = scan(&w, o);
	}
	if (objects)
		*objects = w.objects;
	u64map_free(&w.seen);
	free(w.stack.v);
	return rc;
}
