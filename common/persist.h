/*
 * persist.h -- how shared code makes stores durable, whoever runs it.
 *
 * libuniheap persists through libpmem2 (clwb+fence on DAX, msync
 * otherwise, nothing in memory mode); heapd through libpmemobj's
 * pmemobj_flush/pmemobj_drain. Code shared by both (log replay, recovery)
 * takes one of these.
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
};

static inline void uh_persist_range(const struct uh_persist *p, const void *a, size_t n)
{
	p->flush(p->ctx, a, n);
	p->drain(p->ctx);
}

#endif /* UH_PERSIST_H */
