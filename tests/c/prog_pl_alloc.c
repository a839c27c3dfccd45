/*
 * prog_pl_alloc.c -- the allocator and root map workload of
 * test_powerloss.
 *
 *   prog_pl_alloc --setup --socket S        (nothing: an empty heap)
 *   prog_pl_alloc --work --socket S --ack F
 *       op i (one block each, NOPS ops): a bytes object of SIZES[i]
 *       bytes (sixteen small sizes from 10 bytes to 16000, across the
 *       size classes, and large objects with regions of their own) filled with a pattern of i, published as root "a<i>";
 *       odd ops from 3 on also delete root "a<i-3>" and free its object
 *       (a large one goes back to heapd). Appends "i\n" to F after each.
 *   prog_pl_alloc --check --socket S --ack F
 *       the roots and their objects must be the model after the
 *       acknowledged ops, or after one more (the op in flight, all or
 *       nothing). Prints "live=<n>": the objects recovery must find.
 * Exit 0 ok, 1 mismatch or error (printed).
 */
#include <stdio.h>
#include <stdlib.h>

#include "crash_campaign.h"

/* Small objects across the size classes (sixteen sizes spread over FORMAT.md
 * 5's list, not one per class: 35 one-MiB arenas would not fit the
 * campaign's 32 MiB heap), and two large objects early enough that odd
 * ops free them again (op 3 frees a0, op 5 frees a2). */
static const uint32_t SIZES[] = { 20000, 10, 70000, 30, 40, 70, 100, 170, 230, 350, 500, 700,
				  1000, 1500, 2000, 4000, 8000, 16000 };
#define NSIZES (sizeof(SIZES) / sizeof(SIZES[0]))
#define NOPS 18

static char buf[70000];

static void pattern(int i, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		buf[k] = (char)(i * 31 + k * 7);
}

static int op_body(uh_heap *h, void *arg)
{
	int i = *(const int *)arg;
	char name[16];
	uh_off o;
	int rc = 0;

	pattern(i, SIZES[i % NSIZES]);
	if ((rc = uh_bytes_new(h, buf, SIZES[i % NSIZES], &o)) != 0)
		return rc;
	snprintf(name, sizeof(name), "a%d", i);
	if ((rc = uh_root_set(h, name, o)) != 0)
		return rc;
	if (i < 3 || i % 2 == 0)
		return 0;
	snprintf(name, sizeof(name), "a%d", i - 3);
	if ((rc = uh_root_get(h, name, &o)) != 0 || (rc = uh_root_del(h, name)) != 0)
		return rc;
	return uh_free(h, o);
}

/* Root a<j> is present after n ops. */
static int present(int j, int n)
{
	int k = j + 3;	/* the op that deletes it, if odd */

	return j < n && !(k % 2 == 1 && k < n);
}

static int matches(uh_heap *h, int n, uint64_t *live, int say)
{
	uint64_t count = 0, roots = 0;

	for (int j = 0; j < NOPS; j++) {
		char name[16];
		int here = present(j, n);
		snprintf(name, sizeof(name), "a%d", j);
		pattern(j, SIZES[j % NSIZES]);
		if (!cc_root_bytes(h, name, here ? buf : NULL, SIZES[j % NSIZES], n, say))
			return 0;
		count += (uint64_t)here;
	}
	if (uh_root_count(h, &roots) != 0 || roots != count) {
		if (say)
			printf("after %d ops: %llu roots, want %llu\n", n, (unsigned long long)roots,
			       (unsigned long long)count);
		return 0;
	}
	/* root map, its table once a root was set, a name and an object per root */
	*live = (n ? 2 : 1) + 2 * count;
	return 1;
}

int main(int argc, char **argv)
{
	return cc_ops_main(argc, argv, "prog_pl_alloc", NULL, op_body, NOPS, matches);
}
