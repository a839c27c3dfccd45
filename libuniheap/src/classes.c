/*
 * classes.c -- class registration (through heapd) and lookup (straight
 * from the class table in the mapping, so any process can decode objects
 * of classes it never declared).
 */
#include <string.h>

#include "uhint.h"

int uh_class_register(uh_heap *h, const char *name, const uh_field_spec *fields,
		      uint32_t nfields, uint32_t *class_id)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	if (!name || !class_id || (nfields && !fields))
		return uh_err_set(UH_EINVAL, "uh_class_register: NULL argument");
	for (uint32_t i = 0; i < nfields; i++)
		if (!fields[i].name)
			return uh_err_set(UH_EINVAL, "uh_class_register: field %u has no name", i);
	int again;
	if ((rc = uh_ctl_ready(h)) == 0)
		rc = uhc_register_class(h->ctl, name, fields, nfields, class_id);
	if (rc && (rc = uh_ctl_failed(h, rc, &again)) == 0 && again)
		rc = uhc_register_class(h->ctl, name, fields, nfields, class_id);
	return rc;
}

int uh_class_find(uh_heap *h, const char *name, uint32_t *class_id)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	if (!name)
		return uh_err_set(UH_EINVAL, "uh_class_find: name is NULL");
	uint32_t n = __atomic_load_n(&h->hdr->class_count, __ATOMIC_ACQUIRE);
	for (uint32_t id = 1; id <= n && id < h->hdr->class_cap; id++) {	/* bound: cap */
		const struct uh_class_desc *d = uh_class_desc(h, id);
		if (d && strncmp(d->name, name, sizeof(d->name)) == 0) {
			*class_id = id;
			return 0;
		}
	}
	return uh_err_set(UH_ENOTFOUND, "no class named '%s' in the heap", name);
}

int uh_class_info_get(uh_heap *h, uint32_t class_id, uh_class_info *out)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	const struct uh_class_desc *d = uh_class_desc(h, class_id);
	if (!d)
		return uh_err_set(UH_ENOTFOUND, "no class with id %u", class_id);
	out->class_id = class_id;
	out->kind = d->kind;
	out->nfields = d->nfields;
	out->payload_size = d->payload_size;
	out->name = d->name;
	return 0;
}

int uh_field_info_get(uh_heap *h, uint32_t class_id, uint32_t index, uh_field_info *out)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	const struct uh_class_desc *d = uh_class_desc(h, class_id);
	if (!d)
		return uh_err_set(UH_ENOTFOUND, "no class with id %u", class_id);
	if (index >= d->nfields)
		return uh_err_set(UH_ERANGE, "class %s has %u fields; no field %u", d->name,
				  d->nfields, index);
	const struct uh_field_desc *f = &d->fields[index];
	out->name = f->name;
	out->type = f->type;
	out->offset = f->offset;
	out->ref_class = f->ref_class;
	out->capacity = uh_type_is_inline(f->type) ? f->capacity : 0;
	return 0;
}

int uh_field_find(uh_heap *h, uint32_t class_id, const char *name, uint32_t *index)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	const struct uh_class_desc *d = uh_class_desc(h, class_id);
	if (!d)
		return uh_err_set(UH_ENOTFOUND, "no class with id %u", class_id);
	for (uint32_t i = 0; i < d->nfields; i++) {	/* bound: nfields */
		if (strncmp(d->fields[i].name, name, sizeof(d->fields[i].name)) == 0) {
			*index = i;
			return 0;
		}
	}
	return uh_err_set(UH_ENOTFOUND, "class %s has no field '%s'", d->name, name);
}
