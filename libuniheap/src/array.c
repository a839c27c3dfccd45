/*
 * array.c -- persistent fixed-length arrays of one element type.
 *
 * FORMAT (one object, class UH_CLASS_ARRAY, kind UH_K_ARRAY):
 *
 *   offset  size            what
 *   0       16              object header (lock word, class id, size)
 *   16      4               elem_type: UH_T_* (1..UH_T_MAX), immutable
 *   20      4               reserved, 0
 *   24      8               length: number of elements, immutable
 *   32      length * esize  elements, esize = uh_type_size(elem_type);
 *                           element i at 32 + i * esize
 *
 * Elements are naturally aligned (32 is a multiple of 8 and esize is a
 * power of two), so every element is read and written as one aligned
 * load/store: a reader outside a block never sees a torn element.
 * Integer elements hold two's complement values of their width (bool: 0 or
 * 1); f32 elements an IEEE float, f64 a double; ref/string/bytes elements a
 * u64 heap offset (0 = null) of an object of any class / UH_CLASS_STRING /
 * UH_CLASS_BYTES. Recovery GC knows kind ARRAY and follows the elements of
 * the three reference types.
 *
 * Invariants: payload size == 16 + length * esize; elem_type and length
 * never change after the creating block commits.
 *
 * Crash safety: the array is created inside a block (zeroed, header
 * written in place before commit, flushed at B0), so it either exists
 * whole or not at all; every element write goes through the block's redo
 * log (uh_tx_write), and UH_FREE_OLD frees the replaced object in the same
 * block, so a crash leaves either the old element (and old object live) or
 * the new element (and the old object freed).
 *
 * Concurrency: the whole array is one lock (the object's lock word); a set
 * locks it to the end of the block, gets are validated reads.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "value.h"

#define ARR_ELEMS 32u	/* offset of element 0 from the object start */
#define ARR_TYPE 16u	/* offset of elem_type */
#define ARR_LEN 24u	/* offset of length */

_Static_assert(ARR_ELEMS == UH_OBJHDR_SIZE + sizeof(struct uh_array_hdr), "array layout");
_Static_assert(ARR_LEN == UH_OBJHDR_SIZE + offsetof(struct uh_array_hdr, length),
	       "array length offset");

static int is_int(uint32_t t)
{
	return t >= UH_T_BOOL && t <= UH_T_I64;
}

static int is_float(uint32_t t)
{
	return t == UH_T_F32 || t == UH_T_F64;
}

/* Header of array a read through the block: its element type and length. */
struct arr_shape {
	uint32_t type;
	uint32_t esize;
	uint64_t len;
};

static int arr_shape(uh_heap *h, uh_off a, struct arr_shape *s)
{
	int rc;
	struct uh_objhdr *o = uh_obj_get(h, a, UH_CLASS_ARRAY, &rc);

	if (!o)
		return rc;
	if ((rc = uh_tx_read(h, a, a + ARR_TYPE, &s->type, 4)) != 0 ||
	    (rc = uh_tx_read(h, a, a + ARR_LEN, &s->len, 8)) != 0)
		return rc;
	s->esize = uh_type_size(s->type);
	uint64_t payload = o->size & UH_OBJ_SIZE_MASK;
	/* A damaged header must never make us read past the object. */
	if (!s->esize || s->len > (payload - sizeof(struct uh_array_hdr)) / s->esize)
		return uh_err_set(UH_EINTERNAL, "array %llu is damaged: type %u, length %llu "
				  "in a payload of %llu bytes", (unsigned long long)a, s->type,
				  (unsigned long long)s->len, (unsigned long long)payload);
	return 0;
}

static int check_index(uh_off a, const struct arr_shape *s, uint64_t index)
{
	if (index < s->len)
		return 0;
	return uh_err_set(UH_ERANGE, "index %llu out of range: array %llu has %llu elements",
			  (unsigned long long)index, (unsigned long long)a,
			  (unsigned long long)s->len);
}

/* ---- new ---- */

struct new_args {
	uint32_t type;
	uint64_t len;
	uh_off *out;
};

static int new_body(uh_heap *h, void *p)
{
	struct new_args *x = p;
	uint64_t payload = sizeof(struct uh_array_hdr) + x->len * uh_type_size(x->type);
	uh_off a;
	int rc;

	if ((rc = uh_alloc_raw(h, UH_CLASS_ARRAY, payload, NULL, &a)) != 0)
		return rc;
	/* A new object: written in place, made durable at commit (B0). */
	if ((rc = uh_tx_write(h, a, a + ARR_TYPE, &x->type, 4)) != 0 ||
	    (rc = uh_tx_write(h, a, a + ARR_LEN, &x->len, 8)) != 0)
		return rc;
	*x->out = a;
	return 0;
}

int uh_array_new(uh_heap *h, uint32_t elem_type, uint64_t length, uh_off *out)
{
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (!out)
		return uh_err_set(UH_EINVAL, "uh_array_new: out is NULL");
	if (h->readonly)
		return uh_err_set(UH_EREADONLY, "uh_array_new: heap is connected read-only");
	uint32_t esize = uh_type_size(elem_type);
	if (!esize)
		return uh_err_set(UH_EINVAL, "uh_array_new: element type %u is not a field "
				  "type (UH_T_BOOL..UH_T_BYTES)", elem_type);
	/* Overflow-checked: the payload must fit an object's 31-bit size. */
	if (length > (UH_OBJ_SIZE_MASK - sizeof(struct uh_array_hdr)) / esize)
		return uh_err_set(UH_EINVAL, "uh_array_new: %llu elements of %s do not fit "
				  "one object (at most %u payload bytes)",
				  (unsigned long long)length, uh_type_name(elem_type),
				  UH_OBJ_SIZE_MASK);
	struct new_args x = { elem_type, length, out };
	return uh_in_implicit_block(h, new_body, &x);
}

/* ---- len, elem_type ---- */

struct shape_args {
	uh_off a;
	struct arr_shape s;
};

static int shape_body(uh_heap *h, void *p)
{
	struct shape_args *x = p;
	return arr_shape(h, x->a, &x->s);
}

static int get_shape(uh_heap *h, uh_off a, struct arr_shape *s)
{
	struct shape_args x = { .a = a };
	int rc = uh_in_implicit_block(h, shape_body, &x);

	*s = x.s;
	return rc;
}

int uh_array_len(uh_heap *h, uh_off a, uint64_t *len)
{
	struct arr_shape s;
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (!len)
		return uh_err_set(UH_EINVAL, "uh_array_len: len is NULL");
	if ((rc = get_shape(h, a, &s)) == 0)
		*len = s.len;
	return rc;
}

int uh_array_elem_type(uh_heap *h, uh_off a, uint32_t *elem_type)
{
	struct arr_shape s;
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (!elem_type)
		return uh_err_set(UH_EINVAL, "uh_array_elem_type: elem_type is NULL");
	if ((rc = get_shape(h, a, &s)) == 0)
		*elem_type = s.type;
	return rc;
}

/* ---- element encoding ---- */

/* The raw element bytes (esize of them, little end first) as a value. */
static void decode(uint32_t type, uint64_t raw, uh_value *v)
{
	memset(v, 0, sizeof(*v));
	v->type = type;
	switch (type) {
	case UH_T_BOOL: v->u.i = (uint8_t)raw; break;
	case UH_T_I8: v->u.i = (int8_t)raw; break;
	case UH_T_I16: v->u.i = (int16_t)raw; break;
	case UH_T_I32: v->u.i = (int32_t)raw; break;
	case UH_T_F32: {
		float f;
		uint32_t bits = (uint32_t)raw;
		memcpy(&f, &bits, 4);
		v->u.f = f;
		break;
	}
	case UH_T_F64: memcpy(&v->u.f, &raw, 8); break;
	default: v->u.ref = raw; break;	/* i64, ref, string, bytes */
	}
}

static void int_range(uint32_t t, int64_t *lo, int64_t *hi)
{
	switch (t) {
	case UH_T_BOOL: *lo = 0; *hi = 1; return;
	case UH_T_I8: *lo = INT8_MIN; *hi = INT8_MAX; return;
	case UH_T_I16: *lo = INT16_MIN; *hi = INT16_MAX; return;
	case UH_T_I32: *lo = INT32_MIN; *hi = INT32_MAX; return;
	default: *lo = INT64_MIN; *hi = INT64_MAX; return;
	}
}

static int encode_int(uint32_t type, const uh_value *v, uint64_t *raw)
{
	int64_t lo, hi;

	int_range(type, &lo, &hi);
	if (v->u.i < lo || v->u.i > hi)
		return uh_err_set(UH_ERANGE, "value %lld does not fit a %s element",
				  (long long)v->u.i, uh_type_name(type));
	*raw = (uint64_t)v->u.i;
	return 0;
}

static int encode_float(uint32_t type, const uh_value *v, uint64_t *raw)
{
	if (type == UH_T_F64) {
		memcpy(raw, &v->u.f, 8);
		return 0;
	}
	/* Converting a finite double beyond FLT_MAX to float is undefined. */
	if (isfinite(v->u.f) && fabs(v->u.f) > FLT_MAX)
		return uh_err_set(UH_ERANGE, "value %g does not fit an f32 element", v->u.f);
	float f = (float)v->u.f;
	uint32_t bits;
	memcpy(&bits, &f, 4);
	*raw = bits;
	return 0;
}

static int encode_ref(uh_heap *h, uint32_t type, const uh_value *v, uint64_t *raw)
{
	int rc;
	uint32_t cls = type == UH_T_STRING ? UH_CLASS_STRING :
		       type == UH_T_BYTES ? UH_CLASS_BYTES : 0;

	*raw = v->u.ref;
	if (!v->u.ref || uh_obj_get(h, v->u.ref, cls, &rc))
		return 0;
	char why[512];	/* uh_err_set must not read the buffer it writes */
	snprintf(why, sizeof(why), "%s", uh_errmsg());
	return uh_err_set(rc, "%s element: %s", uh_type_name(type), why);
}

/* v checked against an element of type and encoded. A value of the same
 * family fits (an i64 value into an i8 element if in range, an f64 into an
 * f32, a ref value naming a string into a string element). */
static int encode(uh_heap *h, uint32_t type, const uh_value *v, uint64_t *raw)
{
	if (is_int(type) && is_int(v->type))
		return encode_int(type, v, raw);
	if (is_float(type) && is_float(v->type))
		return encode_float(type, v, raw);
	if (uh_type_is_ref(type) && uh_type_is_ref(v->type))
		return encode_ref(h, type, v, raw);
	return uh_err_set(UH_ETYPE, "a %s value (type %u) does not fit a %s element",
			  uh_type_name(v->type), v->type, uh_type_name(type));
}

/* ---- get, set ---- */

struct elem_args {
	uh_off a;
	uint64_t index;
	uh_value *out;		/* get */
	const uh_value *in;	/* set */
	uint32_t flags;
};

static uint64_t elem_off(uh_off a, const struct arr_shape *s, uint64_t index)
{
	return a + ARR_ELEMS + index * s->esize;
}

static int get_body(uh_heap *h, void *p)
{
	struct elem_args *x = p;
	struct arr_shape s;
	uint64_t raw = 0;
	int rc;

	if ((rc = arr_shape(h, x->a, &s)) != 0 || (rc = check_index(x->a, &s, x->index)) != 0)
		return rc;
	/* Little-endian: the low esize bytes of raw are the element. */
	if ((rc = uh_tx_read(h, x->a, elem_off(x->a, &s, x->index), &raw, s.esize)) != 0)
		return rc;
	decode(s.type, raw, x->out);
	return 0;
}

int uh_array_get(uh_heap *h, uh_off a, uint64_t index, uh_value *v)
{
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (!v)
		return uh_err_set(UH_EINVAL, "uh_array_get: v is NULL");
	struct elem_args x = { .a = a, .index = index, .out = v };
	return uh_in_implicit_block(h, get_body, &x);
}

static int set_body(uh_heap *h, void *p)
{
	struct elem_args *x = p;
	struct arr_shape s;
	uint64_t raw, old = 0;
	int rc;

	if ((rc = arr_shape(h, x->a, &s)) != 0 || (rc = check_index(x->a, &s, x->index)) != 0 ||
	    (rc = encode(h, s.type, x->in, &raw)) != 0)
		return rc;
	uint64_t off = elem_off(x->a, &s, x->index);
	if (uh_free_wanted(s.type, x->flags) &&
	    (rc = uh_tx_read(h, x->a, off, &old, 8)) != 0)
		return rc;
	if ((rc = uh_tx_write(h, x->a, off, &raw, s.esize)) != 0)
		return rc;
	/* Storing the same object again must not free it. */
	if (old && old != raw)
		return uh_tx_log_free(h, old);
	return 0;
}

int uh_array_set(uh_heap *h, uh_off a, uint64_t index, const uh_value *v, uint32_t flags)
{
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (!v)
		return uh_err_set(UH_EINVAL, "uh_array_set: v is NULL");
	if ((rc = uh_free_flags_check(flags, "uh_array_set")) != 0)
		return rc;
	if (h->readonly)
		return uh_err_set(UH_EREADONLY, "uh_array_set: heap is connected read-only");
	struct elem_args x = { .a = a, .index = index, .in = v, .flags = flags };
	return uh_in_implicit_block(h, set_body, &x);
}
