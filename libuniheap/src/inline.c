/*
 * inline.c -- inline string and bytes fields (UH_T_ISTRING, UH_T_IBYTES;
 * FORMAT.md 3.2) and the whole-record read.
 *
 * An inline field is a u32 length n and capacity bytes inside the record:
 * n <= capacity, and the bytes past the value are zero. Every write
 * stores the whole field (length, value, zeros) as one write, so a reader
 * never sees a length of one value with the bytes of another, and the
 * block's redo log holds one entry per field written. Reads copy the
 * field (or the whole payload) in one optimistic read of the object,
 * which uh_opt_run tries again when a commit changed the object under
 * the copy; inside a block they read the block's snapshot and its own
 * writes.
 */
#include <stdlib.h>
#include <string.h>

#include "uhint.h"
#include "utf8.h"
#include "value.h"

/* Fields of up to this many bytes are written from the stack. */
#define INLINE_STACK 1024u

static int inline_type(const struct uh_field_desc *f)
{
	if (!uh_type_is_inline(f->type))
		return uh_err_set(UH_ETYPE, "field '%s' is %s, not an inline string or bytes field",
				  f->name, uh_type_name(f->type));
	return 0;
}

static int inline_field(uh_heap *h, uh_off obj, uint32_t field,
			const struct uh_field_desc **out)
{
	int rc = uh_check_handle(h);
	const struct uh_field_desc *f = rc ? NULL : uh_record_field(h, obj, field, &rc);

	if (!f || (rc = inline_type(f)) != 0)
		return rc;
	*out = f;
	return 0;
}

struct get_op {
	uh_off obj;
	const struct uh_field_desc *f;
	char *field;	/* room for the whole field */
	void *dst;
	size_t cap, *len;
};

/* The whole field is read as one span at its offset: inside a block that
 * is where the block's own write of it is logged (uh_tx_read_in_block
 * finds logged writes by the offset they start at). A length past the
 * capacity read outside a block is a torn read that uh_opt_run tries
 * again; one that validates is damage. */
static int get_body(uh_heap *h, void *arg)
{
	struct get_op *g = arg;
	uint32_t n;
	int rc = uh_tx_read(h, g->obj, UH_REF_OFFSET(g->obj) + g->f->offset, g->field,
			    uh_field_size(g->f->type, g->f->capacity));

	if (rc)
		return rc;
	memcpy(&n, g->field, UH_INLINE_LEN_SIZE);
	if (n > g->f->capacity)
		return uh_err_set(UH_EINTERNAL, "inline field '%s' says %u bytes, its capacity "
				  "is %u", g->f->name, n, g->f->capacity);
	*g->len = n;
	if (n > g->cap)
		return uh_err_set(UH_ERANGE, "inline field '%s' holds %u bytes, room for %zu",
				  g->f->name, n, g->cap);
	if (n)
		memcpy(g->dst, g->field + UH_INLINE_LEN_SIZE, n);
	return 0;
}

int uh_get_inline(uh_heap *h, uh_off obj, uint32_t field, void *dst, size_t cap, size_t *len)
{
	const struct uh_field_desc *f;
	int rc = inline_field(h, obj, field, &f);

	if (rc)
		return rc;
	if (!len || (!dst && cap))
		return uh_err_set(UH_EINVAL, "uh_get_inline: NULL argument");
	uint32_t size = uh_field_size(f->type, f->capacity);
	char stack[INLINE_STACK];
	char *buf = size <= sizeof(stack) ? stack : malloc(size);
	if (!buf)
		return uh_err_set(UH_ENOMEM, "out of process memory");
	struct get_op g = { obj, f, buf, dst, cap, len };
	rc = uh_opt_run(h, get_body, &g);
	if (buf != stack)
		free(buf);
	return rc;
}

/* The checks a write of len bytes at data to inline field f makes before
 * anything is written. */
static int inline_check(const struct uh_field_desc *f, const void *data, size_t len)
{
	size_t bad;

	if (!data && len)
		return uh_err_set(UH_EINVAL, "uh_set_inline: NULL data");
	if (len > f->capacity)
		return uh_err_set(UH_ERANGE, "field '%s' holds at most %u bytes; the value has %zu",
				  f->name, f->capacity, len);
	if (f->type == UH_T_ISTRING && !uh_utf8_valid(data, len, &bad))
		return uh_err_set(UH_EUTF8, "string for field '%s' is not valid UTF-8 (at byte %zu)",
				  f->name, bad);
	return 0;
}

/* Inline field f of obj := len bytes at data (checked), in the caller's
 * block: the whole field, length, value and zeros, as one write. */
static int inline_store(uh_heap *h, uh_off obj, const struct uh_field_desc *f,
			const void *data, size_t len)
{
	uint32_t size = uh_field_size(f->type, f->capacity), n = (uint32_t)len;
	char stack[INLINE_STACK];
	char *buf = size <= sizeof(stack) ? stack : malloc(size);

	if (!buf)
		return uh_err_set(UH_ENOMEM, "out of process memory");
	memcpy(buf, &n, UH_INLINE_LEN_SIZE);
	if (len)
		memcpy(buf + UH_INLINE_LEN_SIZE, data, len);
	memset(buf + UH_INLINE_LEN_SIZE + len, 0, f->capacity - len);
	int rc = uh_tx_write(h, obj, UH_REF_OFFSET(obj) + f->offset, buf, size);
	if (buf != stack)
		free(buf);
	return rc;
}

struct set_op {
	uh_off obj;
	const struct uh_field_desc *f;
	const void *data;
	size_t len;
};

static int set_body(uh_heap *h, void *arg)
{
	struct set_op *s = arg;

	return inline_store(h, s->obj, s->f, s->data, s->len);
}

int uh_set_inline(uh_heap *h, uh_off obj, uint32_t field, const void *data, size_t len)
{
	const struct uh_field_desc *f;
	int rc = inline_field(h, obj, field, &f);

	if (rc)
		return rc;
	if (h->readonly)
		return uh_err_set(UH_EREADONLY, "heap is connected read-only");
	if ((rc = inline_check(f, data, len)) != 0)
		return rc;
	struct set_op s = { obj, f, data, len };
	return uh_in_implicit_block(h, set_body, &s);
}

int uh_record_set_inlines(uh_heap *h, uh_off obj, const uh_inline_value *vals, uint32_t n)
{
	uint32_t payload;
	int rc = 0;
	const struct uh_class_desc *d = uh_record_desc(h, obj, &payload, &rc);

	if (!d)
		return rc;
	for (uint32_t i = 0; rc == 0 && i < n; i++) {	/* bound: n */
		const struct uh_field_desc *f = uh_desc_field(d, payload, vals[i].field, &rc);
		if (f && (rc = inline_type(f)) == 0 &&
		    (rc = inline_check(f, vals[i].data, vals[i].len)) == 0)
			rc = inline_store(h, obj, f, vals[i].data, vals[i].len);
	}
	return rc;
}

struct record_op {
	uh_off obj;
	void *dst;
	uint32_t payload;
};

static int record_body(uh_heap *h, void *arg)
{
	struct record_op *r = arg;

	return uh_tx_read(h, r->obj, UH_REF_OFFSET(r->obj) + UH_OBJHDR_SIZE, r->dst, r->payload);
}

int uh_record_read(uh_heap *h, uh_off obj, void *dst, size_t cap, size_t *len)
{
	int rc = uh_check_handle(h);
	struct uh_objhdr *o = rc ? NULL : uh_obj_get(h, obj, 0, &rc);

	if (!o)
		return rc;
	if (!len || (!dst && cap))
		return uh_err_set(UH_EINVAL, "uh_record_read: NULL argument");
	const struct uh_class_desc *d = uh_class_desc(h, uh_word_class(o->class_word));
	if (!d || d->kind != UH_K_RECORD)
		return uh_err_set(UH_ETYPE, "object %llu is not a record",
				  (unsigned long long)UH_REF_OFFSET(obj));
	*len = d->payload_size;
	if (d->payload_size > cap)
		return uh_err_set(UH_ERANGE, "record of class %s has %u payload bytes, room for %zu",
				  d->name, d->payload_size, cap);
	if (d->payload_size > (o->size & UH_OBJ_SIZE_MASK))
		return uh_err_set(UH_EINTERNAL, "object %llu is smaller than its class %s",
				  (unsigned long long)UH_REF_OFFSET(obj), d->name);
	struct record_op r = { obj, dst, d->payload_size };
	return d->payload_size ? uh_opt_run(h, record_body, &r) : 0;
}
