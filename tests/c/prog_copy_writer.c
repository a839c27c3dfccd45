/*
 * prog_copy_writer.c -- the writer of test_copy_values: replaces the
 * string field 0 and the bytes field 1 of one record, together, rounds
 * times, freeing the old values in the same block (as bindings do with
 * UH_FREE_OLD_VALUE), so that their slots are reused under the reader.
 * Usage: prog_copy_writer <socket> <record reference> <rounds>
 * Exits 0, or 1 with the error.
 */
#include <stdio.h>
#include <stdlib.h>

#include "copy_value.h"
#include "harness.h"

struct round {
	uh_off rec;
	uint32_t k;
};

static int replace(uh_heap *h, void *arg)
{
	const struct round *r = arg;
	char buf[CV_MAX];
	uh_off s, b, old_s, old_b;
	int rc;

	if ((rc = uh_get_ref(h, r->rec, 0, &old_s)) || (rc = uh_get_ref(h, r->rec, 1, &old_b)))
		return rc;
	if ((rc = uh_string_new(h, buf, cv_make(r->k, 'a', buf), &s)) ||
	    (rc = uh_bytes_new(h, buf, cv_make(r->k, 'A', buf), &b)))
		return rc;
	if ((rc = uh_set_ref(h, r->rec, 0, s)) || (rc = uh_set_ref(h, r->rec, 1, b)))
		return rc;
	if (old_s && (rc = uh_free(h, old_s)))
		return rc;
	return old_b ? uh_free(h, old_b) : 0;
}

int main(int argc, char **argv)
{
	uh_heap *h = NULL;
	int rc;

	if (argc != 4) {
		fprintf(stderr, "usage: prog_copy_writer <socket> <record> <rounds>\n");
		return 2;
	}
	struct round r = { strtoull(argv[2], NULL, 10), 0 };
	uint32_t rounds = (uint32_t)strtoul(argv[3], NULL, 10);

	rc = uh_connect(argv[1], 0, &h);
	for (r.k = 2; rc == 0 && r.k < rounds + 2; r.k++)	/* bound: rounds */
		rc = uh_run(h, replace, &r, 0);
	if (rc != 0) {
		fprintf(stderr, "copy writer: round %u: %s: %s\n", r.k, uh_strerror(rc),
			uh_errmsg());
		return 1;
	}
	uh_disconnect(h);
	return 0;
}
