/*
 * heapimage.c -- the test harness's reading of heap files (FORMAT.md 2),
 * apart from harness.c, which the benchmarks compile in without the
 * format's header.
 */
#include <stddef.h>
#include <stdlib.h>
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

/* Count the chunks [off, off + bytes) covers in own[] (one byte each, n of
 * them from ext on); what lies below ext is the pool's. -1 when a chunk
 * is owned twice or lies past the extension. */
static int own_chunks(uint8_t *own, uint64_t n, uint64_t ext, uint64_t chunk, uint64_t off,
		      uint64_t bytes, uint64_t *count)
{
	if (off < ext || bytes == 0)
		return 0;
	uint64_t first = (off - ext) / chunk, last = (off + bytes - 1 - ext) / chunk;
	for (uint64_t i = first; i <= last; i++) {	/* bound: the room's chunks */
		if (i >= n || own[i])
			return -1;
		own[i] = 1;
		(*count)++;
	}
	return 0;
}

/* The chunks a session's log area and its extents take (FORMAT.md 8.1). */
static int own_log(uint8_t *own, uint64_t n, uint64_t ext, uint64_t chunk, const char *img,
		   size_t len, const struct uh_session_ent *e, uint64_t *count)
{
	if (!e->log_off || e->log_off + e->log_size > len ||
	    own_chunks(own, n, ext, chunk, e->log_off, e->log_size, count))
		return -1;
	/* A link the entry's redo pair names has the pair's value (a crash
	 * came between the commit and the write, FORMAT.md 7). */
	uint64_t link = e->log_off + offsetof(struct uh_log_hdr, next);
	for (uint64_t links = 0;; links++) {	/* bound: len / 4096 links */
		uint64_t next = link == e->redo_off ? e->redo_val : *(const uint64_t *)(img + link);
		if (!next)
			return 0;
		if (links > len / 4096 || next + sizeof(struct uh_log_ext) > len)
			return -1;
		const struct uh_log_ext *x = (const void *)(img + next);
		if (x->magic != UH_LOG_EXT_MAGIC || next + x->size > len ||
		    own_chunks(own, n, ext, chunk, next, x->size, count))
			return -1;
		link = next + offsetof(struct uh_log_ext, next);
	}
}

int th_check_chunks(const char *img, size_t len, uint64_t *log_chunks)
{
	long at = th_find_uh_header(img, len);
	uint64_t arena_chunks = 0;
	*log_chunks = 0;
	if (at < 0)
		return -1;
	const struct uh_hdr *h = (const void *)(img + at);
	if (!h->chunk_map_off)
		return 0;	/* a heap that never grows has no extension */
	uint64_t ext = UH_ALIGN_UP(h->heap_size, UH_GROW_ALIGN), chunk = h->arena_size;
	uint64_t cur = uh_hdr_cur_size(h), n = cur > ext ? (cur - ext) / chunk : 0;
	const struct uh_arena_ent *dir = (const void *)(img + h->arena_dir_off);
	const struct uh_session_ent *tab = (const void *)(img + h->session_tab_off);
	const uint64_t *map = (const void *)(img + h->chunk_map_off);
	uint8_t *own = calloc(n ? n : 1, 1);
	int rc = own ? 0 : -1;
	for (uint32_t i = 0; rc == 0 && i < h->arena_cap; i++)	/* bound: arena_cap */
		if (dir[i].kind != UH_ARENA_UNUSED)
			rc = own_chunks(own, n, ext, chunk, dir[i].off, dir[i].size, &arena_chunks);
	for (uint32_t s = 1; rc == 0 && s < h->session_cap; s++)	/* bound: session_cap */
		if (tab[s].state == UH_SESS_ACTIVE && tab[s].log_off)
			rc = own_log(own, n, ext, chunk, img, len, &tab[s], log_chunks);
	for (uint64_t i = 0; rc == 0 && i < n; i++)	/* bound: n chunks */
		if ((int)((map[i / 64] >> (i % 64)) & 1) != own[i])
			rc = -1;
	free(own);
	return rc;
}
