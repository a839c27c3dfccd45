/*
 * collections.c -- proxies of the persistent data types: hash and sorted
 * maps, lists and arrays, with their Python protocols (mapping, sequence,
 * iteration). Each operation is one libuniheap call, which is atomic on
 * its own or joins the caller's block. The pure-Python PMap, PSortedMap,
 * PList and PArray add the collections.abc mixins on top.
 *
 * String and bytes values belong to the slot holding them: a put, set,
 * remove or pop that replaces one frees it (UH_FREE_OLD_VALUE).
 */
#include "ext.h"

#define OWNED UH_FREE_OLD_VALUE

static int is_sorted(ProxyObject *p)
{
	return p->cls == UH_CLASS_SMAP;
}

/* Run one data-type call; a str/bytes value is allocated inside the
 * same step so a failure leaves nothing behind. */
typedef int (*store_fn)(uh_heap *h, ProxyObject *p, const void *where, const uh_value *v);

static int store(ProxyObject *p, const void *where, PyObject *o, store_fn fn, const char *what)
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

/* ---- maps ---- */

static int map_kind(ProxyObject *p, uint32_t *kind)
{
	if (p->key_kind) {
		*kind = p->key_kind;
		return 0;
	}
	int rc = is_sorted(p) ? uh_smap_key_kind(p->heap->h, p->off, kind)
			      : uh_map_key_kind(p->heap->h, p->off, kind);
	if (rc)
		return uhpy_raise(rc, "map"), -1;
	p->key_kind = *kind;
	return 0;
}

/* Usable proxy and its key converted. */
static int map_key(ProxyObject *p, PyObject *key, uh_key *k)
{
	uint32_t kind;

	if (uhpy_proxy_usable(p) < 0 || map_kind(p, &kind) < 0)
		return -1;
	return uhpy_to_key(kind, key, k);
}

static Py_ssize_t map_len(ProxyObject *p)
{
	uint64_t n;
	int rc;

	if (uhpy_proxy_usable(p) < 0)
		return -1;
	rc = is_sorted(p) ? uh_smap_len(p->heap->h, p->off, &n) : uh_map_len(p->heap->h, p->off, &n);
	if (rc)
		return uhpy_raise(rc, "len"), -1;
	return (Py_ssize_t)n;
}

/* 1 found (*v set), 0 not found, -1 error. */
static int map_lookup(ProxyObject *p, PyObject *key, uh_value *v)
{
	uh_key k;
	int rc;

	if (map_key(p, key, &k) < 0)
		return -1;
	rc = is_sorted(p) ? uh_smap_get(p->heap->h, p->off, &k, v)
			  : uh_map_get(p->heap->h, p->off, &k, v);
	if (rc == UH_ENOTFOUND)
		return 0;
	if (rc)
		return uhpy_raise(rc, "map get"), -1;
	return 1;
}

/* The value of key as a Python object: 1 with *out, 0 if key is not in
 * the map, -1 with an exception. A str or bytes value replaced under its
 * copy is looked up again (uhpy_from_value_try). */
static int map_read(ProxyObject *p, PyObject *key, PyObject **out)
{
	uh_value v;
	int rc;

	for (int tries = 0; tries < UHPY_READ_TRIES; tries++) {
		if ((rc = map_lookup(p, key, &v)) != 1)
			return rc;
		if ((rc = uhpy_from_value_try(p->heap, &v, out)) != 0)
			return rc;
	}
	uhpy_kept_changing("key", key);
	return -1;
}

/* The Python value of v, the value of key a step read: 1 with *out; if
 * it was a str or bytes value replaced under the copy, key's value now
 * (as map_read: 0 if it was removed since); -1 with an exception. */
static int value_or_lookup(ProxyObject *p, PyObject *key, const uh_value *v, PyObject **out)
{
	int rc = uhpy_from_value_try(p->heap, v, out);

	return rc == 0 ? map_read(p, key, out) : rc;
}

static PyObject *map_subscript(ProxyObject *p, PyObject *key)
{
	PyObject *r;
	int rc = map_read(p, key, &r);

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
	if ((rc = map_read(p, args[0], &r)) < 0)
		return NULL;
	return rc == 0 ? Py_NewRef(n == 2 ? args[1] : Py_None) : r;
}

/* view(key): a zero-copy view of a bytes value (view.c says how long it
 * shows the value). */
static PyObject *map_view(ProxyObject *p, PyObject *key)
{
	uh_value v;
	int rc = map_lookup(p, key, &v);

	if (rc <= 0) {
		if (rc == 0)
			PyErr_SetObject(PyExc_KeyError, key);
		return NULL;
	}
	if (v.type != UH_T_BYTES || !v.u.ref) {
		PyErr_Format(PyExc_TypeError, "view(): the value is not bytes but %s",
			     v.type == UH_T_BYTES ? "None" : uh_type_name(v.type));
		return NULL;
	}
	return uhpy_view_of(p->heap, v.u.ref);
}

static int map_contains(ProxyObject *p, PyObject *key)
{
	uh_value v;

	return map_lookup(p, key, &v);
}

/* Puts and removes on sorted maps by this process: a scan drops the
 * entries it read ahead when this moved since (iter_next). */
static uint64_t smap_writes;

static int put_fn(uh_heap *h, ProxyObject *p, const void *k, const uh_value *v)
{
	if (!is_sorted(p))
		return uh_map_put(h, p->off, k, v, OWNED);
	smap_writes++;
	return uh_smap_put(h, p->off, k, v, OWNED);
}

static int map_ass_subscript(ProxyObject *p, PyObject *key, PyObject *val)
{
	uh_key k;
	int rc;

	if (map_key(p, key, &k) < 0)
		return -1;
	if (val)
		return store(p, &k, val, put_fn, "map put");
	smap_writes += is_sorted(p);
	rc = is_sorted(p) ? uh_smap_remove(p->heap->h, p->off, &k, NULL, OWNED)
			  : uh_map_remove(p->heap->h, p->off, &k, NULL, OWNED);
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
	if (map_key(p, args[0], &k) < 0)
		return NULL;
	/* The old value is read before the step frees it. */
	if ((rc = uhpy_step_begin(p->heap, &outer)) != 0)
		return uhpy_raise(rc, "map pop");
	smap_writes += is_sorted(p);
	rc = is_sorted(p) ? uh_smap_remove(p->heap->h, p->off, &k, &old, OWNED)
			  : uh_map_remove(p->heap->h, p->off, &k, &old, OWNED);
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
	rc = is_sorted(p) ? uh_smap_check(p->heap->h, p->off) : uh_map_check(p->heap->h, p->off);
	if (rc)
		return uhpy_raise(rc, "map check");
	Py_RETURN_NONE;
}

static PyObject *map_get_key_type(ProxyObject *p, void *c)
{
	uint32_t kind;

	(void)c;
	if (uhpy_proxy_usable(p) < 0 || map_kind(p, &kind) < 0)
		return NULL;
	PyTypeObject *t = kind == UH_KEY_STRING ? &PyUnicode_Type :
			  kind == UH_KEY_BYTES ? &PyBytes_Type : &PyLong_Type;
	return Py_NewRef((PyObject *)t);
}

/* ---- iterators (maps, sorted-map scans) ---- */

enum { IT_KEYS, IT_VALUES, IT_ITEMS };

/* A sorted map is read a batch of entries per uh_smap_next_n call (what
 * as many single steps would return, from one leaf read at one instant):
 * 4 first, then twice as many each call up to IT_BATCH_MAX, so that a
 * short scan reads little ahead. The batch's keys and values become
 * Python objects during the call, as a single step's would right after
 * it. Entries read ahead are dropped, and the scan goes on from the last
 * key handed out, when this process has put to or removed from a sorted
 * map since they were read: a scan sees the process's own writes as
 * single steps would. A hash map is read one entry per call. */
#define IT_BATCH_FIRST 4u
#define IT_BATCH_MAX 32u

typedef struct {
	PyObject_HEAD
	ProxyObject *coll;	/* owned */
	PyObject *stop;		/* owned: exclusive end key of a scan, or NULL */
	uh_iter it;
	int mode;		/* IT_* */
	int reverse;
	int done;
	/* sorted maps: entries [pos, n) of the last batch, owned (values
	 * NULL in IT_KEYS mode) */
	PyObject *keys[IT_BATCH_MAX], *vals[IT_BATCH_MAX];
	uint32_t n, pos, batch;
	uint64_t writes;	/* smap_writes when the batch was read */
	PyObject *last;		/* owned: the last key handed out, or NULL */
	int restart;		/* scan again from last, skipping it */
} IterObject;

static PyObject *iter_new(ProxyObject *p, int mode)
{
	IterObject *it = PyObject_GC_New(IterObject, uhpy_st->iter_type);

	if (!it)
		return NULL;
	it->coll = (ProxyObject *)Py_NewRef(p);
	it->stop = NULL;
	memset(&it->it, 0, sizeof(it->it));
	it->mode = mode;
	it->reverse = 0;
	it->done = 0;
	it->n = it->pos = 0;
	it->batch = IT_BATCH_FIRST;
	it->writes = 0;
	it->last = NULL;
	it->restart = 0;
	PyObject_GC_Track(it);
	return (PyObject *)it;
}

static int iter_traverse(IterObject *it, visitproc visit, void *arg)
{
	Py_VISIT(Py_TYPE(it));
	Py_VISIT(it->coll);
	Py_VISIT(it->stop);
	Py_VISIT(it->last);
	for (uint32_t i = it->pos; i < it->n; i++) {	/* bound: IT_BATCH_MAX */
		Py_VISIT(it->keys[i]);
		Py_VISIT(it->vals[i]);
	}
	return 0;
}

/* Drop the entries read ahead. */
static void iter_drop(IterObject *it)
{
	for (uint32_t i = it->pos; i < it->n; i++) {	/* bound: IT_BATCH_MAX */
		Py_CLEAR(it->keys[i]);
		Py_CLEAR(it->vals[i]);
	}
	it->n = it->pos = 0;
}

static int iter_clear(IterObject *it)
{
	iter_drop(it);
	Py_CLEAR(it->coll);
	Py_CLEAR(it->stop);
	Py_CLEAR(it->last);
	return 0;
}

static void iter_dealloc(IterObject *it)
{
	PyTypeObject *tp = Py_TYPE(it);

	PyObject_GC_UnTrack(it);
	iter_clear(it);
	tp->tp_free(it);
	Py_DECREF(tp);
}

/* 1 if key is at or past the scan's stop key. */
static int past_stop(IterObject *it, PyObject *key)
{
	if (!it->stop)
		return 0;
	return PyObject_RichCompareBool(key, it->stop, it->reverse ? Py_LE : Py_GE);
}

/* The next batch of a sorted-map scan into it->keys/vals: 1, 0 at the end
 * (it->done set), -1 with an exception. After a drop the scan starts
 * again at the last key handed out (the first entry is then skipped if it
 * is that key, iter_next). */
static int iter_fetch(IterObject *it)
{
	ProxyObject *p = it->coll;
	uh_key keys[IT_BATCH_MAX];
	uh_value vals[IT_BATCH_MAX];
	uint32_t n = 0;
	int rc;

	if (it->restart) {
		uh_key k;
		if (map_key(p, it->last, &k) < 0)
			return -1;
		rc = uh_smap_scan(p->heap->h, p->off, &k, it->reverse ? UH_SCAN_REVERSE : 0,
				  &it->it);
		if (rc)
			return uhpy_raise(rc, "scan"), -1;
	}
	rc = uh_smap_next_n(p->heap->h, p->off, &it->it, keys, vals, it->batch, &n);
	if (rc == UH_ENOTFOUND) {
		it->done = 1;
		return 0;
	}
	if (rc)
		return uhpy_raise(rc, "map iteration"), -1;
	/* Keys point into their objects: copied out before anything else. */
	it->n = it->pos = 0;
	for (uint32_t i = 0; i < n; i++) {	/* bound: IT_BATCH_MAX */
		it->vals[i] = NULL;
		it->n = i + 1;
		if (!(it->keys[i] = uhpy_from_key(&keys[i]))) {
			iter_drop(it);
			return -1;
		}
	}
	/* A value replaced since the batch was read is looked up by its key;
	 * an entry removed since is dropped (the batch closes up). */
	uint32_t kept = 0;
	for (uint32_t i = 0; i < n && it->mode != IT_KEYS; i++) {	/* bound: IT_BATCH_MAX */
		PyObject *key = it->keys[i], *val;
		it->keys[i] = NULL;
		int got = value_or_lookup(p, key, &vals[i], &val);
		if (got < 0) {
			Py_DECREF(key);
			iter_drop(it);
			return -1;
		}
		if (got == 0) {
			Py_DECREF(key);
			continue;
		}
		it->keys[kept] = key;
		it->vals[kept++] = val;
	}
	if (it->mode != IT_KEYS)
		it->n = kept;
	it->writes = smap_writes;
	it->batch = it->batch * 2 < IT_BATCH_MAX ? it->batch * 2 : IT_BATCH_MAX;
	return 1;
}

/* The next entry of a sorted-map scan: *key and *val owned (val NULL in
 * IT_KEYS mode); 1, 0 at the end, -1 with an exception. */
static int iter_sorted(IterObject *it, PyObject **key, PyObject **val)
{
	for (;;) {	/* bound: a skipped key once per batch, batches emptied by removals */
		if (it->pos < it->n && it->writes != smap_writes) {
			iter_drop(it);	/* this process wrote since: read on from last */
			it->restart = it->last != NULL;
		}
		int skip = it->restart, rc;
		if (it->pos == it->n) {
			if ((rc = iter_fetch(it)) <= 0)
				return rc;
			it->restart = 0;
			if (it->n == 0)
				continue;	/* all its entries were removed since */
		}
		it->restart = 0;
		*key = it->keys[it->pos];
		*val = it->vals[it->pos];
		it->keys[it->pos] = it->vals[it->pos] = NULL;
		it->pos++;
		if (skip && (rc = PyObject_RichCompareBool(*key, it->last, Py_EQ)) != 0) {
			Py_DECREF(*key);
			Py_XDECREF(*val);
			if (rc < 0)
				return -1;
			continue;
		}
		Py_XSETREF(it->last, Py_NewRef(*key));
		return 1;
	}
}

/* The next entry of a hash-map iteration: *key and *val owned (val NULL
 * in IT_KEYS mode); 1, 0 at the end, -1 with an exception. */
static int iter_hashed(IterObject *it, PyObject **key, PyObject **val)
{
	ProxyObject *p = it->coll;
	uh_key k;
	uh_value v;
	int rc;

	for (;;) {	/* bound: entries removed since their step */
		rc = uh_map_next(p->heap->h, p->off, &it->it, &k, &v);
		if (rc == UH_ENOTFOUND) {
			it->done = 1;
			return 0;	/* StopIteration */
		}
		if (rc)
			return uhpy_raise(rc, "map iteration"), -1;
		if (!(*key = uhpy_from_key(&k)))
			return -1;
		*val = NULL;
		if (it->mode == IT_KEYS || (rc = value_or_lookup(p, *key, &v, val)) == 1)
			return 1;
		Py_CLEAR(*key);
		if (rc < 0)
			return -1;
	}
}

static PyObject *iter_next(IterObject *it)
{
	ProxyObject *p = it->coll;
	PyObject *key = NULL, *val = NULL;
	int rc;

	if (it->done || uhpy_proxy_usable(p) < 0)
		return NULL;
	if (is_sorted(p)) {
		if ((rc = iter_sorted(it, &key, &val)) <= 0)
			return NULL;	/* StopIteration, or the exception */
	} else if ((rc = iter_hashed(it, &key, &val)) <= 0) {
		return NULL;
	}
	if ((rc = past_stop(it, key)) != 0) {
		Py_DECREF(key);
		Py_XDECREF(val);
		it->done = 1;
		iter_drop(it);
		return NULL;
	}
	if (it->mode == IT_KEYS)
		return key;
	if (it->mode == IT_VALUES) {
		Py_DECREF(key);
		return val;
	}
	PyObject *item = PyTuple_Pack(2, key, val);
	Py_DECREF(key);
	Py_DECREF(val);
	return item;
}

static PyType_Slot iter_slots[] = {
	{ Py_tp_iter, PyObject_SelfIter },
	{ Py_tp_iternext, iter_next },
	{ Py_tp_traverse, iter_traverse },
	{ Py_tp_clear, iter_clear },
	{ Py_tp_dealloc, iter_dealloc },
	{ 0, NULL },
};

PyType_Spec uhpy_iter_spec = {
	.name = "uniheap.MapIterator",
	.basicsize = sizeof(IterObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = iter_slots,
};

/* A whole-map iterator: a hash map starts from a zeroed state, a sorted
 * map from a scan of all keys. */
static PyObject *iter_all(ProxyObject *p, int mode)
{
	IterObject *it;
	int rc;

	if (uhpy_proxy_usable(p) < 0 || !(it = (IterObject *)iter_new(p, mode)))
		return NULL;
	if (is_sorted(p) && (rc = uh_smap_scan(p->heap->h, p->off, NULL, 0, &it->it)) != 0) {
		Py_DECREF(it);
		return uhpy_raise(rc, "scan");
	}
	return (PyObject *)it;
}

static PyObject *map_iter(ProxyObject *p)
{
	return iter_all(p, IT_KEYS);
}

/* _iter(mode): 0 keys, 1 values, 2 items. */
static PyObject *map_iter_mode(ProxyObject *p, PyObject *arg)
{
	long mode = PyLong_AsLong(arg);

	if (mode < IT_KEYS || mode > IT_ITEMS) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_ValueError, "mode must be 0, 1 or 2");
		return NULL;
	}
	return iter_all(p, (int)mode);
}

/* _scan(start, stop, reverse, mode): sorted maps only. */
static PyObject *map_scan(ProxyObject *p, PyObject *args)
{
	PyObject *start, *stop;
	int reverse, mode, rc;
	uh_key k;

	if (!PyArg_ParseTuple(args, "OOpi:_scan", &start, &stop, &reverse, &mode))
		return NULL;
	if (!is_sorted(p)) {
		PyErr_SetString(PyExc_TypeError, "range scans need a sorted map");
		return NULL;
	}
	if (start != Py_None ? map_key(p, start, &k) < 0 : uhpy_proxy_usable(p) < 0)
		return NULL;
	if (stop != Py_None && map_key(p, stop, &(uh_key){ 0 }) < 0)
		return NULL;
	IterObject *it = (IterObject *)iter_new(p, mode);
	if (!it)
		return NULL;
	it->reverse = reverse;
	it->stop = stop != Py_None ? Py_NewRef(stop) : NULL;
	rc = uh_smap_scan(p->heap->h, p->off, start != Py_None ? &k : NULL,
			  reverse ? UH_SCAN_REVERSE : 0, &it->it);
	if (rc) {
		Py_DECREF(it);
		return uhpy_raise(rc, "scan");
	}
	return (PyObject *)it;
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
	{ "check", (PyCFunction)map_check, METH_NOARGS,
	  "Structural check of the map; raises uniheap.Error naming a problem." },
	{ "_iter", (PyCFunction)map_iter_mode, METH_O, NULL },
	{ "_scan", (PyCFunction)map_scan, METH_VARARGS, NULL },
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
	{ Py_tp_iter, map_iter },
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

/* ---- lists and arrays ---- */

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

/* sq_item gets i >= 0 after Python added len to a negative index. */
static PyObject *seq_item(ProxyObject *p, Py_ssize_t i)
{
	PyObject *r;
	uh_value v;
	int rc;

	if (uhpy_proxy_usable(p) < 0)
		return NULL;
	if (i < 0) {
		PyErr_SetString(PyExc_IndexError, "index out of range");
		return NULL;
	}
	for (int tries = 0; tries < UHPY_READ_TRIES; tries++) {
		rc = is_array(p) ? uh_array_get(p->heap->h, p->off, (uint64_t)i, &v)
				 : uh_list_get(p->heap->h, p->off, (uint64_t)i, &v);
		if (rc)
			return index_error(rc, "index out of range"), NULL;
		/* 0: a str or bytes item replaced under its copy: read again. */
		if (uhpy_from_value_try(p->heap, &v, &r) != 0)
			return r;
	}
	PyObject *at = PyLong_FromSsize_t(i);
	if (at)
		uhpy_kept_changing("item", at);
	Py_XDECREF(at);
	return NULL;
}

static int set_fn(uh_heap *h, ProxyObject *p, const void *where, const uh_value *v)
{
	uint64_t i = *(const uint64_t *)where;

	return is_array(p) ? uh_array_set(h, p->off, i, v, OWNED)
			   : uh_list_set(h, p->off, i, v, OWNED);
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
		rc = store(p, &idx, val, set_fn, "set item");
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
	if ((rc = uh_list_pop(p->heap->h, p->off, idx, NULL, OWNED)) != 0)
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
	if (uhpy_proxy_usable(p) < 0 || store(p, NULL, v, append_fn, "append") < 0)
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
	if (store(p, &idx, v, insert_fn, "insert") < 0)
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
	rc = uh_list_pop(p->heap->h, p->off, (uint64_t)i, &old, OWNED);
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
