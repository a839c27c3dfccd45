/*
 * mapmore.c -- a client maps the part a heap has grown by while it runs
 * (FORMAT.md 1.1, "Clients"): when an offset it must follow lies past
 * what it has mapped (an arena heapd leased it, an object another process
 * made there), it re-reads cur_size and maps the new part into its
 * reservation, right after what it has, so base never moves.
 *
 * Invariants: m->size only grows, and [0, m->size) is mapped; each piece
 * starts where the one before ends (m->mapped) and is deleted before the
 * reservation (heap.c). Sessions of other threads share m: grow_lock
 * serializes the mapping, and each handle copies m->size into h->size and
 * its arena index itself, when it next misses.
 */
#include <libpmem2.h>
#include <sched.h>

#include "uhint.h"

static void grow_lock(struct uh_mapping *m)
{
	while (__atomic_exchange_n(&m->grow_lock, 1, __ATOMIC_ACQUIRE))	/* bound: one mapping */
		sched_yield();
}

static void grow_unlock(struct uh_mapping *m)
{
	__atomic_store_n(&m->grow_lock, 0, __ATOMIC_RELEASE);
}

/* Map [m->mapped, to rounded up to the source's alignment) into the
 * reservation at the same offset. 0 or -1 (pmem2_errormsg says why). */
static int map_piece(struct uh_mapping *m, uint64_t to)
{
	size_t align = 0;
	if (m->nmore == UH_MAP_PIECES || pmem2_source_alignment(m->src, &align) || !align)
		return -1;
	uint64_t end = (to + align - 1) / align * align;
	if (end > m->reserved)
		end = m->reserved;
	if (end <= m->mapped)
		return 0;	/* the last page of what is mapped holds it */
	struct pmem2_config *cfg = NULL;
	struct pmem2_map *map = NULL;
	int rc = -1;
	if (pmem2_config_new(&cfg) == 0 &&
	    pmem2_config_set_required_store_granularity(cfg, (enum pmem2_granularity)m->gran) == 0 &&
	    pmem2_config_set_protection(cfg, m->readonly ? PMEM2_PROT_READ :
					PMEM2_PROT_READ | PMEM2_PROT_WRITE) == 0 &&
	    pmem2_config_set_sharing(cfg, PMEM2_SHARED) == 0 &&
	    pmem2_config_set_offset(cfg, (size_t)m->mapped) == 0 &&
	    pmem2_config_set_length(cfg, (size_t)(end - m->mapped)) == 0 &&
	    pmem2_config_set_vm_reservation(cfg, m->rsv, (size_t)m->mapped) == 0 &&
	    pmem2_map_new(&map, cfg, m->src) == 0) {
		m->more[m->nmore++] = map;
		m->mapped = end;
		rc = 0;
	}
	if (cfg)
		pmem2_config_delete(&cfg);
	return rc;
}

int uh_map_more(uh_heap *h)
{
	struct uh_mapping *m = h->m;
	/* heapd published cur_size after the file was long enough and its
	 * blocks allocated (FORMAT.md 1.1, steps 1-4). */
	uint64_t cur = __atomic_load_n(&h->hdr->cur_size, __ATOMIC_ACQUIRE);
	int rc = 0;
	if (cur > m->reserved)
		cur = m->reserved;
	if (cur > __atomic_load_n(&m->size, __ATOMIC_ACQUIRE)) {
		grow_lock(m);
		if (cur > m->size) {
			if (map_piece(m, cur) == 0)
				__atomic_store_n(&m->size, cur, __ATOMIC_RELEASE);
			else
				rc = uh_err_set(UH_EIO, "cannot map the %llu bytes the heap has "
						"grown to: %s", (unsigned long long)cur,
						pmem2_errormsg());
		}
		grow_unlock(m);
	}
	uint64_t size = __atomic_load_n(&m->size, __ATOMIC_ACQUIRE);
	if (size > h->size) {
		h->size = size;
		h->ix.heap_size = size;
	}
	return rc;
}

/* The arena index's hook (common/arena.h): called on a miss past what
 * the handle has mapped. */
static uint64_t index_more(void *ctx)
{
	uh_heap *h = ctx;
	uh_map_more(h);
	return h->size;
}

void uh_map_more_hook(uh_heap *h)
{
	h->ix.more = index_more;
	h->ix.more_ctx = h;
}

void uh_map_more_unmap(struct uh_mapping *m)
{
	while (m->nmore > 0)	/* bound: UH_MAP_PIECES */
		pmem2_map_delete(&m->more[--m->nmore]);
}
