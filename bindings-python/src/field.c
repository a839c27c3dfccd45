/*
 * field.c -- the Field descriptor: one typed field of a persistent class.
 *
 * Outside a block a read goes straight to the mapping: header check, one
 * aligned load, then the header checked again, so a value copied while
 * the object was freed and its slot reused is never returned (the new
 * object's generation differs). Inside a block, and for every write, it
 * calls libuniheap,
 * which validates the read against the block's snapshot, range-checks
 * the value, locks and logs.
 *
 * An inline string or bytes field (declared with a capacity, max=) keeps
 * its value in the object: a read is one uh_get_inline, a write one
 * uh_set_inline (the whole field, in place), and asdict/astuple take
 * inline values from the same one copy of the record as the other fields.
 */
#include "ext.h"

typedef struct {
	PyObject_HEAD
	PyObject *name;		/* owned: attribute name, or None until __set_name__ */
	PyObject *owner;	/* owned: declaring class's heap name, for messages */
	PyObject *target;	/* owned: ref target (type, class name or None) */
	PyObject *cls;		/* owned: the declaring class (from __set_name__), or NULL */
	uint32_t type;		/* UH_T_* */
	uint32_t capacity;	/* inline fields (UH_T_ISTRING, UH_T_IBYTES): value bytes */
	int32_t index;		/* field index in the layout, -1 until bound */
	int32_t offset;		/* byte offset from the object start, -1 until bound */
} FieldObject;

#define NTYPES (UH_T_IBYTES + 1u)	/* codes 0 ("?") to UH_T_IBYTES: uh_type_name */
/* Inline values of up to this many bytes are read into the stack. */
#define INLINE_STACK 1024

/* The names by type code, for the Python layer: ("?", "bool", "i8", ...). */
PyObject *uhpy_type_names(void)
{
	PyObject *t = PyTuple_New(NTYPES);

	for (uint32_t i = 0; t && i < NTYPES; i++) {
		PyObject *s = PyUnicode_FromString(uh_type_name(i));
		if (!s) {
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, i, s);
	}
	return t;
}

static const uint32_t type_size[] = {
	[UH_T_BOOL] = 1, [UH_T_I8] = 1, [UH_T_I16] = 2, [UH_T_I32] = 4, [UH_T_I64] = 8,
	[UH_T_F32] = 4, [UH_T_F64] = 8, [UH_T_REF] = 8, [UH_T_STRING] = 8, [UH_T_BYTES] = 8,
};

static int is_inline(uint32_t t)
{
	return t == UH_T_ISTRING || t == UH_T_IBYTES;
}

/* Bytes the field takes in its object (FORMAT.md 3.2). */
static uint32_t field_size(const FieldObject *f)
{
	return is_inline(f->type) ? UH_INLINE_LEN_SIZE + f->capacity : type_size[f->type];
}

static int is_int_type(uint32_t t)
{
	return t >= UH_T_BOOL && t <= UH_T_I64;
}

static PyObject *field_new(PyTypeObject *tp, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "type", "target", "max", NULL };
	PyObject *type, *target = Py_None, *max = Py_None;
	uint32_t t = 0, cap = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO:Field", kwlist, &type, &target, &max))
		return NULL;
	if (PyUnicode_Check(type)) {
		for (uint32_t i = 1; i < NTYPES; i++)
			if (PyUnicode_CompareWithASCIIString(type, uh_type_name(i)) == 0)
				t = i;
	} else if (PyLong_Check(type)) {
		long v = PyLong_AsLong(type);
		t = v > 0 && (size_t)v < NTYPES ? (uint32_t)v : 0;
	}
	if (!t) {
		PyErr_Format(PyExc_ValueError, "unknown field type %R: one of i8, i16, i32, i64, "
			     "f32, f64, bool, ref, string, bytes", type);
		return NULL;
	}
	if (target != Py_None && t != UH_T_REF) {
		PyErr_SetString(PyExc_ValueError, "only ref fields have a target class");
		return NULL;
	}
	if (max != Py_None) {	/* string(max=N), bytes(max=N): inline */
		long m = PyLong_Check(max) ? PyLong_AsLong(max) : -1;
		if (m == -1 && PyErr_Occurred())
			return NULL;
		if (t == UH_T_STRING || t == UH_T_BYTES)
			t = t == UH_T_STRING ? UH_T_ISTRING : UH_T_IBYTES;
		if (!is_inline(t) || m < 1 || m > (long)UH_INLINE_MAX) {
			PyErr_Format(PyExc_ValueError, "max=%R: only string and bytes fields have "
				     "a capacity, an int from 1 to %u", max, UH_INLINE_MAX);
			return NULL;
		}
		cap = (uint32_t)m;
	} else if (is_inline(t)) {
		PyErr_SetString(PyExc_ValueError, "an inline field needs its capacity: max=N");
		return NULL;
	}
	FieldObject *f = (FieldObject *)tp->tp_alloc(tp, 0);
	if (!f)
		return NULL;
	f->name = Py_NewRef(Py_None);
	f->owner = Py_NewRef(Py_None);
	f->target = Py_NewRef(target);
	f->type = t;
	f->capacity = cap;
	f->index = -1;
	f->offset = -1;
	return (PyObject *)f;
}

static int field_traverse(FieldObject *f, visitproc visit, void *arg)
{
	Py_VISIT(Py_TYPE(f));
	Py_VISIT(f->target);
	Py_VISIT(f->cls);
	return 0;
}

static int field_clear(FieldObject *f)
{
	Py_CLEAR(f->name);
	Py_CLEAR(f->owner);
	Py_CLEAR(f->target);
	Py_CLEAR(f->cls);
	return 0;
}

static void field_dealloc(FieldObject *f)
{
	PyTypeObject *tp = Py_TYPE(f);

	PyObject_GC_UnTrack(f);
	field_clear(f);
	tp->tp_free(f);
	Py_DECREF(tp);
}

/* "Owner.name" for messages. */
static PyObject *field_what(FieldObject *f)
{
	return PyUnicode_FromFormat("%S.%S", f->owner, f->name);
}

static PyObject *raise_at(FieldObject *f, int rc)
{
	PyObject *what = field_what(f);
	const char *s = what ? PyUnicode_AsUTF8(what) : NULL;

	if (!s) {
		Py_XDECREF(what);
		return NULL;
	}
	uhpy_raise(rc, s);
	Py_DECREF(what);
	return NULL;
}

static int wrong_type(FieldObject *f, const char *want, PyObject *v)
{
	PyErr_Format(PyExc_TypeError, "%S.%S is a %s field: expected %s, not %.80s", f->owner,
		     f->name, uh_type_name(f->type), want, Py_TYPE(v)->tp_name);
	return -1;
}

/* ---- reads ---- */

/* One aligned load of the field's bytes (never torn). */
static uint64_t load_raw(const char *at, uint32_t size)
{
	switch (size) {
	case 1: return __atomic_load_n((const uint8_t *)at, __ATOMIC_RELAXED);
	case 2: return __atomic_load_n((const uint16_t *)at, __ATOMIC_RELAXED);
	case 4: return __atomic_load_n((const uint32_t *)at, __ATOMIC_RELAXED);
	default: return __atomic_load_n((const uint64_t *)at, __ATOMIC_RELAXED);
	}
}

/* Field f's Python value from raw, its bytes zero-extended; a str or
 * bytes value is copy, the copy uhpy_copy_values made of it (a new
 * reference, taken; NULL when raw is 0). NULL with an exception. */
static PyObject *value_of(HeapObject *hp, FieldObject *f, uint64_t raw, PyObject *copy)
{
	union { uint64_t u; uint8_t b; int8_t i8; int16_t i16; int32_t i32; int64_t i64;
		float f32; double f64; } v = { .u = raw };

	switch (f->type) {
	case UH_T_BOOL: return PyBool_FromLong(v.b != 0);
	case UH_T_I8: return PyLong_FromLong(v.i8);
	case UH_T_I16: return PyLong_FromLong(v.i16);
	case UH_T_I32: return PyLong_FromLong(v.i32);
	case UH_T_I64: return PyLong_FromLongLong(v.i64);
	case UH_T_F32: return PyFloat_FromDouble(v.f32);
	case UH_T_F64: return PyFloat_FromDouble(v.f64);
	case UH_T_REF: return uhpy_wrap_ref(hp, v.u);
	}
	return copy ? copy : Py_NewRef(Py_None);
}

static int is_copied(uint32_t type)
{
	return type == UH_T_STRING || type == UH_T_BYTES;
}

/* Field f's raw bytes, loaded from the mapping: 0, or UHPY_RAISED when
 * the object is not live after the load (the allocator writes a new
 * generation before the new object's bytes, so a load the header still
 * names afterwards is the object's). */
static int load_field(ProxyObject *p, FieldObject *f, uint64_t *raw)
{
	const char *base = p->heap->base;

	*raw = load_raw(base + UH_REF_OFFSET(p->off) + f->offset, field_size(f));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (!uhpy_live(base, p->off, p->cls))
		return uhpy_freed(p->off), UHPY_RAISED;
	return 0;
}

struct field_at {
	ProxyObject *p;
	FieldObject *f;
};

static int fetch_field(uh_heap *h, void *arg, uh_value *vals, uint32_t *n)
{
	struct field_at *at = arg;
	uint64_t raw;
	int rc = load_field(at->p, at->f, &raw);

	(void)h;
	vals[0] = (uh_value){ .type = at->f->type, .u.ref = raw };
	*n = 1;
	return rc;
}

/* The Python value of an inline field whose bytes (length word, then the
 * value) are at: str or bytes. */
static PyObject *inline_value(FieldObject *f, const unsigned char *at)
{
	uint32_t n;

	memcpy(&n, at, UH_INLINE_LEN_SIZE);
	if (n > f->capacity)	/* uh_record_read checked the object: damage */
		return PyErr_Format(uhpy_st->by_code[-UH_EINTERNAL], "%S.%S holds %u bytes, "
				    "its capacity is %u", f->owner, f->name, n, f->capacity);
	const char *data = (const char *)at + UH_INLINE_LEN_SIZE;
	if (f->type == UH_T_ISTRING)
		return PyUnicode_DecodeUTF8(data, n, "strict");
	return PyBytes_FromStringAndSize(data, n);
}

/* One inline field: in and out of blocks, uh_get_inline gives the value
 * as of one instant. */
static PyObject *read_inline(ProxyObject *p, FieldObject *f)
{
	unsigned char stack[INLINE_STACK], *buf = stack;
	size_t n = 0;
	PyObject *out = NULL;
	int rc;

	if (f->capacity + UH_INLINE_LEN_SIZE > sizeof(stack) &&
	    !(buf = PyMem_Malloc(f->capacity + UH_INLINE_LEN_SIZE)))
		return PyErr_NoMemory();
	rc = uh_get_inline(p->heap->h, p->off, (uint32_t)f->index, buf + UH_INLINE_LEN_SIZE,
			   f->capacity, &n);
	if (rc) {
		raise_at(f, rc);
	} else {
		uint32_t n32 = (uint32_t)n;
		memcpy(buf, &n32, UH_INLINE_LEN_SIZE);
		out = inline_value(f, buf);
	}
	if (buf != stack)
		PyMem_Free(buf);
	return out;
}

/* Outside a block: a str or bytes value replaced under its copy sends the
 * read round again (uhpy_copy_values). */
static PyObject *read_direct(ProxyObject *p, FieldObject *f)
{
	struct field_at at = { p, f };
	PyObject *copy;
	uint64_t raw;
	uh_value v;
	int rc;

	if (!is_copied(f->type))
		return load_field(p, f, &raw) ? NULL : value_of(p->heap, f, raw, NULL);
	if ((rc = uhpy_copy_values(p->heap, fetch_field, &at, &v, &copy, 1)) != 0)
		return rc == UHPY_RAISED ? NULL : raise_at(f, rc);
	return value_of(p->heap, f, v.u.ref, copy);
}

static PyObject *read_in_block(ProxyObject *p, FieldObject *f)
{
	uh_heap *h = p->heap->h;
	int64_t i;
	double d;
	uh_off ref;
	int rc;

	if (is_int_type(f->type)) {
		if ((rc = uh_get_i64(h, p->off, (uint32_t)f->index, &i)) != 0)
			return raise_at(f, rc);
		return f->type == UH_T_BOOL ? PyBool_FromLong(i != 0) : PyLong_FromLongLong(i);
	}
	if (f->type == UH_T_F32 || f->type == UH_T_F64) {
		if ((rc = uh_get_f64(h, p->off, (uint32_t)f->index, &d)) != 0)
			return raise_at(f, rc);
		return PyFloat_FromDouble(d);
	}
	if ((rc = uh_get_ref(h, p->off, (uint32_t)f->index, &ref)) != 0)
		return raise_at(f, rc);
	if (ref == 0)
		Py_RETURN_NONE;
	if (f->type == UH_T_REF)
		return uhpy_wrap_ref(p->heap, ref);
	return uhpy_string_at(p->heap, ref, f->type);
}

static int usable(FieldObject *f, PyObject *obj)
{
	PyTypeObject *want = f->cls ? (PyTypeObject *)f->cls : uhpy_st->proxy_type;
	if (!PyObject_TypeCheck(obj, want)) {
		PyErr_Format(PyExc_TypeError, "field %S.%S applies to %.80s objects, not %.80s",
			     f->owner, f->name, want->tp_name, Py_TYPE(obj)->tp_name);
		return -1;
	}
	if (f->offset < 0) {
		PyErr_Format(PyExc_TypeError, "field %S.%S is not bound to a heap layout yet",
			     f->owner, f->name);
		return -1;
	}
	if (uhpy_proxy_usable((ProxyObject *)obj) < 0)
		return -1;
	/* The class check above makes this hold; it is cheap, and a direct
	 * read must never go past the object whatever happens. */
	ProxyObject *p = (ProxyObject *)obj;
	const struct uhpy_objhdr *o = uhpy_hdr(p->heap->base, p->off);
	uint32_t payload = o->size & ~UH_OBJ_VALID;
	if ((uint32_t)f->offset + field_size(f) > sizeof(*o) + payload) {
		PyErr_Format(uhpy_st->by_code[-UH_ETYPE], "field %S.%S does not belong to objects "
			     "of class %u", f->owner, f->name, p->cls);
		return -1;
	}
	return 0;
}

static PyObject *field_get(FieldObject *f, PyObject *obj, PyObject *type)
{
	(void)type;
	if (!obj || obj == Py_None)
		return Py_NewRef(f);
	if (usable(f, obj) < 0)
		return NULL;
	ProxyObject *p = (ProxyObject *)obj;
	if (is_inline(f->type))
		return read_inline(p, f);
	if (uh_in_block(p->heap->h))
		return read_in_block(p, f);
	return read_direct(p, f);
}

/* ---- all fields at once (uniheap.asdict, uniheap.astuple) ---- */

/* Start loading the header and first bytes of every str/bytes value the
 * fields name: their cache misses overlap instead of coming one per
 * value as they are copied. */
static void prefetch_values(ProxyObject *p, PyObject *fields, const unsigned char *buf,
			    int32_t lo)
{
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fields); i++) {	/* bound: fields */
		FieldObject *f = (FieldObject *)PyTuple_GET_ITEM(fields, i);
		uint64_t ref;
		if (f->type != UH_T_STRING && f->type != UH_T_BYTES)
			continue;
		memcpy(&ref, buf + (f->offset - lo), 8);
		uint64_t off = UH_REF_OFFSET(ref);
		if (off && off < p->heap->size - 128) {
			__builtin_prefetch(p->heap->base + off);
			__builtin_prefetch(p->heap->base + off + 64);
		}
	}
}

/* The bytes of p that fields (a tuple of bound Fields of p's class, in
 * layout order) span, read with one uh_read into buf: every field as of
 * one instant. */
struct fields_at {
	ProxyObject *p;
	PyObject *fields;
	unsigned char *buf;
	int32_t lo, hi;
};

static int fetch_fields(uh_heap *h, void *arg, uh_value *vals, uint32_t *n)
{
	struct fields_at *at = arg;
	Py_ssize_t nf = PyTuple_GET_SIZE(at->fields);
	int rc = uh_read(h, at->p->off, (uint32_t)at->lo, at->buf, (uint32_t)(at->hi - at->lo));

	if (rc)
		return rc;
	prefetch_values(at->p, at->fields, at->buf, at->lo);
	for (Py_ssize_t i = 0; i < nf; i++) {	/* bound: fields */
		FieldObject *f = (FieldObject *)PyTuple_GET_ITEM(at->fields, i);
		vals[i] = (uh_value){ .type = f->type };
		if (!is_inline(f->type))	/* inline values stay in buf */
			memcpy(&vals[i].u.ref, at->buf + (f->offset - at->lo), field_size(f));
	}
	*n = (uint32_t)nf;
	return 0;
}

/* The fields' values, vals as fetch_fields left them and the copies made
 * of the str/bytes ones (taken), inline values from at's copy of the
 * record, as a dict or a tuple. */
static PyObject *fields_object(ProxyObject *p, PyObject *fields, const uh_value *vals,
			       PyObject **copies, const struct fields_at *at, int as_dict)
{
	Py_ssize_t n = PyTuple_GET_SIZE(fields);
	PyObject *out = as_dict ? PyDict_New() : PyTuple_New(n);
	Py_ssize_t i;

	for (i = 0; out && i < n; i++) {	/* bound: fields */
		FieldObject *f = (FieldObject *)PyTuple_GET_ITEM(fields, i);
		PyObject *v = is_inline(f->type) ? inline_value(f, at->buf + (f->offset - at->lo))
						 : value_of(p->heap, f, vals[i].u.ref, copies[i]);
		copies[i] = NULL;
		if (v && !as_dict) {
			PyTuple_SET_ITEM(out, i, v);
			continue;
		}
		if (!v || PyDict_SetItem(out, f->name, v) < 0)
			Py_CLEAR(out);
		Py_XDECREF(v);
	}
	for (; i < n; i++)	/* bound: fields; after an error */
		Py_CLEAR(copies[i]);
	return out;
}

/* The values of fields as a dict or a tuple, from one uh_read of the
 * bytes they span. A str or bytes value replaced before it was copied
 * sends the whole read round again (uhpy_copy_values). */
static PyObject *read_fields(ProxyObject *p, PyObject *fields, int as_dict)
{
	Py_ssize_t n = PyTuple_GET_SIZE(fields);
	FieldObject *first = (FieldObject *)PyTuple_GET_ITEM(fields, 0);
	FieldObject *last = (FieldObject *)PyTuple_GET_ITEM(fields, n - 1);
	int32_t lo = first->offset & ~7, hi = (last->offset + (int32_t)field_size(last) + 7) & ~7;
	unsigned char stack[2048];
	uh_value vstack[32], *vals = vstack;
	PyObject *cstack[32], **copies = cstack, *out = NULL;
	struct fields_at at = { p, fields, stack, lo, hi };
	int rc;

	if (hi - lo > (int32_t)sizeof(stack) && !(at.buf = PyMem_Malloc((size_t)(hi - lo))))
		return PyErr_NoMemory();
	if (n > 32 && (!(vals = PyMem_Malloc(n * sizeof(*vals))) ||
		       !(copies = PyMem_Malloc(n * sizeof(*copies))))) {
		PyErr_NoMemory();
		goto out;
	}
	rc = uhpy_copy_values(p->heap, fetch_fields, &at, vals, copies, (uint32_t)n);
	if (rc == UH_EFREED)
		uhpy_freed(p->off);
	else if (rc && rc != UHPY_RAISED)
		uhpy_raise(rc, "reading the fields");
	else if (!rc)
		out = fields_object(p, fields, vals, copies, &at, as_dict);
out:
	if (at.buf != stack)
		PyMem_Free(at.buf);
	if (vals != vstack)
		PyMem_Free(vals);
	if (copies != cstack)
		PyMem_Free(copies);
	return out;
}

PyObject *uhpy_read_fields(PyObject *obj, int as_dict)
{
	/* Interned once: a lookup by a C string would make and hash a str
	 * per call. */
	static PyObject *name;
	PyObject *r = NULL;

	if (!name && !(name = PyUnicode_InternFromString("__uniheap_fields__")))
		return NULL;
	PyObject *fields = PyObject_GetAttr((PyObject *)Py_TYPE(obj), name);

	if (!fields) {
		PyErr_Clear();
		return PyErr_Format(PyExc_TypeError, "%s() takes a uniheap.PObject, not %.80s",
				    as_dict ? "asdict" : "astuple", Py_TYPE(obj)->tp_name);
	}
	Py_ssize_t n = PyTuple_Check(fields) ? PyTuple_GET_SIZE(fields) : -1;
	if (n == 0) {
		r = as_dict ? PyDict_New() : PyTuple_New(0);
	} else if (n > 0 && PyObject_TypeCheck(PyTuple_GET_ITEM(fields, n - 1), uhpy_st->field_type)) {
		/* usable() of the last field: obj is a proxy of the class, bound,
		 * live, and long enough for every field. */
		FieldObject *last = (FieldObject *)PyTuple_GET_ITEM(fields, n - 1);
		if (usable(last, obj) == 0)
			r = read_fields((ProxyObject *)obj, fields, as_dict);
	} else {
		PyErr_Format(PyExc_TypeError, "%.80s.__uniheap_fields__ is not a tuple of fields",
			     Py_TYPE(obj)->tp_name);
	}
	Py_DECREF(fields);
	return r;
}

/* ---- a record from a copy of its payload (map get_fields, scan_fields) ---- */

/* 1 when every field of fields is bound and its value lies in the
 * payload itself (numbers, refs, inline values); 0 when one is an
 * out-of-line str or bytes value, which only a proxy reads safely. */
int uhpy_payload_decodes(PyObject *fields)
{
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fields); i++) {	/* bound: fields */
		PyObject *o = PyTuple_GET_ITEM(fields, i);
		if (!PyObject_TypeCheck(o, uhpy_st->field_type))
			return 0;
		FieldObject *f = (FieldObject *)o;
		if (f->offset < (int32_t)sizeof(struct uhpy_objhdr) || is_copied(f->type))
			return 0;
	}
	return 1;
}

PyObject *uhpy_fields_template(PyObject *fields)
{
	PyObject *d = PyDict_New();

	for (Py_ssize_t i = 0; d && i < PyTuple_GET_SIZE(fields); i++) {	/* bound: fields */
		FieldObject *f = (FieldObject *)PyTuple_GET_ITEM(fields, i);
		if (PyDict_SetItem(d, f->name, Py_None) < 0)
			Py_CLEAR(d);
	}
	return d;
}

int uhpy_inline_field(PyObject *fields, Py_ssize_t i, PyObject *name, uint32_t *idx,
		      uint32_t *type, uint32_t *capacity)
{
	Py_ssize_t n = PyTuple_Check(fields) ? PyTuple_GET_SIZE(fields) : 0;

	for (Py_ssize_t j = 0; j < n; j++) {	/* bound: fields */
		PyObject *o = PyTuple_GET_ITEM(fields, (i + j) % n);
		if (!PyObject_TypeCheck(o, uhpy_st->field_type))
			return 0;
		FieldObject *f = (FieldObject *)o;
		if (f->name != name && (!PyUnicode_Check(f->name) ||
					PyUnicode_Compare(f->name, name) != 0))
			continue;
		if (f->index < 0 || !is_inline(f->type))
			return 0;
		*idx = (uint32_t)f->index;
		*type = f->type;
		*capacity = f->capacity;
		return 1;
	}
	return 0;
}

int uhpy_payload_dict(HeapObject *hp, PyObject *fields, PyObject *template,
		      const unsigned char *payload, size_t len, PyObject **out)
{
	if (!template && (!PyTuple_Check(fields) || !uhpy_payload_decodes(fields)))
		return 0;
	PyObject *d = template ? PyDict_Copy(template) : PyDict_New();

	for (Py_ssize_t i = 0; d && i < PyTuple_GET_SIZE(fields); i++) {	/* bound: fields */
		FieldObject *f = (FieldObject *)PyTuple_GET_ITEM(fields, i);
		size_t at = (size_t)f->offset - sizeof(struct uhpy_objhdr);
		PyObject *v;
		if (at + field_size(f) > len) {	/* the class's layout says otherwise: damage */
			PyErr_Format(uhpy_st->by_code[-UH_EINTERNAL], "%S.%S lies past the "
				     "record's %zu bytes", f->owner, f->name, len);
			Py_CLEAR(d);
			break;
		}
		if (is_inline(f->type)) {
			v = inline_value(f, payload + at);
		} else {
			uint64_t raw = 0;
			memcpy(&raw, payload + at, field_size(f));	/* little-endian */
			v = value_of(hp, f, raw, NULL);
		}
		if (!v || PyDict_SetItem(d, f->name, v) < 0)
			Py_CLEAR(d);
		Py_XDECREF(v);
	}
	*out = d;
	return d ? 1 : -1;
}

/* ---- writes ---- */

static int set_ref(FieldObject *f, ProxyObject *p, PyObject *v)
{
	uh_off ref = 0;
	int rc;

	if (v != Py_None) {
		if ((rc = uhpy_same_heap(p->heap, v, &ref)) < 0)
			return -1;
		if (rc == 0) {
			PyErr_Format(PyExc_TypeError,
				     "%S.%S is a ref field: assign a persistent object (a "
				     "uniheap.PObject, PMap, PSortedMap, PList or PArray) or None, not "
				     "%.80s; make a Python value persistent first, e.g. "
				     "PList(heap, values) or PMap(heap, data=mapping)",
				     f->owner, f->name, Py_TYPE(v)->tp_name);
			return -1;
		}
		if (PyType_Check(f->target) && (rc = PyObject_IsInstance(v, f->target)) != 1) {
			if (rc == 0)
				PyErr_Format(uhpy_st->by_code[-UH_ETYPE],
					     "%S.%S refers to %.80s objects, not %.80s", f->owner,
					     f->name, ((PyTypeObject *)f->target)->tp_name,
					     Py_TYPE(v)->tp_name);
			return -1;
		}
	}
	if ((rc = uh_set_ref(p->heap->h, p->off, (uint32_t)f->index, ref)) != 0) {
		raise_at(f, rc);
		return -1;
	}
	return 0;
}

/* A string or bytes field owns its value object: replacing it frees the
 * old one in the same block. */
static int set_value(FieldObject *f, ProxyObject *p, PyObject *v)
{
	uh_heap *h = p->heap->h;
	const char *data = NULL;
	Py_ssize_t len = 0;
	uh_off old = 0, now = 0;
	int outer, rc;

	if (v != Py_None) {
		if (f->type == UH_T_STRING) {
			if (!PyUnicode_Check(v))
				return wrong_type(f, "str or None", v);
			if (!(data = PyUnicode_AsUTF8AndSize(v, &len)))
				return -1;
		} else {
			if (!PyBytes_Check(v) && !PyByteArray_Check(v))
				return wrong_type(f, "bytes or None", v);
			data = PyBytes_Check(v) ? PyBytes_AS_STRING(v) : PyByteArray_AS_STRING(v);
			len = PyBytes_Check(v) ? PyBytes_GET_SIZE(v) : PyByteArray_GET_SIZE(v);
		}
	}
	if ((rc = uhpy_step_begin(p->heap, &outer)) != 0)
		return raise_at(f, rc), -1;
	rc = uh_get_ref(h, p->off, (uint32_t)f->index, &old);
	if (rc == 0 && data)
		rc = f->type == UH_T_STRING ? uh_string_new(h, data, (size_t)len, &now)
					    : uh_bytes_new(h, data, (size_t)len, &now);
	if (rc == 0)
		rc = uh_set_ref(h, p->off, (uint32_t)f->index, now);
	if (rc == 0 && old && old != now)
		rc = uh_free(h, old);
	if ((rc = uhpy_step_end(p->heap, outer, rc)) != 0)
		return raise_at(f, rc), -1;
	return 0;
}

/* An inline field: the value written in place (uh_set_inline refuses one
 * longer than the capacity, naming field, capacity and length). */
static int set_inline(FieldObject *f, ProxyObject *p, PyObject *v)
{
	const char *data;
	Py_ssize_t len;
	Py_buffer view = { 0 };
	int rc;

	if (f->type == UH_T_ISTRING) {
		if (!PyUnicode_Check(v))
			return wrong_type(f, "str", v);
		if (!(data = PyUnicode_AsUTF8AndSize(v, &len)))
			return -1;
	} else {
		if (!PyObject_CheckBuffer(v) || PyUnicode_Check(v))
			return wrong_type(f, "bytes", v);
		if (PyObject_GetBuffer(v, &view, PyBUF_SIMPLE) < 0)
			return -1;
		data = view.buf;
		len = view.len;
	}
	rc = uh_set_inline(p->heap->h, p->off, (uint32_t)f->index, data, (size_t)len);
	if (view.obj)
		PyBuffer_Release(&view);
	if (rc)
		return raise_at(f, rc), -1;
	return 0;
}

static int set_int(FieldObject *f, ProxyObject *p, PyObject *v)
{
	int overflow, rc;

	if (!PyLong_Check(v))
		return wrong_type(f, f->type == UH_T_BOOL ? "bool" : "int", v);
	long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
	if (i == -1 && PyErr_Occurred())
		return -1;
	if (overflow) {
		PyErr_Format(uhpy_st->by_code[-UH_ERANGE], "%S.%S: %R does not fit %s", f->owner,
			     f->name, v, uh_type_name(f->type));
		return -1;
	}
	if ((rc = uh_set_i64(p->heap->h, p->off, (uint32_t)f->index, i)) != 0)
		return raise_at(f, rc), -1;
	return 0;
}

static int set_float(FieldObject *f, ProxyObject *p, PyObject *v)
{
	int rc;

	if (!PyFloat_Check(v) && !PyLong_Check(v))
		return wrong_type(f, "float", v);
	double d = PyFloat_AsDouble(v);
	if (d == -1.0 && PyErr_Occurred())
		return -1;
	if ((rc = uh_set_f64(p->heap->h, p->off, (uint32_t)f->index, d)) != 0)
		return raise_at(f, rc), -1;
	return 0;
}

static int field_set(FieldObject *f, PyObject *obj, PyObject *v)
{
	if (!v) {
		PyErr_Format(PyExc_AttributeError, "cannot delete persistent field %S.%S "
			     "(assign None to clear a ref, string or bytes field)", f->owner,
			     f->name);
		return -1;
	}
	if (usable(f, obj) < 0)
		return -1;
	ProxyObject *p = (ProxyObject *)obj;
	if (is_int_type(f->type))
		return set_int(f, p, v);
	if (f->type == UH_T_F32 || f->type == UH_T_F64)
		return set_float(f, p, v);
	if (f->type == UH_T_REF)
		return set_ref(f, p, v);
	if (is_inline(f->type))
		return set_inline(f, p, v);
	return set_value(f, p, v);
}

/* ---- declaration side ---- */

static PyObject *field_set_name(FieldObject *f, PyObject *args)
{
	PyObject *owner, *name;

	if (!PyArg_ParseTuple(args, "OU:__set_name__", &owner, &name))
		return NULL;
	Py_SETREF(f->name, Py_NewRef(name));
	if (PyType_Check(owner) && PyType_IsSubtype((PyTypeObject *)owner, uhpy_st->proxy_type))
		Py_XSETREF(f->cls, Py_NewRef(owner));
	if (f->owner == Py_None) {
		PyObject *qn = PyObject_GetAttrString(owner, "__qualname__");
		if (!qn)
			return NULL;
		Py_SETREF(f->owner, qn);
	}
	Py_RETURN_NONE;
}

/* _bind(index, offset, owner_name): offset -1 at declaration; the real
 * offset at the class's first registration; a second heap must give the
 * same layout. */
static PyObject *field_bind(FieldObject *f, PyObject *args)
{
	int index, offset;
	PyObject *owner;

	if (!PyArg_ParseTuple(args, "iiU:_bind", &index, &offset, &owner))
		return NULL;
	if (offset < 0) {	/* declared: the index is known, the offset not yet */
		if (f->index < 0) {
			f->index = index;
			Py_SETREF(f->owner, Py_NewRef(owner));
		}
		Py_RETURN_NONE;
	}
	if (f->offset >= 0 && (f->offset != offset || f->index != index)) {
		PyErr_Format(uhpy_st->by_code[-UH_ECLASSMISMATCH],
			     "%S.%S: laid out at offset %d in one heap and %d in another", owner,
			     f->name, f->offset, offset);
		return NULL;
	}
	f->index = index;
	f->offset = offset;
	Py_SETREF(f->owner, Py_NewRef(owner));
	Py_RETURN_NONE;
}

static PyObject *field_repr(FieldObject *f)
{
	if (is_inline(f->type))
		return PyUnicode_FromFormat("<uniheap field %S: %s(max=%u)>", f->name,
					    f->type == UH_T_ISTRING ? "string" : "bytes",
					    f->capacity);
	if (f->target != Py_None)
		return PyUnicode_FromFormat("<uniheap field %S: ref(%R)>", f->name, f->target);
	return PyUnicode_FromFormat("<uniheap field %S: %s>", f->name, uh_type_name(f->type));
}

static PyObject *field_get_type(FieldObject *f, void *c)
{
	(void)c;
	return PyUnicode_FromString(uh_type_name(f->type));
}

static PyObject *field_get_code(FieldObject *f, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLong(f->type);
}

static PyMethodDef field_methods[] = {
	{ "__set_name__", (PyCFunction)field_set_name, METH_VARARGS, NULL },
	{ "_bind", (PyCFunction)field_bind, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyMemberDef field_members[] = {
	{ "name", T_OBJECT, offsetof(FieldObject, name), READONLY, "Attribute name." },
	{ "owner", T_OBJECT, offsetof(FieldObject, owner), READONLY, "Declaring class name." },
	{ "target", T_OBJECT, offsetof(FieldObject, target), 0,
	  "Ref target: a class, a heap class name, or None (any object)." },
	{ "index", T_INT, offsetof(FieldObject, index), READONLY, "Position in the layout." },
	{ "capacity", T_UINT, offsetof(FieldObject, capacity), READONLY,
	  "Inline string or bytes fields: the value's capacity in bytes (max=); else 0." },
	{ "offset", T_INT, offsetof(FieldObject, offset), READONLY,
	  "Byte offset from the object start; -1 until registered." },
	{ NULL, 0, 0, 0, NULL },
};

static PyGetSetDef field_getset[] = {
	{ "type", (getter)field_get_type, NULL, "Field type name.", NULL },
	{ "type_code", (getter)field_get_code, NULL, "Field type code (UH_T_*).", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot field_slots[] = {
	{ Py_tp_doc, "Field(type, target=None, max=None): a typed field of a persistent class; "
		     "max=N makes a string or bytes field inline, of capacity N bytes." },
	{ Py_tp_new, field_new },
	{ Py_tp_dealloc, field_dealloc },
	{ Py_tp_traverse, field_traverse },
	{ Py_tp_clear, field_clear },
	{ Py_tp_descr_get, field_get },
	{ Py_tp_descr_set, field_set },
	{ Py_tp_repr, field_repr },
	{ Py_tp_methods, field_methods },
	{ Py_tp_members, field_members },
	{ Py_tp_getset, field_getset },
	{ 0, NULL },
};

PyType_Spec uhpy_field_spec = {
	.name = "uniheap.Field",
	.basicsize = sizeof(FieldObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.slots = field_slots,
};
