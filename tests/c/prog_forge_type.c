/*
 * prog_forge_type.c -- a list whose element carries a value type no
 * libuniheap has (what a newer format, or damage, would leave), for the
 * bindings' tests: reading it must raise an error naming the type, never
 * give the element as null (a stored null is something else).
 *
 *   prog_forge_type SOCKET ROOT TYPE
 *       makes under ROOT a list of two i64 elements, 1 and 2, then writes
 *       TYPE into element 0's tag in place (list.c: the storage object's
 *       slot 0, tag in the low 32 bits), past any block: libuniheap
 *       refuses to store such a value itself.
 *
 * Prints "forged" and exits 0, or prints what failed and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "uniheap.h"

static int fail(const char *what, int rc)
{
	printf("%s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	return 1;
}

int main(int argc, char **argv)
{
	uh_heap *h;
	uh_off list;
	uh_value v = { .type = UH_T_I64 };
	int rc;

	if (argc != 4) {
		fprintf(stderr, "usage: prog_forge_type SOCKET ROOT TYPE\n");
		return 2;
	}
	uint32_t type = (uint32_t)strtoul(argv[3], NULL, 0);
	if ((rc = uh_connect(argv[1], 0, &h)) != 0)
		return fail("connect", rc);
	if ((rc = uh_begin(h)) != 0 || (rc = uh_list_new(h, &list)) != 0)
		return fail("list", rc);
	for (v.u.i = 1; v.u.i <= 2; v.u.i++)	/* bound: 2 */
		if ((rc = uh_list_append(h, list, &v)) != 0)
			return fail("append", rc);
	if ((rc = uh_root_set(h, argv[2], list)) != 0 || (rc = uh_commit(h)) != 0)
		return fail("root", rc);

	/* Header slot 1 (payload offset 16): the storage's reference. */
	unsigned char *base = uh_base(h);
	uint64_t storage;
	memcpy(&storage, base + UH_REF_OFFSET(list) + UH_OBJHDR_SIZE + 16 + 8, 8);
	unsigned char *tag = base + UH_REF_OFFSET(storage) + UH_OBJHDR_SIZE;
	memcpy(tag, &type, 4);
	uh_disconnect(h);
	printf("forged\n");
	return 0;
}
