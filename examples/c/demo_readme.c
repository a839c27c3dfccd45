/*
 * demo_readme.c -- the example in README.md, kept compiling by the build.
 * Run it with heapd serving $UNIHEAP_SOCKET, or the default socket
 * (uh_default_socket()).
 */
#include <stdio.h>

#include "uniheap.h"

int main(void)
{
	static const uh_field_spec fields[] = {
		{ "x", UH_T_I64, 0 }, { "y", UH_T_I64, 0 },
	};
	uh_heap *h;
	uint32_t point;
	uh_off p = 0;
	int rc = uh_connect(NULL, 0, &h);	/* NULL: $UNIHEAP_SOCKET or default */

	if (rc != 0) {
		fprintf(stderr, "connect: %s\n", uh_errmsg());
		return 1;
	}
	rc = uh_class_register(h, "Point", fields, 2, &point);
	if (rc == 0)
		rc = uh_begin(h);	/* everything until commit: all or nothing */
	if (rc == 0)
		rc = uh_alloc(h, point, &p);
	if (rc == 0)
		rc = uh_set_i64(h, p, 0, 42);	/* field 0 is "x" */
	if (rc == 0)
		rc = uh_root_set(h, "readme.point", p);
	if (rc == 0)
		rc = uh_commit(h);	/* on failure the block was rolled back */
	else if (uh_in_block(h))
		uh_abort(h);
	if (rc != 0)
		fprintf(stderr, "uniheap: %s: %s\n", uh_strerror(rc), uh_errmsg());
	else
		printf("root readme.point -> object at offset %llu\n",
		       (unsigned long long)p);
	uh_disconnect(h);
	return rc != 0;
}
