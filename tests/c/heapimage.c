/*
 * heapimage.c -- the test harness's reading of heap files (FORMAT.md 2),
 * apart from harness.c, which the benchmarks compile in without the
 * format's header.
 */
#include <string.h>

#include "format.h"
#include "harness.h"

long th_find_uh_header(const char *img, size_t len)
{
	for (size_t off = 0; off + sizeof(struct uh_hdr) <= len; off += 16) {	/* bound: len / 16 */
		const struct uh_hdr *h = (const void *)(img + off);
		if (memcmp(h->magic, UH_MAGIC, 8) == 0 && h->self_off == off)
			return (long)off;
	}
	return -1;
}

int th_count_objects(const char *img, size_t len, uint64_t *valid, uint64_t *locked)
{
	long at = th_find_uh_header(img, len);
	*valid = *locked = 0;
	if (at < 0)
		return -1;
	const struct uh_hdr *h = (const void *)(img + at);
	if (h->arena_dir_off + (uint64_t)h->arena_cap * sizeof(struct uh_arena_ent) > len)
		return -1;
	const struct uh_arena_ent *dir = (const void *)(img + h->arena_dir_off);
	for (uint32_t i = 0; i < h->arena_cap; i++) {	/* bound: arena_cap */
		if (!dir[i].kind)
			continue;
		if (dir[i].off + sizeof(struct uh_arena_hdr) > len)
			return -1;
		const struct uh_arena_hdr *a = (const void *)(img + dir[i].off);
		if (a->slot_size < UH_OBJHDR_SIZE ||
		    a->first_slot + (uint64_t)a->nslots * a->slot_size > len)
			return -1;
		for (uint32_t k = 0; k < a->nslots; k++) {	/* bound: nslots */
			const struct uh_objhdr *o =
				(const void *)(img + a->first_slot + (uint64_t)k * a->slot_size);
			*valid += (o->size & UH_OBJ_VALID) != 0;
			*locked += uh_lock_is_locked(o->lock);
		}
	}
	return 0;
}
