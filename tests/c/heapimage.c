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
