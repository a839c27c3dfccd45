/*
 * view.c -- zero-copy views of bytes values (PMap.view): a read-only
 * memoryview over the value's bytes in the mapping, through a small
 * exporter object (BytesView, the memoryview's .obj).
 *
 * Lifetime. The view reads the mapping in place, so the mapping must
 * outlive it: the exporter owns a reference to its Heap, and while any
 * buffer is exported the Heap keeps its session (and so its mapping) even
 * after close(), which then only stops every other use; the session ends
 * when the last view is released (session.c, uhpy_heap_disconnect). A
 * view never reads unmapped memory. Its bytes are the value's only while
 * the object holding them lives (the bytes object, or for a short value
 * in a hash map the key's entry, uhpy_bytes_span): a put that replaces
 * the value, or a remove, frees it (in any process), and the slot may
 * then hold another object, whose bytes the view shows. BytesView.valid
 * says whether the object is still there (its header's class and
 * generation); copy, then check valid, for a consistent copy (uniheap.h,
 * "direct"). The exporter pins that object (pin.c) until it dies, so the
 * online collector does not reclaim it while the view lives; only a
 * replace or remove frees it then.
 */
#include "ext.h"

typedef struct {
	PyObject_HEAD
	HeapObject *heap;	/* owned */
	uh_off ref;		/* the object holding the bytes: offset and generation */
	uint32_t cls;		/* its class, which its header names while it lives */
	uhpy_pin pin;		/* its GC pin, released in view_dealloc */
	const char *base;	/* the mapping */
	const char *data;	/* the object's payload in it */
	Py_ssize_t len;
} ViewObject;

/* Is the mapping still there? Open, or closed with views still exported
 * (an exporter can outlive its buffers: memoryview(view.obj) after the
 * heap was closed must not read unmapped memory). */
static int mapped(const ViewObject *v)
{
	return v->heap->h || v->heap->parked;
}

static int view_getbuffer(ViewObject *v, Py_buffer *b, int flags)
{
	if (!mapped(v)) {
		PyErr_SetString(PyExc_BufferError, "the heap of this view was closed");
		return -1;
	}
	if (flags & PyBUF_WRITABLE) {
		PyErr_SetString(PyExc_BufferError, "a view of a heap value is read-only");
		return -1;
	}
	if (PyBuffer_FillInfo(b, (PyObject *)v, (void *)v->data, v->len, 1, flags) < 0)
		return -1;
	v->heap->exports++;
	return 0;
}

static void view_releasebuffer(ViewObject *v, Py_buffer *b)
{
	(void)b;
	uhpy_heap_export_end(v->heap);
}

static void view_dealloc(ViewObject *v)
{
	PyTypeObject *tp = Py_TYPE(v);

	uhpy_pin_drop(v->heap, &v->pin);
	Py_CLEAR(v->heap);
	tp->tp_free(v);
	Py_DECREF(tp);
}

static PyObject *view_get_valid(ViewObject *v, void *c)
{
	(void)c;
	return PyBool_FromLong(mapped(v) && uhpy_live(v->base, v->ref, v->cls));
}

static PyObject *view_get_offset(ViewObject *v, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLongLong(UH_REF_OFFSET(v->ref));
}

static PyGetSetDef view_getset[] = {
	{ "valid", (getter)view_get_valid, NULL,
	  "True while the object holding the bytes the view shows is still there (not freed).",
	  NULL },
	{ "offset", (getter)view_get_offset, NULL,
	  "The heap offset of the object holding the bytes (the bytes object, or the hash-map "
	  "entry of a short value).", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot view_slots[] = {
	{ Py_tp_dealloc, view_dealloc },
	{ Py_tp_getset, view_getset },
	{ Py_bf_getbuffer, view_getbuffer },
	{ Py_bf_releasebuffer, view_releasebuffer },
	{ Py_tp_doc, "The exporter of a zero-copy view of a bytes value (PMap.view)." },
	{ 0, NULL },
};

PyType_Spec uhpy_view_spec = {
	.name = "uniheap._uniheap.BytesView",
	.basicsize = sizeof(ViewObject),
	.flags = Py_TPFLAGS_DEFAULT,
	.slots = view_slots,
};

PyObject *uhpy_view_of(HeapObject *hp, const uh_value *val)
{
	uh_off ref = val->u.ref;
	const void *data;
	size_t len;
	uint32_t cls;
	ViewObject *v;
	PyObject *mv;

	if (uhpy_bytes_span(hp, val, &data, &len, &cls) < 0)
		return NULL;
	v = PyObject_New(ViewObject, uhpy_st->view_type);
	if (!v)
		return NULL;
	v->heap = (HeapObject *)Py_NewRef(hp);
	v->ref = ref;
	v->cls = cls;
	v->pin = (uhpy_pin){ 0 };
	v->base = hp->base;
	v->data = data;
	v->len = (Py_ssize_t)len;
	if (uhpy_pin_take(hp, ref, &v->pin) < 0) {
		Py_DECREF(v);
		return NULL;
	}
	mv = PyMemoryView_FromObject((PyObject *)v);
	Py_DECREF(v);
	return mv;
}
