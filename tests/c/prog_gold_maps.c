/*
 * prog_gold_maps.c -- the golden hash maps and sorted maps (tests/gold/v2/
 * maps.heap.gz, written by the format 2 code, whose maps keep every key in
 * an object of its own), so that every later build proves it still reads
 * and changes maps written in an older encoding.
 *
 *   prog_gold_maps --socket S --gen        write phase 0 into a fresh heap
 *   prog_gold_maps --socket S --check P    the heap holds phase P (0 or 1)
 *   prog_gold_maps --socket S --modify     turn phase 0 into phase 1
 *
 * Content (every key and value a function of the map and an index i):
 *   gm.str    hash map, string keys, 1600 puts then 123 removes: a resize
 *             is under way (old table, cursor inside it) when phase 0 ends
 *   gm.i64    hash map, i64 keys (INT64_MIN and INT64_MAX among them)
 *   gm.bytes  hash map, bytes keys (the empty key, zero bytes, one key of
 *             UH_KEY_MAX_LEN bytes)
 *   gs.str    sorted map, string keys put in scrambled order, every 13th
 *             removed, long keys (300 bytes, one of UH_KEY_MAX_LEN)
 *   gs.i64, gs.bytes  sorted maps of the other kinds; gs.empty, empty
 * Values cycle through i64, f64, string (some not ASCII), bytes, bool and
 * a reference to gs.empty. Phase 1 removes more keys, puts new ones
 * (finishing the resize under way, splitting nodes) and
 * replaces some values. --check reads every key of both phases, walks
 * every map (sorted maps both ways and from a middle key), compares
 * lengths and runs uh_map_check / uh_smap_check.
 * Exit 0 and "gold maps: ok", or 1 with every mismatch printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uniheap.h"

#define GOLD_PROG "prog_gold_maps"
#include "prog_gold_util.h"

struct gmap {
	const char *root;
	int sorted;
	uint32_t kind;
	uint32_t n0, n1;	/* keys [0, n0) in phase 0, [0, n1) in phase 1 */
	uint32_t drop0, drop1;	/* i % drop0 == 0 removed in phase 0, ... */
};

static const struct gmap maps[] = {
	{ "gm.str", 0, UH_KEY_STRING, 1600, 3200, 13, 7 },
	{ "gm.i64", 0, UH_KEY_I64, 500, 900, 9, 5 },
	{ "gm.bytes", 0, UH_KEY_BYTES, 300, 500, 11, 4 },
	{ "gs.str", 1, UH_KEY_STRING, 2500, 4000, 13, 7 },
	{ "gs.i64", 1, UH_KEY_I64, 1000, 1600, 9, 5 },
	{ "gs.bytes", 1, UH_KEY_BYTES, 300, 500, 11, 4 },
	{ "gs.empty", 1, UH_KEY_STRING, 0, 0, 1, 1 },
};
#define NMAPS (sizeof(maps) / sizeof(maps[0]))

static uh_heap *h;
static int bad;
static uh_off empty_map;	/* what reference values point to */

/* ---- the model ---- */

static int present(const struct gmap *g, uint32_t i, int phase)
{
	if (i >= (phase ? g->n1 : g->n0))
		return 0;
	if (i < g->n0 && i % g->drop0 == 0)
		return 0;
	return !phase || i % g->drop1 != 3;
}

struct kbuf {
	uh_key k;
	unsigned char b[UH_KEY_MAX_LEN];
};

static void key_of(const struct gmap *g, uint32_t i, struct kbuf *kb)
{
	memset(&kb->k, 0, sizeof(kb->k));
	kb->k.kind = g->kind;
	kb->k.data = kb->b;
	if (g->kind == UH_KEY_I64) {
		kb->k.i64 = i == 0 ? INT64_MIN : i == 1 ? INT64_MAX :
				    ((int64_t)i - (int64_t)g->n1 / 2) * 4099;
		return;
	}
	if (g->kind == UH_KEY_STRING) {
		int n = snprintf((char *)kb->b, sizeof(kb->b), g->sorted ? "k%07u" : "key-%05u", i);
		size_t len = (size_t)n;
		if (i % 97 == 5 || i == 1)	/* long keys */
			for (size_t want = i == 1 ? UH_KEY_MAX_LEN : 300; len < want; len++)
				kb->b[len] = (unsigned char)('a' + len % 26);
		kb->k.len = len;
		return;
	}
	/* bytes: the index in the first two bytes keeps keys unique */
	size_t len = i == 0 ? 0 : i == 3 ? UH_KEY_MAX_LEN : 2 + i % 41;
	for (size_t j = 0; j < len; j++)
		kb->b[j] = (unsigned char)(j == 0 ? i & 255 : j == 1 ? i >> 8 : (i * 131 + j * 7) & 255);
	kb->k.len = len;
}

/* The index a key of map g was made from, or -1. */
static long index_of(const struct gmap *g, const uh_key *k)
{
	unsigned u;

	if (g->kind == UH_KEY_I64) {
		if (k->i64 == INT64_MIN)
			return 0;
		if (k->i64 == INT64_MAX)
			return 1;
		return k->i64 % 4099 ? -1 : k->i64 / 4099 + (long)g->n1 / 2;
	}
	if (g->kind == UH_KEY_STRING) {
		char tmp[16] = { 0 };
		memcpy(tmp, k->data, k->len < 15 ? k->len : 15);
		return sscanf(tmp, g->sorted ? "k%7u" : "key-%5u", &u) == 1 ? (long)u : -1;
	}
	if (k->len == 0)
		return 0;
	if (k->len < 2)
		return -1;
	const unsigned char *b = k->data;
	return b[0] | (long)b[1] << 8;
}

/* Value of key i in phase p: its type cycles, its content depends on both. */
static uint32_t val_type(uint32_t i, int phase, int replaced)
{
	static const uint32_t types[6] = { UH_T_I64, UH_T_F64, UH_T_STRING, UH_T_BYTES,
					   UH_T_BOOL, UH_T_REF };
	return types[(i + (replaced ? phase : 0)) % 6];
}

static int replaced(uint32_t i, int phase)
{
	return phase && i % 11 == 0;
}

static size_t val_bytes(uint32_t i, int p, unsigned char *out)
{
	size_t len = i % 40;
	for (size_t j = 0; j < len; j++)
		out[j] = (unsigned char)(i * 31 + j + (unsigned)p);
	return len;
}

static void val_string(uint32_t i, int p, char *out, size_t cap)
{
	snprintf(out, cap, i % 3 ? "v%u.%d" : "v\xc3\xa9%u.%d \xe2\x9c\x93", i, p);
}

/* A value for key i as of phase (its own objects allocated now). */
static uh_value make_value(uint32_t i, int phase)
{
	int r = replaced(i, phase), p = r ? phase : 0;
	uh_value v = { .type = val_type(i, phase, r) };
	unsigned char b[64];
	char s[64];

	switch (v.type) {
	case UH_T_I64: v.u.i = (int64_t)i * 1000003 - 7 + p; break;
	case UH_T_F64: v.u.f = i * 0.25 + p; break;
	case UH_T_BOOL: v.u.i = (i + (unsigned)p) & 1; break;
	case UH_T_REF: v.u.ref = i % 2 ? empty_map : 0; break;
	case UH_T_STRING:
		val_string(i, p, s, sizeof(s));
		TRY(uh_string_new(h, s, strlen(s), &v.u.ref));
		break;
	case UH_T_BYTES:
		TRY(uh_bytes_new(h, b, val_bytes(i, p, b), &v.u.ref));
		break;
	}
	return v;
}

static void check_value(const struct gmap *g, uint32_t i, int phase, const uh_value *v)
{
	int r = replaced(i, phase), p = r ? phase : 0;
	uint32_t t = val_type(i, phase, r);
	unsigned char b[64];
	char s[64];
	const void *data;
	size_t len;

	CHECK(v->type == t, "%s key %u: value type %u, want %u", g->root, i, v->type, t);
	if (v->type != t)
		return;
	switch (t) {
	case UH_T_I64:
		CHECK(v->u.i == (int64_t)i * 1000003 - 7 + p, "%s key %u: i64 %lld", g->root, i,
		      (long long)v->u.i);
		break;
	case UH_T_F64:
		CHECK(v->u.f == i * 0.25 + p, "%s key %u: f64 %g", g->root, i, v->u.f);
		break;
	case UH_T_BOOL:
		CHECK(v->u.i == ((i + (unsigned)p) & 1), "%s key %u: bool %lld", g->root, i,
		      (long long)v->u.i);
		break;
	case UH_T_REF:
		CHECK(v->u.ref == (i % 2 ? empty_map : 0), "%s key %u: ref %llu", g->root, i,
		      (unsigned long long)v->u.ref);
		break;
	case UH_T_STRING:
		val_string(i, p, s, sizeof(s));
		CHECK(uh_string_get(h, v->u.ref, (const char **)&data, &len) == 0 &&
		      len == strlen(s) && memcmp(data, s, len) == 0, "%s key %u: string", g->root, i);
		break;
	case UH_T_BYTES:
		len = val_bytes(i, p, b);
		{
			size_t got = 0;
			CHECK(uh_bytes_get(h, v->u.ref, &data, &got) == 0 && got == len &&
			      (!len || memcmp(data, b, len) == 0), "%s key %u: bytes", g->root, i);
		}
		break;
	}
}

/* ---- calls of either kind of map ---- */

static int m_get(const struct gmap *g, uh_off m, const uh_key *k, uh_value *v)
{
	return g->sorted ? uh_smap_get(h, m, k, v) : uh_map_get(h, m, k, v);
}

static void m_put(const struct gmap *g, uh_off m, uint32_t i, int phase)
{
	struct kbuf kb;
	uh_value v;

	key_of(g, i, &kb);
	TRY(uh_begin(h));
	v = make_value(i, phase);
	TRY(g->sorted ? uh_smap_put(h, m, &kb.k, &v, UH_FREE_OLD_VALUE)
		      : uh_map_put(h, m, &kb.k, &v, UH_FREE_OLD_VALUE));
	TRY(uh_commit(h));
}

static void m_remove(const struct gmap *g, uh_off m, uint32_t i)
{
	struct kbuf kb;

	key_of(g, i, &kb);
	TRY(g->sorted ? uh_smap_remove(h, m, &kb.k, NULL, UH_FREE_OLD_VALUE)
		      : uh_map_remove(h, m, &kb.k, NULL, UH_FREE_OLD_VALUE));
}

static uh_off map_root(const struct gmap *g)
{
	uh_off m = 0;
	TRY(uh_root_get(h, g->root, &m));
	return m;
}

/* ---- gen, modify ---- */

static void gen(void)
{
	for (size_t n = NMAPS; n-- > 0;) {	/* gs.empty first: values refer to it */
		const struct gmap *g = &maps[n];
		uh_off m;
		TRY(uh_begin(h));
		TRY(g->sorted ? uh_smap_new(h, g->kind, &m) : uh_map_new(h, g->kind, &m));
		TRY(uh_root_set(h, g->root, m));
		TRY(uh_commit(h));
		if (!strcmp(g->root, "gs.empty"))
			empty_map = m;
		/* Scrambled order (7919 is prime): splits all over the tree. */
		for (uint32_t j = 0; j < g->n0; j++)
			m_put(g, m, g->sorted ? (uint32_t)(((uint64_t)j * 7919) % g->n0) : j, 0);
		for (uint32_t i = 0; i < g->n0; i += g->drop0)
			m_remove(g, m, i);
	}
}

static void modify(void)
{
	for (size_t n = 0; n < NMAPS; n++) {
		const struct gmap *g = &maps[n];
		uh_off m = map_root(g);
		for (uint32_t i = 0; i < g->n0; i++) {
			if (!present(g, i, 0))
				continue;
			if (!present(g, i, 1))
				m_remove(g, m, i);
			else if (replaced(i, 1))
				m_put(g, m, i, 1);
		}
		for (uint32_t i = g->n0; i < g->n1; i++)
			m_put(g, m, i, 1);
		for (uint32_t i = g->n0; i < g->n1; i++)
			if (!present(g, i, 1))
				m_remove(g, m, i);
	}
}

/* ---- check ---- */

static int key_cmp(const uh_key *a, const uh_key *b)
{
	if (a->kind == UH_KEY_I64)
		return a->i64 < b->i64 ? -1 : a->i64 > b->i64;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = n ? memcmp(a->data, b->data, n) : 0;
	return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* One returned entry of a walk: a present key, the right value, seen once. */
static void walk_entry(const struct gmap *g, int phase, const uh_key *k, const uh_value *v,
		       unsigned char *seen)
{
	struct kbuf kb;
	long i = index_of(g, k);

	CHECK(i >= 0 && i < (long)g->n1, "%s: a walk returned an unknown key", g->root);
	if (i < 0 || i >= (long)g->n1)
		return;
	key_of(g, (uint32_t)i, &kb);
	CHECK(key_cmp(k, &kb.k) == 0, "%s: walk key %ld has other bytes", g->root, i);
	CHECK(present(g, (uint32_t)i, phase), "%s: walk returned removed key %ld", g->root, i);
	CHECK(!seen[i], "%s: walk returned key %ld twice", g->root, i);
	seen[i] = 1;
	check_value(g, (uint32_t)i, phase, v);
}

/* A whole walk (hash order, or a sorted scan from `from` either way). */
static uint64_t walk(const struct gmap *g, uh_off m, int phase, const uh_key *from, int rev)
{
	static unsigned char seen[8192];
	static struct kbuf last;
	uint64_t n = 0;
	uh_iter it;
	uh_key k;
	uh_value v;
	int rc;

	memset(seen, 0, sizeof(seen));
	memset(&it, 0, sizeof(it));
	if (g->sorted)
		TRY(uh_smap_scan(h, m, from, rev ? UH_SCAN_REVERSE : 0, &it));
	while ((rc = g->sorted ? uh_smap_next(h, m, &it, &k, &v) : uh_map_next(h, m, &it, &k, &v)) == 0) {
		if (g->sorted && n > 0) {
			int c = key_cmp(&last.k, &k);
			CHECK(rev ? c > 0 : c < 0, "%s: scan out of order at entry %llu", g->root,
			      (unsigned long long)n);
		}
		if (g->sorted && from) {
			int c = key_cmp(&k, from);
			CHECK(rev ? c <= 0 : c >= 0, "%s: scan went past its start", g->root);
		}
		last.k = k;
		if (k.kind != UH_KEY_I64) {
			memcpy(last.b, k.data, k.len);
			last.k.data = last.b;
		}
		walk_entry(g, phase, &k, &v, seen);
		n++;
	}
	CHECK(rc == UH_ENOTFOUND, "%s: walk ended with %d", g->root, rc);
	return n;
}

static void check_map(const struct gmap *g, int phase)
{
	uh_off m = map_root(g);
	uint64_t want = 0, len = 0;
	struct kbuf kb;
	uh_value v;

	for (uint32_t i = 0; i < g->n1; i++) {
		int rc;
		key_of(g, i, &kb);
		rc = m_get(g, m, &kb.k, &v);
		if (!present(g, i, phase)) {
			CHECK(rc == UH_ENOTFOUND, "%s key %u: get %d, want not found", g->root, i, rc);
			continue;
		}
		want++;
		CHECK(rc == 0, "%s key %u: get %d", g->root, i, rc);
		if (rc == 0)
			check_value(g, i, phase, &v);
	}
	TRY(g->sorted ? uh_smap_len(h, m, &len) : uh_map_len(h, m, &len));
	CHECK(len == want, "%s: len %llu, want %llu", g->root, (unsigned long long)len,
	      (unsigned long long)want);
	CHECK(walk(g, m, phase, NULL, 0) == want, "%s: walk count", g->root);
	if (g->sorted) {
		uint64_t a, b;
		CHECK(walk(g, m, phase, NULL, 1) == want, "%s: reverse walk count", g->root);
		key_of(g, g->n0 / 2, &kb);
		a = walk(g, m, phase, &kb.k, 0);
		b = walk(g, m, phase, &kb.k, 1);
		CHECK(a + b == want + present(g, g->n0 / 2, phase), "%s: scans from the middle "
		      "%llu + %llu", g->root, (unsigned long long)a, (unsigned long long)b);
	}
	CHECK((g->sorted ? uh_smap_check(h, m) : uh_map_check(h, m)) == 0, "%s: check", g->root);
}

int main(int argc, char **argv)
{
	const char *sock = argc >= 4 && !strcmp(argv[1], "--socket") ? argv[2] : NULL;
	const char *mode = sock ? argv[3] : "";

	if (!sock || (strcmp(mode, "--gen") && strcmp(mode, "--modify") &&
		      (strcmp(mode, "--check") || argc != 5))) {
		fprintf(stderr, "usage: prog_gold_maps --socket S --gen | --modify | --check 0|1\n");
		return 1;
	}
	TRY(uh_connect(sock, 0, &h));
	if (!strcmp(mode, "--gen")) {
		gen();
	} else {
		empty_map = map_root(&maps[NMAPS - 1]);
		if (!strcmp(mode, "--modify"))
			modify();
		else
			for (size_t n = 0; n < NMAPS; n++)
				check_map(&maps[n], atoi(argv[4]));
	}
	uh_disconnect(h);
	printf("gold maps %s: %s\n", mode + 2, bad ? "FAILED" : "ok");
	return bad ? 1 : 0;
}
