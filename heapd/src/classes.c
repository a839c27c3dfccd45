/*
 * classes.c -- the class table: registering classes by name, finding them.
 *
 * A descriptor is written once, in the same libpmemobj transaction that
 * publishes its offset in the class table, and never changes afterwards:
 * clients read descriptors straight from their mapping without a lock, so
 * a published descriptor must already be complete (the transaction
 * guarantees that: a crash leaves the old table entry, 0).
 *
 * Layout rule (the format's, so every language computes the same one):
 * fields in declaration order, each aligned to its own size (an inline
 * field, its u32 length then its capacity, to 4), the first right after
 * the 16-byte object header; the payload is rounded up to 8.
 * Field indexes in messages are 0-based, like uh_field_info_get().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "utf8.h"

const char *hd_type_name(uint32_t type)
{
	static const char *names[] = { "?", "bool", "i8", "i16", "i32", "i64",
				       "f32", "f64", "ref", "string", "bytes", "inline string",
				       "inline bytes" };
	return type <= UH_T_FIELD_MAX ? names[type] : "?";
}

static int field_name_ok(const char *s)
{
	size_t n = strnlen(s, UH_FIELD_NAME_MAX + 1);
	if (n == 0 || n > UH_FIELD_NAME_MAX)
		return 0;
	if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return 0;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		      (c >= '0' && c <= '9') || c == '_'))
			return 0;
	}
	return 1;
}

const struct uh_class_desc *hd_class_desc_locked(struct hd *hd, uint32_t class_id)
{
	if (class_id == 0 || class_id >= hd->hdr->class_cap)
		return NULL;
	uint64_t off = hd_class_tab(hd)[class_id];
	if (off == 0 || off % 8 || !hd_in_heap(hd, off, sizeof(struct uh_class_desc)))
		return NULL;	/* a damaged entry: not even read from */
	const struct uh_class_desc *d = (const struct uh_class_desc *)(hd->base + off);
	if (d->magic != UH_CLASS_MAGIC || d->class_id != class_id || d->nfields > UH_FIELDS_MAX ||
	    d->name_len == 0 || d->name_len > UH_NAME_MAX ||
	    !hd_in_heap(hd, off, sizeof(*d) + (uint64_t)d->nfields * sizeof(struct uh_field_desc)))
		return NULL;
	return d;
}

int hd_class_write_tx(struct hd *hd, uint32_t class_id, uint32_t kind, const char *name,
		      const struct uh_field_desc *fields, uint32_t nfields,
		      uint32_t payload_size)
{
	size_t size = sizeof(struct uh_class_desc) + (size_t)nfields * sizeof(struct uh_field_desc);
	/* Aborts the caller's transaction when the pool is full. */
	PMEMoid oid = pmemobj_tx_zalloc(size, HD_TYPE_CLASS);
	struct uh_class_desc *d = (struct uh_class_desc *)(hd->base + oid.off);
	hd_tx_xadd(hd, d, size, POBJ_XADD_NO_SNAPSHOT);
	d->magic = UH_CLASS_MAGIC;
	d->class_id = class_id;
	d->kind = kind;
	d->nfields = nfields;
	d->payload_size = payload_size;
	d->name_len = (uint32_t)strlen(name);
	memcpy(d->name, name, d->name_len);
	if (nfields)
		memcpy(d->fields, fields, (size_t)nfields * sizeof(*fields));

	uint64_t *tab = hd_class_tab(hd);
	hd_tx_add(hd, &tab[class_id], sizeof(tab[class_id]));
	tab[class_id] = oid.off;
	if (class_id > hd->hdr->class_count) {
		hd_tx_add(hd, &hd->hdr->class_count, sizeof(hd->hdr->class_count));
		hd->hdr->class_count = class_id;
	}
	return 0;
}

static int64_t find_by_name(struct hd *hd, const char *name, size_t len)
{
	for (uint32_t id = 1; id <= hd->hdr->class_count; id++) {	/* < class_cap */
		const struct uh_class_desc *d = hd_class_desc_locked(hd, id);
		if (d && d->name_len == len && memcmp(d->name, name, len) == 0)
			return id;
	}
	return -1;
}

/* Check one declared field; fills its descriptor except the offset. */
static int check_field(struct hd *hd, const uh_field_spec *f, uint32_t i,
		       struct uh_field_desc *out, char *err, size_t errlen)
{
	if (!f->name || !field_name_ok(f->name))
		return hd_err(err, errlen, UH_EINVAL,
			      "field %u: name must be 1..63 bytes of [A-Za-z_][A-Za-z0-9_]*", i);
	if (f->type < 1 || f->type > UH_T_FIELD_MAX)
		return hd_err(err, errlen, UH_EINVAL, "field %u '%s': unknown type %u", i,
			      f->name, f->type);
	/* An inline field's capacity comes in the spec's ref_class word. */
	if (uh_type_is_inline(f->type) && (f->ref_class < 1 || f->ref_class > UH_INLINE_MAX))
		return hd_err(err, errlen, UH_EINVAL,
			      "field %u '%s': an inline field's capacity must be 1..%u bytes, not %u",
			      i, f->name, UH_INLINE_MAX, f->ref_class);
	if (f->ref_class && f->type != UH_T_REF && !uh_type_is_inline(f->type))
		return hd_err(err, errlen, UH_EINVAL,
			      "field %u '%s': only ref fields name a target class", i, f->name);
	if (f->type == UH_T_REF && f->ref_class && !hd_class_desc_locked(hd, f->ref_class))
		return hd_err(err, errlen, UH_EINVAL, "field %u '%s': ref to unknown class id %u",
			      i, f->name, f->ref_class);
	memset(out, 0, sizeof(*out));
	memcpy(out->name, f->name, strlen(f->name));
	out->type = f->type;
	if (uh_type_is_inline(f->type))
		out->capacity = f->ref_class;	/* the spec's word means what its type says */
	else
		out->ref_class = f->ref_class;
	return 0;
}

/* Validate the declaration and lay it out into out[nfields]. Uniqueness is
 * checked pairwise: nfields <= UH_FIELDS_MAX keeps that under 524k
 * comparisons, and registration is rare. */
static int build_layout(struct hd *hd, const uh_field_spec *fields, uint32_t nfields,
			struct uh_field_desc *out, uint32_t *payload, char *err, size_t errlen)
{
	uint64_t off = UH_OBJHDR_SIZE;
	for (uint32_t i = 0; i < nfields; i++) {
		int rc = check_field(hd, &fields[i], i, &out[i], err, errlen);
		if (rc)
			return rc;
		for (uint32_t j = 0; j < i; j++) {
			if (strcmp(out[j].name, out[i].name) == 0)
				return hd_err(err, errlen, UH_EINVAL,
					      "field %u '%s': name already used by field %u", i,
					      out[i].name, j);
		}
		off = UH_ALIGN_UP(off, uh_field_align(out[i].type));
		out[i].offset = (uint32_t)off;
		off += uh_field_size(out[i].type, out[i].capacity);
	}
	*payload = (uint32_t)(UH_ALIGN_UP(off, 8) - UH_OBJHDR_SIZE);
	return 0;
}

static const char *kind_name(uint32_t kind)
{
	switch (kind) {
	case UH_K_STRING: return "string";
	case UH_K_BYTES: return "bytes";
	case UH_K_REFTABLE: return "reference table";
	default: return "record";
	}
}

/* "i64", "ref", "ref to 'Account'", "inline bytes of capacity 100" */
static const char *type_desc(struct hd *hd, char *buf, size_t len, uint32_t type,
			     uint32_t ref_class, uint32_t capacity)
{
	const struct uh_class_desc *d = ref_class ? hd_class_desc_locked(hd, ref_class) : NULL;
	if (uh_type_is_inline(type))
		snprintf(buf, len, "%s of capacity %u", hd_type_name(type), capacity);
	else if (type == UH_T_REF && d)
		snprintf(buf, len, "ref to '%.*s'", (int)d->name_len, d->name);
	else if (type == UH_T_REF && ref_class)
		snprintf(buf, len, "ref to class %u", ref_class);
	else
		snprintf(buf, len, "%s", hd_type_name(type));
	return buf;
}

static int mismatch(const char *name, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int mismatch(const char *name, char *err, size_t errlen, const char *fmt, ...)
{
	char what[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return hd_err(err, errlen, UH_ECLASSMISMATCH,
		      "ClassMismatch: class '%s' is registered with another layout: %s", name, what);
}

/* 0 if the heap's descriptor d has exactly the declared layout, else
 * UH_ECLASSMISMATCH naming the first difference. */
static int compare_layout(struct hd *hd, const struct uh_class_desc *d, const char *name,
			  const struct uh_field_desc *f, uint32_t n, char *err, size_t errlen)
{
	char a[300], b[300];
	if (d->kind != UH_K_RECORD)
		return mismatch(name, err, errlen, "it is the built-in %s class",
				kind_name(d->kind));
	uint32_t common = d->nfields < n ? d->nfields : n;
	for (uint32_t i = 0; i < common; i++) {	/* bounded by UH_FIELDS_MAX */
		const struct uh_field_desc *h = &d->fields[i];
		if (strncmp(h->name, f[i].name, sizeof(h->name)) != 0)
			return mismatch(name, err, errlen,
					"field %u is '%.63s' in the heap, '%s' in this declaration",
					i, h->name, f[i].name);
		if (h->type != f[i].type || h->ref_class != f[i].ref_class ||
		    h->capacity != f[i].capacity)
			return mismatch(name, err, errlen,
					"field %u '%s' is %s in the heap, %s in this declaration",
					i, f[i].name,
					type_desc(hd, a, sizeof(a), h->type, h->ref_class, h->capacity),
					type_desc(hd, b, sizeof(b), f[i].type, f[i].ref_class,
						  f[i].capacity));
	}
	if (d->nfields > n)
		return mismatch(name, err, errlen,
				"field %u '%.63s' of the heap is missing from this declaration "
				"(%u fields in the heap, %u declared)",
				n, d->fields[n].name, d->nfields, n);
	if (n > d->nfields)
		return mismatch(name, err, errlen,
				"field %u '%s' is not in the heap's layout "
				"(%u fields in the heap, %u declared)",
				d->nfields, f[d->nfields].name, d->nfields, n);
	return 0;
}

static int check_name(const char *name, size_t *len, char *err, size_t errlen)
{
	if (!name)
		return hd_err(err, errlen, UH_EINVAL, "class name missing");
	*len = strnlen(name, UH_NAME_MAX + 1);
	if (*len == 0 || *len > UH_NAME_MAX)
		return hd_err(err, errlen, UH_EINVAL, "class name must be 1..%u bytes", UH_NAME_MAX);
	if (!uh_utf8_valid(name, *len, NULL))
		return hd_err(err, errlen, UH_EINVAL, "class name is not valid UTF-8");
	return 0;
}

static int add_class(struct hd *hd, const char *name, const struct uh_field_desc *f,
		     uint32_t n, uint32_t payload, uint32_t *class_id, char *err, size_t errlen)
{
	uint32_t id = hd->hdr->class_count + 1;
	if (id < UH_CLASS_FIRST_USER)
		id = UH_CLASS_FIRST_USER;
	if (id >= hd->hdr->class_cap)
		return hd_err(err, errlen, UH_ENOSPC, "class table full: %u classes registered",
			      hd->hdr->class_cap - UH_CLASS_FIRST_USER);
	volatile int rc = 0;
	TX_BEGIN(hd->pop) {
		hd_class_write_tx(hd, id, UH_K_RECORD, name, f, n, payload);
	} TX_ONABORT {
		rc = hd_err(err, errlen, UH_ENOSPC, "heap full: no room for the descriptor of '%s'",
			    name);
	} TX_END
	if (!rc)
		*class_id = id;
	return rc;
}

int hd_class_register(struct hd *hd, const char *name, const uh_field_spec *fields,
		      uint32_t nfields, uint32_t *class_id, int *created, char *err,
		      size_t errlen)
{
	size_t len = 0;
	int rc = check_name(name, &len, err, errlen);
	if (rc)
		return rc;
	if (nfields > UH_FIELDS_MAX)
		return hd_err(err, errlen, UH_EINVAL, "class '%s' has %u fields: at most %u", name,
			      nfields, UH_FIELDS_MAX);
	if (nfields && !fields)
		return hd_err(err, errlen, UH_EINVAL, "class '%s': field list missing", name);
	struct uh_field_desc *f = calloc(nfields ? nfields : 1, sizeof(*f));
	if (!f)
		return hd_err(err, errlen, UH_ENOMEM, "out of memory");
	uint32_t payload = 0;
	pthread_mutex_lock(&hd->mu);
	rc = build_layout(hd, fields, nfields, f, &payload, err, errlen);
	if (rc) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s", err ? err : "");
		hd_err(err, errlen, rc, "class '%s': %s", name, msg);
		goto out;
	}
	int64_t id = find_by_name(hd, name, len);
	if (id >= 0) {
		rc = compare_layout(hd, hd_class_desc_locked(hd, (uint32_t)id), name, f, nfields,
				    err, errlen);
		if (!rc) {
			*class_id = (uint32_t)id;
			*created = 0;
		}
		goto out;
	}
	rc = add_class(hd, name, f, nfields, payload, class_id, err, errlen);
	if (!rc) {
		*created = 1;
		hd->stats.classes_registered++;
		char q[300];
		hd_log("info", "class_register", "class=%s id=%u fields=%u payload=%u",
		       hd_log_quote(q, sizeof(q), name), *class_id, nfields, payload);
	}
out:
	pthread_mutex_unlock(&hd->mu);
	free(f);
	return rc;
}

int hd_class_find(struct hd *hd, const char *name, uint32_t *class_id)
{
	if (!name)
		return UH_ENOTFOUND;
	pthread_mutex_lock(&hd->mu);
	int64_t id = find_by_name(hd, name, strnlen(name, UH_NAME_MAX + 1));
	pthread_mutex_unlock(&hd->mu);
	if (id < 0)
		return UH_ENOTFOUND;
	*class_id = (uint32_t)id;
	return 0;
}

const struct uh_class_desc *hd_class_get(struct hd *hd, uint32_t class_id)
{
	pthread_mutex_lock(&hd->mu);
	const struct uh_class_desc *d = hd_class_desc_locked(hd, class_id);
	pthread_mutex_unlock(&hd->mu);
	return d;
}

uint64_t hd_class_desc_off(struct hd *hd, uint32_t class_id)
{
	pthread_mutex_lock(&hd->mu);
	uint64_t off = hd_class_desc_locked(hd, class_id) ? hd_class_tab(hd)[class_id] : 0;
	pthread_mutex_unlock(&hd->mu);
	return off;
}
