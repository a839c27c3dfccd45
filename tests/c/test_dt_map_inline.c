/*
 * test_dt_map_inline.c -- string and bytes values kept inside hash-map
 * entries (uh_map_put_bytes, FORMAT.md 11.3).
 *
 * Round trips: values of 0, 1, 100 and UH_MAP_INLINE_MAX bytes come back
 * inline (UH_T_ISTRING / UH_T_IBYTES), of UH_MAP_INLINE_MAX + 1 and 5000
 * bytes as objects (UH_T_STRING / UH_T_BYTES); uh_value_bytes and
 * uh_copy_values give the bytes put, for get, next and a remove's old
 * value. Replacing inline -> object -> inline frees what it replaces (a
 * value read before the replace then says UH_EFREED, never other bytes).
 * An iteration that replaces every value it is given visits each key
 * exactly once, through resizes. A map made before inline values (its
 * kind without 0x200) gets objects. Blocks: a put and a get in one block,
 * an aborted put changes nothing. After a heapd restart every value
 * reads back and recovery frees nothing.
 *
 * Bad input: a type that is not string or bytes, NULL data, a string that
 * is not UTF-8, an inline value given to uh_map_put, a forged inline value
 * pointing outside its entry; damage uh_map_check must name: an inline
 * value in a map whose kind lacks 0x200, an inline string that is not
 * UTF-8, value length that disagrees with the payload.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *SUITE = "test_dt_map_inline";
static struct th_heapd d;

static uh_key skey(const char *s)
{
	uh_key k = { .kind = UH_KEY_STRING, .data = s, .len = strlen(s) };
	return k;
}

static void fill(char *buf, size_t len, int seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)('a' + (i * 7 + (size_t)seed) % 26);
}

/* v holds the len bytes of fill(seed) as type (an inline type when the
 * map keeps it inline). */
static void expect_value(uh_heap *h, const uh_value *v, uint32_t type, size_t len, int seed)
{
	static char want[8192];
	const void *data;
	size_t n;
	int inl = len <= UH_MAP_INLINE_MAX;
	uint32_t t = type == UH_T_STRING ? (inl ? UH_T_ISTRING : UH_T_STRING) :
		     (inl ? UH_T_IBYTES : UH_T_BYTES);

	fill(want, len, seed);
	TH_CHECK_EQ(v->type, t);
	TH_CHECK_RC(uh_value_bytes(h, v, &data, &n));
	TH_CHECK_EQ(n, len);
	if (memcmp(data, want, len) != 0)
		th_fail(__FILE__, __LINE__, "the bytes differ from those put");
}

struct got {
	char buf[8192];
	size_t len;
	int calls;
};

static int copy_cb(void *arg, uint32_t i, const void *data, size_t len)
{
	struct got *g = arg;
	(void)i;
	g->calls++;
	g->len = len < sizeof(g->buf) ? len : sizeof(g->buf);
	memcpy(g->buf, data, g->len);
	return 0;
}

struct fetch_arg {
	uh_off m;
	uh_key k;
	struct got g;
};

static int fetch_cb(uh_heap *h, void *arg, uh_value *vals, uint32_t *n)
{
	struct fetch_arg *f = arg;
	*n = 1;
	return uh_map_get(h, f->m, &f->k, vals);
}

static int copy_cb_fa(void *arg, uint32_t i, const void *data, size_t len)
{
	return copy_cb(&((struct fetch_arg *)arg)->g, i, data, len);
}

static void test_round_trip(uh_heap *h)
{
	static const size_t lens[] = { 0, 1, 100, UH_MAP_INLINE_MAX, UH_MAP_INLINE_MAX + 1, 5000 };
	static char buf[8192];
	char name[64];
	uh_off m;
	uh_value v;

	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &m));
	TH_CHECK_RC(uh_root_set(h, "inline", m));
	for (int t = 0; t < 2; t++) {
		uint32_t type = t ? UH_T_BYTES : UH_T_STRING;
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			snprintf(name, sizeof(name), "k-%d-%zu", t, lens[i]);
			uh_key k = skey(name);
			fill(buf, lens[i], (int)i);
			TH_CHECK_RC(uh_map_put_bytes(h, m, &k, type, buf, lens[i], 0));
			TH_CHECK_RC(uh_map_get(h, m, &k, &v));
			expect_value(h, &v, type, lens[i], (int)i);
			/* uh_copy_values copies an inline value as a bytes object's */
			struct fetch_arg f = { .m = m, .k = k };
			TH_CHECK_RC(uh_copy_values(h, fetch_cb, copy_cb_fa, &f, &v, 1));
			TH_CHECK_EQ(f.g.calls, 1);
			TH_CHECK_EQ(f.g.len, lens[i]);
			TH_CHECK(memcmp(f.g.buf, buf, lens[i]) == 0);
		}
	}
	TH_CHECK_RC(uh_map_check(h, m));

	/* next gives the same values */
	uh_iter it;
	uh_key k;
	int n = 0;
	memset(&it, 0, sizeof(it));
	while (uh_map_next(h, m, &it, &k, &v) == 0) {
		int t, i;
		char kb[64];
		memcpy(kb, k.data, k.len);
		kb[k.len] = 0;
		TH_CHECK(sscanf(kb, "k-%d-%d", &t, &i) == 2);
		size_t li = 0;
		while (lens[li] != (size_t)i)
			li++;
		expect_value(h, &v, t ? UH_T_BYTES : UH_T_STRING, lens[li], (int)li);
		n++;
	}
	TH_CHECK_EQ(n, 12);
}

/* inline -> object -> inline, and what a value read before a replace says
 * after it. */
static void test_replace(uh_heap *h)
{
	static char big[600], small[40];
	uh_key k = skey("r");
	uh_value v1, v2, v3, old;
	const void *data;
	size_t n;
	uh_off m;

	fill(big, sizeof(big), 3);
	fill(small, sizeof(small), 4);
	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &m));
	TH_CHECK_RC(uh_map_put_bytes(h, m, &k, UH_T_BYTES, small, 10, 0));
	TH_CHECK_RC(uh_map_get(h, m, &k, &v1));
	TH_CHECK_EQ(v1.type, UH_T_IBYTES);
	TH_CHECK_RC(uh_map_put_bytes(h, m, &k, UH_T_BYTES, big, sizeof(big), 0));
	TH_CHECK_RC(uh_map_get(h, m, &k, &v2));
	TH_CHECK_EQ(v2.type, UH_T_BYTES);
	TH_CHECK_ERR(uh_value_bytes(h, &v1, &data, &n), UH_EFREED);	/* its entry went */
	TH_CHECK_RC(uh_map_put_bytes(h, m, &k, UH_T_STRING, small, 40, UH_FREE_OLD));
	TH_CHECK_RC(uh_map_get(h, m, &k, &v3));
	expect_value(h, &v3, UH_T_STRING, 40, 4);
	TH_CHECK_ERR(uh_value_bytes(h, &v2, &data, &n), UH_EFREED);	/* UH_FREE_OLD */
	TH_CHECK_RC(uh_map_check(h, m));
	uint64_t len = 0;
	TH_CHECK_RC(uh_map_len(h, m, &len));
	TH_CHECK_EQ(len, 1);

	/* a remove's old inline value reads in its block, not after */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_map_remove(h, m, &k, &old, 0));
	expect_value(h, &old, UH_T_STRING, 40, 4);
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_ERR(uh_value_bytes(h, &old, &data, &n), UH_EFREED);
	TH_CHECK_ERR(uh_map_get(h, m, &k, &v1), UH_ENOTFOUND);
	TH_CHECK_RC(uh_map_check(h, m));
}

/* Replacing every value an iteration gives: each key once, through the
 * resizes the puts of new keys between make. */
static void test_iter_replace(uh_heap *h)
{
	enum { N = 400 };
	static unsigned char seen[N];
	char name[32], val[64];
	uh_off m;
	uh_iter it;
	uh_key k;
	uh_value v;
	int n = 0;

	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &m));
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "it-%d", i);
		uh_key kk = skey(name);
		int len = snprintf(val, sizeof(val), "first-%d", i);
		TH_CHECK_RC(uh_map_put_bytes(h, m, &kk, UH_T_STRING, val, (size_t)len, 0));
	}
	memset(&it, 0, sizeof(it));
	while (uh_map_next(h, m, &it, &k, &v) == 0 && n < 2 * N) {
		int i;
		char kb[32];
		memcpy(kb, k.data, k.len);
		kb[k.len] = 0;
		TH_CHECK(sscanf(kb, "it-%d", &i) == 1 && i >= 0 && i < N);
		seen[i]++;
		n++;
		uh_key kk = skey(kb);
		int len = snprintf(val, sizeof(val), "second-%d-longer-than-before", i);
		TH_CHECK_RC(uh_map_put_bytes(h, m, &kk, UH_T_STRING, val, (size_t)len, 0));
	}
	TH_CHECK_EQ(n, N);
	for (int i = 0; i < N; i++)
		if (seen[i] != 1)
			TH_CHECK_EQ(seen[i], 1);
	TH_CHECK_RC(uh_map_check(h, m));
}

/* A map whose kind lacks 0x200 (as one made before inline values) gets
 * objects for every value. */
static void test_old_map(uh_heap *h)
{
	uh_key k = skey("old");
	uh_value v;
	uh_off m;
	uint64_t kind = 0;

	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &m));
	TH_CHECK_RC(uh_read(h, m, 16 + 8, &kind, 8));
	TH_CHECK_EQ(kind, 0x300u | UH_KEY_STRING);
	kind &= ~(uint64_t)0x200;
	TH_CHECK_RC(uh_write(h, m, 16 + 8, &kind, 8));
	TH_CHECK_RC(uh_map_put_bytes(h, m, &k, UH_T_BYTES, "abc", 3, 0));
	TH_CHECK_RC(uh_map_get(h, m, &k, &v));
	TH_CHECK_EQ(v.type, UH_T_BYTES);
	TH_CHECK_RC(uh_map_check(h, m));
}

static void test_blocks(uh_heap *h)
{
	uh_key k = skey("b");
	char text[26];
	uh_value v;
	uh_off m;

	fill(text, sizeof(text), 0);
	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &m));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_map_put_bytes(h, m, &k, UH_T_STRING, text, sizeof(text), 0));
	TH_CHECK_RC(uh_map_get(h, m, &k, &v));
	expect_value(h, &v, UH_T_STRING, 26, 0);
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_map_put_bytes(h, m, &k, UH_T_STRING, "zz", 2, 0));
	TH_CHECK_RC(uh_abort(h));
	TH_CHECK_RC(uh_map_get(h, m, &k, &v));
	expect_value(h, &v, UH_T_STRING, 26, 0);
	TH_CHECK_RC(uh_map_check(h, m));
}

static void test_bad(uh_heap *h)
{
	uh_key k = skey("bad");
	uh_value v, forged;
	const void *data;
	size_t n;
	uh_off m, l;

	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &m));
	TH_CHECK_ERR(uh_map_put_bytes(h, m, &k, UH_T_I64, "x", 1, 0), UH_EINVAL);
	TH_CHECK_ERR(uh_map_put_bytes(h, m, &k, UH_T_BYTES, NULL, 3, 0), UH_EINVAL);
	TH_CHECK_ERR(uh_map_put_bytes(h, m, &k, UH_T_STRING, "\xff\xfe", 2, 0), UH_EUTF8);
	TH_CHECK_ERR(uh_map_put_bytes(h, m, &k, UH_T_BYTES, "x", 1, 0x80), UH_EINVAL);
	TH_CHECK_ERR(uh_map_get(h, m, &k, &v), UH_ENOTFOUND);
	TH_CHECK_RC(uh_map_put_bytes(h, m, &k, UH_T_BYTES, "xyz", 3, 0));
	TH_CHECK_RC(uh_map_get(h, m, &k, &v));
	/* an inline value is not storable as it is */
	uh_key k2 = skey("copy");
	TH_CHECK_ERR(uh_map_put(h, m, &k2, &v, 0), UH_ETYPE);
	TH_CHECK(strstr(uh_errmsg(), "uh_map_put_bytes") != NULL);
	TH_CHECK_RC(uh_list_new(h, &l));
	TH_CHECK_ERR(uh_list_append(h, l, &v), UH_ETYPE);
	/* a forged value pointing outside its entry */
	forged = v;
	forged.reserved = (uint32_t)(UH_VALUE_AT(&v) + 4) | (uint32_t)UH_VALUE_LEN(&v) << 16;
	TH_CHECK_ERR(uh_value_bytes(h, &forged, &data, &n), UH_EINVAL);
	forged.reserved = 8u | 1u << 16;	/* inside the header */
	TH_CHECK_ERR(uh_value_bytes(h, &forged, &data, &n), UH_EINVAL);
	uh_value i64 = { .type = UH_T_I64, .u.i = 5 };
	TH_CHECK_ERR(uh_value_bytes(h, &i64, &data, &n), UH_ETYPE);
	TH_CHECK_RC(uh_map_check(h, m));
}

/* Damage the check names (raw writes into an entry, FORMAT.md 11.3). */
static void test_check_detects(uh_heap *h)
{
	uh_key k = skey("dmg");
	uh_value v;
	uh_off m;
	uint64_t kind, lens;
	uint8_t bad = 0xff;

	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &m));
	TH_CHECK_RC(uh_map_put_bytes(h, m, &k, UH_T_STRING, "hello", 5, 0));
	TH_CHECK_RC(uh_map_get(h, m, &k, &v));
	uh_off e = v.u.ref;

	/* the map's kind without 0x200 */
	TH_CHECK_RC(uh_read(h, m, 16 + 8, &kind, 8));
	uint64_t without = kind & ~(uint64_t)0x200;
	TH_CHECK_RC(uh_write(h, m, 16 + 8, &without, 8));
	TH_CHECK_ERR(uh_map_check(h, m), UH_EINTERNAL);
	TH_CHECK(strstr(uh_errmsg(), "0x200") != NULL);
	TH_CHECK_ERR(uh_map_get(h, m, &k, &v), UH_EINTERNAL);
	TH_CHECK_RC(uh_write(h, m, 16 + 8, &kind, 8));
	TH_CHECK_RC(uh_map_check(h, m));

	/* a string that is not UTF-8 */
	TH_CHECK_RC(uh_write(h, e, 16 + 24 + 3 + 1, &bad, 1));
	TH_CHECK_ERR(uh_map_check(h, m), UH_EINTERNAL);
	TH_CHECK(strstr(uh_errmsg(), "UTF-8") != NULL);
	TH_CHECK_RC(uh_write(h, e, 16 + 24 + 3 + 1, "e", 1));
	TH_CHECK_RC(uh_map_check(h, m));

	/* lengths that disagree with the payload */
	TH_CHECK_RC(uh_read(h, e, 16 + 8, &lens, 8));
	uint64_t wrong = lens + ((uint64_t)1 << 32);
	TH_CHECK_RC(uh_write(h, e, 16 + 8, &wrong, 8));
	TH_CHECK_ERR(uh_map_check(h, m), UH_EINTERNAL);
	TH_CHECK_ERR(uh_map_get(h, m, &k, &v), UH_EINTERNAL);
	TH_CHECK_RC(uh_write(h, e, 16 + 8, &lens, 8));
	TH_CHECK_RC(uh_map_check(h, m));
}

static void test_restart(uh_heap **h)
{
	static char out[1 << 16];
	uint64_t freed = 1, nulled = 1;
	uh_value v;
	uh_off m;

	uh_disconnect(*h);
	*h = NULL;
	if (th_heapd_restart(&d) != 0 || th_connect(&d, 0, h) != 0) {
		th_fail(__FILE__, __LINE__, "heapd restart");
		return;
	}
	TH_CHECK_EQ(th_heapctl(&d, "status --json", out, sizeof(out)), 0);
	TH_CHECK_EQ(th_find_u64(out, "freed_objects", &freed), 0);
	TH_CHECK_EQ(th_find_u64(out, "nulled_refs", &nulled), 0);
	TH_CHECK_EQ(nulled, 0);
	TH_CHECK_RC(uh_root_get(*h, "inline", &m));
	uh_key k = skey("k-1-100");
	TH_CHECK_RC(uh_map_get(*h, m, &k, &v));
	expect_value(*h, &v, UH_T_BYTES, 100, 2);
	k = skey("k-0-5000");
	TH_CHECK_RC(uh_map_get(*h, m, &k, &v));
	expect_value(*h, &v, UH_T_STRING, 5000, 5);
	TH_CHECK_RC(uh_map_check(*h, m));
	if (th_heapctl(&d, "check", out, sizeof(out)) != 0)
		th_fail(__FILE__, __LINE__, out);
}

int main(void)
{
	uh_heap *h = NULL;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		th_fail(__FILE__, __LINE__, "heapd start");
		th_heapd_cleanup(&d);
		return th_summary(SUITE);
	}
	test_round_trip(h);
	test_replace(h);
	test_iter_replace(h);
	test_old_map(h);
	test_blocks(h);
	test_bad(h);
	test_check_detects(h);
	test_restart(&h);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
