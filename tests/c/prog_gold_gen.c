/*
 * prog_gold_gen.c -- write the golden heap content (prog_gold_model.h)
 * into a fresh heap, in one block:
 *   roots gold.one, gold.two -> GoldAll objects (every field type, linked
 *         to each other: a cycle), gold.pair -> GoldPair {42, one, big, 1},
 *         gold.chain -> 10 GoldAll nodes linked by `link`, gold.big -> a
 *         20000-byte bytes object, "gold.ünï" -> one.
 *   prog_gold_gen --socket S
 * The caller then stops heapd; the heap file is the golden file.
 * Exit 0 on success, 1 with a message otherwise.
 */
#include <stdlib.h>
#include <string.h>

#include "prog_gold_model.h"
#include <stdio.h>

#define GOLD_PROG "prog_gold_gen"
#include "prog_gold_util.h"

static uh_heap *h;

static void set_vals(uh_off o, const struct gold_vals *v, uh_off blob)
{
	uh_off s = 0;

	TRY(uh_set_i64(h, o, GA_FLAG, v->flag));
	TRY(uh_set_i64(h, o, GA_TINY, v->tiny));
	TRY(uh_set_i64(h, o, GA_SMALL, v->small));
	TRY(uh_set_i64(h, o, GA_MID, v->mid));
	TRY(uh_set_i64(h, o, GA_BIG, v->big));
	TRY(uh_set_f64(h, o, GA_RATIO, v->ratio));
	TRY(uh_set_f64(h, o, GA_REAL, v->real));
	if (v->text)
		TRY(uh_string_new(h, v->text, strlen(v->text), &s));
	TRY(uh_set_ref(h, o, GA_TEXT, s));
	TRY(uh_set_ref(h, o, GA_BLOB, v->blob ? blob : 0));
}

static uh_off make_chain(uint32_t cls)
{
	uh_off next = 0, n = 0;
	char text[32];

	for (int i = GOLD_CHAIN_LEN - 1; i >= 0; i--) {
		uh_off s;
		TRY(uh_alloc(h, cls, &n));
		TRY(uh_set_i64(h, n, GA_BIG, i));
		TRY(uh_set_ref(h, n, GA_LINK, next));
		snprintf(text, sizeof(text), "node %d", i);
		TRY(uh_string_new(h, text, strlen(text), &s));
		TRY(uh_set_ref(h, n, GA_TEXT, s));
		next = n;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *sock = argc == 3 && !strcmp(argv[1], "--socket") ? argv[2] : NULL;
	uint32_t all, pair;
	uh_off one, two, pr, blob, big, chain;
	uint8_t bytes[256];
	static uint8_t bigdata[GOLD_BIG_LEN];

	if (!sock) {
		fprintf(stderr, "usage: prog_gold_gen --socket PATH\n");
		return 1;
	}
	TRY(uh_connect(sock, 0, &h));
	TRY(uh_class_register(h, "GoldAll", gold_all_fields, GA_NFIELDS, &all));
	TRY(uh_class_register(h, "GoldPair", gold_pair_fields, GP_NFIELDS, &pair));
	if (all != GOLD_ALL_ID || pair != GOLD_PAIR_ID) {
		fprintf(stderr, "prog_gold_gen: class ids %u, %u: the heap is not fresh\n", all,
			pair);
		return 1;
	}
	for (int i = 0; i < 256; i++)
		bytes[i] = (uint8_t)i;
	for (uint32_t i = 0; i < GOLD_BIG_LEN; i++)
		bigdata[i] = gold_big_byte(i);

	TRY(uh_begin(h));
	TRY(uh_bytes_new(h, bytes, sizeof(bytes), &blob));
	TRY(uh_bytes_new(h, bigdata, sizeof(bigdata), &big));
	TRY(uh_alloc(h, all, &one));
	TRY(uh_alloc(h, all, &two));
	set_vals(one, &gold_one, blob);
	set_vals(two, &gold_two, blob);
	TRY(uh_set_ref(h, one, GA_LINK, two));
	TRY(uh_set_ref(h, two, GA_LINK, one));
	TRY(uh_alloc(h, pair, &pr));
	TRY(uh_set_i64(h, pr, GP_TAG, GOLD_PAIR_TAG));
	TRY(uh_set_ref(h, pr, GP_LEFT, one));
	TRY(uh_set_ref(h, pr, GP_RIGHT, big));
	TRY(uh_set_i64(h, pr, GP_OK, 1));
	chain = make_chain(all);
	TRY(uh_root_set(h, "gold.one", one));
	TRY(uh_root_set(h, "gold.two", two));
	TRY(uh_root_set(h, "gold.pair", pr));
	TRY(uh_root_set(h, "gold.chain", chain));
	TRY(uh_root_set(h, "gold.big", big));
	TRY(uh_root_set(h, GOLD_ROOT_UTF8, one));
	TRY(uh_commit(h));
	uh_disconnect(h);
	printf("prog_gold_gen: wrote %d roots\n", GOLD_NROOTS);
	return 0;
}
