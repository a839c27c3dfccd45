/*
 * errors.c -- one table from libuniheap error codes to uniheap.Error
 * subclasses, the one function that raises them, and the errors the
 * binding raises itself (closed heap, freed object, a value that kept
 * changing under its copy). Below everything but state.c: it reads the
 * module state and calls no other file of the extension.
 */
#include "ext.h"

struct err_class {
	int code;		/* UH_E*, or 0 for binding-side errors */
	const char *name;
	const char *base;	/* extra builtin base, or NULL */
	const char *doc;
};

static const struct err_class err_classes[] = {
	{ UH_ECONFLICT, "Conflict", NULL,
	  "Lost a conflict with another session; the block was rolled back." },
	{ UH_EFREED, "FreedObjectError", NULL,
	  "The object was freed, or the reference does not name an object." },
	{ UH_ECLASSMISMATCH, "ClassMismatch", NULL,
	  "The class is registered in this heap with another layout." },
	{ UH_EDISCONNECTED, "Disconnected", "ConnectionError", "heapd is unreachable." },
	{ UH_ENOSPC, "HeapFull", "MemoryError", "The heap is out of space." },
	{ UH_EREADONLY, "ReadOnlyError", NULL, "Write on a read-only heap." },
	{ UH_EFORK, "ForkedError", NULL,
	  "In a forked child: a block that was open at the fork (the parent's) was used; or "
	  "the child could not attach anew." },
	{ UH_ELOGFULL, "BlockTooLarge", NULL,
	  "Kept for compatibility: a block's redo log grows as it needs (HeapFull when the heap is full)." },
	{ UH_ETYPE, "TypeMismatch", "TypeError", "Wrong field or element type, or wrong class." },
	{ UH_ERANGE, "ValueRangeError", "ValueError",
	  "A value or index does not fit its field or collection." },
	{ UH_EINVAL, "InvalidValue", "ValueError", "Bad argument." },
	{ UH_ESTATE, "StateError", "RuntimeError",
	  "Not allowed in this state, e.g. a wait inside a block." },
	{ 0, "HeapClosedError", NULL, "The heap (or the proxy's heap) is closed." },
};

/* Codes without a class of their own raise these. */
static const struct { int code; int as; } err_alias[] = {
	{ UH_EUTF8, UH_EINVAL },
};

static PyObject *new_class(PyObject *m, const char *name, PyObject *base, const char *extra,
			   const char *doc)
{
	char qual[96];
	PyObject *bases, *cls;

	snprintf(qual, sizeof(qual), "uniheap.%s", name);
	if (extra) {
		PyObject *b = PyDict_GetItemString(PyEval_GetBuiltins(), extra);
		bases = b ? PyTuple_Pack(2, base, b) : NULL;
	} else {
		bases = PyTuple_Pack(1, base);
	}
	if (!bases)
		return NULL;
	cls = PyErr_NewExceptionWithDoc(qual, doc, bases, NULL);
	Py_DECREF(bases);
	if (cls && PyModule_AddObjectRef(m, name, cls) < 0)
		Py_CLEAR(cls);
	return cls;
}

int uhpy_errors_init(PyObject *m, uhpy_state *st)
{
	st->error = PyErr_NewExceptionWithDoc("uniheap.Error",
		"Base of every uniheap error; .code is libuniheap's error code (0 if none).",
		NULL, NULL);
	if (!st->error || PyModule_AddObjectRef(m, "Error", st->error) < 0)
		return -1;
	PyObject *zero = PyLong_FromLong(0);
	if (!zero || PyObject_SetAttrString(st->error, "code", zero) < 0) {
		Py_XDECREF(zero);
		return -1;
	}
	Py_DECREF(zero);
	for (size_t i = 0; i < sizeof(err_classes) / sizeof(err_classes[0]); i++) {
		const struct err_class *e = &err_classes[i];
		PyObject *cls = new_class(m, e->name, st->error, e->base, e->doc);
		if (!cls)
			return -1;
		if (e->code)
			st->by_code[-e->code] = cls;
		else
			st->closed_error = cls;
	}
	for (size_t i = 0; i < sizeof(err_alias) / sizeof(err_alias[0]); i++)
		st->by_code[-err_alias[i].code] = st->by_code[-err_alias[i].as];
	/* The rest raise the base class: by_code[-code] is always a class
	 * (held by the module, as the aliases are). */
	for (int c = 1; c <= -UH_LAST_ERRCODE; c++)
		if (!st->by_code[c])
			st->by_code[c] = st->error;
	return 0;
}

/* Raise the class of rc with "what: <libuniheap's message>". */
PyObject *uhpy_raise(int rc, const char *what)
{
	uhpy_state *st = uhpy_st;
	PyObject *cls = st->error, *exc, *code;
	const char *msg = uh_errmsg();

	if (rc < 0 && -rc <= -UH_LAST_ERRCODE && st->by_code[-rc])
		cls = st->by_code[-rc];
	if (!msg || !*msg)
		msg = uh_strerror(rc);
	exc = what ? PyUnicode_FromFormat("%s: %s", what, msg) : PyUnicode_FromString(msg);
	if (!exc)
		return NULL;
	PyObject *inst = PyObject_CallOneArg(cls, exc);
	Py_DECREF(exc);
	if (!inst)
		return NULL;
	code = PyLong_FromLong(rc);
	if (code) {
		PyObject_SetAttrString(inst, "code", code);
		Py_DECREF(code);
	}
	PyErr_SetObject(cls, inst);
	Py_DECREF(inst);
	return NULL;
}

PyObject *uhpy_closed(void)
{
	PyErr_SetString(uhpy_st->closed_error, "the heap is closed");
	return NULL;
}

PyObject *uhpy_freed(uh_off ref)
{
	PyErr_Format(uhpy_st->by_code[-UH_EFREED],
		     "the object at offset %llu (generation %u) has been freed",
		     (unsigned long long)UH_REF_OFFSET(ref), (unsigned)UH_REF_GEN(ref));
	return NULL;
}
