/*
 * object.c -- checking object references, and the class descriptors
 * their headers name: what every file that follows a reference uses
 * before it reads a byte (fields, values, data types, allocation).
 *
 * Every reference a caller passes is checked before it is dereferenced:
 * it must be the start of an arena slot holding a valid object of the
 * reference's generation. A freed or made-up reference gives UH_EFREED,
 * never a wild access.
 */
#include "uhint.h"

const struct uh_class_desc *uh_class_desc(uh_heap *h, uint32_t class_id)
{
	const struct uh_hdr *hd = h->hdr;

	if (class_id == 0 || class_id >= hd->class_cap)
		return NULL;
	const uint64_t *tab = (const uint64_t *)(h->base + hd->class_tab_off);
	uint64_t off = __atomic_load_n(&tab[class_id], __ATOMIC_ACQUIRE);
	if (off < UH_HDR_SIZE || off % 8 || off > h->size - sizeof(struct uh_class_desc))
		return NULL;	/* a damaged entry: not even read from */
	const struct uh_class_desc *d = (const void *)(h->base + off);
	if (d->magic != UH_CLASS_MAGIC || d->class_id != class_id ||
	    d->nfields > UH_FIELDS_MAX ||
	    d->nfields * sizeof(struct uh_field_desc) > h->size - off - sizeof(*d))
		return NULL;
	return d;
}

static struct uh_objhdr *obj_get(uh_heap *h, uh_off off, uint32_t cls, int *rc);

struct uh_objhdr *uh_obj_get(uh_heap *h, uh_off off, uint32_t cls, int *rc)
{
	struct uh_objhdr *o = obj_get(h, off, cls, rc);
	if (!o)
		*rc = uh_tx_stale_or(h, *rc);
	return o;
}

static struct uh_objhdr *obj_get(uh_heap *h, uh_off ref, uint32_t cls, int *rc)
{
	uint64_t off = UH_REF_OFFSET(ref);
	uint32_t slot;

	if (ref == 0) {
		*rc = uh_err_set(UH_EFREED, "null reference");
		return NULL;
	}
	const struct uh_arena_span *s = uh_arena_slot_of(&h->ix, off, &slot);
	if (!s) {
		*rc = uh_err_set(UH_EFREED, "offset %llu is not an object of this heap",
				 (unsigned long long)off);
		return NULL;
	}
	/* An optimistic read notes the lock word before the header: the
	 * header checked below is then covered by its final check. */
	if (h->opt.on && (*rc = uh_opt_touch(h, off)) != 0)
		return NULL;
	struct uh_objhdr *o = (void *)(h->base + off);
	uint32_t size = __atomic_load_n(&o->size, __ATOMIC_ACQUIRE);
	uint32_t word = __atomic_load_n(&o->class_word, __ATOMIC_ACQUIRE);
	if (!(size & UH_OBJ_VALID) || (size & UH_OBJ_SIZE_MASK) > s->slot_size - UH_OBJHDR_SIZE) {
		*rc = uh_err_set(UH_EFREED, "object at %llu has been freed",
				 (unsigned long long)off);
		return NULL;
	}
	if (uh_word_gen(word) != UH_REF_GEN(ref)) {
		*rc = uh_err_set(UH_EFREED, "object at %llu (generation %u) has been freed; "
				 "its slot now holds a newer object (generation %u)",
				 (unsigned long long)off, UH_REF_GEN(ref), uh_word_gen(word));
		return NULL;
	}
	if (cls && uh_word_class(word) != cls) {
		const struct uh_class_desc *want = uh_class_desc(h, cls);
		const struct uh_class_desc *got = uh_class_desc(h, uh_word_class(word));
		*rc = uh_err_set(UH_ETYPE, "object at %llu is a %s, not a %s",
				 (unsigned long long)off, got ? got->name : "?",
				 want ? want->name : "?");
		return NULL;
	}
	return o;
}

int uh_obj_class(uh_heap *h, uh_off obj, uint32_t *class_id)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	struct uh_objhdr *o = uh_obj_get(h, obj, 0, &rc);
	if (!o)
		return rc;
	*class_id = uh_word_class(o->class_word);
	return 0;
}
