/*
 * mapiter.c -- iteration of hash and sorted map proxies: the MapIterator
 * type, whole-map iterators (iter(map), keys/values/items) and sorted-map
 * range scans (PSortedMap's range reads), one libuniheap step per entry
 * or per batch.
 */
#include "ext.h"

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
	uint64_t writes;	/* uhpy_smap_writes when the batch was read */
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
		if (uhpy_map_key(p, it->last, &k) < 0)
			return -1;
		rc = uh_smap_scan(p->heap->h, p->off, &k, it->reverse ? UH_SCAN_REVERSE : 0,
				  &it->it);
		if (rc)
			return uhpy_raise(rc, "scan"), -1;
	}
	/* The stop key ends the scan in libuniheap (exclusive), which orders
	 * keys as the map does: no comparison of keys here. */
	uh_key stop;
	if (it->stop && uhpy_map_key(p, it->stop, &stop) < 0)
		return -1;
	rc = uh_smap_next_until(p->heap->h, p->off, &it->it, it->stop ? &stop : NULL, 0, keys,
				vals, it->batch, &n);
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
		int got = uhpy_map_value_or_lookup(p, key, &vals[i], &val);
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
	it->writes = uhpy_smap_writes;
	it->batch = it->batch * 2 < IT_BATCH_MAX ? it->batch * 2 : IT_BATCH_MAX;
	return 1;
}

/* The next entry of a sorted-map scan: *key and *val owned (val NULL in
 * IT_KEYS mode); 1, 0 at the end, -1 with an exception. */
static int iter_sorted(IterObject *it, PyObject **key, PyObject **val)
{
	for (;;) {	/* bound: a skipped key once per batch, batches emptied by removals */
		if (it->pos < it->n && it->writes != uhpy_smap_writes) {
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
		if (it->mode == IT_KEYS || (rc = uhpy_map_value_or_lookup(p, *key, &v, val)) == 1)
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
	if (uhpy_map_sorted(p)) {
		if ((rc = iter_sorted(it, &key, &val)) <= 0)
			return NULL;	/* StopIteration, or the exception */
	} else if ((rc = iter_hashed(it, &key, &val)) <= 0) {
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

/* ---- constructors (MapBase methods) ---- */

/* A whole-map iterator: a hash map starts from a zeroed state, a sorted
 * map from a scan of all keys. */
static PyObject *iter_all(ProxyObject *p, int mode)
{
	IterObject *it;
	int rc;

	if (uhpy_proxy_usable(p) < 0 || !(it = (IterObject *)iter_new(p, mode)))
		return NULL;
	if (uhpy_map_sorted(p) &&
	    (rc = uh_smap_scan(p->heap->h, p->off, NULL, 0, &it->it)) != 0) {
		Py_DECREF(it);
		return uhpy_raise(rc, "scan");
	}
	return (PyObject *)it;
}

PyObject *uhpy_map_iter(ProxyObject *p)
{
	return iter_all(p, IT_KEYS);
}

/* _iter(mode): 0 keys, 1 values, 2 items. */
PyObject *uhpy_map_iter_mode(ProxyObject *p, PyObject *arg)
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
PyObject *uhpy_map_scan(ProxyObject *p, PyObject *args)
{
	PyObject *start, *stop;
	int reverse, mode, rc;
	uh_key k;

	if (!PyArg_ParseTuple(args, "OOpi:_scan", &start, &stop, &reverse, &mode))
		return NULL;
	if (!uhpy_map_sorted(p)) {
		PyErr_SetString(PyExc_TypeError, "range scans need a sorted map");
		return NULL;
	}
	if (start != Py_None ? uhpy_map_key(p, start, &k) < 0 : uhpy_proxy_usable(p) < 0)
		return NULL;
	if (stop != Py_None && uhpy_map_key(p, stop, &(uh_key){ 0 }) < 0)
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
