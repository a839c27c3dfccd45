/*
 * value.c -- Python objects <-> libuniheap values and keys.
 *
 * Values: None, bool, int (i64), float (f64), str, bytes and proxies of
 * the same heap. A str or bytes becomes a new persistent string/bytes
 * object owned by the slot that holds it. Nothing else is coerced.
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

int uhpy_value_allocates(PyObject *o)
{
	return PyUnicode_Check(o) || PyBytes_Check(o) || PyByteArray_Check(o);
}

static int not_storable(PyObject *o)
{
	PyErr_Format(PyExc_TypeError,
		     "cannot store %.80s in the heap: store None, bool, int, float, str, bytes "
		     "or a persistent object (PObject, PMap, PSortedMap, PList, PArray)",
		     Py_TYPE(o)->tp_name);
	return -1;
}

/* Convert o. A str/bytes is allocated here: call inside a step. */
int uhpy_to_value(HeapObject *hp, PyObject *o, uh_value *v)
{
	Py_ssize_t len;
	const char *s;
	int overflow, rc;

	memset(v, 0, sizeof(*v));
	if (o == Py_None) {
		v->type = UH_T_REF;
		return 0;
	}
	if (PyBool_Check(o)) {
		v->type = UH_T_BOOL;
		v->u.i = o == Py_True;
		return 0;
	}
	if (PyLong_Check(o)) {
		v->type = UH_T_I64;
		v->u.i = PyLong_AsLongLongAndOverflow(o, &overflow);
		if (overflow) {
			PyErr_Format(uhpy_st->by_code[-UH_ERANGE], "%R does not fit i64", o);
			return -1;
		}
		return v->u.i == -1 && PyErr_Occurred() ? -1 : 0;
	}
	if (PyFloat_Check(o)) {
		v->type = UH_T_F64;
		v->u.f = PyFloat_AS_DOUBLE(o);
		return 0;
	}
	if (PyUnicode_Check(o)) {
		if (!(s = PyUnicode_AsUTF8AndSize(o, &len)))
			return -1;
		v->type = UH_T_STRING;
		rc = uh_string_new(hp->h, s, (size_t)len, &v->u.ref);
		return rc ? (uhpy_raise(rc, "string"), -1) : 0;
	}
	if (PyBytes_Check(o) || PyByteArray_Check(o)) {
		s = PyBytes_Check(o) ? PyBytes_AS_STRING(o) : PyByteArray_AS_STRING(o);
		len = PyBytes_Check(o) ? PyBytes_GET_SIZE(o) : PyByteArray_GET_SIZE(o);
		v->type = UH_T_BYTES;
		rc = uh_bytes_new(hp->h, s, (size_t)len, &v->u.ref);
		return rc ? (uhpy_raise(rc, "bytes"), -1) : 0;
	}
	if ((rc = uhpy_same_heap(hp, o, &v->u.ref)) < 0)
		return -1;
	if (rc == 0)
		return not_storable(o);
	v->type = UH_T_REF;
	return 0;
}

int uhpy_from_value_try(HeapObject *hp, const uh_value *v, PyObject **out)
{
	if ((v->type == UH_T_STRING || v->type == UH_T_BYTES) && v->u.ref)
		return uhpy_string_try(hp, v->u.ref, v->type, out);
	*out = uhpy_from_value(hp, v);
	return *out ? 1 : -1;
}

PyObject *uhpy_from_value(HeapObject *hp, const uh_value *v)
{
	switch (v->type) {
	case UH_T_BOOL: return PyBool_FromLong(v->u.i != 0);
	case UH_T_I8: case UH_T_I16: case UH_T_I32: case UH_T_I64:
		return PyLong_FromLongLong(v->u.i);
	case UH_T_F32: case UH_T_F64: return PyFloat_FromDouble(v->u.f);
	case UH_T_STRING: case UH_T_BYTES:
		if (!v->u.ref)
			Py_RETURN_NONE;
		return uhpy_string_at(hp, v->u.ref, v->type);
	case UH_T_REF: return uhpy_wrap_ref(hp, v->u.ref);
	}
	Py_RETURN_NONE;
}

static const char *const kind_names[] = { "?", "str", "bytes", "int" };

/* A key for a map keyed by kind; data points into o (borrowed). */
int uhpy_to_key(uint32_t kind, PyObject *o, uh_key *k)
{
	Py_ssize_t len;
	int overflow;

	memset(k, 0, sizeof(*k));
	k->kind = kind;
	if (kind == UH_KEY_STRING && PyUnicode_Check(o) && PyUnicode_IS_COMPACT_ASCII(o)) {
		k->data = PyUnicode_DATA(o);	/* ASCII: its own UTF-8, in place */
		k->len = (size_t)PyUnicode_GET_LENGTH(o);
		k->flags = UH_KEY_VALID_UTF8;
		return 0;
	}
	if (kind == UH_KEY_STRING && PyUnicode_Check(o)) {
		if (!(k->data = PyUnicode_AsUTF8AndSize(o, &len)))
			return -1;
		k->len = (size_t)len;
		k->flags = UH_KEY_VALID_UTF8;	/* CPython's UTF-8 of a str always is */
		return 0;
	}
	if (kind == UH_KEY_BYTES && PyBytes_Check(o)) {
		k->data = PyBytes_AS_STRING(o);
		k->len = (size_t)PyBytes_GET_SIZE(o);
		return 0;
	}
	if (kind == UH_KEY_I64 && PyLong_Check(o) && !PyBool_Check(o)) {
		k->i64 = PyLong_AsLongLongAndOverflow(o, &overflow);
		if (overflow) {
			PyErr_Format(uhpy_st->by_code[-UH_ERANGE], "key %R does not fit i64", o);
			return -1;
		}
		return k->i64 == -1 && PyErr_Occurred() ? -1 : 0;
	}
	PyErr_Format(uhpy_st->by_code[-UH_ETYPE], "this map's keys are %s, not %.80s",
		     kind <= 3 ? kind_names[kind] : "?", Py_TYPE(o)->tp_name);
	return -1;
}

PyObject *uhpy_from_key(const uh_key *k)
{
	if (k->kind == UH_KEY_I64)
		return PyLong_FromLongLong(k->i64);
	if (k->kind == UH_KEY_STRING)
		return PyUnicode_DecodeUTF8(k->data, (Py_ssize_t)k->len, "strict");
	return PyBytes_FromStringAndSize(k->data, (Py_ssize_t)k->len);
}
