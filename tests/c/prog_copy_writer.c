/*
 * prog_copy_writer.c -- the writer of test_copy_values: replaces the
 * string field 0 and the bytes field 1 of one record, together, rounds
 * times, freeing the old values in the same block (as bindings do with
 * UH_FREE_OLD_VALUE), so that their slots are reused under the reader.
 * With "map", the record is a hash map instead and its keys "s" and "b"
 * get the values (uh_map_put_bytes, UH_FREE_OLD): inline in their
 * entries or objects, by length, each put a new entry in the old one's
 * place.
 * Usage: prog_copy_writer <socket> <record reference> <rounds> [map]
 * Exits 0, or 1 with the error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	if ((rc = uh_string_new(h, buf, cv_make(r->k, 'a', buf, 0), &s)) ||
	    (rc = uh_bytes_new(h, buf, cv_make(r->k, 'A', buf, 0), &b)))
		return rc;
	if ((rc = uh_set_ref(h, r->rec, 0, s)) || (rc = uh_set_ref(h, r->rec, 1, b)))
		return rc;
	if (old_s && (rc = uh_free(h, old_s)))
		return rc;
	return old_b ? uh_free(h, old_b) : 0;
}

static int replace_in_map(uh_heap *h, void *arg)
{
	const struct round *r = arg;
	char buf[CV_MAX];
	uh_key ks = { .kind = UH_KEY_STRING, .data = "s", .len = 1 };
	uh_key kb = { .kind = UH_KEY_STRING, .data = "b", .len = 1 };
	int rc;

	if ((rc = uh_map_put_bytes(h, r->rec, &ks, UH_T_STRING, buf, cv_make(r->k, 'a', buf, 1),
				   UH_FREE_OLD)) != 0)
		return rc;
	return uh_map_put_bytes(h, r->rec, &kb, UH_T_BYTES, buf, cv_make(r->k, 'A', buf, 1),
				UH_FREE_OLD);
}

int main(int argc, char **argv)
{
	uh_heap *h = NULL;
	int rc;

	if (argc != 4 && (argc != 5 || strcmp(argv[4], "map"))) {
		fprintf(stderr, "usage: prog_copy_writer <socket> <record> <rounds> [map]\n");
		return 2;
	}
	uh_block_fn body = argc == 5 ? replace_in_map : replace;
	struct round r = { strtoull(argv[2], NULL, 10), 0 };
	uint32_t rounds = (uint32_t)strtoul(argv[3], NULL, 10);

	rc = uh_connect(argv[1], 0, &h);
	for (r.k = 2; rc == 0 && r.k < rounds + 2; r.k++)	/* bound: rounds */
		rc = uh_run(h, body, &r, 0);
	if (rc != 0) {
		fprintf(stderr, "copy writer: round %u: %s: %s\n", r.k, uh_strerror(rc),
			uh_errmsg());
		return 1;
	}
	uh_disconnect(h);
	return 0;
}
