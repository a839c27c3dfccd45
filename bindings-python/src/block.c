/*
 * block.c -- failure-atomic blocks of a Heap: the steps the bindings'
 * own multi-call operations run in, `with heap.atomic():` (the Atomic
 * context) and heap.atomic(fn, ...) (uh_run, re-run on Conflict).
 *
 * Nesting is flattened, as in libuniheap: an inner level joins the
 * outermost block; only the outermost one commits or rolls back. A
 * session runs one block at a time (hp->block_thread, session.c).
 */
#include "ext.h"

/* ---- steps ---- */

int uhpy_step_begin(HeapObject *hp, int *outer)
{
	*outer = uh_in_block(hp->h) == 0;
	return uh_begin(hp->h);
}

/* Close the step: commit (or leave one nesting level); on failure of an
 * outermost step roll it back. Returns the step's result. */
int uhpy_step_end(HeapObject *hp, int outer, int rc)
{
	if (rc == 0)
		return uh_commit(hp->h);
	if (outer) {
		uh_abort(hp->h);	/* keeps uh_errmsg() of the failed call */
		return rc;
	}
	uh_commit(hp->h);	/* leave our level; a doomed block stays doomed */
	return rc;
}

/* ---- with heap.atomic(): ---- */

/* End the current level of a with-block: commit, or roll back when an
 * exception is leaving it. Flattened nesting: an exception that leaves an
 * inner level dooms the whole block (rolled back when the outermost level
 * ends), because the inner level's writes cannot be undone alone. */
static PyObject *block_end(HeapObject *hp, int failed)
{
	int depth = uh_in_block(hp->h), rc;

	if (depth == 0) {
		PyErr_SetString(uhpy_st->error, "atomic(): no block is open");
		return NULL;
	}
	if (depth > 1) {
		if (failed)
			hp->rollback_only = 1;
		uh_commit(hp->h);	/* leaves one level; a doomed block stays doomed */
		Py_RETURN_NONE;
	}
	hp->block_thread = 0;
	if (failed || hp->rollback_only) {
		int inner = hp->rollback_only && !failed;
		hp->rollback_only = 0;
		uh_abort(hp->h);
		if (inner) {
			PyErr_SetString(uhpy_st->error,
					"atomic(): the block was rolled back because an exception "
					"left a nested atomic() block");
			return NULL;
		}
		Py_RETURN_NONE;
	}
	if ((rc = uh_commit(hp->h)) != 0)
		return uhpy_raise(rc, "commit");
	Py_RETURN_NONE;
}

typedef struct {
	PyObject_HEAD
	HeapObject *heap;	/* owned */
} AtomicObject;

static PyObject *atomic_enter(AtomicObject *a, PyObject *unused)
{
	HeapObject *hp = a->heap;
	int rc;

	(void)unused;
	UHPY_USABLE(hp);
	int outer = uh_in_block(hp->h) == 0;
	if ((rc = uh_begin(hp->h)) != 0)
		return uhpy_raise(rc, "begin");
	if (outer) {
		hp->rollback_only = 0;
		hp->block_thread = PyThread_get_thread_ident();
	}
	return Py_NewRef((PyObject *)hp);
}

static PyObject *atomic_exit(AtomicObject *a, PyObject *const *args, Py_ssize_t n)
{
	UHPY_USABLE(a->heap);
	return block_end(a->heap, n > 0 && args[0] != Py_None);
}

static int atomic_traverse(AtomicObject *a, visitproc visit, void *arg)
{
	Py_VISIT(Py_TYPE(a));
	Py_VISIT(a->heap);
	return 0;
}

static int atomic_clear(AtomicObject *a)
{
	Py_CLEAR(a->heap);
	return 0;
}

static void atomic_dealloc(AtomicObject *a)
{
	PyTypeObject *tp = Py_TYPE(a);

	PyObject_GC_UnTrack(a);
	atomic_clear(a);
	tp->tp_free(a);
	Py_DECREF(tp);
}

static PyMethodDef atomic_methods[] = {
	{ "__enter__", (PyCFunction)atomic_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)(void (*)(void))atomic_exit, METH_FASTCALL, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyType_Slot atomic_slots[] = {
	{ Py_tp_doc, "Context of `with heap.atomic():` (reusable, reentrant)." },
	{ Py_tp_methods, atomic_methods },
	{ Py_tp_traverse, atomic_traverse },
	{ Py_tp_clear, atomic_clear },
	{ Py_tp_dealloc, atomic_dealloc },
	{ 0, NULL },
};

PyType_Spec uhpy_atomic_spec = {
	.name = "uniheap.Atomic",
	.basicsize = sizeof(AtomicObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = atomic_slots,
};

/* atomic(fn, *args, **kw): the body of uh_run(). */
struct run_call {
	PyObject *fn, *args, *kw;
	PyObject *result;	/* owned: fn's result once a try committed */
	int failed;		/* fn raised something other than Conflict */
};

static int run_body(uh_heap *h, void *arg)
{
	struct run_call *c = arg;

	(void)h;
	Py_CLEAR(c->result);
	c->result = PyObject_Call(c->fn, c->args, c->kw);
	if (c->result)
		return 0;
	if (PyErr_ExceptionMatches(uhpy_st->by_code[-UH_ECONFLICT])) {
		PyErr_Clear();
		return UH_ECONFLICT;
	}
	c->failed = 1;
	return 1;	/* not a uniheap code: uh_run rolls back and returns it */
}

PyObject *uhpy_heap_atomic(HeapObject *hp, PyObject *args, PyObject *kw)
{
	Py_ssize_t n = PyTuple_GET_SIZE(args);
	int rc;

	UHPY_USABLE(hp);
	if (n == 0) {
		if (kw && PyDict_GET_SIZE(kw)) {
			PyErr_SetString(PyExc_TypeError, "atomic() takes keyword arguments only "
					"after a function: atomic(fn, *args, **kwargs)");
			return NULL;
		}
		if (!hp->atomic) {
			AtomicObject *a = PyObject_GC_New(AtomicObject, uhpy_st->atomic_type);
			if (!a)
				return NULL;
			a->heap = (HeapObject *)Py_NewRef(hp);
			PyObject_GC_Track(a);
			hp->atomic = (PyObject *)a;
		}
		return Py_NewRef(hp->atomic);
	}
	struct run_call c = { .fn = PyTuple_GET_ITEM(args, 0), .kw = kw };
	if (!PyCallable_Check(c.fn)) {
		PyErr_Format(PyExc_TypeError, "atomic(fn, ...): fn must be callable, not %.80s",
			     Py_TYPE(c.fn)->tp_name);
		return NULL;
	}
	if (!(c.args = PyTuple_GetSlice(args, 1, n)))
		return NULL;
	if (uh_in_block(hp->h)) {
		/* Joins the enclosing block; its owner retries the whole. */
		c.result = PyObject_Call(c.fn, c.args, kw);
		Py_DECREF(c.args);
		return c.result;
	}
	hp->rollback_only = 0;
	hp->block_thread = PyThread_get_thread_ident();
	rc = uh_run(hp->h, run_body, &c, hp->max_tries);
	hp->block_thread = 0;
	Py_DECREF(c.args);
	if (rc == 0)
		return c.result ? c.result : Py_NewRef(Py_None);
	Py_CLEAR(c.result);
	if (c.failed && rc == 1)
		return NULL;	/* fn's exception is still set */
	if (PyErr_Occurred())
		PyErr_Clear();
	return uhpy_raise(rc, "atomic");
}
