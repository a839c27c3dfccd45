/*
 * proxy.c -- the base of every proxy: (heap, offset, class), identity,
 * the liveness check every access makes first, and the wrapping of a
 * reference read from the heap into its proxy (or str/bytes value).
 *
 * A proxy's Python type comes from the Python layer (Heap._proxy_type,
 * cached per class id in the Heap's _types); it is always a subclass of
 * Proxy.
 *
 * Every proxy is made here (uhpy_wrap) and holds a GC pin of its object
 * until its dealloc (pin.c): no proxy exists whose object the online
 * collector may reclaim.
 */
#include "ext.h"

/* 0 if the proxy's heap is open and its object still live and of the
 * proxy's class and generation; else an exception is set. Reads the
 * header in place. */
int uhpy_proxy_usable(ProxyObject *p)
{
	if (!p->heap) {
		PyErr_SetString(PyExc_TypeError, "this proxy is not bound to a heap");
		return -1;
	}
	if (uhpy_heap_usable(p->heap) < 0)
		return -1;
	if (!uhpy_live(p->heap->base, p->off, p->cls)) {
		uhpy_freed(p->off);
		return -1;
	}
	return 0;
}

/* ---- wrapping ---- */

/* The Python type that proxies objects of class cls (cached). */
PyObject *uhpy_proxy_type(HeapObject *hp, uint32_t cls)
{
	PyObject *key = PyLong_FromUnsignedLong(cls), *t;

	if (!key)
		return NULL;
	t = PyDict_GetItemWithError(hp->types, key);
	if (t) {
		Py_DECREF(key);
		return Py_NewRef(t);
	}
	if (PyErr_Occurred()) {
		Py_DECREF(key);
		return NULL;
	}
	t = PyObject_CallMethod((PyObject *)hp, "_proxy_type", "I", cls);
	if (t && !PyType_Check(t)) {
		PyErr_SetString(PyExc_TypeError, "_proxy_type must return a type");
		Py_CLEAR(t);
	}
	if (t && PyDict_SetItem(hp->types, key, t) < 0)
		Py_CLEAR(t);
	Py_DECREF(key);
	return t;
}

/* A new proxy of the object at off, of class cls. */
PyObject *uhpy_wrap(HeapObject *hp, uh_off off, uint32_t cls)
{
	PyObject *t = uhpy_proxy_type(hp, cls);
	ProxyObject *p;

	if (!t)
		return NULL;
	if (!PyType_IsSubtype((PyTypeObject *)t, uhpy_st->proxy_type)) {
		Py_DECREF(t);
		PyErr_SetString(PyExc_TypeError, "_proxy_type must return a Proxy subclass");
		return NULL;
	}
	p = (ProxyObject *)((PyTypeObject *)t)->tp_alloc((PyTypeObject *)t, 0);
	Py_DECREF(t);
	if (!p)
		return NULL;
	p->heap = (HeapObject *)Py_NewRef(hp);
	p->off = off;
	p->cls = cls;
	if (uhpy_pin_take(hp, off, &p->pin) < 0) {
		Py_DECREF(p);	/* nothing pinned: its dealloc releases nothing */
		return NULL;
	}
	return (PyObject *)p;
}

/* The class of the object ref names, from its header in the mapping
 * (uniheap.h, "direct"): 1 if the header is inside the mapping, valid and
 * of ref's generation, else 0 (libuniheap then says why). */
static int class_direct(HeapObject *hp, uh_off ref, uint32_t *cls)
{
	uint64_t off = UH_REF_OFFSET(ref);

	if (!hp->base || off % 8 || off > hp->size - sizeof(struct uhpy_objhdr))
		return 0;
	uint64_t w = __atomic_load_n((const uint64_t *)(hp->base + off + UH_OBJ_WORD_AT),
				     __ATOMIC_ACQUIRE);
	if (!((w >> 32) & UH_OBJ_VALID) || (uint32_t)w >> 16 != UH_REF_GEN(ref))
		return 0;
	*cls = (uint32_t)w & 0xffffu;
	return 1;
}

/* What a reference reads as: None, a str/bytes value, or a proxy. */
PyObject *uhpy_wrap_ref(HeapObject *hp, uh_off off)
{
	uint32_t cls;
	int rc;

	if (off == 0)
		Py_RETURN_NONE;
	if (!class_direct(hp, off, &cls)) {
		if ((rc = uh_obj_class(hp->h, off, &cls)) != 0)
			return uhpy_raise(rc, "reference");
		uhpy_heap_mapped(hp);	/* the check may have mapped more of a grown heap */
	}
	if (cls == UH_CLASS_STRING)
		return uhpy_string_at(hp, off, UH_T_STRING);
	if (cls == UH_CLASS_BYTES)
		return uhpy_string_at(hp, off, UH_T_BYTES);
	return uhpy_wrap(hp, off, cls);
}

/* 1 and *off if obj is a proxy of this heap; 0 if it is no proxy; -1 with
 * an exception if it is a proxy of another heap or of a closed one. */
int uhpy_same_heap(HeapObject *hp, PyObject *obj, uh_off *off)
{
	if (!PyObject_TypeCheck(obj, uhpy_st->proxy_type))
		return 0;
	ProxyObject *p = (ProxyObject *)obj;
	if (p->heap != hp) {
		PyErr_SetString(uhpy_st->by_code[-UH_EINVAL],
				"the object belongs to another heap connection");
		return -1;
	}
	*off = p->off;
	return 1;
}

/* ---- the Proxy type ---- */

static void proxy_dealloc(ProxyObject *p)
{
	PyTypeObject *tp = Py_TYPE(p);

	uhpy_pin_drop(p->heap, &p->pin);
	Py_CLEAR(p->heap);
	tp->tp_free(p);
	Py_DECREF(tp);
}

static PyObject *proxy_richcompare(PyObject *a, PyObject *b, int op)
{
	if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(b, uhpy_st->proxy_type))
		Py_RETURN_NOTIMPLEMENTED;
	ProxyObject *x = (ProxyObject *)a, *y = (ProxyObject *)b;
	int same = x->heap == y->heap && x->off == y->off;
	return PyBool_FromLong(op == Py_EQ ? same : !same);
}

static Py_hash_t proxy_hash(ProxyObject *p)
{
	Py_hash_t hv = (Py_hash_t)(p->off >> 4) ^ (Py_hash_t)((uintptr_t)p->heap >> 4);
	return hv == -1 ? -2 : hv;
}

static PyObject *class_name(ProxyObject *p)
{
	uh_class_info ci;

	if (!p->heap || !p->heap->h || uh_class_info_get(p->heap->h, p->cls, &ci) != 0)
		return PyUnicode_FromFormat("class %u", p->cls);
	return PyUnicode_FromString(ci.name);
}

static PyObject *proxy_repr(ProxyObject *p)
{
	PyObject *name = class_name(p), *r;

	if (!name)
		return NULL;
	r = PyUnicode_FromFormat("<uniheap proxy of %R at offset %llu%s>", name,
				 (unsigned long long)UH_REF_OFFSET(p->off),
				 p->heap && p->heap->h ? "" : " (heap closed)");
	Py_DECREF(name);
	return r;
}

static PyObject *proxy_get_heap(ProxyObject *p, void *c)
{
	(void)c;
	return Py_NewRef(p->heap ? (PyObject *)p->heap : Py_None);
}

static PyObject *proxy_get_offset(ProxyObject *p, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLongLong(p->off);
}

static PyObject *proxy_get_class_id(ProxyObject *p, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLong(p->cls);
}

static PyObject *proxy_get_class_name(ProxyObject *p, void *c)
{
	(void)c;
	return class_name(p);
}

/* _check(): raise if the proxy cannot be used (closed heap, freed). */
static PyObject *proxy_check(ProxyObject *p, PyObject *unused)
{
	(void)unused;
	if (uhpy_proxy_usable(p) < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* pickle: what a pickled proxy is (its heap's socket and file, and its
 * reference) is the Python layer's (Heap._reduce_proxy); the object must
 * be live now. */
static PyObject *proxy_reduce(ProxyObject *p, PyObject *unused)
{
	(void)unused;
	if (uhpy_proxy_usable(p) < 0)
		return NULL;
	return PyObject_CallMethod((PyObject *)p->heap, "_reduce_proxy", "K",
				   (unsigned long long)p->off);
}

static PyMethodDef proxy_methods[] = {
	{ "_check", (PyCFunction)proxy_check, METH_NOARGS, NULL },
	{ "__reduce__", (PyCFunction)proxy_reduce, METH_NOARGS,
	  "Pickling: the proxy's heap (heapd's socket, the heap file) and its reference; "
	  "unpickled in any process, it is a proxy of the same object there." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef proxy_getset[] = {
	{ "heap", (getter)proxy_get_heap, NULL, "The heap connection of this proxy.", NULL },
	{ "offset", (getter)proxy_get_offset, NULL,
	  "The persistent reference: the object's offset in the heap file (bits 0..47) "
	  "and its generation (bits 48..63); heap.proxy(offset) takes it back.", NULL },
	{ "class_id", (getter)proxy_get_class_id, NULL, "The object's class id.", NULL },
	{ "class_name", (getter)proxy_get_class_name, NULL, "The object's class name.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot proxy_slots[] = {
	{ Py_tp_doc, "A live reference to a persistent object: (heap, offset), never a copy." },
	{ Py_tp_dealloc, proxy_dealloc },
	{ Py_tp_richcompare, proxy_richcompare },
	{ Py_tp_hash, proxy_hash },
	{ Py_tp_repr, proxy_repr },
	{ Py_tp_methods, proxy_methods },
	{ Py_tp_getset, proxy_getset },
	{ 0, NULL },
};

PyType_Spec uhpy_proxy_spec = {
	.name = "uniheap._uniheap.Proxy",
	.basicsize = sizeof(ProxyObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.slots = proxy_slots,
};
