/*
 * info.c -- what a program may ask about the library and a connected
 * heap: versions, the heap's size and name, the session's counters
 * (durability names: common/names.c); how big a heap that grows is now,
 * may get and holds. Nothing here changes any state.
 */
#include <stdio.h>
#include <string.h>

#include "uhint.h"

const char *uh_version(void)
{
	return "0.1.0";
}

uint32_t uh_format_version(void)
{
	return UH_FORMAT_VERSION;
}

/* Bytes held by arenas, summed over the directory heapd keeps (a moment's
 * view: heapd may lease or free one meanwhile; heapctl status counts the
 * same). */
static uint64_t arena_bytes(uh_heap *h)
{
	const struct uh_arena_ent *dir =
		(const struct uh_arena_ent *)(h->base + h->hdr->arena_dir_off);
	uint64_t sum = 0;
	for (uint32_t i = 0; i < h->hdr->arena_cap; i++)	/* bound: arena_cap */
		if (__atomic_load_n(&dir[i].kind, __ATOMIC_RELAXED) != UH_ARENA_UNUSED)
			sum += __atomic_load_n(&dir[i].size, __ATOMIC_RELAXED);
	return sum;
}

int uh_heap_info(uh_heap *h, uh_info *out)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	memset(out, 0, sizeof(*out));
	out->heap_size = h->size;
	out->format_version = h->hdr->format_version;
	out->durability = h->durability;
	out->session = h->session;
	out->readonly = h->readonly;
	snprintf(out->name, sizeof(out->name), "%s", h->name);
	snprintf(out->path, sizeof(out->path), "%s", h->path);
	out->cur_size = uh_hdr_cur_size(h->hdr);
	out->max_size = uh_hdr_max_size(h->hdr);
	out->used_size = arena_bytes(h);
	out->reserved = h->m->reserved;
	return 0;
}

void *uh_base(uh_heap *h)
{
	return h ? h->base : NULL;
}

int uh_stats_get(uh_heap *h, uh_stats *out)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	*out = h->st;
	return 0;
}
