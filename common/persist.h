/*
 * persist.h -- how shared code makes stores durable, whoever runs it.
 *
 * libuniheap persists through libpmem2 (clwb+fence on DAX, msync
 * otherwise, nothing in memory mode); heapd through libpmemobj's
 * pmemobj_flush/pmemobj_drain. Code shared by both (log replay, recovery)
 * takes one of these.
 *
 * overwrite (optional, NULL: none) is the online collector's write barrier
 * (FORMAT.md 9.3): uh_log_apply calls it before each store in place, with
 * the bytes about to be overwritten and what replaces them (src NULL: the
 * bytes die, a FREE's payload), so that a client applying its commit while
 * heapd marks can hand the references it removes to the mark first. Only
 * a committing client sets it, and only while the collector marks; heapd's
 * replay of a dead session's log leaves it NULL (the cycle is given up).
 */
#ifndef UH_PERSIST_H
#define UH_PERSIST_H

#include <stddef.h>

struct uh_persist {
	/* Start writing [addr, addr+len) back; durable after drain(). */
	void (*flush)(void *ctx, const void *addr, size_t len);
	/* Barrier: every range flushed before is durable on return. */
	void (*drain)(void *ctx);
	void *ctx;
	/* Before [dst, dst+len) is overwritten with src (NULL: freed). */
	void (*overwrite)(void *ctx, const void *dst, const void *src, size_t len);
};

static inline void uh_persist_range(const struct uh_persist *p, const void *a, size_t n)
{
	p->flush(p->ctx, a, n);
	p->drain(p->ctx);
}

#endif /* UH_PERSIST_H */
