/*
 * logchain.c -- the segments of this session's redo log: its log area,
 * then the extents heapd leases on demand (LeaseLogExtent) and chains
 * from the log header in the order they are filled (FORMAT.md 8.1).
 *
 * A block's log is bounded by the heap's free space, not by the log
 * area: when an entry does not fit the segment being filled, the next
 * extent is used, and leased (twice the size of all before it, so a huge
 * block needs few calls) when there is none. Every entry lies whole in
 * one segment; each segment's nbytes is published after its entries are
 * complete, so a reaping heapd never reads half an entry.
 *
 * heapd links each extent into the chain itself, in the transaction that
 * allocates it: an extent is never leased without being reachable from
 * the log, so heapd frees it with the session whatever happens. Extents
 * stay with the session for the next block while they are few (at most
 * UH_LOG_KEEP times the log area); more are given back (TrimLog) once
 * the block that needed them is over.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logapply.h"
#include "uhint.h"

#define UH_LOG_KEEP 4u		/* extents kept between blocks, in log areas */
#define UH_LOG_EXT_MAX (256ull << 20)	/* no single extent beyond this */

static char *seg_data(uh_heap *h, uint32_t i)
{
	if (i == 0)
		return (char *)(h->log + 1);
	return h->base + h->chain.ext[i - 1].off + sizeof(struct uh_log_ext);
}

static uint64_t seg_cap(uh_heap *h, uint32_t i)
{
	if (i == 0)
		return h->log_size - sizeof(struct uh_log_hdr);
	return h->chain.ext[i - 1].size - sizeof(struct uh_log_ext);
}

static uint64_t *seg_nbytes(uh_heap *h, uint32_t i)
{
	if (i == 0)
		return &h->log->nbytes;
	return &((struct uh_log_ext *)(h->base + h->chain.ext[i - 1].off))->nbytes;
}

void uh_logchain_start(uh_heap *h)
{
	struct uh_logchain *c = &h->chain;

	/* Every nbytes first: heapd must never walk a previous block's
	 * entries, in any segment, under the new ACTIVE state. */
	for (uint32_t i = 0; i <= c->n; i++)	/* bound: kept extents */
		__atomic_store_n(seg_nbytes(h, i), 0, __ATOMIC_RELEASE);
	c->cur = 0;
	c->used = 0;
	__atomic_store_n(&h->log->state, UH_LOG_ACTIVE, __ATOMIC_RELEASE);
}

/* Lease one more extent, big enough for need bytes of entries. */
static int lease(uh_heap *h, uint64_t need)
{
	struct uh_logchain *c = &h->chain;
	uint64_t size = c->ext_bytes + h->log_size;	/* doubles the log's room */
	uint64_t off, got;
	int rc;

	if (size > UH_LOG_EXT_MAX)
		size = UH_LOG_EXT_MAX;
	if (size < need + sizeof(struct uh_log_ext))
		size = need + sizeof(struct uh_log_ext);
	if (c->n == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 8;
		struct uh_logext *v = realloc(c->ext, cap * sizeof(*v));
		if (!v)
			return uh_err_set(UH_ENOMEM, "out of process memory");
		c->ext = v;
		c->cap = cap;
	}
	/* Inside a block: heapd gone means the block is doomed, never again. */
	int again;
	if ((rc = uh_ctl_ready(h)) == 0)
		rc = uhc_lease_log_extent(h->ctl, size, &off, &got);
	if (rc && (rc = uh_ctl_failed(h, rc, &again)) == 0)
		rc = UH_EINTERNAL;	/* unreachable: blocks are never re-attached */
	if (rc)
		return rc;
	/* The extent may lie in chunks of a growth this handle has not mapped
	 * (FORMAT.md 1.1): heapd grows the heap for a log as for an arena. */
	if (off > h->size || got > h->size - off)
		if ((rc = uh_map_more(h)) != 0)
			return rc;
	struct uh_log_loc l = { h->base, h->size, h->log, h->log_size, UH_FORMAT_VERSION };
	if (got < need + sizeof(struct uh_log_ext) || !uh_log_ext_at(&l, off))
		return uh_err_set(UH_EPROTO, "heapd leased a bad log extent at %llu",
				  (unsigned long long)off);
	c->ext[c->n++] = (struct uh_logext){ off, got };
	c->ext_bytes += got;
	return 0;
}

int uh_logchain_reserve(uh_heap *h, uint64_t need, void **at)
{
	struct uh_logchain *c = &h->chain;
	int rc;

	/* bound: each round moves to a later segment; lease() adds at most
	 * one that is big enough */
	while (need > seg_cap(h, c->cur) - c->used) {
		if (c->cur == c->n && (rc = lease(h, need)) != 0)
			return rc;
		c->cur++;
		c->used = 0;
	}
	*at = seg_data(h, c->cur) + c->used;
	return 0;
}

void uh_logchain_publish(uh_heap *h, uint64_t need)
{
	struct uh_logchain *c = &h->chain;

	c->used += need;
	__atomic_store_n(seg_nbytes(h, c->cur), c->used, __ATOMIC_RELEASE);
}

void uh_logchain_flush(uh_heap *h)
{
	struct uh_logchain *c = &h->chain;

	uh_flush(h, seg_data(h, 0), h->log->nbytes);
	for (uint32_t i = 1; i <= c->cur; i++) {	/* bound: segments used */
		struct uh_log_ext *x = (void *)(h->base + c->ext[i - 1].off);
		uh_flush(h, x, sizeof(*x) + x->nbytes);
	}
}

void uh_logchain_trim(uh_heap *h)
{
	struct uh_logchain *c = &h->chain;

	if (c->ext_bytes <= UH_LOG_KEEP * h->log_size || !h->ctl || !uhc_connected(h->ctl))
		return;
	char keep[1024];	/* the caller's message must survive */
	snprintf(keep, sizeof(keep), "%s", uh_errmsg());
	/* A refusal (heapd gone) only keeps the extents: they are emptied
	 * at the next block's start, and freed with the session. */
	if (uhc_trim_log(h->ctl) == 0) {
		c->n = 0;
		c->ext_bytes = 0;
	}
	uh_err_set(0, "%s", keep);
}

void uh_logchain_free(uh_heap *h)
{
	free(h->chain.ext);
	memset(&h->chain, 0, sizeof(h->chain));
}
