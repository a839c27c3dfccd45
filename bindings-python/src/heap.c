/*
 * heap.c -- the Heap type: a session with heapd and the mapped heap.
 *
 * The pure-Python uniheap.Heap subclasses it and adds the mapping-style
 * roots and class declaration logic. Here: connect, close, introspection,
 * classes, allocation and roots, one call into libuniheap each. Below it:
 * when a heap can be used and how its session ends (session.c), blocks
 * (block.c, whose atomic() is a Heap method) and the wrapping of what it
 * returns into proxies (proxy.c); waiting for changes (wait.c: token and
 * wait are Heap methods, close() ends the wait sessions first).
 */
#include <limits.h>
#include <math.h>

#include "ext.h"

/* ---- life cycle ---- */

/* connect's timeout: None -> UH_CONNECT_DEFAULT, else seconds (a real
 * number, 0 or more) -> milliseconds, rounded up, at most INT_MAX. */
static int timeout_ms_of(PyObject *o, int *ms)
{
	if (o == Py_None) {
		*ms = UH_CONNECT_DEFAULT;
		return 0;
	}
	double s = PyFloat_AsDouble(o);
	if (s == -1.0 && PyErr_Occurred())
		return -1;
	if (!(s >= 0)) {	/* negative or NaN */
		PyErr_Format(PyExc_ValueError, "timeout must be None or 0 or more seconds, not %R", o);
		return -1;
	}
	double v = ceil(s * 1000.0);
	*ms = v >= (double)INT_MAX ? INT_MAX : (int)v;
	return 0;
}

static int heap_init(HeapObject *hp, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "socket", "readonly", "timeout", NULL };
	PyObject *sock_obj = Py_None, *sock_bytes = NULL, *timeout_obj = Py_None;
	int readonly = 0, rc, timeout_ms;
	uh_heap *h = NULL;
	uh_info info;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O$pO:Heap", kwlist, &sock_obj, &readonly,
					 &timeout_obj))
		return -1;
	if (timeout_ms_of(timeout_obj, &timeout_ms))
		return -1;
	if (hp->h) {
		PyErr_SetString(PyExc_RuntimeError, "Heap is already connected");
		return -1;
	}
	if (sock_obj != Py_None && !PyUnicode_FSConverter(sock_obj, &sock_bytes))
		return -1;
	const char *sock = sock_bytes ? PyBytes_AS_STRING(sock_bytes) : NULL;
	Py_BEGIN_ALLOW_THREADS
	rc = uh_connect_timeout(sock, readonly ? UH_READONLY : 0, timeout_ms, &h);
	Py_END_ALLOW_THREADS
	Py_XDECREF(sock_bytes);
	if (rc) {
		uhpy_raise(rc, "connect");
		return -1;
	}
	uh_heap_info(h, &info);
	hp->h = h;
	hp->conn++;	/* pins of an earlier connection are not this session's */
	hp->base = uh_base(h);
	hp->size = info.heap_size;
	hp->readonly = readonly;
	hp->epoch = hp->wepoch = uhpy_fork_epoch;
	return 0;
}

static PyObject *heap_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	HeapObject *hp = (HeapObject *)type->tp_alloc(type, 0);

	(void)args;
	(void)kw;
	if (!hp)
		return NULL;
	hp->types = PyDict_New();
	if (!hp->types) {
		Py_DECREF(hp);
		return NULL;
	}
	return (PyObject *)hp;
}

static int heap_traverse(HeapObject *hp, visitproc visit, void *arg)
{
	Py_VISIT(Py_TYPE(hp));
	Py_VISIT(hp->types);
	Py_VISIT(hp->atomic);
	Py_VISIT(hp->dict);
	Py_VISIT(hp->dec_type);
	Py_VISIT(hp->dec_fields);
	Py_VISIT(hp->dec_template);
	Py_VISIT(hp->put_cls);
	Py_VISIT(hp->put_fields);
	return 0;
}

static int heap_clear(HeapObject *hp)
{
	Py_CLEAR(hp->types);
	Py_CLEAR(hp->atomic);
	Py_CLEAR(hp->dict);
	Py_CLEAR(hp->dec_type);
	Py_CLEAR(hp->dec_fields);
	Py_CLEAR(hp->dec_template);
	Py_CLEAR(hp->put_cls);
	Py_CLEAR(hp->put_fields);
	return 0;
}

static void heap_dealloc(HeapObject *hp)
{
	PyTypeObject *tp = Py_TYPE(hp);

	PyObject_GC_UnTrack(hp);
	if (hp->weakrefs)
		PyObject_ClearWeakRefs((PyObject *)hp);
	uhpy_waits_close(hp);
	uhpy_heap_disconnect(hp);
	heap_clear(hp);
	tp->tp_free(hp);
	Py_DECREF(tp);
}

static PyObject *heap_close(HeapObject *hp, PyObject *unused)
{
	(void)unused;
	uhpy_waits_close(hp);	/* first: its waits may still be running */
	uhpy_heap_disconnect(hp);
	Py_RETURN_NONE;
}

static PyObject *heap_get_closed(HeapObject *hp, void *c)
{
	(void)c;
	return PyBool_FromLong(hp->h == NULL);
}

static PyObject *heap_get_readonly(HeapObject *hp, void *c)
{
	(void)c;
	return PyBool_FromLong(hp->readonly);
}

static PyObject *heap_get_max_tries(HeapObject *hp, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLong(hp->max_tries ? hp->max_tries : 100);
}

static int heap_set_max_tries(HeapObject *hp, PyObject *v, void *c)
{
	(void)c;
	long n = v ? PyLong_AsLong(v) : -1;
	if (n == -1 && PyErr_Occurred())
		return -1;
	if (n < 1 || n > 1000000) {
		PyErr_SetString(PyExc_ValueError, "max_tries must be 1..1000000");
		return -1;
	}
	hp->max_tries = (unsigned)n;
	return 0;
}

/* ---- introspection ---- */

static PyObject *heap_info(HeapObject *hp, PyObject *unused)
{
	uh_info i;

	(void)unused;
	UHPY_USABLE(hp);
	uh_heap_info(hp->h, &i);
	return Py_BuildValue("{s:K,s:I,s:s,s:I,s:O,s:s,s:s,s:K,s:K,s:K}", "heap_size",
			     (unsigned long long)i.heap_size, "format_version", i.format_version,
			     "durability", uh_durability_name(i.durability), "session", i.session,
			     "readonly", i.readonly ? Py_True : Py_False, "name", i.name, "path",
			     i.path, "cur_size", (unsigned long long)i.cur_size, "max_size",
			     (unsigned long long)i.max_size, "used_size",
			     (unsigned long long)i.used_size);
}

static PyObject *heap_stats(HeapObject *hp, PyObject *unused)
{
	uh_stats s;

	(void)unused;
	UHPY_USABLE(hp);
	uh_stats_get(hp->h, &s);
#define K(f) #f, (unsigned long long)s.f
	return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,"
			     "s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}",
			     K(allocs), K(frees), K(commits), K(empty_commits), K(aborts),
			     K(conflicts), K(barriers), K(flushes), K(log_bytes), K(arena_leases),
			     K(lock_waits), K(aborts_locked), K(aborts_stale), K(aborts_logfull),
			     K(aborts_user), K(retries), K(read_waits), K(reattaches),
			     K(reattach_ns), K(opt_reads), K(opt_retries), K(opt_fallbacks),
			     K(pins), K(gc_cycles), K(gc_greys), K(gc_busy_waits));
#undef K
}

static PyObject *heap_in_block(HeapObject *hp, PyObject *unused)
{
	(void)unused;
	UHPY_USABLE(hp);
	return PyBool_FromLong(uh_in_block(hp->h) > 0);
}

static PyObject *heap_check(HeapObject *hp, PyObject *unused)
{
	uint64_t n = 0;
	int rc;

	(void)unused;
	UHPY_USABLE(hp);
	Py_BEGIN_ALLOW_THREADS
	rc = uh_heap_check(hp->h, &n);
	Py_END_ALLOW_THREADS
	if (rc)
		return uhpy_raise(rc, "heap check");
	return PyLong_FromUnsignedLongLong(n);
}

/* One class as a tuple (id, name, kind, payload_size, ((field, type,
 * offset, ref_class), ...)); an inline field's ref_class is its capacity,
 * as in the declaration (uh_field_spec). */
static PyObject *class_tuple(HeapObject *hp, uint32_t id)
{
	uh_class_info ci;
	uh_field_info fi;
	int rc = uh_class_info_get(hp->h, id, &ci);

	if (rc)
		return uhpy_raise(rc, "class info");
	PyObject *fields = PyTuple_New(ci.nfields);
	if (!fields)
		return NULL;
	for (uint32_t i = 0; i < ci.nfields; i++) {
		if ((rc = uh_field_info_get(hp->h, id, i, &fi)) != 0) {
			Py_DECREF(fields);
			return uhpy_raise(rc, "field info");
		}
		PyObject *f = Py_BuildValue("(sIII)", fi.name, fi.type, fi.offset,
					    fi.capacity ? fi.capacity : fi.ref_class);
		if (!f) {
			Py_DECREF(fields);
			return NULL;
		}
		PyTuple_SET_ITEM(fields, i, f);
	}
	return Py_BuildValue("(IsIIN)", id, ci.name, ci.kind, ci.payload_size, fields);
}

static PyObject *heap_class_info(HeapObject *hp, PyObject *arg)
{
	unsigned long id = PyLong_AsUnsignedLong(arg);

	if (id == (unsigned long)-1 && PyErr_Occurred())
		return NULL;
	UHPY_USABLE(hp);
	return class_tuple(hp, (uint32_t)id);
}

/* Every class of the heap's class table, as class_tuple()s. */
static PyObject *heap_class_table(HeapObject *hp, PyObject *unused)
{
	uh_class_info ci;
	PyObject *out;

	(void)unused;
	UHPY_USABLE(hp);
	if (!(out = PyList_New(0)))
		return NULL;
	for (uint32_t id = 1; id < 65536; id++) {
		if (uh_class_info_get(hp->h, id, &ci) != 0)
			continue;
		PyObject *t = class_tuple(hp, id);
		if (!t || PyList_Append(out, t) < 0) {
			Py_XDECREF(t);
			Py_DECREF(out);
			return NULL;
		}
		Py_DECREF(t);
	}
	return out;
}

static PyObject *heap_class_find(HeapObject *hp, PyObject *arg)
{
	const char *name = PyUnicode_AsUTF8(arg);
	uint32_t id;

	if (!name)
		return NULL;
	UHPY_USABLE(hp);
	if (uh_class_find(hp->h, name, &id) != 0)
		Py_RETURN_NONE;
	return PyLong_FromUnsignedLong(id);
}

/* _register(name, ((field, type, ref_class or capacity), ...)) -> class id */
static PyObject *heap_register(HeapObject *hp, PyObject *args)
{
	const char *name;
	PyObject *spec, *seq;
	uint32_t id;
	int rc;

	if (!PyArg_ParseTuple(args, "sO:_register", &name, &spec))
		return NULL;
	UHPY_USABLE(hp);
	if (!(seq = PySequence_Fast(spec, "field spec must be a sequence")))
		return NULL;
	Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
	uh_field_spec *f = PyMem_Calloc(n ? n : 1, sizeof(*f));
	if (!f) {
		Py_DECREF(seq);
		return PyErr_NoMemory();
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "sII;field spec entry",
				      &f[i].name, &f[i].type, &f[i].ref_class)) {
			PyMem_Free(f);
			Py_DECREF(seq);
			return NULL;
		}
	}
	Py_BEGIN_ALLOW_THREADS
	rc = uh_class_register(hp->h, name, f, (uint32_t)n, &id);
	Py_END_ALLOW_THREADS
	PyMem_Free(f);
	Py_DECREF(seq);
	if (rc)
		return uhpy_raise(rc, name);
	return PyLong_FromUnsignedLong(id);
}

/* ---- objects ---- */

static PyObject *heap_alloc(HeapObject *hp, PyObject *arg)
{
	unsigned long id = PyLong_AsUnsignedLong(arg);
	uh_off off;
	int rc;

	if (id == (unsigned long)-1 && PyErr_Occurred())
		return NULL;
	UHPY_USABLE(hp);
	if ((rc = uh_alloc(hp->h, (uint32_t)id, &off)) != 0)
		return uhpy_raise(rc, "alloc");
	return uhpy_wrap(hp, off, (uint32_t)id);
}

static PyObject *heap_free(HeapObject *hp, PyObject *obj)
{
	uh_off off;
	int rc;

	UHPY_USABLE(hp);
	if ((rc = uhpy_same_heap(hp, obj, &off)) <= 0) {
		if (rc == 0)
			PyErr_Format(PyExc_TypeError, "free() takes a persistent object, not %.80s",
				     Py_TYPE(obj)->tp_name);
		return NULL;
	}
	if ((rc = uh_free(hp->h, off)) != 0)
		return uhpy_raise(rc, "free");
	Py_RETURN_NONE;
}

static PyObject *heap_proxy(HeapObject *hp, PyObject *arg)
{
	unsigned long long off = PyLong_AsUnsignedLongLong(arg);

	if (off == (unsigned long long)-1 && PyErr_Occurred())
		return NULL;
	UHPY_USABLE(hp);
	if (off == 0) {
		PyErr_SetString(uhpy_st->by_code[-UH_EFREED], "offset 0 is the null reference");
		return NULL;
	}
	return uhpy_wrap_ref(hp, off);
}

/* _new_map(key_kind, sorted), _new_list(), _new_array(elem_type, length) */
static PyObject *heap_new_map(HeapObject *hp, PyObject *args)
{
	unsigned kind;
	int sorted, rc;
	uh_off off;

	if (!PyArg_ParseTuple(args, "Ip:_new_map", &kind, &sorted))
		return NULL;
	UHPY_USABLE(hp);
	rc = sorted ? uh_smap_new(hp->h, kind, &off) : uh_map_new(hp->h, kind, &off);
	if (rc)
		return uhpy_raise(rc, sorted ? "new sorted map" : "new map");
	return uhpy_wrap(hp, off, sorted ? UH_CLASS_SMAP : UH_CLASS_MAP);
}

static PyObject *heap_new_list(HeapObject *hp, PyObject *unused)
{
	uh_off off;
	int rc;

	(void)unused;
	UHPY_USABLE(hp);
	if ((rc = uh_list_new(hp->h, &off)) != 0)
		return uhpy_raise(rc, "new list");
	return uhpy_wrap(hp, off, UH_CLASS_LIST);
}

static PyObject *heap_new_array(HeapObject *hp, PyObject *args)
{
	unsigned type;
	unsigned long long len;
	uh_off off;
	int rc;

	if (!PyArg_ParseTuple(args, "IK:_new_array", &type, &len))
		return NULL;
	UHPY_USABLE(hp);
	if ((rc = uh_array_new(hp->h, type, len, &off)) != 0)
		return uhpy_raise(rc, "new array");
	return uhpy_wrap(hp, off, UH_CLASS_ARRAY);
}

/* ---- roots ---- */

static const char *root_name(PyObject *name, Py_ssize_t *len)
{
	if (!PyUnicode_Check(name)) {
		PyErr_Format(PyExc_TypeError, "root names are str, not %.80s",
			     Py_TYPE(name)->tp_name);
		return NULL;
	}
	return PyUnicode_AsUTF8AndSize(name, len);
}

static PyObject *heap_root_get(HeapObject *hp, PyObject *name)
{
	Py_ssize_t len;
	const char *s = root_name(name, &len);
	uh_off off;
	int rc;

	if (!s)
		return NULL;
	UHPY_USABLE(hp);
	if ((rc = uh_root_get(hp->h, s, &off)) == UH_ENOTFOUND) {
		PyErr_SetObject(PyExc_KeyError, name);
		return NULL;
	}
	if (rc)
		return uhpy_raise(rc, "root");
	return uhpy_wrap_ref(hp, off);
}

static PyObject *heap_root_set(HeapObject *hp, PyObject *args)
{
	PyObject *name, *obj;
	Py_ssize_t len;
	uh_off off;
	int rc;

	if (!PyArg_ParseTuple(args, "OO:_root_set", &name, &obj))
		return NULL;
	const char *s = root_name(name, &len);
	if (!s)
		return NULL;
	UHPY_USABLE(hp);
	if ((rc = uhpy_same_heap(hp, obj, &off)) <= 0) {
		if (rc == 0)
			PyErr_Format(PyExc_TypeError,
				     "a root names a persistent object (PObject, PMap, PList, ...), "
				     "not %.80s; use del heap.roots[name] to remove one",
				     Py_TYPE(obj)->tp_name);
		return NULL;
	}
	if ((rc = uh_root_set(hp->h, s, off)) != 0)
		return uhpy_raise(rc, "root");
	Py_RETURN_NONE;
}

static PyObject *heap_root_del(HeapObject *hp, PyObject *name)
{
	Py_ssize_t len;
	const char *s = root_name(name, &len);
	int rc;

	if (!s)
		return NULL;
	UHPY_USABLE(hp);
	if ((rc = uh_root_del(hp->h, s)) == UH_ENOTFOUND) {
		PyErr_SetObject(PyExc_KeyError, name);
		return NULL;
	}
	if (rc)
		return uhpy_raise(rc, "root");
	Py_RETURN_NONE;
}

/* The root names, a snapshot. */
static PyObject *heap_root_names(HeapObject *hp, PyObject *unused)
{
	uint64_t cur = 0;
	const char *name;
	size_t len;
	uh_off v;
	PyObject *out;

	(void)unused;
	UHPY_USABLE(hp);
	if (!(out = PyList_New(0)))
		return NULL;
	while (uh_root_next(hp->h, &cur, &name, &len, &v) == 0) {
		PyObject *s = PyUnicode_DecodeUTF8(name, (Py_ssize_t)len, "replace");
		if (!s || PyList_Append(out, s) < 0) {
			Py_XDECREF(s);
			Py_DECREF(out);
			return NULL;
		}
		Py_DECREF(s);
	}
	return out;
}

static PyObject *heap_root_count(HeapObject *hp, PyObject *unused)
{
	uint64_t n = 0;
	int rc;

	(void)unused;
	UHPY_USABLE(hp);
	if ((rc = uh_root_count(hp->h, &n)) != 0)
		return uhpy_raise(rc, "roots");
	return PyLong_FromUnsignedLongLong(n);
}

/* ---- type ---- */

static PyMethodDef heap_methods[] = {
	{ "close", (PyCFunction)heap_close, METH_NOARGS,
	  "Detach from heapd and unmap the heap (idempotent). An open block is rolled back; "
	  "proxies then raise HeapClosedError." },
	{ "info", (PyCFunction)heap_info, METH_NOARGS, "Heap facts: size, format, durability, ..." },
	{ "stats", (PyCFunction)heap_stats, METH_NOARGS,
	  "This session's libuniheap counters; pins: GC pins held now (one per live proxy), "
	  "gc_cycles: GC marks this session took part in." },
	{ "in_block", (PyCFunction)heap_in_block, METH_NOARGS, "True inside an atomic block." },
	{ "check", (PyCFunction)heap_check, METH_NOARGS,
	  "Check every object reachable from the roots; returns how many were visited." },
	{ "free", (PyCFunction)heap_free, METH_O,
	  "Free a persistent object (at commit when inside a block)." },
	{ "proxy", (PyCFunction)heap_proxy, METH_O,
	  "The object at a persistent reference (offset), as a proxy." },
	{ "atomic", (PyCFunction)(void (*)(void))uhpy_heap_atomic, METH_VARARGS | METH_KEYWORDS,
	  "atomic() -> context manager of a failure-atomic block;\n"
	  "atomic(fn, *args, **kwargs) -> fn's result, run in a block re-run on Conflict." },
	{ "token", (PyCFunction)uhpy_heap_token, METH_O,
	  "token(obj) -> int: obj's change token (an object, a collection or uniheap.ROOTS); "
	  "any commit that changes obj moves it." },
	{ "wait", (PyCFunction)(void (*)(void))uhpy_heap_wait, METH_VARARGS | METH_KEYWORDS,
	  "wait(obj, since=None, timeout=None) -> int | None: sleep until obj's token differs "
	  "from since (None: its token now); the new token, or None after timeout seconds. "
	  "obj may be a list of up to 64 objects (since then a list too): the list of tokens." },
	{ "_wait_pool", (PyCFunction)uhpy_heap_wait_pool, METH_NOARGS, NULL },
	{ "_class_info", (PyCFunction)heap_class_info, METH_O, NULL },
	{ "_class_table", (PyCFunction)heap_class_table, METH_NOARGS, NULL },
	{ "_class_find", (PyCFunction)heap_class_find, METH_O, NULL },
	{ "_register", (PyCFunction)heap_register, METH_VARARGS, NULL },
	{ "_alloc", (PyCFunction)heap_alloc, METH_O, NULL },
	{ "_new_map", (PyCFunction)heap_new_map, METH_VARARGS, NULL },
	{ "_new_list", (PyCFunction)heap_new_list, METH_NOARGS, NULL },
	{ "_new_array", (PyCFunction)heap_new_array, METH_VARARGS, NULL },
	{ "_root_get", (PyCFunction)heap_root_get, METH_O, NULL },
	{ "_root_set", (PyCFunction)heap_root_set, METH_VARARGS, NULL },
	{ "_root_del", (PyCFunction)heap_root_del, METH_O, NULL },
	{ "_root_names", (PyCFunction)heap_root_names, METH_NOARGS, NULL },
	{ "_root_count", (PyCFunction)heap_root_count, METH_NOARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef heap_getset[] = {
	{ "closed", (getter)heap_get_closed, NULL, "True once closed.", NULL },
	{ "readonly", (getter)heap_get_readonly, NULL, "Connected read-only.", NULL },
	{ "max_tries", (getter)heap_get_max_tries, (setter)heap_set_max_tries,
	  "Tries of atomic(fn, ...) before it raises Conflict (default 100).", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMemberDef heap_members[] = {
	{ "_types", T_OBJECT, offsetof(HeapObject, types), READONLY,
	  "class id -> proxy type (cache)" },
	{ "__dictoffset__", T_PYSSIZET, offsetof(HeapObject, dict), READONLY, NULL },
	{ "__weaklistoffset__", T_PYSSIZET, offsetof(HeapObject, weakrefs), READONLY, NULL },
	{ NULL, 0, 0, 0, NULL },
};

static PyType_Slot heap_slots[] = {
	{ Py_tp_doc, "A session with heapd: the heap mapped into this process." },
	{ Py_tp_new, heap_new },
	{ Py_tp_init, heap_init },
	{ Py_tp_dealloc, heap_dealloc },
	{ Py_tp_traverse, heap_traverse },
	{ Py_tp_clear, heap_clear },
	{ Py_tp_methods, heap_methods },
	{ Py_tp_getset, heap_getset },
	{ Py_tp_members, heap_members },
	{ 0, NULL },
};

PyType_Spec uhpy_heap_spec = {
	.name = "uniheap._uniheap.Heap",
	.basicsize = sizeof(HeapObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
	.slots = heap_slots,
};
