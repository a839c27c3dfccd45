/*
 * map.c -- the MapBase type: proxies of hash and sorted maps with the
 * mapping protocol (len, [], in, get, pop, view). Each operation is one
 * libuniheap call, which is atomic on its own or joins the caller's
 * block. The pure-Python PMap and PSortedMap add the collections.abc
 * mixins on top. Reading a key is mapread.c, iteration mapiter.c.
 */
#include "ext.h"

static Py_ssize_t map_len(ProxyObject *p)
{
	uint64_t n;
	int rc;

	if (uhpy_proxy_usable(p) < 0)
		return -1;
	rc = uhpy_map_sorted(p) ? uh_smap_len(p->heap->h, p->off, &n)
				: uh_map_len(p->heap->h, p->off, &n);
	if (rc)
		return uhpy_raise(rc, "len"), -1;
	return (Py_ssize_t)n;
}

static PyObject *map_subscript(ProxyObject *p, PyObject *key)
{
	PyObject *r;
	int rc = uhpy_map_read(p, key, &r);

	if (rc == 0)
		PyErr_SetObject(PyExc_KeyError, key);
	return rc == 1 ? r : NULL;
}

/* get(key[, default]): Mapping.get's answer in one C call (Mapping.get
 * would run Python code and raise and catch a KeyError on a miss). */
static PyObject *map_get(ProxyObject *p, PyObject *const *args, Py_ssize_t n)
{
	PyObject *r;
	int rc;

	if (n < 1 || n > 2) {
		PyErr_SetString(PyExc_TypeError, "get(key[, default])");
		return NULL;
	}
	if ((rc = uhpy_map_read(p, args[0], &r)) < 0)
		return NULL;
	return rc == 0 ? Py_NewRef(n == 2 ? args[1] : Py_None) : r;
}

/* The value v of a key as view(key) shows it: 0 if it is bytes (an
 * object's or an inline value), else -1 with a TypeError naming it. */
static int viewable(const uh_value *v)
{
	if ((v->type == UH_T_BYTES || v->type == UH_T_IBYTES) && v->u.ref)
		return 0;
	/* a short str in a hash map is a string too, whatever its place */
	PyErr_Format(PyExc_TypeError, "view(): the value is not bytes but %s",
		     v->type == UH_T_BYTES ? "None"
		     : uh_type_name(v->type == UH_T_ISTRING ? UH_T_STRING : v->type));
	return -1;
}

/* view(key): a zero-copy view of a bytes value (view.c says how long it
 * shows the value). Outside a block another session may replace the
 * value, and so free what holds its bytes, between the lookup and the
 * view's check of it: the key is then looked up again, as a read of it
 * would be (at most UH_READ_TRIES times), so that a key that has a value
 * never raises FreedObjectError. */
static PyObject *map_view(ProxyObject *p, PyObject *key)
{
	PyObject *view;
	uh_value v;

	for (int t = 1;; t++) {	/* bound: UH_READ_TRIES */
		int rc = uhpy_map_lookup(p, key, &v);
		if (rc <= 0) {
			if (rc == 0)
				PyErr_SetObject(PyExc_KeyError, key);
			return NULL;
		}
		if (viewable(&v) < 0)
			return NULL;
		if ((view = uhpy_view_of(p->heap, &v)) || t == UH_READ_TRIES ||
		    uh_in_block(p->heap->h) ||
		    !PyErr_ExceptionMatches(uhpy_st->by_code[-UH_EFREED]))
			return view;
		PyErr_Clear();	/* replaced since the lookup: the key's value now */
	}
}

static int map_contains(ProxyObject *p, PyObject *key)
{
	uh_value v;

	return uhpy_map_lookup(p, key, &v);
}

static int put_fn(uh_heap *h, ProxyObject *p, const void *k, const uh_value *v)
{
	if (!uhpy_map_sorted(p))
		return uh_map_put(h, p->off, k, v, UHPY_OWNED);
	uhpy_smap_writes++;
	return uh_smap_put(h, p->off, k, v, UHPY_OWNED);
}

/* A str or bytes value goes into a hash map in one uh_map_put_bytes
 * call, which keeps a short one inside the key's entry (no object of its
 * own to allocate, and a get finds key and value together); sorted maps
 * and other values: uhpy_store. */
static int map_put(ProxyObject *p, const uh_key *k, PyObject *val)
{
	uint32_t type;
	const char *data;
	Py_ssize_t len;
	int rc = uhpy_map_sorted(p) ? 0 : uhpy_str_bytes(val, &type, &data, &len);

	if (rc <= 0)
		return rc < 0 ? -1 : uhpy_store(p, k, val, put_fn, "map put");
	rc = uh_map_put_bytes(p->heap->h, p->off, k, type, data, (size_t)len, UHPY_OWNED);
	return rc ? (uhpy_raise(rc, "map put"), -1) : 0;
}

static int map_ass_subscript(ProxyObject *p, PyObject *key, PyObject *val)
{
	uh_key k;
	int rc;

	if (uhpy_map_key(p, key, &k) < 0)
		return -1;
	if (val)
		return map_put(p, &k, val);
	uhpy_smap_writes += uhpy_map_sorted(p);
	rc = uhpy_map_sorted(p) ? uh_smap_remove(p->heap->h, p->off, &k, NULL, UHPY_OWNED)
				: uh_map_remove(p->heap->h, p->off, &k, NULL, UHPY_OWNED);
	if (rc == UH_ENOTFOUND) {
		PyErr_SetObject(PyExc_KeyError, key);
		return -1;
	}
	return rc ? (uhpy_raise(rc, "map remove"), -1) : 0;
}

/* pop(key[, default]): remove and return in one atomic step. */
static PyObject *map_pop(ProxyObject *p, PyObject *const *args, Py_ssize_t n)
{
	uh_key k;
	uh_value old;
	int rc, outer;

	if (n < 1 || n > 2) {
		PyErr_SetString(PyExc_TypeError, "pop(key[, default])");
		return NULL;
	}
	if (uhpy_map_key(p, args[0], &k) < 0)
		return NULL;
	/* The old value is read before the step frees it. */
	if ((rc = uhpy_step_begin(p->heap, &outer)) != 0)
		return uhpy_raise(rc, "map pop");
	uhpy_smap_writes += uhpy_map_sorted(p);
	rc = uhpy_map_sorted(p) ? uh_smap_remove(p->heap->h, p->off, &k, &old, UHPY_OWNED)
				: uh_map_remove(p->heap->h, p->off, &k, &old, UHPY_OWNED);
	PyObject *r = NULL;
	if (rc == 0 && !(r = uhpy_from_value(p->heap, &old)))
		rc = UH_EINVAL;
	if ((rc = uhpy_step_end(p->heap, outer, rc)) != 0) {
		Py_XDECREF(r);
		if (rc == UH_ENOTFOUND) {
			PyErr_Clear();
			if (n == 2)
				return Py_NewRef(args[1]);
			PyErr_SetObject(PyExc_KeyError, args[0]);
			return NULL;
		}
		return PyErr_Occurred() ? NULL : uhpy_raise(rc, "map pop");
	}
	return r;
}

static PyObject *map_check(ProxyObject *p, PyObject *unused)
{
	int rc;

	(void)unused;
	if (uhpy_proxy_usable(p) < 0)
		return NULL;
	rc = uhpy_map_sorted(p) ? uh_smap_check(p->heap->h, p->off)
				: uh_map_check(p->heap->h, p->off);
	if (rc)
		return uhpy_raise(rc, "map check");
	Py_RETURN_NONE;
}

static PyObject *map_get_key_type(ProxyObject *p, void *c)
{
	uint32_t kind;

	(void)c;
	if (uhpy_proxy_usable(p) < 0 || uhpy_map_kind(p, &kind) < 0)
		return NULL;
	PyTypeObject *t = kind == UH_KEY_STRING ? &PyUnicode_Type :
			  kind == UH_KEY_BYTES ? &PyBytes_Type : &PyLong_Type;
	return Py_NewRef((PyObject *)t);
}

static PyMethodDef map_methods[] = {
	{ "pop", (PyCFunction)(void (*)(void))map_pop, METH_FASTCALL,
	  "pop(key[, default]): remove key and return its value." },
	{ "get", (PyCFunction)(void (*)(void))map_get, METH_FASTCALL,
	  "get(key[, default]): the value of key, else default (None)." },
	{ "view", (PyCFunction)map_view, METH_O,
	  "view(key): a read-only memoryview of the bytes value in place, no copy. "
	  "Readable for as long as it exists (even after heap.close()); it shows the "
	  "value while the value lives: once replaced or removed (by any process) it may "
	  "show other bytes. view.obj.valid says whether it still does." },
	{ "get_fields", (PyCFunction)uhpy_map_get_fields, METH_O,
	  "get_fields(key): the fields of the record stored under key as a dict "
	  "(what uniheap.asdict(self[key]) gives, read at one instant, in one call "
	  "with no proxy made), or None if key is not in the map." },
	{ "set_field", (PyCFunction)(void (*)(void))uhpy_map_set_field, METH_FASTCALL,
	  "set_field(key, name, value): setattr(self[key], name, value) in one call "
	  "(an inline field is replaced in place, atomic on its own or in the "
	  "caller's block); True, or False if key is not in the map." },
	{ "scan_fields", (PyCFunction)(void (*)(void))uhpy_map_scan_fields, METH_FASTCALL,
	  "scan_fields(start, count): sorted maps: a list of the fields (dicts, as "
	  "get_fields) of up to count records in key order from the first key >= start "
	  "(None: the smallest). In a block, they are one snapshot; outside one, a "
	  "record freed under the scan raises FreedObjectError." },
	{ "put_record", (PyCFunction)(void (*)(void))uhpy_map_put_record, METH_FASTCALL,
	  "put_record(key, cls, values[, free_old]): self[key] = cls(heap, **values) "
	  "in one call and one atomic step (or the caller's block). With free_old "
	  "true, the object key held before is freed in the same step (never pass it "
	  "when that object is still reachable some other way)." },
	{ "check", (PyCFunction)map_check, METH_NOARGS,
	  "Structural check of the map; raises uniheap.Error naming a problem." },
	{ "_iter", (PyCFunction)uhpy_map_iter_mode, METH_O, NULL },
	{ "_scan", (PyCFunction)uhpy_map_scan, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef map_getset[] = {
	{ "key_type", (getter)map_get_key_type, NULL, "str, bytes or int.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot map_slots[] = {
	{ Py_mp_length, map_len },
	{ Py_mp_subscript, map_subscript },
	{ Py_mp_ass_subscript, map_ass_subscript },
	{ Py_sq_contains, map_contains },
	{ Py_tp_iter, uhpy_map_iter },
	{ Py_tp_methods, map_methods },
	{ Py_tp_getset, map_getset },
	{ 0, NULL },
};

PyType_Spec uhpy_map_spec = {
	.name = "uniheap._uniheap.MapBase",
	.basicsize = sizeof(ProxyObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.slots = map_slots,
};
