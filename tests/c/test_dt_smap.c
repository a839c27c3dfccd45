/*
 * test_dt_smap.c -- sorted map (B+-tree) against an in-memory sorted
 * model: for i64, string and bytes keys (a third of them sharing long
 * prefixes, for the nodes' key hints), enough inserts for a tree of
 * height >= 3, then a long random sequence of put / get / remove / scan
 * (random from, limit and direction, some scans inside blocks) checked
 * after every step, heapd restarted mid-sequence (reconnect, continue),
 * uh_smap_check and a full comparison after each phase. Also: bad input
 * (wrong key kind, oversized key, invalid UTF-8, a non-map object) gives
 * the documented error and leaves the map unchanged. Scans beside
 * writers and up to a bound: test_dt_smap_scan.c.
 *
 * UH_TEST_SEED=n repeats a run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "uhint.h"

static const char *SUITE = "test_dt_smap";
static struct th_heapd d;
static uint64_t rng;

enum { KMAX = 320, NMAX = 4096 };

struct ent {
	int64_t i;
	size_t len;
	unsigned char k[KMAX];
	int64_t v;
};

static struct ent model[NMAX];
static size_t nmodel;
static uint32_t kind;

static uint64_t rnd(void)
{
	return th_xorshift64(&rng);
}

static void to_key(const struct ent *e, uh_key *k)
{
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->i64 = e->i;
	k->data = e->k;
	k->len = e->len;
}

static int ent_cmp(const struct ent *a, const struct ent *b)
{
	uh_key x, y;
	to_key(a, &x);
	to_key(b, &y);
	if (kind == UH_KEY_I64)
		return a->i < b->i ? -1 : a->i > b->i;
	size_t n = x.len < y.len ? x.len : y.len;
	int c = n ? memcmp(x.data, y.data, n) : 0;
	return c ? c : (x.len > y.len) - (x.len < y.len);
}

/* A random key: small alphabets so that keys repeat and share prefixes. */
static void gen_key(struct ent *e)
{
	memset(e, 0, sizeof(*e));
	if (kind == UH_KEY_I64) {
		e->i = (int64_t)(rnd() % 6000) - 3000;
		if (rnd() % 50 == 0)
			e->i = rnd() % 2 ? INT64_MAX - (int64_t)(rnd() % 3) : INT64_MIN + (int64_t)(rnd() % 3);
		return;
	}
	e->len = rnd() % 20 == 0 ? 25 + rnd() % 250 : rnd() % 9;
	/* A third share a long prefix (of a random length), so that nodes
	 * have long common prefixes and keys arrive that share less of it
	 * (the key hints of FORMAT.md 11.4). */
	size_t shared = rnd() % 3 == 0 ? 4 + rnd() % 40 : 0;
	for (size_t i = 0; i < shared; i++)
		e->k[i] = kind == UH_KEY_STRING ? (unsigned char)('a' + i % 7) : (unsigned char)(i % 3);
	e->len += shared;
	for (size_t i = shared; i < e->len; i++) {
		if (kind == UH_KEY_STRING)
			e->k[i] = (unsigned char)("abcdexyz"[rnd() % 8]);
		else
			e->k[i] = (unsigned char)(rnd() % 4 == 0 ? 0xff : rnd() % 3);
	}
	if (kind == UH_KEY_STRING && e->len >= 2 && rnd() % 10 == 0) {
		e->k[e->len - 2] = 0xc3;	/* UTF-8 e-acute */
		e->k[e->len - 1] = 0xa9;
	}
}

/* Index of the first entry >= e; *eq if equal. */
static size_t model_find(const struct ent *e, int *eq)
{
	size_t lo = 0, hi = nmodel;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ent_cmp(&model[mid], e) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*eq = lo < nmodel && ent_cmp(&model[lo], e) == 0;
	return lo;
}

static int key_matches(const uh_key *k, const struct ent *e)
{
	if (k->kind != kind)
		return 0;
	if (kind == UH_KEY_I64)
		return k->i64 == e->i;
	return k->len == e->len && (e->len == 0 || memcmp(k->data, e->k, e->len) == 0);
}

static int op_put(uh_heap *h, uh_off m, struct ent *e)
{
	uh_key k;
	uh_value v = { .type = UH_T_I64 };
	int eq;

	e->v = (int64_t)(rnd() >> 1);
	v.u.i = e->v;
	to_key(e, &k);
	int rc = uh_smap_put(h, m, &k, &v, 0);
	if (rc != 0) {
		th_fail(__FILE__, __LINE__, "put: %s", uh_errmsg());
		return -1;
	}
	size_t i = model_find(e, &eq);
	if (eq) {
		model[i].v = e->v;
	} else if (nmodel < NMAX) {
		memmove(&model[i + 1], &model[i], (nmodel - i) * sizeof(*e));
		model[i] = *e;
		nmodel++;
	}
	return 0;
}

static void op_get(uh_heap *h, uh_off m, const struct ent *e)
{
	uh_key k;
	uh_value v;
	int eq;
	size_t i = model_find(e, &eq);

	to_key(e, &k);
	int rc = uh_smap_get(h, m, &k, &v);
	if (eq) {
		TH_CHECK_RC(rc);
		if (rc == 0)
			TH_CHECK(v.type == UH_T_I64 && v.u.i == model[i].v);
	} else {
		TH_CHECK_ERR(rc, UH_ENOTFOUND);
	}
}

static void op_remove(uh_heap *h, uh_off m, const struct ent *e)
{
	uh_key k;
	uh_value v;
	int eq;
	size_t i = model_find(e, &eq);

	to_key(e, &k);
	int rc = uh_smap_remove(h, m, &k, &v, 0);
	if (eq) {
		TH_CHECK_RC(rc);
		if (rc == 0)
			TH_CHECK(v.type == UH_T_I64 && v.u.i == model[i].v);
		memmove(&model[i], &model[i + 1], (nmodel - i - 1) * sizeof(*e));
		nmodel--;
	} else {
		TH_CHECK_ERR(rc, UH_ENOTFOUND);
	}
}

/* Scan from a random key (or an end) in a random direction for up to
 * limit entries and compare with the model. */
static void op_scan(uh_heap *h, uh_off m, int limit, int in_block)
{
	struct ent from;
	uh_key fk, k;
	uh_value v;
	uh_iter it;
	int eq, rev = rnd() % 2, use_from = rnd() % 4 != 0;
	long i;

	gen_key(&from);
	to_key(&from, &fk);
	if (use_from) {
		size_t p = model_find(&from, &eq);
		i = rev ? (eq ? (long)p : (long)p - 1) : (long)p;
	} else {
		i = rev ? (long)nmodel - 1 : 0;
	}
	if (in_block)
		TH_CHECK_RC(uh_begin(h));
	int rc = uh_smap_scan(h, m, use_from ? &fk : NULL, rev ? UH_SCAN_REVERSE : 0, &it);
	TH_CHECK_RC(rc);
	for (int n = 0; rc == 0 && n < limit; n++, i += rev ? -1 : 1) {
		rc = uh_smap_next(h, m, &it, &k, &v);
		if (i < 0 || i >= (long)nmodel) {
			TH_CHECK_ERR(rc, UH_ENOTFOUND);
			break;
		}
		if (rc != 0) {
			th_fail(__FILE__, __LINE__, "scan next: %d %s", rc, uh_errmsg());
			break;
		}
		if (!key_matches(&k, &model[i]) || v.u.i != model[i].v) {
			th_fail(__FILE__, __LINE__, "scan entry %d (model %ld of %zu, rev %d) differs",
				n, i, nmodel, rev);
			break;
		}
		th_passed++;
	}
	if (in_block)
		TH_CHECK_RC(uh_commit(h));
}

/* Full comparison both ways plus the structural check. */
static void compare_all(uh_heap *h, uh_off m, const char *when)
{
	uint64_t len = 0;
	uh_iter it;
	uh_key k;
	uh_value v;
	size_t i = 0;
	int rc;

	rc = uh_smap_check(h, m);
	if (rc)
		th_fail(__FILE__, __LINE__, "%s: check: %s", when, uh_errmsg());
	else
		th_passed++;
	TH_CHECK_RC(uh_smap_len(h, m, &len));
	TH_CHECK_EQ(len, nmodel);
	memset(&it, 0, sizeof(it));	/* a zeroed iterator scans everything */
	while ((rc = uh_smap_next(h, m, &it, &k, &v)) == 0 && i < nmodel) {
		if (!key_matches(&k, &model[i]) || v.u.i != model[i].v)
			break;
		i++;
	}
	if (rc == 0 && i == nmodel)
		rc = uh_smap_next(h, m, &it, &k, &v);
	if (i != nmodel || rc != UH_ENOTFOUND)
		th_fail(__FILE__, __LINE__, "%s: full scan matched %zu of %zu (rc %d)", when, i,
			nmodel, rc);
	else
		th_passed++;
	TH_CHECK_RC(uh_smap_scan(h, m, NULL, UH_SCAN_REVERSE, &it));
	i = nmodel;
	while (i > 0 && uh_smap_next(h, m, &it, &k, &v) == 0 && key_matches(&k, &model[i - 1]))
		i--;
	TH_CHECK_EQ(i, 0);
}

static uint64_t height(uh_heap *h, uh_off m)
{
	return *(const uint64_t *)(h->base + UH_REF_OFFSET(m) + 16 + 3 * 16 + 8);
}

static int reconnect(uh_heap **h, uh_off *m, const char *name)
{
	uh_disconnect(*h);
	*h = NULL;
	if (th_heapd_restart(&d) != 0 || th_connect(&d, 0, h) != 0)
		return -1;
	return uh_root_get(*h, name, m);
}

static void run_kind(uh_heap **hp, uint32_t k, const char *name)
{
	uh_off m = 0;
	struct ent e;
	uint32_t got = 0;
	char when[64];

	kind = k;
	nmodel = 0;
	TH_CHECK_RC(uh_smap_new(*hp, k, &m));
	TH_CHECK_RC(uh_root_set(*hp, name, m));
	TH_CHECK_RC(uh_smap_key_kind(*hp, m, &got));
	TH_CHECK_EQ(got, k);
	/* Phase 1: grow to height >= 3. */
	for (int n = 0; n < 1400; n++) {
		gen_key(&e);
		if (op_put(*hp, m, &e) != 0)
			return;
		if (n % 7 == 0)
			op_get(*hp, m, &e);
	}
	compare_all(*hp, m, "after growth");
	printf("%s: %zu keys, height %llu\n", name, nmodel, (unsigned long long)height(*hp, m));
	TH_CHECK(height(*hp, m) >= 3);
	/* Phase 2: random operations, heapd restarted three times. */
	for (int round = 0; round < 4; round++) {
		for (int n = 0; n < 700; n++) {
			gen_key(&e);
			int r = (int)(rnd() % 100);
			if (r < 35)
				op_put(*hp, m, &e);
			else if (r < 55)
				op_get(*hp, m, &e);
			else if (r < 92)
				op_remove(*hp, m, &e);
			else
				op_scan(*hp, m, (int)(rnd() % 60), rnd() % 3 == 0);
		}
		snprintf(when, sizeof(when), "round %d", round);
		compare_all(*hp, m, when);
		if (round < 3 && reconnect(hp, &m, name) != 0) {
			th_fail(__FILE__, __LINE__, "restart: %s", uh_errmsg());
			return;
		}
	}
	/* Phase 3: drain to empty (leaves freed, root collapses), then reuse. */
	while (nmodel > 0) {
		e = model[rnd() % nmodel];
		op_remove(*hp, m, &e);
	}
	compare_all(*hp, m, "drained");
	TH_CHECK_EQ(height(*hp, m), 1);
	for (int n = 0; n < 100; n++) {
		gen_key(&e);
		op_put(*hp, m, &e);
	}
	compare_all(*hp, m, "refilled");
}

/* After a restart, recovery GC must find nothing to free: every node, key
 * copy and value freed by the map is freed in the same block, nothing is
 * left unreachable. Runs first, on a heap holding only this map. */
static int gc_clean(const char *what)
{
	static char out[1 << 16];
	uint64_t freed = 1, nulled = 1;
	int rc = th_heapctl(&d, "status --json", out, sizeof(out));

	if (rc != 0 || th_find_u64(out, "freed_objects", &freed) != 0 ||
	    th_find_u64(out, "nulled_refs", &nulled) != 0 || freed || nulled) {
		th_fail(__FILE__, __LINE__, "%s: recovery freed %llu objects, nulled %llu refs",
			what, (unsigned long long)freed, (unsigned long long)nulled);
		return -1;
	}
	th_passed++;
	return 0;
}

static void test_leaks(uh_heap **hp)
{
	uh_off m = 0;
	struct ent e;

	kind = UH_KEY_STRING;
	TH_CHECK_RC(uh_smap_new(*hp, UH_KEY_STRING, &m));
	TH_CHECK_RC(uh_root_set(*hp, "smap.leak", m));
	for (int n = 0; n < 3000; n++) {
		gen_key(&e);
		uh_key k;
		to_key(&e, &k);
		if (rnd() % 3 == 0) {
			uh_smap_remove(*hp, m, &k, NULL, UH_FREE_OLD);
			continue;
		}
		uh_value v = { .type = UH_T_I64, .u.i = n };
		if (rnd() % 2 && uh_string_new(*hp, "value", 5, &v.u.ref) == 0)
			v.type = UH_T_STRING;
		TH_CHECK_RC(uh_smap_put(*hp, m, &k, &v, UH_FREE_OLD));
	}
	TH_CHECK_RC(uh_smap_check(*hp, m));
	if (reconnect(hp, &m, "smap.leak") != 0 || gc_clean("after 3000 ops") != 0)
		return;
	/* Drain it: every leaf but the root freed, every key and value too. */
	uh_iter it;
	uh_key k;
	char buf[KMAX];
	TH_CHECK_RC(uh_smap_scan(*hp, m, NULL, 0, &it));
	while (uh_smap_next(*hp, m, &it, &k, NULL) == 0) {
		memcpy(buf, k.data, k.len);
		k.data = buf;
		TH_CHECK_RC(uh_smap_remove(*hp, m, &k, NULL, UH_FREE_OLD));
	}
	uint64_t len = 1;
	TH_CHECK_RC(uh_smap_len(*hp, m, &len));
	TH_CHECK_EQ(len, 0);
	TH_CHECK_EQ(height(*hp, m), 1);
	if (reconnect(hp, &m, "smap.leak") == 0)
		gc_clean("after draining");
}

/* Bad input: clear errors, map unchanged. */
static void test_bad(uh_heap *h)
{
	uh_off ms = 0, mi = 0, str = 0;
	uh_key k = { .kind = UH_KEY_STRING, .data = "ok", .len = 2 };
	uh_value v = { .type = UH_T_I64, .u.i = 7 }, got;
	static char big[UH_KEY_MAX_LEN + 2];
	uint64_t len = 0;
	uh_iter it;

	TH_CHECK_RC(uh_smap_new(h, UH_KEY_STRING, &ms));
	TH_CHECK_RC(uh_smap_new(h, UH_KEY_I64, &mi));
	TH_CHECK_ERR(uh_smap_new(h, 9, &str), UH_EINVAL);
	TH_CHECK_RC(uh_smap_put(h, ms, &k, &v, 0));
	uh_key ki = { .kind = UH_KEY_I64, .i64 = 5 };
	TH_CHECK_ERR(uh_smap_put(h, ms, &ki, &v, 0), UH_ETYPE);
	TH_CHECK(strstr(uh_errmsg(), "kind") != NULL);
	TH_CHECK_ERR(uh_smap_get(h, mi, &k, &got), UH_ETYPE);
	memset(big, 'x', sizeof(big));
	uh_key kb = { .kind = UH_KEY_STRING, .data = big, .len = UH_KEY_MAX_LEN + 1 };
	TH_CHECK_ERR(uh_smap_put(h, ms, &kb, &v, 0), UH_EINVAL);
	kb.len = UH_KEY_MAX_LEN;	/* the longest allowed key works */
	TH_CHECK_RC(uh_smap_put(h, ms, &kb, &v, 0));
	TH_CHECK_RC(uh_smap_remove(h, ms, &kb, NULL, 0));
	uh_key ku = { .kind = UH_KEY_STRING, .data = "a\xff" "b", .len = 3 };
	TH_CHECK_ERR(uh_smap_put(h, ms, &ku, &v, 0), UH_EUTF8);
	TH_CHECK_ERR(uh_smap_scan(h, ms, &ku, 0, &it), UH_EUTF8);
	/* A get checks the UTF-8 of a key it does not find, in and outside
	 * a block: a bad key is an error, not a miss. */
	TH_CHECK_ERR(uh_smap_get(h, ms, &ku, &got), UH_EUTF8);
	TH_CHECK(strstr(uh_errmsg(), "UTF-8") != NULL);
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_ERR(uh_smap_get(h, ms, &ku, &got), UH_EUTF8);
	TH_CHECK_RC(uh_commit(h));
	uh_value bad = { .type = 99 };
	TH_CHECK_ERR(uh_smap_put(h, ms, &k, &bad, 0), UH_ETYPE);
	uh_value bad8 = { .type = UH_T_I8, .u.i = 1000 };
	TH_CHECK_ERR(uh_smap_put(h, ms, &k, &bad8, 0), UH_ERANGE);
	TH_CHECK_ERR(uh_smap_put(h, ms, NULL, &v, 0), UH_EINVAL);
	TH_CHECK_ERR(uh_smap_put(h, ms, &k, &v, 0x80), UH_EINVAL);
	TH_CHECK_ERR(uh_smap_scan(h, ms, NULL, 0x80, &it), UH_EINVAL);
	/* Objects that are not sorted maps. */
	TH_CHECK_RC(uh_string_new(h, "s", 1, &str));
	TH_CHECK_ERR(uh_smap_put(h, str, &k, &v, 0), UH_ETYPE);
	TH_CHECK_ERR(uh_smap_len(h, str, &len), UH_ETYPE);
	TH_CHECK_ERR(uh_smap_scan(h, str, NULL, 0, &it), UH_ETYPE);
	TH_CHECK_ERR(uh_smap_check(h, str), UH_ETYPE);
	TH_CHECK_ERR(uh_smap_get(h, ms + 8, &k, &got), UH_EFREED);
	/* An iterator of one map used on another. */
	TH_CHECK_RC(uh_smap_scan(h, ms, NULL, 0, &it));
	TH_CHECK_ERR(uh_smap_next(h, mi, &it, NULL, NULL), UH_EINVAL);
	/* A batch of none, or nowhere to say how many. */
	uint32_t nb = 5;
	TH_CHECK_RC(uh_smap_scan(h, ms, NULL, 0, &it));
	TH_CHECK_ERR(uh_smap_next_n(h, ms, &it, NULL, &got, 0, &nb), UH_EINVAL);
	TH_CHECK(nb == 0 && strstr(uh_errmsg(), "max is 0") != NULL);
	TH_CHECK_ERR(uh_smap_next_n(h, ms, &it, NULL, &got, 4, NULL), UH_EINVAL);
	TH_CHECK_RC(uh_smap_next_n(h, ms, &it, NULL, &got, 4, &nb));
	TH_CHECK(nb == 1 && got.u.i == 7);
	TH_CHECK_ERR(uh_smap_next_n(h, ms, &it, NULL, &got, 4, &nb), UH_ENOTFOUND);
	TH_CHECK(nb == 0);
	/* Unchanged. */
	TH_CHECK_RC(uh_smap_len(h, ms, &len));
	TH_CHECK_EQ(len, 1);
	TH_CHECK_RC(uh_smap_get(h, ms, &k, &got));
	TH_CHECK(got.type == UH_T_I64 && got.u.i == 7);
	TH_CHECK_RC(uh_smap_check(h, ms));
	/* UH_FREE_OLD frees the replaced and the removed value. */
	uh_off s1, s2;
	TH_CHECK_RC(uh_string_new(h, "v1", 2, &s1));
	TH_CHECK_RC(uh_string_new(h, "v2", 2, &s2));
	uh_value sv = { .type = UH_T_STRING, .u.ref = s1 };
	TH_CHECK_RC(uh_smap_put(h, ms, &k, &sv, UH_FREE_OLD));
	sv.u.ref = s2;
	TH_CHECK_RC(uh_smap_put(h, ms, &k, &sv, UH_FREE_OLD));
	const char *data;
	size_t dl;
	TH_CHECK_ERR(uh_string_get(h, s1, &data, &dl), UH_EFREED);
	TH_CHECK_RC(uh_smap_remove(h, ms, &k, &got, UH_FREE_OLD));
	TH_CHECK(got.type == UH_T_STRING && got.u.ref == s2);
	TH_CHECK_ERR(uh_string_get(h, s2, &data, &dl), UH_EFREED);
	TH_CHECK_ERR(uh_smap_remove(h, ms, &k, &got, 0), UH_ENOTFOUND);
	/* Putting the same object again does not free it. UH_FREE_OLD_VALUE
	 * frees a replaced string but never an object stored as a ref. */
	uh_off s3, rec;
	TH_CHECK_RC(uh_string_new(h, "v3", 2, &s3));
	sv.u.ref = s3;
	TH_CHECK_RC(uh_smap_put(h, ms, &k, &sv, UH_FREE_OLD));
	TH_CHECK_RC(uh_smap_put(h, ms, &k, &sv, UH_FREE_OLD));
	TH_CHECK_RC(uh_string_get(h, s3, &data, &dl));
	TH_CHECK_RC(uh_string_new(h, "obj", 3, &rec));
	uh_value rv = { .type = UH_T_REF, .u.ref = rec };
	TH_CHECK_RC(uh_smap_put(h, ms, &k, &rv, UH_FREE_OLD_VALUE));
	TH_CHECK_ERR(uh_string_get(h, s3, &data, &dl), UH_EFREED);
	TH_CHECK_RC(uh_smap_put(h, ms, &k, &v, UH_FREE_OLD_VALUE));
	TH_CHECK_RC(uh_string_get(h, rec, &data, &dl));
	TH_CHECK_RC(uh_smap_remove(h, ms, &k, NULL, 0));
	TH_CHECK_ERR(uh_smap_put(h, ms, &k, &v, 0x4), UH_EINVAL);
	/* Aborted block: nothing of the put stays. */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_smap_put(h, ms, &k, &v, 0));
	TH_CHECK_RC(uh_abort(h));
	TH_CHECK_ERR(uh_smap_get(h, ms, &k, &got), UH_ENOTFOUND);
	TH_CHECK_RC(uh_smap_check(h, ms));
}

/* ---- damage: uh_smap_check names what is wrong (format in smap.c) ---- */

static uint64_t *slot_word(uh_heap *h, uh_off obj, unsigned i, unsigned w)
{
	return (uint64_t *)(h->base + UH_REF_OFFSET(obj) + 16 + 16 * i + 8 * w);
}

struct put_range { uh_off m; int lo, hi; };

static int put_range_body(uh_heap *h, void *arg)
{
	const struct put_range *r = arg;
	for (int i = r->lo; i < r->hi; i++) {
		uh_key k = { .kind = UH_KEY_I64, .i64 = 10 * i };
		uh_value v = { .type = UH_T_I64, .u.i = i };
		int rc = uh_smap_put(h, r->m, &k, &v, 0);
		if (rc)
			return rc;
	}
	return 0;
}

static void expect_damage(uh_heap *h, uh_off m, const char *what, const char *words)
{
	int rc = uh_smap_check(h, m);
	if (rc == UH_EINTERNAL && strstr(uh_errmsg(), words)) {
		th_passed++;
	} else {
		th_fail(__FILE__, __LINE__, "%s: check gave %d '%s', want EINTERNAL naming '%s'",
			what, rc, uh_errmsg(), words);
	}
}

/* Gets inside a block (the lean get joins the block's read set): a key
 * read twice in a block gives the same value, or the block conflicts,
 * while another session changes it; a block sees its own puts; and of two
 * blocks that each read what the other writes (write skew), at most one
 * commits. */
static void test_get_in_block(uh_heap *h, uh_heap *h2)
{
	uh_off m = 0;
	uh_key k = { .kind = UH_KEY_I64 }, k2 = { .kind = UH_KEY_I64 };
	uh_value v = { .type = UH_T_I64 }, got;
	int rc;

	TH_CHECK_RC(uh_smap_new(h, UH_KEY_I64, &m));
	for (int i = 0; i < 200; i++) {	/* several leaves */
		k.i64 = v.u.i = i;
		TH_CHECK_RC(uh_smap_put(h, m, &k, &v, 0));
	}
	k.i64 = 5;
	k2.i64 = 150;
	/* Repeatable: the second get sees the first's value or conflicts. */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_smap_get(h, m, &k, &got));
	TH_CHECK_EQ(got.u.i, 5);
	v.u.i = 1005;
	TH_CHECK_RC(uh_smap_put(h2, m, &k, &v, 0));
	rc = uh_smap_get(h, m, &k, &got);
	if (rc == 0)
		TH_CHECK_EQ(got.u.i, 5);
	else
		TH_CHECK_ERR(rc, UH_ECONFLICT);
	uh_abort(h);
	/* Its own puts: into a leaf it read first, then read again. */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_smap_get(h, m, &k, &got));
	TH_CHECK_EQ(got.u.i, 1005);
	v.u.i = 2005;
	TH_CHECK_RC(uh_smap_put(h, m, &k, &v, 0));
	TH_CHECK_RC(uh_smap_get(h, m, &k, &got));
	TH_CHECK_EQ(got.u.i, 2005);
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_smap_get(h2, m, &k, &got));
	TH_CHECK_EQ(got.u.i, 2005);
	/* Write skew: h reads k and writes k2, h2 reads k2 and writes k. */
	int ok = 0;
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_begin(h2));
	TH_CHECK_RC(uh_smap_get(h, m, &k, &got));
	TH_CHECK_RC(uh_smap_get(h2, m, &k2, &got));
	v.u.i = 3150;
	if (uh_smap_put(h, m, &k2, &v, 0) == 0 && uh_commit(h) == 0)
		ok++;
	else
		uh_abort(h);
	v.u.i = 3005;
	if (uh_smap_put(h2, m, &k, &v, 0) == 0 && uh_commit(h2) == 0)
		ok++;
	else
		uh_abort(h2);
	TH_CHECK_EQ(ok, 1);
	TH_CHECK_RC(uh_smap_check(h, m));
}

/* A node written in a block is one log entry, its image (tx.c), however
 * many of its slots an insert shifts and however many inserts of the block
 * land in it; the block reads its own shifted slots back, and an abort
 * leaves the node as it was. i64 keys: no key objects to allocate. */
static void test_log_per_node(uh_heap *h)
{
	uh_off m = 0;
	uh_key k = { .kind = UH_KEY_I64 };
	uh_value v = { .type = UH_T_I64 };
	uint64_t first, shifted, five, len = 0;

	TH_CHECK_RC(uh_smap_new(h, UH_KEY_I64, &m));
	for (int i = 0; i < 20; i++) {	/* one leaf: 20 < F keys */
		k.i64 = 2 * i;
		v.u.i = 2 * i;
		TH_CHECK_RC(uh_smap_put(h, m, &k, &v, 0));
	}
	TH_CHECK_RC(uh_begin(h));
	k.i64 = v.u.i = 1000;	/* at the end: nothing shifts */
	TH_CHECK_RC(uh_smap_put(h, m, &k, &v, 0));
	first = h->tx.nentries;
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_begin(h));
	k.i64 = v.u.i = -1;	/* at the front: all 21 entries shift */
	TH_CHECK_RC(uh_smap_put(h, m, &k, &v, 0));
	shifted = h->tx.nentries;
	for (int i = 0; i < 4; i++) {	/* four more into the same leaf */
		k.i64 = v.u.i = 4 * i + 1;
		TH_CHECK_RC(uh_smap_put(h, m, &k, &v, 0));
	}
	five = h->tx.nentries;
	for (int i = -1; i < 40; i++) {	/* the block's own view */
		int in = i == -1 || i % 2 == 0 || (i % 4 == 1 && i < 16);
		k.i64 = i;
		int rc = uh_smap_get(h, m, &k, &v);
		if (in) {
			TH_CHECK_RC(rc);
			TH_CHECK_EQ(v.u.i, i);
		} else {
			TH_CHECK_ERR(rc, UH_ENOTFOUND);
		}
	}
	TH_CHECK_RC(uh_abort(h));
	TH_CHECK_EQ(first, shifted);
	TH_CHECK_EQ(shifted, five);
	TH_CHECK(first <= 5);	/* header lock + count, leaf lock + image */
	TH_CHECK_RC(uh_smap_len(h, m, &len));
	TH_CHECK_EQ(len, 21);
	k.i64 = -1;
	TH_CHECK_ERR(uh_smap_get(h, m, &k, &v), UH_ENOTFOUND);
	k.i64 = 0;
	TH_CHECK_RC(uh_smap_get(h, m, &k, &v));
	TH_CHECK_EQ(v.u.i, 0);
	TH_CHECK_RC(uh_smap_check(h, m));
}

static void test_damage(uh_heap *h)
{
	struct put_range r = { 0, 0, 0 };
	uint64_t save;

	TH_CHECK_RC(uh_smap_new(h, UH_KEY_I64, &r.m));
	for (r.lo = 0; r.lo < 1000; r.lo += 100) {
		r.hi = r.lo + 100;
		TH_CHECK_RC(uh_run(h, put_range_body, &r, 0));
	}
	TH_CHECK_RC(uh_smap_check(h, r.m));
	TH_CHECK(height(h, r.m) >= 3);
	uh_off m = r.m, root = *slot_word(h, m, 2, 1), first = *slot_word(h, m, 4, 1);
	uh_off inner = *slot_word(h, root, 32, 1);	/* root's child 0 */

	save = *slot_word(h, m, 1, 1);	/* count */
	*slot_word(h, m, 1, 1) = save + 1;
	expect_damage(h, m, "count", "counts");
	*slot_word(h, m, 1, 1) = save;

	save = *slot_word(h, first, 3, 1);	/* leaf key 1 := key 0 */
	*slot_word(h, first, 3, 1) = *slot_word(h, first, 2, 1);
	expect_damage(h, m, "order", "not greater");
	*slot_word(h, first, 3, 1) = save;

	save = *slot_word(h, first, 1, 1);	/* leaf chain cut after the first */
	*slot_word(h, first, 1, 1) = 0;
	expect_damage(h, m, "chain", "leaf chain");
	*slot_word(h, first, 1, 1) = save;

	save = *slot_word(h, inner, 2, 1);	/* separator 0 far too big */
	*slot_word(h, inner, 2, 1) = (uint64_t)INT64_MAX;
	expect_damage(h, m, "separator", "separator");
	*slot_word(h, inner, 2, 1) = save;

	save = *slot_word(h, first, 2, 0);	/* key slot of the wrong type */
	*slot_word(h, first, 2, 0) = UH_T_F64;
	expect_damage(h, m, "key type", "key slot");
	*slot_word(h, first, 2, 0) = save;

	save = *slot_word(h, root, 0, 1);	/* meta: n > fanout */
	*slot_word(h, root, 0, 1) = 99;
	expect_damage(h, m, "meta", "meta");
	*slot_word(h, root, 0, 1) = save;

	save = *slot_word(h, m, 3, 1);		/* height */
	*slot_word(h, m, 3, 1) = save + 1;
	expect_damage(h, m, "height", "bottom level");
	*slot_word(h, m, 3, 1) = save;

	TH_CHECK_RC(uh_smap_check(h, m));
}

/* Byte at of the payload of packed leaf off (smap_leaf.h). */
static unsigned char *leaf_byte(uh_heap *h, uh_off off, uint32_t at)
{
	return (unsigned char *)h->base + UH_REF_OFFSET(off) + 16 + at;
}

/* A string map's packed leaves: each way the format can be broken is
 * named by uh_smap_check, and gets and scans on the broken leaf give an
 * error or an answer, never a crash. The first leaf starts with a long
 * key (more than 23 bytes: a key object beside its first 23). */
static void test_packed_damage(uh_heap *h)
{
	static const struct {
		uint32_t at;		/* payload offset; cell i at 440 + 24 i */
		unsigned char to;
		const char *what, *words;
	} cases[] = {
		{ 440 + 24 * 2 + 1, 'a', "order", "not greater" },	/* cell 2's first byte */
		{ 440 + 24 * 2, 30, "length byte", "key slot" },	/* neither inline nor long */
		{ 440 + 24 * 2 + 20, 'z', "inline tail", "cell" },	/* past a 10-byte key */
		{ 440 + 5, 'Z', "long prefix", "cell" },		/* cell 0 is long */
		{ 0, 46, "nvals", "packed header" },
		{ 8, 24, "count", "packed header" },
		{ 992, 1, "reserved", "not zero" },
	};
	char buf[64];
	uh_off m = 0;
	uh_key k = { .kind = UH_KEY_STRING, .data = buf };
	uh_value v = { .type = UH_T_I64 }, got;
	uh_iter it;
	uint32_t n;

	TH_CHECK_RC(uh_smap_new(h, UH_KEY_STRING, &m));
	k.len = (size_t)snprintf(buf, sizeof(buf), "a-long-key-of-more-than-23-bytes");
	TH_CHECK_RC(uh_smap_put(h, m, &k, &v, 0));
	for (int i = 0; i < 15; i++) {
		k.len = (size_t)snprintf(buf, sizeof(buf), "key-%06d", i * 7);
		v.u.i = i;
		TH_CHECK_RC(uh_smap_put(h, m, &k, &v, 0));
	}
	TH_CHECK_RC(uh_smap_check(h, m));
	uh_off leaf = *slot_word(h, m, 4, 1);	/* the first (and only) leaf */
	TH_CHECK_EQ(*leaf_byte(h, leaf, 440), 0xff);
	TH_CHECK_EQ(*leaf_byte(h, leaf, 440 + 24), 10);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		unsigned char *b = leaf_byte(h, leaf, cases[c].at), save = *b;
		*b = cases[c].to;
		expect_damage(h, m, cases[c].what, cases[c].words);
		k.len = (size_t)snprintf(buf, sizeof(buf), "key-%06d", 7);
		int rc = uh_smap_get(h, m, &k, &got);
		TH_CHECK(rc == 0 || rc == UH_ENOTFOUND || rc == UH_EINTERNAL);
		rc = uh_smap_scan(h, m, NULL, 0, &it);
		for (int steps = 0; rc == 0 && steps < 40; steps++) {	/* bound: 40 */
			uh_key ks[8];
			rc = uh_smap_next_n(h, m, &it, ks, NULL, 8, &n);
		}
		TH_CHECK(rc == 0 || rc == UH_ENOTFOUND || rc == UH_EINTERNAL);
		*b = save;
	}
	TH_CHECK_RC(uh_smap_check(h, m));
	/* An inner node's prefix slot (slot 1: the last bytes of the prefix
	 * its keys share) that does not match its keys is named too. */
	for (int i = 15; i < 400; i++) {
		k.len = (size_t)snprintf(buf, sizeof(buf), "key-%06d", i * 7);
		TH_CHECK_RC(uh_smap_put(h, m, &k, &v, 0));
	}
	TH_CHECK(height(h, m) >= 2);
	uh_off root = *slot_word(h, m, 2, 1);
	TH_CHECK_EQ(*slot_word(h, root, 1, 0) & 0xffffffffu, UH_T_I64);
	uint64_t save = *slot_word(h, root, 1, 1);
	*slot_word(h, root, 1, 1) = save ^ 1;
	expect_damage(h, m, "prefix slot", "prefix slot");
	*slot_word(h, root, 1, 1) = save;
	TH_CHECK_RC(uh_smap_check(h, m));
}

/* Reads work on a read-only handle; writes say why they cannot. */
static void test_readonly(uh_heap *h)
{
	uh_heap *ro = NULL;
	uh_off m = 0;
	uh_key k = { .kind = UH_KEY_I64, .i64 = 1 };
	uh_value v = { .type = UH_T_I64, .u.i = 11 }, got;
	uint64_t len = 0;
	uh_iter it;

	TH_CHECK_RC(uh_smap_new(h, UH_KEY_I64, &m));
	TH_CHECK_RC(uh_smap_put(h, m, &k, &v, 0));
	if (th_connect(&d, UH_READONLY, &ro) != 0) {
		th_fail(__FILE__, __LINE__, "read-only connect");
		return;
	}
	TH_CHECK_RC(uh_smap_get(ro, m, &k, &got));
	TH_CHECK(got.u.i == 11);
	TH_CHECK_RC(uh_smap_len(ro, m, &len));
	TH_CHECK_EQ(len, 1);
	TH_CHECK_RC(uh_smap_scan(ro, m, NULL, 0, &it));
	TH_CHECK_RC(uh_smap_next(ro, m, &it, &k, &got));
	TH_CHECK_ERR(uh_smap_next(ro, m, &it, &k, &got), UH_ENOTFOUND);
	TH_CHECK_RC(uh_smap_check(ro, m));
	TH_CHECK_ERR(uh_smap_put(ro, m, &k, &v, 0), UH_EREADONLY);
	TH_CHECK_ERR(uh_smap_remove(ro, m, &k, NULL, 0), UH_EREADONLY);
	TH_CHECK_ERR(uh_smap_new(ro, UH_KEY_I64, &m), UH_EREADONLY);
	uh_disconnect(ro);
}

int main(void)
{
	const char *seed_env = getenv("UH_TEST_SEED");
	uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL);
	uh_heap *h = NULL;

	printf("%s: seed %llu (UH_TEST_SEED to repeat)\n", SUITE, (unsigned long long)seed);
	rng = seed * 2654435761u + 1;
	if (th_heapd_start(&d, "--size 256M") != 0 || th_connect(&d, 0, &h) != 0) {
		th_heapd_cleanup(&d);
		return 1;
	}
	test_leaks(&h);
	if (!h)
		return th_summary(SUITE);
	test_bad(h);
	uh_heap *h2 = NULL;
	if (th_connect(&d, 0, &h2) == 0) {
		test_get_in_block(h, h2);
		uh_disconnect(h2);
	}
	test_log_per_node(h);
	test_damage(h);
	test_packed_damage(h);
	test_readonly(h);
	run_kind(&h, UH_KEY_I64, "smap.i64");
	if (h)
		run_kind(&h, UH_KEY_STRING, "smap.string");
	if (h)
		run_kind(&h, UH_KEY_BYTES, "smap.bytes");
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
