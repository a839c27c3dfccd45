/*
 * copy.c -- string and bytes values copied out of the mapping for the
 * bindings (uniheap.h, uh_copy_values): the one loop that reads where
 * values are kept, copies each string or bytes object, and reads again
 * while one was replaced under its copy.
 *
 * Why a copy is checked after it is made: outside a block nothing holds
 * a value still. A commit that replaces a string or bytes value frees the
 * old object with it, and the slot may then be reused for a new object.
 * The allocator writes the new generation into the header before the new
 * object's bytes (uniheap.h, "direct"), so a copy whose object, after an
 * acquire fence, still has the header words it had before the copy (valid
 * bit and generation) holds the bytes of that object, which never change
 * while it lives. Otherwise the place the reference came from has changed
 * too (or is changing: its commit is being applied), and reading it again
 * gives the new value; UH_READ_TRIES bounds how often.
 *
 * Inside a block the block's snapshot decides: a reference that names a
 * freed object means a commit made the block's read stale (uh_obj_get:
 * the block is doomed with UH_ECONFLICT) or the caller's own free.
 */
#include <stdio.h>

#include "uhint.h"

/* A string or bytes value: an object's or an inline one. */
static int has_bytes(uint32_t type)
{
	return type == UH_T_STRING || type == UH_T_BYTES || uh_type_is_inline(type);
}

/* The object holding string or bytes value v's bytes (NULL with *rc), and
 * where they lie in it: an object's payload, or an inline value's span of
 * its map entry, which must lie inside the payload past the entry's
 * fixed part (map_int.h: a damaged or forged value names no other
 * bytes). */
static const struct uh_objhdr *holder(uh_heap *h, const uh_value *v, uint32_t *at,
				      uint32_t *len, int *rc)
{
	uint32_t cls = uh_type_is_inline(v->type) ? UH_CLASS_MAP_IENTRY :
		       v->type == UH_T_STRING ? UH_CLASS_STRING : UH_CLASS_BYTES;
	const struct uh_objhdr *o = uh_obj_get(h, v->u.ref, cls, rc);

	if (!o)
		return NULL;
	uint32_t payload = __atomic_load_n(&o->size, __ATOMIC_ACQUIRE) & UH_OBJ_SIZE_MASK;
	*at = UH_OBJHDR_SIZE;
	*len = payload;
	if (!uh_type_is_inline(v->type))
		return o;
	*at = UH_VALUE_AT(v);
	*len = UH_VALUE_LEN(v);
	if (*at < UH_OBJHDR_SIZE + UH_MAP_ENTRY_KEY_AT || *at + *len > UH_OBJHDR_SIZE + payload) {
		*rc = uh_err_set(UH_EINVAL, "inline value at %u (%u bytes) lies outside map entry "
				 "%llu: not a value a map returned", *at, *len,
				 (unsigned long long)UH_REF_OFFSET(v->u.ref));
		return NULL;
	}
	return o;
}

/* Copy value i (a string or bytes reference, or an inline value) with
 * copy. 0, or an error that stands; *replaced = 1 (outside a block) when
 * the object was freed before or during the copy: the whole set is read
 * again. */
static int copy_one(uh_heap *h, const uh_value *v, uint32_t i, uh_bytes_copy_fn copy,
		    void *arg, int *replaced)
{
	uint32_t at, len;
	int rc;
	const struct uh_objhdr *o = holder(h, v, &at, &len, &rc);

	if (!o) {
		*replaced = rc == UH_EFREED && !h->tx.depth;
		return rc;
	}
	uint32_t word = __atomic_load_n(&o->class_word, __ATOMIC_ACQUIRE);
	uint32_t size = __atomic_load_n(&o->size, __ATOMIC_ACQUIRE);
	int crc = 0;

	/* Freed between uh_obj_get and these loads: no copy, the check fails. */
	if ((size & UH_OBJ_VALID) && uh_word_gen(word) == UH_REF_GEN(v->u.ref))
		crc = copy(arg, i, (const char *)o + at, uh_type_is_inline(v->type) ? len :
			   size & UH_OBJ_SIZE_MASK);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);	/* the copy's loads before the check's */
	if ((size & UH_OBJ_VALID) && uh_word_gen(word) == UH_REF_GEN(v->u.ref) &&
	    __atomic_load_n(&o->class_word, __ATOMIC_ACQUIRE) == word &&
	    __atomic_load_n(&o->size, __ATOMIC_ACQUIRE) == size)
		return crc;	/* the bytes were the value's: copy's answer stands */
	rc = uh_err_set(UH_EFREED, "%s value at %llu was freed while it was copied",
			v->type == UH_T_STRING || v->type == UH_T_ISTRING ? "string" : "bytes",
			(unsigned long long)UH_REF_OFFSET(v->u.ref));
	if (h->tx.depth)
		return uh_tx_stale_or(h, rc);
	*replaced = 1;
	return rc;
}

/* One try: copy every string and bytes value of vals[0, n). */
static int copy_all(uh_heap *h, const uh_value *vals, uint32_t n, uh_bytes_copy_fn copy,
		    void *arg, int *replaced)
{
	for (uint32_t i = 0; i < n; i++) {	/* bound: n <= cap */
		const uh_value *v = &vals[i];
		if (!has_bytes(v->type) || v->u.ref == 0)
			continue;
		int rc = copy_one(h, v, i, copy, arg, replaced);
		if (rc || *replaced)
			return rc;
	}
	return 0;
}

int uh_copy_values(uh_heap *h, uh_values_fetch_fn fetch, uh_bytes_copy_fn copy, void *arg,
		   uh_value *vals, uint32_t cap)
{
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (!fetch || !copy || (!vals && cap))
		return uh_err_set(UH_EINVAL, "uh_copy_values: NULL argument");
	for (int t = 0; t < UH_READ_TRIES; t++) {	/* bound: UH_READ_TRIES */
		uint32_t n = 0;
		int replaced = 0;
		if ((rc = fetch(h, arg, vals, &n)) != 0)
			return rc;
		if (n > cap)
			return uh_err_set(UH_EINVAL, "uh_copy_values: fetch gave %u values, room "
					  "for %u", n, cap);
		rc = copy_all(h, vals, n, copy, arg, &replaced);
		if (!replaced)
			return rc;
	}
	return uh_err_set(UH_ECONFLICT, "a string or bytes value was replaced while it was "
			  "copied, %d times in a row; read it inside a block, which holds it "
			  "still", UH_READ_TRIES);
}

int uh_value_bytes(uh_heap *h, const uh_value *v, const void **data, size_t *len)
{
	uint32_t at, n;
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (!v || !data || !len)
		return uh_err_set(UH_EINVAL, "uh_value_bytes: NULL argument");
	if (!has_bytes(v->type))
		return uh_err_set(UH_ETYPE, "uh_value_bytes: a value of type %s, not a string or "
				  "bytes", uh_type_name(v->type));
	const struct uh_objhdr *o = holder(h, v, &at, &n, &rc);
	if (!o)
		return rc;
	*data = (const char *)o + at;
	*len = n;
	return 0;
}
