/*
 * maprecord.c -- maps whose values are records, one C call per record:
 * get_fields(key) (a record's fields as a dict, from one
 * uh_(s)map_get_record copy), set_field(key, name, value) (an inline
 * field replaced through uh_(s)map_set_inline) and, on sorted maps,
 * scan_fields(start, count) (the records of a key range as dicts), and
 * put_record(key, cls, values) (a new record stored under key, one step).
 *
 * No proxy is made for the record on these paths. A record whose class
 * keeps a str or bytes value out of line, and a field that is not
 * inline, go the ordinary way (a proxy, asdict, setattr), so the answers
 * and the errors are always those of the proxy path.
 */
#include "ext.h"

/* Records up to this many payload bytes are copied to the stack. */
#define RECORD_STACK 4096
/* Records a scan takes per uh_smap_next_records call (it reads one leaf:
 * fewer), and the bytes they are copied to: room for 32 YCSB records. */
#define SCAN_BATCH 32
#define SCAN_BUF 49152

/* The __uniheap_fields__ tuple of class (or proxy type) t (a new
 * reference; an empty tuple when it has none), or NULL with an exception. */
static PyObject *fields_of(PyObject *t)
{
	static PyObject *name;	/* interned once: no str made per call */
	PyObject *fields;

	if (!name && !(name = PyUnicode_InternFromString("__uniheap_fields__")))
		return NULL;
	fields = PyObject_GetAttr(t, name);
	if (!fields && PyErr_ExceptionMatches(PyExc_AttributeError)) {
		PyErr_Clear();
		fields = PyTuple_New(0);	/* no record class: never decodes */
	}
	return fields;
}

/* Make proxy type t (a reference given to the cache) the heap's decoding
 * cache (dec_*): 1, or 0 when its records do not decode from their
 * payload (nothing cached), or -1 with an exception. */
static int cache_decoder(HeapObject *hp, PyObject *t)
{
	PyObject *fields = fields_of(t), *tmpl;

	if (!fields) {
		Py_DECREF(t);
		return -1;
	}
	if (!PyTuple_Check(fields) || !PyTuple_GET_SIZE(fields) || !uhpy_payload_decodes(fields)) {
		Py_DECREF(fields);
		Py_DECREF(t);
		return 0;
	}
	if (!(tmpl = uhpy_fields_template(fields))) {
		Py_DECREF(fields);
		Py_DECREF(t);
		return -1;
	}
	Py_XSETREF(hp->dec_type, t);
	Py_XSETREF(hp->dec_fields, fields);
	Py_XSETREF(hp->dec_template, tmpl);
	return 1;
}

/* The record of class cid whose payload (len bytes) is at buf, as a dict:
 * 1 with *out, 0 when its class does not decode from the payload (the
 * caller reads it through a proxy), -1 with an exception. The class's
 * fields and the dict of their names come from the heap's cache, made
 * anew when the class's proxy type is another one than the cached. */
static int record_dict(HeapObject *hp, uint32_t cid, const unsigned char *buf, size_t len,
		       PyObject **out)
{
	PyObject *t = uhpy_proxy_type(hp, cid);
	int rc;

	if (!t)
		return -1;
	if (t == hp->dec_type)
		Py_DECREF(t);
	else if ((rc = cache_decoder(hp, t)) <= 0)
		return rc;
	/* Held: decoding a ref field may make a proxy, which may decode a
	 * record of another class and replace the cache. */
	PyObject *fields = Py_NewRef(hp->dec_fields), *tmpl = Py_NewRef(hp->dec_template);
	rc = uhpy_payload_dict(hp, fields, tmpl, buf, len, out);
	Py_DECREF(fields);
	Py_DECREF(tmpl);
	return rc;
}

/* The proxy path of get_fields: the value of key, then asdict of it. */
static PyObject *fields_by_proxy(ProxyObject *p, PyObject *key)
{
	PyObject *rec, *d;
	int rc = uhpy_map_read(p, key, &rec);

	if (rc <= 0)
		return rc == 0 ? Py_NewRef(Py_None) : NULL;
	d = uhpy_read_fields(rec, 1);
	Py_DECREF(rec);
	return d;
}

static int get_record(ProxyObject *p, const uh_key *k, void *buf, size_t cap, size_t *len,
		      uint32_t *cid)
{
	return uhpy_map_sorted(p) ? uh_smap_get_record(p->heap->h, p->off, k, buf, cap, len, cid)
				  : uh_map_get_record(p->heap->h, p->off, k, buf, cap, len, cid);
}

PyObject *uhpy_map_get_fields(ProxyObject *p, PyObject *key)
{
	unsigned char stack[RECORD_STACK], *buf = stack;
	size_t len = 0;
	uint32_t cid = 0;
	PyObject *out = NULL;
	uh_key k;
	int rc;

	if (uhpy_map_key(p, key, &k) < 0)
		return NULL;
	rc = get_record(p, &k, buf, sizeof(stack), &len, &cid);
	while (rc == UH_ERANGE) {	/* a bigger record: its size, then again */
		if (buf != stack)
			PyMem_Free(buf);
		size_t cap = len;
		if (!(buf = PyMem_Malloc(cap ? cap : 1)))
			return PyErr_NoMemory();
		rc = get_record(p, &k, buf, cap, &len, &cid);
	}
	if (rc == UH_ENOTFOUND)
		out = Py_NewRef(Py_None);
	else if (rc == UH_ETYPE)	/* not a record: asdict says what it is */
		out = fields_by_proxy(p, key);
	else if (rc)
		uhpy_raise(rc, "get_fields");
	else if (record_dict(p->heap, cid, buf, len, &out) == 0)
		out = fields_by_proxy(p, key);
	if (buf != stack)
		PyMem_Free(buf);
	return out;
}

/* The proxy path of set_field: setattr on the record of key. */
static PyObject *set_by_proxy(ProxyObject *p, PyObject *key, PyObject *name, PyObject *value)
{
	PyObject *rec;
	int rc = uhpy_map_read(p, key, &rec);

	if (rc <= 0)
		return rc == 0 ? Py_NewRef(Py_False) : NULL;
	rc = PyObject_SetAttr(rec, name, value);
	Py_DECREF(rec);
	return rc < 0 ? NULL : Py_NewRef(Py_True);
}

PyObject *uhpy_map_set_field(ProxyObject *p, PyObject *const *args, Py_ssize_t n)
{
	const char *field, *data;
	Py_ssize_t len;
	uh_key k;
	int rc;

	if (n != 3) {
		PyErr_SetString(PyExc_TypeError, "set_field(key, name, value)");
		return NULL;
	}
	if (!PyUnicode_Check(args[1]))
		return PyErr_Format(PyExc_TypeError, "a field name is a str, not %.80s",
				    Py_TYPE(args[1])->tp_name);
	/* Only str and bytes take the one-call path; anything else (None, a
	 * bytearray...) is for the field's own setter to accept or refuse. */
	if (PyBytes_CheckExact(args[2])) {
		data = PyBytes_AS_STRING(args[2]);
		len = PyBytes_GET_SIZE(args[2]);
	} else if (PyUnicode_CheckExact(args[2])) {
		if (!(data = PyUnicode_AsUTF8AndSize(args[2], &len)))
			return NULL;
	} else {
		return set_by_proxy(p, args[0], args[1], args[2]);
	}
	if (!(field = PyUnicode_AsUTF8(args[1])) || uhpy_map_key(p, args[0], &k) < 0)
		return NULL;
	rc = uhpy_map_sorted(p)
		? uh_smap_set_inline(p->heap->h, p->off, &k, field, data, (size_t)len)
		: uh_map_set_inline(p->heap->h, p->off, &k, field, data, (size_t)len);
	if (rc == 0 || rc == UH_ENOTFOUND)
		return Py_NewRef(rc ? Py_False : Py_True);
	/* Refused (no such field, not inline, not a record, too long, a str
	 * field given bytes...): the proxy path writes it or raises as a
	 * setattr would. A failed call wrote nothing. */
	if (rc == UH_ETYPE || rc == UH_EINVAL || rc == UH_ERANGE || rc == UH_EUTF8)
		return set_by_proxy(p, args[0], args[1], args[2]);
	return uhpy_raise(rc, "set_field");
}

/* ---- scan_fields: sorted maps ---- */

/* One scanned record as a dict of its fields: decoded from its payload
 * in buf when uh_smap_next_records copied it there, else (past the
 * buffer, or a class that does not decode from its payload) read through
 * a proxy; NULL with an exception (FreedObjectError for one freed since
 * outside a block). */
static PyObject *scanned_record(HeapObject *hp, const uh_scan_record *r,
				const unsigned char *buf)
{
	PyObject *out = NULL, *rec;
	int rc;

	if (!r->status && (rc = record_dict(hp, r->class_id, buf + r->at, r->len, &out)) != 0)
		return rc < 0 ? NULL : out;
	if (!(rec = uhpy_wrap(hp, r->ref, r->class_id)))
		return NULL;
	out = uhpy_read_fields(rec, 1);
	Py_DECREF(rec);
	return out;
}

/* Up to count records from key start on, appended to out as dicts: a
 * leaf's records per uh_smap_next_records call (outside a block, one
 * replaced meanwhile is the key's record now, one removed is left out). */
static int scan_into(ProxyObject *p, const uh_key *start, Py_ssize_t count, PyObject *out)
{
	uh_scan_record recs[SCAN_BATCH];
	unsigned char *buf = PyMem_Malloc(SCAN_BUF);
	uh_iter it;
	int rc;

	if (!buf)
		return PyErr_NoMemory(), -1;
	rc = uh_smap_scan(p->heap->h, p->off, start, 0, &it);
	while (!rc && count > 0) {	/* bound: count */
		uint32_t n = 0, want = count < SCAN_BATCH ? (uint32_t)count : SCAN_BATCH;
		rc = uh_smap_next_records(p->heap->h, p->off, &it, NULL, 0, buf, SCAN_BUF, recs,
					  want, &n);
		for (uint32_t i = 0; !rc && i < n; i++) {	/* bound: n */
			PyObject *d = scanned_record(p->heap, &recs[i], buf);
			if (!d || PyList_Append(out, d) < 0) {
				Py_XDECREF(d);
				PyMem_Free(buf);
				return -1;
			}
			Py_DECREF(d);
		}
		count -= n;
	}
	PyMem_Free(buf);
	if (rc == UH_ETYPE)
		return PyErr_SetString(PyExc_TypeError, "scan_fields: a value is not a record"), -1;
	if (rc && rc != UH_ENOTFOUND)
		return uhpy_raise(rc, "scan_fields"), -1;
	return 0;
}

PyObject *uhpy_map_scan_fields(ProxyObject *p, PyObject *const *args, Py_ssize_t n)
{
	Py_ssize_t count;
	uh_key k;
	PyObject *out;

	if (n != 2) {
		PyErr_SetString(PyExc_TypeError, "scan_fields(start, count)");
		return NULL;
	}
	if (!uhpy_map_sorted(p)) {
		PyErr_SetString(PyExc_TypeError, "scan_fields: only sorted maps have an order");
		return NULL;
	}
	if ((count = PyLong_AsSsize_t(args[1])) == -1 && PyErr_Occurred())
		return NULL;
	if (args[0] != Py_None ? uhpy_map_key(p, args[0], &k) < 0 : uhpy_proxy_usable(p) < 0)
		return NULL;
	if (!(out = PyList_New(0)))
		return NULL;
	if (count > 0 && scan_into(p, args[0] != Py_None ? &k : NULL, count, out) < 0)
		Py_CLEAR(out);
	return out;
}

/* ---- put_record: a new record stored under a key ---- */

/* Value v of field name (a str) of the new record obj (class cid): an
 * inline field given str or bytes written directly, anything else by
 * setattr on a proxy (which converts, checks and raises as ever). 0, or
 * UHPY_RAISED with an exception, or a libuniheap code. */
static int set_new_field(HeapObject *hp, uh_off obj, uint32_t cid, PyObject *name, PyObject *v)
{
	const char *field, *data = NULL;
	Py_ssize_t len = 0;
	uint32_t idx;
	PyObject *rec;
	int rc;

	if (!PyUnicode_Check(name)) {
		PyErr_Format(PyExc_TypeError, "a field name is a str, not %.80s",
			     Py_TYPE(name)->tp_name);
		return UHPY_RAISED;
	}
	if (PyBytes_CheckExact(v)) {
		data = PyBytes_AS_STRING(v);
		len = PyBytes_GET_SIZE(v);
	} else if (PyUnicode_CheckExact(v) && !(data = PyUnicode_AsUTF8AndSize(v, &len))) {
		return UHPY_RAISED;
	}
	if (!(field = PyUnicode_AsUTF8(name)))
		return UHPY_RAISED;
	if (data && uh_field_find(hp->h, cid, field, &idx) == 0 &&
	    (rc = uh_set_inline(hp->h, obj, idx, data, (size_t)len)) == 0)
		return 0;
	/* Not inline, no such field, refused: the proxy path decides. */
	if (!(rec = uhpy_wrap(hp, obj, cid)))
		return UHPY_RAISED;
	rc = PyObject_SetAttr(rec, name, v);
	Py_DECREF(rec);
	return rc < 0 ? UHPY_RAISED : 0;
}

/* The class id of cls, a PObject subclass, registered in the heap if it
 * is not yet (Heap._class_id, which also binds its fields to the heap's
 * layout): 0 or -1 with an exception. The last class asked for is kept
 * (put_cls, put_cid, put_fields): a class's id in a heap never changes. */
static int class_id_of(HeapObject *hp, PyObject *cls, uint32_t *cid)
{
	static PyObject *meth;	/* interned once */
	PyObject *r, *fields;

	if (cls == hp->put_cls) {
		*cid = hp->put_cid;
		return 0;
	}
	if (!meth && !(meth = PyUnicode_InternFromString("_class_id")))
		return -1;
	if (!(r = PyObject_CallMethodOneArg((PyObject *)hp, meth, cls)))
		return -1;
	unsigned long id = PyLong_AsUnsignedLong(r);
	Py_DECREF(r);
	if (id == (unsigned long)-1 && PyErr_Occurred())
		return -1;
	*cid = (uint32_t)id;
	if (!(fields = fields_of(cls)))
		return -1;
	Py_XSETREF(hp->put_cls, Py_NewRef(cls));
	Py_XSETREF(hp->put_fields, fields);
	hp->put_cid = *cid;
	return 0;
}

/* Values a record put in one uh_*_put_record call may have; more go the
 * proxy path. */
#define PUT_INLINE_MAX 64

/* The dict values as the inline values of a new record of class cid,
 * their bytes those of the dict's str and bytes objects (alive while it
 * is): 1 when each is what its field takes (bytes for an inline bytes
 * field, str for an inline str field, within its capacity), so that
 * uh_*_put_record cannot refuse one; 0 when some value goes the proxy
 * path (which converts, checks and raises as ever); -1 with an exception. */
static int inline_values(HeapObject *hp, uint32_t cid, PyObject *fields, PyObject *values,
			 uh_inline_value *iv, uint32_t *n)
{
	PyObject *name, *v;
	Py_ssize_t pos = 0, len = 0;

	*n = 0;
	if (PyDict_GET_SIZE(values) > PUT_INLINE_MAX)
		return 0;
	while (PyDict_Next(values, &pos, &name, &v)) {	/* bound: PUT_INLINE_MAX */
		const char *field, *data;
		uh_field_info fi;
		uint32_t idx;

		if (!PyUnicode_Check(name))
			return 0;	/* the proxy path says what is wrong */
		/* The class's own bound field (its index, type and capacity
		 * those of the heap's class, Heap._class_id checked), else
		 * libuniheap's class table by name. */
		if (fields && uhpy_inline_field(fields, (Py_ssize_t)*n, name, &idx, &fi.type,
						&fi.capacity)) {
			;
		} else if (!(field = PyUnicode_AsUTF8(name))) {
			return -1;
		} else if (uh_field_find(hp->h, cid, field, &idx) != 0 ||
			   uh_field_info_get(hp->h, cid, idx, &fi) != 0) {
			return 0;
		}
		if (fi.type == UH_T_IBYTES && PyBytes_CheckExact(v)) {
			data = PyBytes_AS_STRING(v);
			len = PyBytes_GET_SIZE(v);
		} else if (fi.type == UH_T_ISTRING && PyUnicode_CheckExact(v)) {
			if (!(data = PyUnicode_AsUTF8AndSize(v, &len)))
				return -1;
		} else {
			return 0;
		}
		if ((size_t)len > fi.capacity)
			return 0;
		iv[(*n)++] = (uh_inline_value){ idx, (uint32_t)len, data };
	}
	return 1;
}

/* The new record, its fields and the put, in the step already begun: one
 * uh_map_put_record / uh_smap_put_record when every value is inline. */
static int put_new(ProxyObject *p, const uh_key *k, uint32_t cid, PyObject *values,
		   uint32_t flags)
{
	HeapObject *hp = p->heap;
	uh_inline_value iv[PUT_INLINE_MAX];
	uint32_t nv = 0;
	PyObject *name, *v;
	Py_ssize_t pos = 0;
	uh_off obj;
	int rc, sorted = uhpy_map_sorted(p);
	/* The class's fields, as class_id_of kept them (held: the proxy path
	 * below runs Python code). */
	PyObject *fields = hp->put_fields && hp->put_cid == cid ? Py_NewRef(hp->put_fields) : NULL;

	rc = inline_values(hp, cid, fields, values, iv, &nv);
	Py_XDECREF(fields);
	if (rc < 0)
		return UHPY_RAISED;
	uhpy_smap_writes += sorted;
	if (rc)
		return sorted ? uh_smap_put_record(hp->h, p->off, k, cid, iv, nv, flags)
			      : uh_map_put_record(hp->h, p->off, k, cid, iv, nv, flags);
	rc = uh_alloc(hp->h, cid, &obj);
	while (!rc && PyDict_Next(values, &pos, &name, &v))	/* bound: values */
		rc = set_new_field(hp, obj, cid, name, v);
	if (rc)
		return rc;
	uh_value val = { .type = UH_T_REF, .u.ref = obj };
	return sorted ? uh_smap_put(hp->h, p->off, k, &val, flags)
		      : uh_map_put(hp->h, p->off, k, &val, flags);
}

PyObject *uhpy_map_put_record(ProxyObject *p, PyObject *const *args, Py_ssize_t n)
{
	uint32_t cid, flags = UHPY_OWNED;
	uh_key k;
	int rc, outer;

	if (n < 3 || n > 4) {
		PyErr_SetString(PyExc_TypeError, "put_record(key, cls, values[, free_old])");
		return NULL;
	}
	if (!PyDict_Check(args[2]))
		return PyErr_Format(PyExc_TypeError, "put_record: values is a dict, not %.80s",
				    Py_TYPE(args[2])->tp_name);
	if (n == 4) {
		int t = PyObject_IsTrue(args[3]);
		if (t < 0)
			return NULL;
		flags |= t ? UH_FREE_OLD : 0;
	}
	if (uhpy_map_key(p, args[0], &k) < 0 || class_id_of(p->heap, args[1], &cid) < 0)
		return NULL;
	if ((rc = uhpy_step_begin(p->heap, &outer)) != 0)
		return uhpy_raise(rc, "put_record");
	rc = put_new(p, &k, cid, args[2], flags);
	if ((rc = uhpy_step_end(p->heap, outer, rc)) != 0)
		return PyErr_Occurred() ? NULL : uhpy_raise(rc, "put_record");
	Py_RETURN_NONE;
}
