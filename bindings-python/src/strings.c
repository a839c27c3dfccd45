/*
 * strings.c -- str and bytes values copied out of the mapping.
 *
 * A str/bytes value is an object of its own (class UH_CLASS_STRING or
 * UH_CLASS_BYTES) that the slot holding it owns: the commit that replaces
 * the value frees the old object with it. Its bytes never change while it
 * lives, so a copy is read in place and then checked: the copy is the
 * value's if the object is still there afterwards (uniheap.h, "direct").
 * A hash map keeps a short value inside its entry instead (an inline
 * value, UH_T_ISTRING / UH_T_IBYTES): the same holds for the entry, which
 * a put or remove of its key frees.
 * uh_copy_values (uniheap.h) is the one loop that copies them, checks each
 * copy and reads again where a value was replaced under its copy; here
 * its copies are Python objects, made with the GIL held. Calls only
 * errors.c.
 */
#include "ext.h"

/* Where the str/bytes object s keeps its bytes, straight from the
 * mapping (uniheap.h, "direct"): its header names it (class, generation,
 * valid bit), and header and bytes lie inside the mapping whatever the
 * header says. 0 when not: libuniheap then says why (inside a block, that
 * a stale reference is a conflict). The same inside blocks: the bytes of
 * a live object never change, and the block's reads gave s. */
static int string_direct(HeapObject *hp, uh_off s, uint32_t cls, const void **data,
			 size_t *len)
{
	uint64_t off = UH_REF_OFFSET(s);

	if (!hp->base || off % 8 || off > hp->size - sizeof(struct uhpy_objhdr) ||
	    !uhpy_live(hp->base, s, cls))
		return 0;
	const struct uhpy_objhdr *o = uhpy_hdr(hp->base, s);
	uint32_t n = __atomic_load_n(&o->size, __ATOMIC_ACQUIRE) & ~UH_OBJ_VALID;
	if (n > hp->size - off - sizeof(*o))
		return 0;
	*data = o + 1;
	*len = n;
	return 1;
}

/* An inline value: the class of its entry, then its bytes, which
 * uh_value_bytes finds live at the reference's generation, the one the
 * class was read at: so the class is that entry's. */
static int inline_span(HeapObject *hp, const uh_value *v, const void **data, size_t *len,
		       uint32_t *cls)
{
	int rc = uh_obj_class(hp->h, v->u.ref, cls);

	if (rc == 0)
		rc = uh_value_bytes(hp->h, v, data, len);
	return rc;
}

int uhpy_bytes_span(HeapObject *hp, const uh_value *v, const void **data, size_t *len,
		    uint32_t *cls)
{
	int rc;

	if (v->type == UH_T_IBYTES) {
		rc = inline_span(hp, v, data, len, cls);
	} else {
		*cls = UH_CLASS_BYTES;
		if (string_direct(hp, v->u.ref, UH_CLASS_BYTES, data, len))
			return 0;
		rc = uh_bytes_get(hp->h, v->u.ref, data, len);
	}
	if (rc)
		return uhpy_raise(rc, "bytes"), -1;
	uhpy_heap_mapped(hp);	/* the check may have mapped more of a grown heap */
	return 0;
}

/* uh_copy_values' arg: the caller's fetch and its arg, the values fetch
 * stores (their types say str or bytes) and the copies made of them;
 * replay: the number of values the in-place try fetched, which
 * uh_copy_values' first try takes as its own fetch's (not 0: a try with no
 * value copies nothing, so it never comes here). */
struct copies {
	uh_values_fetch_fn fetch;
	void *arg;
	const uh_value *vals;
	PyObject **objs;
	uint32_t cap, replay;
};

static void drop_copies(struct copies *c)
{
	for (uint32_t i = 0; i < c->cap; i++)	/* bound: cap */
		Py_CLEAR(c->objs[i]);
}

/* Each try starts afresh: no copies, and no exception of an earlier
 * try's failed copy (its bytes were not the value's, uh_copy_values
 * found). */
static int fetch_afresh(uh_heap *h, void *arg, uh_value *vals, uint32_t *n)
{
	struct copies *c = arg;

	drop_copies(c);
	PyErr_Clear();
	if (c->replay) {
		*n = c->replay;
		c->replay = 0;
		return 0;
	}
	return c->fetch(h, c->arg, vals, n);
}

static PyObject *make_copy(uint32_t type, const void *data, size_t len)
{
	return type == UH_T_STRING || type == UH_T_ISTRING
		       ? PyUnicode_DecodeUTF8(data, (Py_ssize_t)len, "strict")
		       : PyBytes_FromStringAndSize(data, (Py_ssize_t)len);
}

static int copy_value(void *arg, uint32_t i, const void *data, size_t len)
{
	struct copies *c = arg;

	Py_CLEAR(c->objs[i]);
	c->objs[i] = make_copy(c->vals[i].type, data, len);
	return c->objs[i] ? 0 : UHPY_RAISED;
}

int uhpy_copy_in_place(HeapObject *hp, const uh_value *vals, uint32_t n, PyObject **objs)
{
	for (uint32_t i = 0; i < n; i++) {	/* bound: n <= cap */
		uint32_t type = vals[i].type, cls = type == UH_T_STRING ? UH_CLASS_STRING
									 : UH_CLASS_BYTES;
		const void *data;
		size_t len;
		if ((type != UH_T_STRING && type != UH_T_BYTES && type != UH_T_ISTRING &&
		     type != UH_T_IBYTES) || !vals[i].u.ref)
			continue;
		/* Where an inline value's bytes may lie in its entry is the map's
		 * layout, libuniheap's to check: uh_copy_values copies it. */
		if (type == UH_T_ISTRING || type == UH_T_IBYTES)
			return -1;
		if (!string_direct(hp, vals[i].u.ref, cls, &data, &len))
			return -1;
		objs[i] = make_copy(type, data, len);
		/* Copied in place: the copy is the value's only if the object is
		 * still there afterwards (uniheap.h, "direct"). */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (!uhpy_live(hp->base, vals[i].u.ref, cls))
			return -1;
		if (!objs[i]) {
			for (uint32_t j = 0; j < i; j++)	/* bound: i */
				Py_CLEAR(objs[j]);
			return UHPY_RAISED;
		}
	}
	return 0;
}

int uhpy_copy_checked(HeapObject *hp, uh_values_fetch_fn fetch, void *arg, uh_value *vals,
		      PyObject **objs, uint32_t cap, uint32_t fetched)
{
	struct copies c = { fetch, arg, vals, objs, cap, fetched };
	int rc = uh_copy_values(hp->h, fetch_afresh, copy_value, &c, vals, cap);

	if (rc) {
		drop_copies(&c);
		if (rc != UHPY_RAISED)
			PyErr_Clear();	/* a failed copy of the last try */
	}
	return rc;
}

/* The value v, which the caller holds: it cannot be read again. */
struct held {
	uh_value v;
	int fetched;
};

static int fetch_held(uh_heap *h, void *arg, uh_value *vals, uint32_t *n)
{
	struct held *r = arg;

	(void)h;
	if (r->fetched++)
		return UH_EFREED;	/* replaced under the first copy: freed */
	vals[0] = r->v;
	*n = 1;
	return 0;
}

PyObject *uhpy_value_copy(HeapObject *hp, const uh_value *v)
{
	struct held r = { *v, 0 };
	uh_value got;
	PyObject *copy;
	int rc = uhpy_copy_values(hp, fetch_held, &r, &got, &copy, 1);
	int str = v->type == UH_T_STRING || v->type == UH_T_ISTRING;

	if (rc == UH_EFREED)
		return uhpy_freed(v->u.ref);
	if (rc)
		return rc == UHPY_RAISED ? NULL : uhpy_raise(rc, str ? "string" : "bytes");
	return copy;
}

PyObject *uhpy_string_at(HeapObject *hp, uh_off s, uint32_t type)
{
	uh_value v = { .type = type, .u.ref = s };

	return uhpy_value_copy(hp, &v);
}
