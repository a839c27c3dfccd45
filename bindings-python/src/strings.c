/*
 * strings.c -- str and bytes values copied out of the mapping.
 *
 * A str/bytes value is an object of its own (class UH_CLASS_STRING or
 * UH_CLASS_BYTES) that the slot holding it owns: the commit that replaces
 * the value frees the old object with it. Its bytes never change while it
 * lives, so a copy is read in place and then checked: the copy is the
 * value's if the object is still there afterwards (uniheap.h, "direct").
 * Calls only errors.c.
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

int uhpy_bytes_span(HeapObject *hp, uh_off b, const void **data, size_t *len)
{
	int rc;

	if (string_direct(hp, b, UH_CLASS_BYTES, data, len))
		return 0;
	if ((rc = uh_bytes_get(hp->h, b, data, len)) != 0)
		return uhpy_raise(rc, "bytes"), -1;
	return 0;
}

/* The Python copy of str/bytes object s (type UH_T_STRING or UH_T_BYTES):
 * 1 with *out, -1 with an exception, or 0 when, outside a block, s no
 * longer names a live object before or after the copy. The slot s was
 * read from was then replaced meanwhile (the commit that replaces a
 * string or bytes value frees the old one with it), and the caller reads
 * that slot again: its value is the old or the new one, never an error. */
int uhpy_string_try(HeapObject *hp, uh_off s, uint32_t type, PyObject **out)
{
	const uint32_t cls = type == UH_T_STRING ? UH_CLASS_STRING : UH_CLASS_BYTES;
	const char *what = type == UH_T_STRING ? "string" : "bytes";
	const void *data;
	size_t len;
	uint32_t now;
	int rc;

	*out = NULL;
	if (!string_direct(hp, s, cls, &data, &len)) {
		rc = type == UH_T_STRING ? uh_string_get(hp->h, s, (const char **)&data, &len)
					 : uh_bytes_get(hp->h, s, &data, &len);
		if (rc == UH_EFREED && !uh_in_block(hp->h))
			return 0;
		if (rc)
			return uhpy_raise(rc, what), -1;
	}
	PyObject *r = type == UH_T_STRING ? PyUnicode_DecodeUTF8(data, (Py_ssize_t)len, "strict")
					  : PyBytes_FromStringAndSize(data, (Py_ssize_t)len);
	/* Copied in place: the copy is the value's only if the object is
	 * still there afterwards (uniheap.h, "direct"). */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (uhpy_live(hp->base, s, cls)) {
		*out = r;
		return r ? 1 : -1;
	}
	if (!r && !PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
		return -1;
	Py_XDECREF(r);
	PyErr_Clear();
	if (!uh_in_block(hp->h))
		return 0;
	/* Inside a block libuniheap says why: a stale snapshot is a conflict
	 * (the block re-runs), else it was freed. */
	if ((rc = uh_obj_class(hp->h, s, &now)) != 0)
		uhpy_raise(rc, what);
	else
		uhpy_freed(s);
	return -1;
}

PyObject *uhpy_string_at(HeapObject *hp, uh_off s, uint32_t type)
{
	PyObject *r;

	return uhpy_string_try(hp, s, type, &r) == 0 ? uhpy_freed(s) : r;
}
