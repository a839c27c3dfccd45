/*
 * chain_block.h -- the block the growth tests write: n records of one
 * class (field 0 an i64, field 1 a reference), valued first .. first + n
 * - 1, each naming the one made before it, the last under a root. A
 * reader walks the chain from the root and finds the values in reverse.
 */
#ifndef UH_TESTS_CHAIN_BLOCK_H
#define UH_TESTS_CHAIN_BLOCK_H

#include <stdint.h>

#include "uniheap.h"

/* One try of the block: 0, or the error it rolled back with. */
static inline int chain_block(uh_heap *h, uint32_t cls, const char *root, int n, int64_t first)
{
	uh_off o = 0, prev = 0;
	int rc = uh_begin(h);
	for (int i = 0; rc == 0 && i < n; i++) {	/* bound: n */
		rc = uh_alloc(h, cls, &o);
		if (rc == 0)
			rc = uh_set_i64(h, o, 0, first + i);
		if (rc == 0)
			rc = uh_set_ref(h, o, 1, prev);
		prev = o;
	}
	if (rc == 0)
		rc = uh_root_set(h, root, prev);
	if (rc == 0)
		rc = uh_commit(h);
	if (rc && uh_in_block(h))
		uh_abort(h);
	return rc;
}

#endif
