/*
 * rootmap_read.h -- reading the root map (shared by heapd and libuniheap).
 * Changes to it are made by libuniheap inside blocks (rootmap.c).
 */
#ifndef UH_ROOTMAP_READ_H
#define UH_ROOTMAP_READ_H

#include <stddef.h>
#include <stdint.h>

/* Next live root at or after *cursor (a table slot index); advances
 * *cursor past it. Returns 0, or UH_ENOTFOUND at the end. Offsets and
 * lengths are bounds-checked against heap_size: a damaged entry is
 * skipped, never followed outside the heap. */
int uh_rootmap_next(const char *base, uint64_t heap_size, uint64_t rootmap_off,
		    uint64_t *cursor, const char **name, size_t *name_len,
		    uint64_t *value);

#endif /* UH_ROOTMAP_READ_H */
