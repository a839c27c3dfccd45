/*
 * prog_gold_inline.c -- the golden hash map with values inline in its
 * entries (tests/gold/v10/inline.heap.gz, FORMAT.md 11.3: kind 0x200,
 * entries of the second layout), so that every later build proves it
 * still reads and changes them.
 *
 *   prog_gold_inline --socket S --gen      write phase 0 into a fresh heap
 *   prog_gold_inline --socket S --check P  the heap holds phase P (0 or 1)
 *   prog_gold_inline --socket S --modify   turn phase 0 into phase 1
 *
 * Content: root "gi.map", a hash map with string keys "gi-<i>", i <
 * 600, whose value is a function of i and the phase: i % 4 == 0 an inline
 * string of i % 129 bytes (0 to 128, some not ASCII), 1 inline bytes (zero
 * bytes among them), 2 a string object of 129 + i % 50 bytes, 3 an i64.
 * Every 7th key is then removed. Phase 1 replaces every 3rd key's value
 * by the next kind's (inline over object and the reverse), removes every
 * 11th and puts keys 600..699. --check reads every key, walks the map
 * (each key once), compares its length and runs uh_map_check.
 * Exit 0 and "gold inline: ok", or 1 with every mismatch printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uniheap.h"

#define GOLD_PROG "prog_gold_inline"
#include "prog_gold_util.h"

enum { NGEN = 600, NALL = 700 };

static int bad;

static uh_key key_of(int i, char *buf)
{
	uh_key k = { .kind = UH_KEY_STRING, .data = buf };
	k.len = (size_t)snprintf(buf, 32, "gi-%d", i);
	return k;
}

/* Key i's kind of value in phase p (0..3, as the header says), or -1
 * when the key is absent. */
static int kind_of(int i, int p)
{
	if (i >= NGEN)
		return p ? i % 4 : -1;
	if (i % 7 == 0 || (p && i % 11 == 0))
		return -1;
	return p && i % 3 == 0 ? (i + 1) % 4 : i % 4;
}

/* The bytes of key i's string or bytes value of kind k into buf. */
static size_t value_bytes(int i, int k, unsigned char *buf)
{
	size_t n = k == 2 ? 129 + (size_t)i % 50 : (size_t)i % 129;

	for (size_t j = 0; j < n; j++)
		buf[j] = k == 1 ? (unsigned char)((i + j) % 7 == 0 ? 0 : i * 31 + j) :
			 (unsigned char)('a' + (i + j) % 26);
	if (k == 0 && n >= 2) {	/* "é", two UTF-8 bytes */
		buf[0] = 0xc3;
		buf[1] = 0xa9;
	}
	return n;
}

static void put(uh_heap *h, int i, int k)
{
	unsigned char buf[256];
	char kb[32];
	uh_key key = key_of(i, kb);
	uh_value v = { .type = UH_T_I64, .u.i = (int64_t)i * 1000003 };
	uh_off m;

	TRY(uh_root_get(h, "gi.map", &m));
	if (k == 3) {
		TRY(uh_map_put(h, m, &key, &v, 0));
		return;
	}
	TRY(uh_map_put_bytes(h, m, &key, k == 1 ? UH_T_BYTES : UH_T_STRING, buf,
			     value_bytes(i, k, buf), UH_FREE_OLD));
}

static void gen(uh_heap *h)
{
	char kb[32];
	uh_off m;

	TRY(uh_map_new(h, UH_KEY_STRING, &m));
	TRY(uh_root_set(h, "gi.map", m));
	for (int i = 0; i < NGEN; i++)
		put(h, i, i % 4);
	for (int i = 0; i < NGEN; i += 7) {
		uh_key key = key_of(i, kb);
		TRY(uh_map_remove(h, m, &key, NULL, UH_FREE_OLD));
	}
}

static void modify(uh_heap *h)
{
	char kb[32];
	uh_off m;

	TRY(uh_root_get(h, "gi.map", &m));
	for (int i = 0; i < NALL; i++) {
		int k = kind_of(i, 1);
		if (k < 0 && kind_of(i, 0) >= 0) {
			uh_key key = key_of(i, kb);
			TRY(uh_map_remove(h, m, &key, NULL, UH_FREE_OLD));
		} else if (k >= 0 && k != kind_of(i, 0)) {
			put(h, i, k);
		}
	}
}

/* Key i's value v is the one of kind k. */
static void check_value(uh_heap *h, int i, int k, const uh_value *v)
{
	static const uint32_t types[3] = { UH_T_ISTRING, UH_T_IBYTES, UH_T_STRING };
	unsigned char want[256];
	const void *data;
	size_t len;

	if (k == 3) {
		CHECK(v->type == UH_T_I64 && v->u.i == (int64_t)i * 1000003, "gi-%d: i64", i);
		return;
	}
	CHECK(v->type == types[k], "gi-%d: type %u, not %u", i, v->type, types[k]);
	if (v->type != types[k])
		return;
	size_t n = value_bytes(i, k, want);
	TRY(uh_value_bytes(h, v, &data, &len));
	CHECK(len == n && memcmp(data, want, n) == 0, "gi-%d: %zu bytes, not the %zu put", i,
	      len, n);
}

static void check(uh_heap *h, int p)
{
	static unsigned char seen[NALL];
	uint64_t want = 0, len = 0;
	char kb[32];
	uh_iter it;
	uh_key k;
	uh_value v;
	uh_off m;

	TRY(uh_root_get(h, "gi.map", &m));
	CHECK(uh_map_check(h, m) == 0, "uh_map_check");
	for (int i = 0; i < NALL; i++) {
		int kind = kind_of(i, p);
		uh_key key = key_of(i, kb);
		int rc = uh_map_get(h, m, &key, &v);
		want += kind >= 0;
		CHECK(rc == (kind >= 0 ? 0 : UH_ENOTFOUND), "gi-%d: get %d", i, rc);
		if (rc == 0 && kind >= 0)
			check_value(h, i, kind, &v);
	}
	TRY(uh_map_len(h, m, &len));
	CHECK(len == want, "length %llu, not %llu", (unsigned long long)len,
	      (unsigned long long)want);
	memset(&it, 0, sizeof(it));
	memset(seen, 0, sizeof(seen));
	while (uh_map_next(h, m, &it, &k, &v) == 0) {
		int i = -1;
		char t[32];
		snprintf(t, sizeof(t), "%.*s", (int)k.len, (const char *)k.data);
		CHECK(sscanf(t, "gi-%d", &i) == 1 && i >= 0 && i < NALL && !seen[i]++,
		      "walk: key %s", t);
		if (i >= 0 && i < NALL && kind_of(i, p) >= 0)
			check_value(h, i, kind_of(i, p), &v);
	}
}

int main(int argc, char **argv)
{
	uh_heap *h;

	if (argc < 4 || strcmp(argv[1], "--socket")) {
		fprintf(stderr, "usage: " GOLD_PROG " --socket S --gen|--modify|--check P\n");
		return 2;
	}
	TRY(uh_connect(argv[2], 0, &h));
	if (!strcmp(argv[3], "--gen"))
		gen(h);
	else if (!strcmp(argv[3], "--modify"))
		modify(h);
	else if (!strcmp(argv[3], "--check") && argc == 5)
		check(h, atoi(argv[4]));
	else
		return fprintf(stderr, GOLD_PROG ": unknown mode %s\n", argv[3]), 2;
	uh_disconnect(h);
	if (bad)
		return 1;
	printf("gold inline: ok\n");
	return 0;
}
