/*
 * value.c -- Python objects <-> libuniheap values and keys.
 *
 * Values: None, bool, int (i64), float (f64), str, bytes and proxies of
 * the same heap. A str or bytes becomes a new persistent string/bytes
 * object owned by the slot that holds it; a hash map is given its bytes
 * instead (uhpy_str_bytes, map.c) and keeps a short one in the key's
 * entry. Nothing else is coerced.
 * uhpy_store converts a value and stores it with one data-type call, in
 * one step (map.c, seq.c).
 */
#include "ext.h"

int uhpy_value_allocates(PyObject *o)
{
	return PyUnicode_Check(o) || PyBytes_Check(o) || PyByteArray_Check(o);
}

/* Run one data-type call; a str/bytes value is allocated inside the
 * same step so a failure leaves nothing behind. */
int uhpy_store(ProxyObject *p, const void *where, PyObject *o, uhpy_store_fn fn,
	       const char *what)
{
	HeapObject *hp = p->heap;
	uh_value v;
	int outer = 0, rc;

	if (!uhpy_value_allocates(o)) {
		if (uhpy_to_value(hp, o, &v) < 0)
			return -1;
		if ((rc = fn(hp->h, p, where, &v)) != 0)
			return uhpy_raise(rc, what), -1;
		return 0;
	}
	if ((rc = uhpy_step_begin(hp, &outer)) != 0)
		return uhpy_raise(rc, what), -1;
	if (uhpy_to_value(hp, o, &v) < 0) {
		uhpy_step_end(hp, outer, UH_EINVAL);
		return -1;
	}
	rc = fn(hp->h, p, where, &v);
	if ((rc = uhpy_step_end(hp, outer, rc)) != 0)
		return uhpy_raise(rc, what), -1;
	return 0;
}

int uhpy_str_bytes(PyObject *o, uint32_t *type, const char **data, Py_ssize_t *len)
{
	if (PyUnicode_Check(o)) {
		*type = UH_T_STRING;
		return (*data = PyUnicode_AsUTF8AndSize(o, len)) ? 1 : -1;
	}
	*type = UH_T_BYTES;
	if (PyBytes_Check(o)) {
		*data = PyBytes_AS_STRING(o);
		*len = PyBytes_GET_SIZE(o);
		return 1;
	}
	if (PyByteArray_Check(o)) {
		*data = PyByteArray_AS_STRING(o);
		*len = PyByteArray_GET_SIZE(o);
		return 1;
	}
	return 0;
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
	if ((rc = uhpy_str_bytes(o, &v->type, &s, &len)) != 0) {
		if (rc < 0)
			return -1;
		rc = v->type == UH_T_STRING ? uh_string_new(hp->h, s, (size_t)len, &v->u.ref)
					    : uh_bytes_new(hp->h, s, (size_t)len, &v->u.ref);
		return rc ? (uhpy_raise(rc, v->type == UH_T_STRING ? "string" : "bytes"), -1) : 0;
	}
	if ((rc = uhpy_same_heap(hp, o, &v->u.ref)) < 0)
		return -1;
	if (rc == 0)
		return not_storable(o);
	v->type = UH_T_REF;
	return 0;
}

PyObject *uhpy_from_value(HeapObject *hp, const uh_value *v)
{
	switch (v->type) {
	case UH_T_BOOL: return PyBool_FromLong(v->u.i != 0);
	case UH_T_I8: case UH_T_I16: case UH_T_I32: case UH_T_I64:
		return PyLong_FromLongLong(v->u.i);
	case UH_T_F32: case UH_T_F64: return PyFloat_FromDouble(v->u.f);
	case UH_T_STRING: case UH_T_BYTES:
	case UH_T_ISTRING: case UH_T_IBYTES:	/* inline: in a hash map's entry */
		if (!v->u.ref)
			Py_RETURN_NONE;
		return uhpy_value_copy(hp, v);
	case UH_T_REF: return uhpy_wrap_ref(hp, v->u.ref);
	}
	/* Never None: that is a stored null, and this is not one. */
	return PyErr_Format(uhpy_st->by_code[-UH_EINTERNAL], "value type %u is not one this "
			    "binding knows: upgrade the Python binding (a newer libuniheap may "
			    "have written it), or check the heap for damage (heapctl check)",
			    (unsigned)v->type);
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
