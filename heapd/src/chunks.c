/*
 * chunks.c -- arenas in the extension of a grown heap (FORMAT.md 1.1,
 * "Chunks"): the chunk map says which chunks of [ext_start, cur_size)
 * belong to an arena.
 *
 * Invariants: a chunk's bit is set exactly while a directory entry names
 * an arena that covers it, both changed in one libpmemobj transaction; an
 * arena's bytes in the extension are zeroed, its header and bitmap written
 * and persisted before that transaction (libpmemobj never snapshots
 * extension bytes). Test hooks: UNIHEAP_EXT_FROM (find_run's start,
 * below); UNIHEAP_GROW_CRASH_AT (growcrash.c) kills heapd once the bytes
 * are persisted, the transaction open. Caller holds hd->mu (every lease
 * takes it), so the map and cur_size do not move under these functions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

uint64_t hd_chunk_size(const struct uh_hdr *h)
{
	return h->arena_size;
}

uint64_t hd_ext_start(const struct uh_hdr *h)
{
	return UH_ALIGN_UP(h->heap_size, UH_GROW_ALIGN);
}

int hd_in_ext(const struct hd *hd, uint64_t off)
{
	return hd->hdr->chunk_map_off && off >= hd_ext_start(hd->hdr);
}

static uint64_t *chunk_map(struct hd *hd)
{
	return (uint64_t *)(hd->base + hd->hdr->chunk_map_off);
}

static int bit(const uint64_t *map, uint64_t i)
{
	return (map[i / 64] >> (i % 64)) & 1;
}

/* Test hook: UNIHEAP_EXT_FROM=OFFSET starts the search at the first chunk
 * at or past that heap offset, so that a test places arenas far into a
 * large heap without writing (zeroing) the chunks below (the Node
 * binding's test of objects past 4 GiB). */
static uint64_t first_chunk(uint64_t ext, uint64_t chunk)
{
	const char *s = getenv("UNIHEAP_EXT_FROM");
	uint64_t at = s ? strtoull(s, NULL, 10) : 0;
	return at > ext ? (at - ext + chunk - 1) / chunk : 0;
}

/* The first run of n clear bits among the whole chunks below cur_size,
 * or -1. First fit: an extension fills from its start, so the chunks a
 * growth adds stay free for what comes after. */
static int64_t find_run(struct hd *hd, uint64_t n)
{
	uint64_t chunk = hd_chunk_size(hd->hdr), ext = hd_ext_start(hd->hdr);
	if (!hd->hdr->chunk_map_off || hd->heap_size <= ext)
		return -1;
	uint64_t total = (hd->heap_size - ext) / chunk, run = 0;
	const uint64_t *map = chunk_map(hd);
	for (uint64_t i = first_chunk(ext, chunk); i < total; i++) {	/* bounded: chunks below cur_size */
		run = bit(map, i) ? 0 : run + 1;
		if (run == n)
			return (int64_t)(i + 1 - n);
	}
	return -1;
}

/* Set (on) or clear the bits of the chunks [off, off + bytes) covers,
 * inside the caller's transaction. */
void hd_chunks_mark_tx(struct hd *hd, uint64_t off, uint64_t bytes, int on)
{
	uint64_t chunk = hd_chunk_size(hd->hdr), ext = hd_ext_start(hd->hdr);
	uint64_t first = (off - ext) / chunk, last = (off + bytes - 1 - ext) / chunk;
	uint64_t *map = chunk_map(hd);
	hd_tx_add(hd, &map[first / 64], (last / 64 - first / 64 + 1) * sizeof(uint64_t));
	for (uint64_t i = first; i <= last; i++) {	/* bounded by the arena's chunks */
		if (on)
			map[i / 64] |= 1ull << (i % 64);
		else
			map[i / 64] &= ~(1ull << (i % 64));
	}
}

/* Room for an arena of bytes in the extension, zeroed and durable, its
 * bits set in the caller's transaction; aborts it with ENOMEM when there
 * is none (as pmemobj_tx_zalloc does when the pool is full). The caller
 * writes the arena's header and persists it before the commit. */
uint64_t hd_chunks_alloc_tx(struct hd *hd, uint64_t bytes)
{
	uint64_t chunk = hd_chunk_size(hd->hdr);
	int64_t i = find_run(hd, (bytes + chunk - 1) / chunk);
	if (i < 0)
		pmemobj_tx_abort(ENOMEM);	/* does not return */
	uint64_t off = hd_ext_start(hd->hdr) + (uint64_t)i * chunk;
	/* An arena must not expose what a freed one left (FORMAT.md 6). */
	memset(hd->base + off, 0, bytes);
	uh_persist_range(&hd->persist, hd->base + off, bytes);
	hd_chunks_mark_tx(hd, off, bytes, 1);
	hd_grow_crash_point(hd, "ext_zeroed");
	return off;
}
