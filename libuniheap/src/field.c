/*
 * field.c -- the public field API: raw reads and writes of an object's
 * bytes (uh_read, uh_write), typed access by field index (uh_get_*,
 * uh_set_*), and string and bytes objects.
 *
 * Every access is checked against the object's header (object.c) and
 * its class descriptor before a byte is touched: offset and length inside
 * the payload and aligned, the field's type the one asked for.
 */
#include <stdio.h>
#include <string.h>

#include "uhint.h"
#include "utf8.h"

/* A field access of len bytes at offset: 1, 2, 4 or 8 bytes aligned to
 * their length; with span, also a multiple of 8 bytes at an 8-byte
 * boundary (several fields read at once). */
static int check_field(uh_heap *h, const struct uh_objhdr *o, uh_off obj, uint32_t offset,
		       uint32_t len, int span)
{
	uint32_t payload = o->size & UH_OBJ_SIZE_MASK;
	int word = len == 1 || len == 2 || len == 4 || len == 8;

	if (!word && !(span && len && len % 8 == 0))
		return uh_err_set(UH_EINVAL, span ? "read length %u: must be 1, 2, 4 or 8, or a "
				  "multiple of 8" : "field length %u: must be 1, 2, 4 or 8", len);
	if (offset < UH_OBJHDR_SIZE || offset % (word ? len : 8) ||
	    offset - UH_OBJHDR_SIZE > payload || len > payload - (offset - UH_OBJHDR_SIZE))
		return uh_err_set(UH_ERANGE, "offset %u (%u bytes) is outside object %llu "
				  "(payload %u bytes) or misaligned", offset, len,
				  (unsigned long long)UH_REF_OFFSET(obj), payload);
	return 0;
}

struct read_op {
	uh_off obj;
	uint32_t offset, len;
	void *dst;
};

static int read_body(uh_heap *h, void *arg)
{
	struct read_op *r = arg;
	int rc;
	struct uh_objhdr *o = uh_obj_get(h, r->obj, 0, &rc);

	if (!o || (rc = check_field(h, o, r->obj, r->offset, r->len, 1)) != 0)
		return rc;
	return uh_tx_read(h, r->obj, UH_REF_OFFSET(r->obj) + r->offset, r->dst, r->len);
}

int uh_read(uh_heap *h, uh_off obj, uint32_t offset, void *dst, uint32_t len)
{
	struct read_op r = { obj, offset, len, dst };
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	/* One word is one load; more are one optimistic read of the object
	 * (its lock word noted before the copy, the same after it), which
	 * uh_opt_run tries again, then runs as a read-only block. */
	return len > 8 ? uh_opt_run(h, read_body, &r) : read_body(h, &r);
}

static int write_checked(uh_heap *h, uh_off obj, uint32_t offset, const void *src,
			 uint32_t len)
{
	if (h->readonly)
		return uh_err_set(UH_EREADONLY, "heap is connected read-only");
	uint64_t target = UH_REF_OFFSET(obj) + offset;

	if (h->tx.depth)
		return uh_tx_write(h, obj, target, src, len);
	return uh_tx_write_single(h, obj, target, src, len);
}

int uh_write(uh_heap *h, uh_off obj, uint32_t offset, const void *src, uint32_t len)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	struct uh_objhdr *o = uh_obj_get(h, obj, 0, &rc);
	if (!o || (rc = check_field(h, o, obj, offset, len, 0)) != 0)
		return rc;
	return write_checked(h, obj, offset, src, len);
}

/* ---- typed access by field index ---- */

const struct uh_class_desc *uh_record_desc(uh_heap *h, uh_off obj, uint32_t *payload, int *rc)
{
	struct uh_objhdr *o = uh_obj_get(h, obj, 0, rc);
	if (!o)
		return NULL;
	const struct uh_class_desc *d = uh_class_desc(h, uh_word_class(o->class_word));
	if (!d || d->kind != UH_K_RECORD) {
		*rc = uh_err_set(UH_ETYPE, "object %llu is not a record",
				 (unsigned long long)UH_REF_OFFSET(obj));
		return NULL;
	}
	*payload = o->size & UH_OBJ_SIZE_MASK;
	return d;
}

const struct uh_field_desc *uh_desc_field(const struct uh_class_desc *d, uint32_t payload,
					  uint32_t field, int *rc)
{
	if (field >= d->nfields) {
		*rc = uh_err_set(UH_ERANGE, "class %s has %u fields; no field %u", d->name,
				 d->nfields, field);
		return NULL;
	}
	const struct uh_field_desc *f = &d->fields[field];
	if (f->offset + uh_field_size(f->type, f->capacity) > UH_OBJHDR_SIZE + payload) {
		*rc = uh_err_set(UH_EINTERNAL, "field %s lies outside its object", f->name);
		return NULL;
	}
	return f;
}

const struct uh_field_desc *uh_record_field(uh_heap *h, uh_off obj, uint32_t field, int *rc)
{
	uint32_t payload;
	const struct uh_class_desc *d = uh_record_desc(h, obj, &payload, rc);

	return d ? uh_desc_field(d, payload, field, rc) : NULL;
}

static int type_err(const struct uh_field_desc *f, const char *want)
{
	return uh_err_set(UH_ETYPE, "field '%s' is %s, not %s", f->name, uh_type_name(f->type), want);
}

int uh_get_i64(uh_heap *h, uh_off obj, uint32_t field, int64_t *v)
{
	int rc = uh_check_handle(h);
	const struct uh_field_desc *f = rc ? NULL : uh_record_field(h, obj, field, &rc);
	if (!f)
		return rc;
	union { uint8_t b; int8_t i8; int16_t i16; int32_t i32; int64_t i64; } u;
	if (f->type < UH_T_BOOL || f->type > UH_T_I64)
		return type_err(f, "an integer");
	if ((rc = uh_tx_read(h, obj, UH_REF_OFFSET(obj) + f->offset, &u, uh_type_size(f->type))) != 0)
		return rc;
	switch (f->type) {
	case UH_T_BOOL: *v = u.b != 0; break;
	case UH_T_I8: *v = u.i8; break;
	case UH_T_I16: *v = u.i16; break;
	case UH_T_I32: *v = u.i32; break;
	default: *v = u.i64;
	}
	return 0;
}

int uh_set_i64(uh_heap *h, uh_off obj, uint32_t field, int64_t v)
{
	int rc = uh_check_handle(h);
	const struct uh_field_desc *f = rc ? NULL : uh_record_field(h, obj, field, &rc);
	if (!f)
		return rc;
	static const int64_t lo[] = { [UH_T_BOOL] = 0, [UH_T_I8] = INT8_MIN,
				      [UH_T_I16] = INT16_MIN, [UH_T_I32] = INT32_MIN };
	static const int64_t hi[] = { [UH_T_BOOL] = 1, [UH_T_I8] = INT8_MAX,
				      [UH_T_I16] = INT16_MAX, [UH_T_I32] = INT32_MAX };
	if (f->type < UH_T_BOOL || f->type > UH_T_I64)
		return type_err(f, "an integer");
	if (f->type != UH_T_I64 && (v < lo[f->type] || v > hi[f->type]))
		return uh_err_set(UH_ERANGE, "value %lld does not fit field '%s' (%s)",
				  (long long)v, f->name, uh_type_name(f->type));
	union { uint8_t b; int8_t i8; int16_t i16; int32_t i32; int64_t i64; } u;
	switch (f->type) {
	case UH_T_BOOL: u.b = (uint8_t)v; break;
	case UH_T_I8: u.i8 = (int8_t)v; break;
	case UH_T_I16: u.i16 = (int16_t)v; break;
	case UH_T_I32: u.i32 = (int32_t)v; break;
	default: u.i64 = v;
	}
	return write_checked(h, obj, f->offset, &u, uh_type_size(f->type));
}

int uh_get_f64(uh_heap *h, uh_off obj, uint32_t field, double *v)
{
	int rc = uh_check_handle(h);
	const struct uh_field_desc *f = rc ? NULL : uh_record_field(h, obj, field, &rc);
	if (!f)
		return rc;
	if (f->type == UH_T_F64)
		return uh_tx_read(h, obj, UH_REF_OFFSET(obj) + f->offset, v, 8);
	if (f->type != UH_T_F32)
		return type_err(f, "a float");
	float x;
	if ((rc = uh_tx_read(h, obj, UH_REF_OFFSET(obj) + f->offset, &x, 4)) != 0)
		return rc;
	*v = x;
	return 0;
}

int uh_set_f64(uh_heap *h, uh_off obj, uint32_t field, double v)
{
	int rc = uh_check_handle(h);
	const struct uh_field_desc *f = rc ? NULL : uh_record_field(h, obj, field, &rc);
	if (!f)
		return rc;
	if (f->type == UH_T_F64)
		return write_checked(h, obj, f->offset, &v, 8);
	if (f->type != UH_T_F32)
		return type_err(f, "a float");
	float x = (float)v;
	return write_checked(h, obj, f->offset, &x, 4);
}

int uh_get_ref(uh_heap *h, uh_off obj, uint32_t field, uh_off *v)
{
	int rc = uh_check_handle(h);
	const struct uh_field_desc *f = rc ? NULL : uh_record_field(h, obj, field, &rc);
	if (!f)
		return rc;
	if (!uh_type_is_ref(f->type))
		return type_err(f, "a reference");
	return uh_tx_read(h, obj, UH_REF_OFFSET(obj) + f->offset, v, 8);
}

int uh_set_ref(uh_heap *h, uh_off obj, uint32_t field, uh_off v)
{
	int rc = uh_check_handle(h);
	const struct uh_field_desc *f = rc ? NULL : uh_record_field(h, obj, field, &rc);
	if (!f)
		return rc;
	if (!uh_type_is_ref(f->type))
		return type_err(f, "a reference");
	if (v) {
		uint32_t want = f->type == UH_T_STRING ? UH_CLASS_STRING :
				f->type == UH_T_BYTES ? UH_CLASS_BYTES : f->ref_class;
		if (!uh_obj_get(h, v, want, &rc))
			return rc;
	}
	return write_checked(h, obj, f->offset, &v, 8);
}

/* ---- strings and bytes ---- */

static int value_new(uh_heap *h, uint32_t cls, const void *data, size_t len, uh_off *out)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	if (!out || (!data && len))
		return uh_err_set(UH_EINVAL, "NULL argument");
	return uh_alloc_raw(h, cls, len, data, out);
}

int uh_string_new(uh_heap *h, const char *utf8, size_t len, uh_off *out)
{
	size_t bad;
	if (utf8 && !uh_utf8_valid(utf8, len, &bad))
		return uh_err_set(UH_EUTF8, "string is not valid UTF-8 (at byte %zu)", bad);
	return value_new(h, UH_CLASS_STRING, utf8, len, out);
}

int uh_bytes_new(uh_heap *h, const void *data, size_t len, uh_off *out)
{
	return value_new(h, UH_CLASS_BYTES, data, len, out);
}

static int value_get(uh_heap *h, uh_off off, uint32_t cls, const void **data, size_t *len)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	struct uh_objhdr *o = uh_obj_get(h, off, cls, &rc);
	if (!o)
		return rc;
	*data = o + 1;
	*len = o->size & UH_OBJ_SIZE_MASK;
	return 0;
}

int uh_string_get(uh_heap *h, uh_off s, const char **data, size_t *len)
{
	return value_get(h, s, UH_CLASS_STRING, (const void **)data, len);
}

int uh_bytes_get(uh_heap *h, uh_off b, const void **data, size_t *len)
{
	return value_get(h, b, UH_CLASS_BYTES, data, len);
}
