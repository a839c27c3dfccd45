/*
 * rootmap_read.c -- walking the root map without changing it.
 */
#include "format.h"
#include "rootmap_read.h"

/* The object reference ref names, if its header and payload lie inside
 * the heap and it is valid, of class cls and of ref's generation. */
static const struct uh_objhdr *obj_at(const char *base, uint64_t heap_size, uint64_t ref,
				      uint32_t cls)
{
	uint64_t off = UH_REF_OFFSET(ref);

	if (off < UH_HDR_SIZE || off % 8 || off > heap_size - UH_OBJHDR_SIZE)
		return NULL;
	const struct uh_objhdr *o = (const void *)(base + off);
	uint32_t size = __atomic_load_n(&o->size, __ATOMIC_ACQUIRE);
	uint32_t word = __atomic_load_n(&o->class_word, __ATOMIC_ACQUIRE);
	if (!(size & UH_OBJ_VALID) || word != UH_OBJ_CLASS_WORD(cls, UH_REF_GEN(ref)))
		return NULL;
	if ((size & UH_OBJ_SIZE_MASK) > heap_size - off - UH_OBJHDR_SIZE)
		return NULL;
	return o;
}

int uh_rootmap_next(const char *base, uint64_t heap_size, uint64_t rootmap_off,
		    uint64_t *cursor, const char **name, size_t *name_len, uint64_t *value)
{
	const struct uh_objhdr *m = obj_at(base, heap_size, rootmap_off, UH_CLASS_ROOTMAP);
	if (!m)
		return UH_ENOTFOUND;
	const struct uh_rootmap *rm = (const void *)(m + 1);
	uint64_t toff = __atomic_load_n(&rm->table, __ATOMIC_ACQUIRE);
	const struct uh_objhdr *t = obj_at(base, heap_size, toff, UH_CLASS_REFTABLE);
	if (!t)
		return UH_ENOTFOUND;
	const uint64_t *pairs = (const void *)(t + 1);
	uint64_t cap = (t->size & UH_OBJ_SIZE_MASK) / 16;

	for (uint64_t i = *cursor; i < cap; i++) {	/* bound: table capacity */
		uint64_t k = __atomic_load_n(&pairs[2 * i], __ATOMIC_ACQUIRE);
		if (k == 0 || k == UH_ROOT_TOMBSTONE)
			continue;
		const struct uh_objhdr *s = obj_at(base, heap_size, k, UH_CLASS_STRING);
		if (!s)
			continue;
		*name = (const char *)(s + 1);
		*name_len = s->size & UH_OBJ_SIZE_MASK;
		*value = __atomic_load_n(&pairs[2 * i + 1], __ATOMIC_ACQUIRE);
		*cursor = i + 1;
		return 0;
	}
	*cursor = cap;
	return UH_ENOTFOUND;
}
