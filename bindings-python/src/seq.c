/*
 * seq.c -- the ListBase and ArrayBase types: proxies of lists and arrays
 * with the sequence protocol (len, [], append, insert, pop). Each
 * operation is one libuniheap call, which is atomic on its own or joins
 * the caller's block. The pure-Python PList and PArray add the
 * collections.abc mixins on top.
 */
#include "ext.h"

static int is_array(ProxyObject *p)
{
	return p->cls == UH_CLASS_ARRAY;
}

static Py_ssize_t seq_len(ProxyObject *p)
{
	uint64_t n;
	int rc;

	if (uhpy_proxy_usable(p) < 0)
		return -1;
	rc = is_array(p) ? uh_array_len(p->heap->h, p->off, &n) : uh_list_len(p->heap->h, p->off, &n);
	if (rc)
		return uhpy_raise(rc, "len"), -1;
	return (Py_ssize_t)n;
}

static int index_error(int rc, const char *what)
{
	if (rc == UH_ERANGE) {
		PyErr_SetString(PyExc_IndexError, what);
		return -1;
	}
	return uhpy_raise(rc, what), -1;
}

struct item {
	ProxyObject *p;
	uint64_t i;
};

static int fetch_item(uh_heap *h, void *arg, uh_value *vals, uint32_t *n)
{
	struct item *it = arg;

	*n = 1;
	return is_array(it->p) ? uh_array_get(h, it->p->off, it->i, vals)
			       : uh_list_get(h, it->p->off, it->i, vals);
}

/* sq_item gets i >= 0 after Python added len to a negative index. A str
 * or bytes item replaced under its copy is read again (uhpy_copy_values). */
static PyObject *seq_item(ProxyObject *p, Py_ssize_t i)
{
	struct item it = { p, (uint64_t)i };
	PyObject *copy;
	uh_value v;
	int rc;

	if (uhpy_proxy_usable(p) < 0)
		return NULL;
	if (i < 0) {
		PyErr_SetString(PyExc_IndexError, "index out of range");
		return NULL;
	}
	if ((rc = uhpy_copy_values(p->heap, fetch_item, &it, &v, &copy, 1)) == UHPY_RAISED)
		return NULL;
	if (rc)
		return index_error(rc, rc == UH_ERANGE ? "index out of range" : "item"), NULL;
	return copy ? copy : uhpy_from_value(p->heap, &v);
}

static int set_fn(uh_heap *h, ProxyObject *p, const void *where, const uh_value *v)
{
	uint64_t i = *(const uint64_t *)where;

	return is_array(p) ? uh_array_set(h, p->off, i, v, UHPY_OWNED)
			   : uh_list_set(h, p->off, i, v, UHPY_OWNED);
}

static int seq_ass_item(ProxyObject *p, Py_ssize_t i, PyObject *val)
{
	uint64_t idx = (uint64_t)i;
	int rc;

	if (uhpy_proxy_usable(p) < 0)
		return -1;
	if (i < 0) {
		PyErr_SetString(PyExc_IndexError, "index out of range");
		return -1;
	}
	if (val) {
		/* Inside a caller's block a failed step keeps what it allocated
		 * (unreachable until recovery), so check the index first. */
		if (uhpy_value_allocates(val) && i >= seq_len(p)) {
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_IndexError, "assignment index out of range");
			return -1;
		}
		/* ERANGE is an index error only when the index is out of range
		 * (else the value did not fit the array's element type). */
		rc = uhpy_store(p, &idx, val, set_fn, "set item");
		if (rc < 0 && PyErr_ExceptionMatches(uhpy_st->by_code[-UH_ERANGE]) &&
		    i >= seq_len(p)) {
			PyErr_Clear();
			PyErr_SetString(PyExc_IndexError, "assignment index out of range");
		}
		return rc;
	}
	if (is_array(p)) {
		PyErr_SetString(PyExc_TypeError, "a PArray has a fixed length: items cannot be deleted");
		return -1;
	}
	if ((rc = uh_list_pop(p->heap->h, p->off, idx, NULL, UHPY_OWNED)) != 0)
		return index_error(rc, "deletion index out of range");
	return 0;
}

static PyObject *seq_iter(ProxyObject *p)
{
	if (uhpy_proxy_usable(p) < 0)
		return NULL;
	return PySeqIter_New((PyObject *)p);
}

static int append_fn(uh_heap *h, ProxyObject *p, const void *where, const uh_value *v)
{
	(void)where;
	return uh_list_append(h, p->off, v);
}

static int insert_fn(uh_heap *h, ProxyObject *p, const void *where, const uh_value *v)
{
	return uh_list_insert(h, p->off, *(const uint64_t *)where, v);
}

static PyObject *list_append(ProxyObject *p, PyObject *v)
{
	if (uhpy_proxy_usable(p) < 0 || uhpy_store(p, NULL, v, append_fn, "append") < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* Python's clamping of an insert/pop index against len. */
static int norm_index(ProxyObject *p, Py_ssize_t *i, int clamp)
{
	Py_ssize_t n = seq_len(p);

	if (n < 0)
		return -1;
	if (*i < 0)
		*i += n;
	if (clamp)
		*i = *i < 0 ? 0 : *i > n ? n : *i;
	else if (*i < 0 || *i >= n) {
		PyErr_SetString(PyExc_IndexError, n ? "pop index out of range" : "pop from empty list");
		return -1;
	}
	return 0;
}

static PyObject *list_insert(ProxyObject *p, PyObject *args)
{
	Py_ssize_t i;
	PyObject *v;

	if (!PyArg_ParseTuple(args, "nO:insert", &i, &v))
		return NULL;
	if (uhpy_proxy_usable(p) < 0 || norm_index(p, &i, 1) < 0)
		return NULL;
	uint64_t idx = (uint64_t)i;
	if (uhpy_store(p, &idx, v, insert_fn, "insert") < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *list_pop(ProxyObject *p, PyObject *args)
{
	Py_ssize_t i = -1;
	uh_value old;
	int outer, rc;

	if (!PyArg_ParseTuple(args, "|n:pop", &i))
		return NULL;
	if (uhpy_proxy_usable(p) < 0 || norm_index(p, &i, 0) < 0)
		return NULL;
	if ((rc = uhpy_step_begin(p->heap, &outer)) != 0)
		return uhpy_raise(rc, "pop");
	PyObject *r = NULL;
	rc = uh_list_pop(p->heap->h, p->off, (uint64_t)i, &old, UHPY_OWNED);
	/* Read a string value before the commit frees it. */
	if (rc == 0 && !(r = uhpy_from_value(p->heap, &old)))
		rc = UH_EINVAL;
	if ((rc = uhpy_step_end(p->heap, outer, rc)) != 0) {
		Py_XDECREF(r);
		if (rc == UH_ERANGE)
			return index_error(rc, "pop index out of range"), NULL;
		return PyErr_Occurred() ? NULL : uhpy_raise(rc, "pop");
	}
	return r;
}

static PyMethodDef list_methods[] = {
	{ "append", (PyCFunction)list_append, METH_O, "Append a value." },
	{ "insert", (PyCFunction)list_insert, METH_VARARGS, "insert(index, value)" },
	{ "pop", (PyCFunction)list_pop, METH_VARARGS,
	  "pop([index]): remove and return the value at index (default last)." },
	{ NULL, NULL, 0, NULL },
};

static PyType_Slot list_slots[] = {
	{ Py_sq_length, seq_len },
	{ Py_sq_item, seq_item },
	{ Py_sq_ass_item, seq_ass_item },
	{ Py_tp_iter, seq_iter },
	{ Py_tp_methods, list_methods },
	{ 0, NULL },
};

PyType_Spec uhpy_list_spec = {
	.name = "uniheap._uniheap.ListBase",
	.basicsize = sizeof(ProxyObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.slots = list_slots,
};

static PyObject *array_get_elem_type(ProxyObject *p, void *c)
{
	uint32_t t;
	int rc;

	(void)c;
	if (uhpy_proxy_usable(p) < 0)
		return NULL;
	if ((rc = uh_array_elem_type(p->heap->h, p->off, &t)) != 0)
		return uhpy_raise(rc, "array");
	return PyUnicode_FromString(uh_type_name(t));
}

static PyGetSetDef array_getset[] = {
	{ "elem_type", (getter)array_get_elem_type, NULL, "The element type name.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot array_slots[] = {
	{ Py_sq_length, seq_len },
	{ Py_sq_item, seq_item },
	{ Py_sq_ass_item, seq_ass_item },
	{ Py_tp_iter, seq_iter },
	{ Py_tp_getset, array_getset },
	{ 0, NULL },
};

PyType_Spec uhpy_array_spec = {
	.name = "uniheap._uniheap.ArrayBase",
	.basicsize = sizeof(ProxyObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.slots = array_slots,
};
