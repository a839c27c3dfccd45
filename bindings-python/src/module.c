/*
 * module.c -- the _uniheap extension module: types, errors, fork guard.
 */
#include <pthread.h>

#include "ext.h"

/* In a forked child every heap of the parent attaches anew on its first
 * use (session.c), which every use, direct field reads too, checks by
 * this epoch. */
static void after_fork_child(void)
{
	uhpy_fork_epoch++;
}

static PyObject *default_socket(PyObject *m, PyObject *unused)
{
	char buf[4096];
	int rc;

	(void)m;
	(void)unused;
	if ((rc = uh_default_socket(buf, sizeof(buf))) != 0)
		return uhpy_raise(rc, "default socket");
	return PyUnicode_DecodeFSDefault(buf);
}

static PyObject *asdict(PyObject *m, PyObject *obj)
{
	(void)m;
	return uhpy_read_fields(obj, 1);
}

static PyObject *astuple(PyObject *m, PyObject *obj)
{
	(void)m;
	return uhpy_read_fields(obj, 0);
}

static PyMethodDef module_methods[] = {
	{ "asdict", asdict, METH_O,
	  "asdict(obj): the fields of persistent object obj as a dict {name: value}, all "
	  "read at one instant (outside a block as well as inside one)." },
	{ "astuple", astuple, METH_O,
	  "astuple(obj): the values of obj's fields in declaration order, all read at one "
	  "instant." },
	{ "default_socket", default_socket, METH_NOARGS,
	  "The socket path connect() uses by default ($UNIHEAP_SOCKET, else "
	  "$XDG_RUNTIME_DIR/uniheap/heapd.sock, else /tmp/uniheap-<uid>/heapd.sock; "
	  "the rule of uh_default_socket() in uniheap.h)." },
	{ NULL, NULL, 0, NULL },
};

static PyTypeObject *add_type(PyObject *m, PyType_Spec *spec, PyTypeObject *base,
			      const char *name)
{
	PyObject *bases = base ? PyTuple_Pack(1, (PyObject *)base) : NULL;
	PyObject *t;

	if (base && !bases)
		return NULL;
	t = PyType_FromModuleAndSpec(m, spec, bases);
	Py_XDECREF(bases);
	if (!t)
		return NULL;
	if (PyModule_AddObjectRef(m, name, t) < 0) {
		Py_DECREF(t);
		return NULL;
	}
	return (PyTypeObject *)t;
}

static int module_exec(PyObject *m)
{
	uhpy_state *st = PyModule_GetState(m);

	if (uhpy_st) {
		PyErr_SetString(PyExc_ImportError, "_uniheap can be loaded once per process");
		return -1;
	}
	uhpy_st = st;
	if (uhpy_errors_init(m, st) < 0)
		return -1;
	if (!(st->heap_type = add_type(m, &uhpy_heap_spec, NULL, "Heap")) ||
	    !(st->proxy_type = add_type(m, &uhpy_proxy_spec, NULL, "Proxy")) ||
	    !(st->field_type = add_type(m, &uhpy_field_spec, NULL, "Field")) ||
	    !(st->atomic_type = add_type(m, &uhpy_atomic_spec, NULL, "Atomic")) ||
	    !(st->iter_type = add_type(m, &uhpy_iter_spec, NULL, "MapIterator")) ||
	    !(st->view_type = add_type(m, &uhpy_view_spec, NULL, "BytesView")) ||
	    !(st->waiter_type = add_type(m, &uhpy_waiter_spec, NULL, "Waiter")) ||
	    !(st->map_type = add_type(m, &uhpy_map_spec, st->proxy_type, "MapBase")) ||
	    !(st->list_type = add_type(m, &uhpy_list_spec, st->proxy_type, "ListBase")) ||
	    !(st->array_type = add_type(m, &uhpy_array_spec, st->proxy_type, "ArrayBase")))
		return -1;
	if (uhpy_wait_init(m, st) < 0)
		return -1;
	PyObject *names = uhpy_type_names();
	if (!names || PyModule_AddObject(m, "TYPE_NAMES", names) < 0) {
		Py_XDECREF(names);
		return -1;
	}
	if (PyModule_AddIntConstant(m, "FORMAT_VERSION", uh_format_version()) < 0 ||
	    PyModule_AddStringConstant(m, "LIB_VERSION", uh_version()) < 0)
		return -1;
	if (pthread_atfork(NULL, NULL, after_fork_child) != 0) {
		PyErr_SetString(PyExc_ImportError, "pthread_atfork failed");
		return -1;
	}
	return 0;
}

static PyModuleDef_Slot module_slots[] = {
	{ Py_mod_exec, module_exec },
	{ 0, NULL },
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "uniheap._uniheap",
	.m_doc = "C core of the uniheap Python binding (use the uniheap package).",
	.m_size = sizeof(uhpy_state),
	.m_methods = module_methods,
	.m_slots = module_slots,
};

PyMODINIT_FUNC PyInit__uniheap(void)
{
	return PyModuleDef_Init(&module_def);
}
