/*
 * test_dt_array.c -- persistent arrays: every element type round trips
 * (extremes included), integer ranges per element type, wrong value
 * types and references of the wrong class are refused and leave the
 * element unchanged, UH_FREE_OLD frees the replaced object in the same
 * step (and not when the same object is stored again), a big array
 * (> 16 KiB: a large object), a set inside an aborted block leaves
 * nothing, content survives a heapd restart and recovery frees nothing of
 * it, and a read-only handle reads it.
 *
 * Concurrency: K=3 processes (this program run again with --writer)
 * repeatedly
 * set all R elements of their own range of one shared i16 array to their
 * next round number, and increment a shared counter element, in one
 * uh_run block each; meanwhile this process scans the whole array in
 * read-only blocks and must always find every range uniform (never half
 * of a block) and the counter equal to the sum of the rounds it sees.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *SUITE = "test_dt_array";
static struct th_heapd d;

enum { BIG = 100000, K = 3, R = 20, ROUNDS = 300 };

static uh_value vi(uint32_t t, int64_t i)
{
	uh_value v = { .type = t };
	v.u.i = i;
	return v;
}

static uh_value vf(uint32_t t, double f)
{
	uh_value v = { .type = t };
	v.u.f = f;
	return v;
}

static uh_value vr(uint32_t t, uh_off r)
{
	uh_value v = { .type = t };
	v.u.ref = r;
	return v;
}

/* set then get must give back want (same type as the element). */
static void round_trip(uh_heap *h, uh_off a, uint64_t i, uh_value in, uh_value want)
{
	uh_value got;

	TH_CHECK_RC(uh_array_set(h, a, i, &in, 0));
	memset(&got, 0xa5, sizeof(got));
	TH_CHECK_RC(uh_array_get(h, a, i, &got));
	TH_CHECK_EQ(got.type, want.type);
	if (want.type == UH_T_F32 || want.type == UH_T_F64)
		TH_CHECK(got.u.f == want.u.f || (isnan(got.u.f) && isnan(want.u.f)));
	else
		TH_CHECK_EQ(got.u.i, want.u.i);
}

static void test_ints(uh_heap *h)
{
	static const struct { uint32_t t; int64_t lo, hi; } r[] = {
		{ UH_T_BOOL, 0, 1 }, { UH_T_I8, INT8_MIN, INT8_MAX },
		{ UH_T_I16, INT16_MIN, INT16_MAX }, { UH_T_I32, INT32_MIN, INT32_MAX },
		{ UH_T_I64, INT64_MIN, INT64_MAX },
	};
	for (size_t k = 0; k < sizeof(r) / sizeof(r[0]); k++) {
		uh_off a;
		uint64_t len = 0;
		uint32_t et = 0;
		uh_value got;

		TH_CHECK_RC(uh_array_new(h, r[k].t, 7, &a));
		TH_CHECK_RC(uh_array_len(h, a, &len));
		TH_CHECK_EQ(len, 7);
		TH_CHECK_RC(uh_array_elem_type(h, a, &et));
		TH_CHECK_EQ(et, r[k].t);
		TH_CHECK_RC(uh_array_get(h, a, 6, &got));	/* zeroed */
		TH_CHECK_EQ(got.type, r[k].t);
		TH_CHECK_EQ(got.u.i, 0);
		round_trip(h, a, 0, vi(r[k].t, r[k].lo), vi(r[k].t, r[k].lo));
		round_trip(h, a, 6, vi(r[k].t, r[k].hi), vi(r[k].t, r[k].hi));
		/* any integer value type fits if in range */
		round_trip(h, a, 3, vi(UH_T_I64, 1), vi(r[k].t, 1));
		round_trip(h, a, 4, vi(UH_T_BOOL, 1), vi(r[k].t, 1));
		/* neighbours untouched by narrow writes */
		TH_CHECK_RC(uh_array_get(h, a, 0, &got));
		TH_CHECK_EQ(got.u.i, r[k].lo);
		TH_CHECK_RC(uh_array_get(h, a, 5, &got));
		TH_CHECK_EQ(got.u.i, 0);
		if (r[k].t != UH_T_I64) {
			uh_value v = vi(UH_T_I64, r[k].hi + 1);
			TH_CHECK_ERR(uh_array_set(h, a, 6, &v, 0), UH_ERANGE);
			TH_CHECK(strstr(uh_errmsg(), "does not fit") != NULL);
			v = vi(UH_T_I64, r[k].lo - 1);
			TH_CHECK_ERR(uh_array_set(h, a, 0, &v, 0), UH_ERANGE);
			TH_CHECK_RC(uh_array_get(h, a, 6, &got));
			TH_CHECK_EQ(got.u.i, r[k].hi);
			TH_CHECK_RC(uh_array_get(h, a, 0, &got));
			TH_CHECK_EQ(got.u.i, r[k].lo);
		}
		uh_value f = vf(UH_T_F64, 1.5);
		TH_CHECK_ERR(uh_array_set(h, a, 1, &f, 0), UH_ETYPE);
		TH_CHECK(strstr(uh_errmsg(), "does not fit") != NULL);
		TH_CHECK_RC(uh_free(h, a));
	}
}

static void test_floats(uh_heap *h)
{
	uh_off a32, a64;
	uh_value v;

	TH_CHECK_RC(uh_array_new(h, UH_T_F32, 5, &a32));
	TH_CHECK_RC(uh_array_new(h, UH_T_F64, 5, &a64));
	round_trip(h, a32, 0, vf(UH_T_F64, 1.5), vf(UH_T_F32, 1.5));
	round_trip(h, a32, 1, vf(UH_T_F32, -FLT_MAX), vf(UH_T_F32, -FLT_MAX));
	round_trip(h, a32, 2, vf(UH_T_F64, INFINITY), vf(UH_T_F32, INFINITY));
	round_trip(h, a32, 3, vf(UH_T_F64, NAN), vf(UH_T_F32, NAN));
	round_trip(h, a32, 4, vf(UH_T_F64, 0.1), vf(UH_T_F32, (double)0.1f));
	v = vf(UH_T_F64, 1e300);
	TH_CHECK_ERR(uh_array_set(h, a32, 0, &v, 0), UH_ERANGE);
	round_trip(h, a64, 0, vf(UH_T_F64, DBL_MAX), vf(UH_T_F64, DBL_MAX));
	round_trip(h, a64, 1, vf(UH_T_F64, -DBL_MIN), vf(UH_T_F64, -DBL_MIN));
	round_trip(h, a64, 2, vf(UH_T_F32, 0.1), vf(UH_T_F64, 0.1));
	round_trip(h, a64, 4, vf(UH_T_F64, -0.0), vf(UH_T_F64, -0.0));
	v = vi(UH_T_I64, 1);
	TH_CHECK_ERR(uh_array_set(h, a64, 0, &v, 0), UH_ETYPE);
	v = vr(UH_T_REF, a32);
	TH_CHECK_ERR(uh_array_set(h, a64, 0, &v, 0), UH_ETYPE);
	TH_CHECK_RC(uh_array_get(h, a32, 0, &v));
	TH_CHECK(v.type == UH_T_F32 && v.u.f == 1.5);
	TH_CHECK_RC(uh_free(h, a32));
	TH_CHECK_RC(uh_free(h, a64));
}

static void test_refs(uh_heap *h)
{
	uh_off ar, as, ab, s1, s2, b1, other;
	uh_value v;
	uint32_t cls;

	TH_CHECK_RC(uh_array_new(h, UH_T_REF, 4, &ar));
	TH_CHECK_RC(uh_array_new(h, UH_T_STRING, 4, &as));
	TH_CHECK_RC(uh_array_new(h, UH_T_BYTES, 4, &ab));
	TH_CHECK_RC(uh_string_new(h, "one", 3, &s1));
	TH_CHECK_RC(uh_string_new(h, "two", 3, &s2));
	TH_CHECK_RC(uh_bytes_new(h, "\0\1", 2, &b1));
	TH_CHECK_RC(uh_array_new(h, UH_T_I8, 1, &other));
	round_trip(h, ar, 0, vr(UH_T_REF, other), vr(UH_T_REF, other));
	round_trip(h, ar, 1, vr(UH_T_STRING, s1), vr(UH_T_REF, s1));	/* any class */
	round_trip(h, ar, 2, vr(UH_T_REF, 0), vr(UH_T_REF, 0));
	round_trip(h, as, 0, vr(UH_T_STRING, s1), vr(UH_T_STRING, s1));
	round_trip(h, as, 1, vr(UH_T_REF, s2), vr(UH_T_STRING, s2));	/* ref to a string */
	round_trip(h, ab, 0, vr(UH_T_BYTES, b1), vr(UH_T_BYTES, b1));
	/* wrong class / not an object / wrong family */
	v = vr(UH_T_REF, b1);
	TH_CHECK_ERR(uh_array_set(h, as, 0, &v, 0), UH_ETYPE);
	TH_CHECK(strstr(uh_errmsg(), "string element") != NULL);
	v = vr(UH_T_STRING, s1);
	TH_CHECK_ERR(uh_array_set(h, ab, 0, &v, 0), UH_ETYPE);
	v = vr(UH_T_REF, other + 8);
	TH_CHECK_ERR(uh_array_set(h, ar, 0, &v, 0), UH_EFREED);
	v = vi(UH_T_I64, (int64_t)s1);
	TH_CHECK_ERR(uh_array_set(h, as, 0, &v, 0), UH_ETYPE);
	TH_CHECK_RC(uh_array_get(h, as, 0, &v));
	TH_CHECK_EQ(v.u.ref, s1);

	/* UH_FREE_OLD: same object again is kept, a replaced one freed */
	v = vr(UH_T_STRING, s1);
	TH_CHECK_RC(uh_array_set(h, as, 0, &v, UH_FREE_OLD));
	TH_CHECK_RC(uh_obj_class(h, s1, &cls));
	uh_off s3;
	TH_CHECK_RC(uh_string_new(h, "three", 5, &s3));
	v = vr(UH_T_STRING, s3);
	TH_CHECK_RC(uh_array_set(h, as, 0, &v, UH_FREE_OLD));
	TH_CHECK_ERR(uh_obj_class(h, s1, &cls), UH_EFREED);
	TH_CHECK_RC(uh_obj_class(h, s3, &cls));
	/* inside an aborted block: nothing happens */
	uh_off s4;
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_string_new(h, "four", 4, &s4));
	v = vr(UH_T_STRING, s4);
	TH_CHECK_RC(uh_array_set(h, as, 0, &v, UH_FREE_OLD));
	TH_CHECK_RC(uh_array_get(h, as, 0, &v));	/* the block sees its write */
	TH_CHECK_EQ(v.u.ref, s4);
	TH_CHECK_RC(uh_abort(h));
	TH_CHECK_RC(uh_array_get(h, as, 0, &v));
	TH_CHECK_EQ(v.u.ref, s3);
	TH_CHECK_RC(uh_obj_class(h, s3, &cls));
	/* null with FREE_OLD frees the old one */
	v = vr(UH_T_STRING, 0);
	TH_CHECK_RC(uh_array_set(h, as, 0, &v, UH_FREE_OLD));
	TH_CHECK_ERR(uh_obj_class(h, s3, &cls), UH_EFREED);
	/* FREE_OLD on a non-ref element is harmless */
	v = vi(UH_T_I8, 3);
	TH_CHECK_RC(uh_array_set(h, other, 0, &v, UH_FREE_OLD));
	TH_CHECK_RC(uh_free(h, ar));
	TH_CHECK_RC(uh_free(h, ab));
	TH_CHECK_RC(uh_free(h, as));
}

static void test_bad(uh_heap *h)
{
	uh_off a, s;
	uh_value v = vi(UH_T_I32, 1), got;
	uint64_t len;

	TH_CHECK_ERR(uh_array_new(h, 0, 4, &a), UH_EINVAL);
	TH_CHECK_ERR(uh_array_new(h, 11, 4, &a), UH_EINVAL);
	TH_CHECK(strstr(uh_errmsg(), "element type") != NULL);
	TH_CHECK_ERR(uh_array_new(h, UH_T_I64, 1ull << 40, &a), UH_EINVAL);
	TH_CHECK_ERR(uh_array_new(h, UH_T_I64, 4, NULL), UH_EINVAL);
	TH_CHECK_RC(uh_array_new(h, UH_T_I32, 0, &a));	/* empty is fine */
	TH_CHECK_RC(uh_array_len(h, a, &len));
	TH_CHECK_EQ(len, 0);
	TH_CHECK_ERR(uh_array_get(h, a, 0, &got), UH_ERANGE);
	TH_CHECK_RC(uh_free(h, a));
	TH_CHECK_RC(uh_array_new(h, UH_T_I32, 3, &a));
	TH_CHECK_ERR(uh_array_get(h, a, 3, &got), UH_ERANGE);
	TH_CHECK(strstr(uh_errmsg(), "index 3 out of range") != NULL);
	TH_CHECK_ERR(uh_array_set(h, a, UINT64_MAX, &v, 0), UH_ERANGE);
	TH_CHECK_ERR(uh_array_set(h, a, 0, NULL, 0), UH_EINVAL);
	TH_CHECK_ERR(uh_array_set(h, a, 0, &v, 0x80), UH_EINVAL);
	TH_CHECK_ERR(uh_array_get(h, a, 0, NULL), UH_EINVAL);
	v.type = 0;
	TH_CHECK_ERR(uh_array_set(h, a, 0, &v, 0), UH_ETYPE);
	v.type = 99;
	TH_CHECK_ERR(uh_array_set(h, a, 0, &v, 0), UH_ETYPE);
	/* not an array */
	TH_CHECK_RC(uh_string_new(h, "x", 1, &s));
	TH_CHECK_ERR(uh_array_len(h, s, &len), UH_ETYPE);
	TH_CHECK_ERR(uh_array_get(h, a + 16, 0, &got), UH_EFREED);
	TH_CHECK_ERR(uh_array_len(h, 0, &len), UH_EFREED);
	TH_CHECK_RC(uh_array_get(h, a, 0, &got));
	TH_CHECK_EQ(got.u.i, 0);	/* unchanged by all of the above */
	TH_CHECK_RC(uh_free(h, a));
	TH_CHECK_ERR(uh_array_len(h, a, &len), UH_EFREED);
	TH_CHECK_RC(uh_free(h, s));
}

/* A big i64 array and a big ref array, published under roots. */
static void make_big(uh_heap *h)
{
	uh_off a, r;
	uh_value v;

	TH_CHECK_RC(uh_array_new(h, UH_T_I64, BIG, &a));
	TH_CHECK_RC(uh_begin(h));
	for (uint64_t i = 0; i < BIG; i += 997) {
		v = vi(UH_T_I64, (int64_t)(i * i) - 5);
		TH_CHECK_RC(uh_array_set(h, a, i, &v, 0));
	}
	v = vi(UH_T_I64, -77);
	TH_CHECK_RC(uh_array_set(h, a, BIG - 1, &v, 0));
	TH_CHECK_RC(uh_root_set(h, "dt_array.big", a));
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_array_new(h, UH_T_STRING, 3000, &r));
	TH_CHECK_RC(uh_begin(h));
	for (uint64_t i = 0; i < 3000; i += 100) {
		uh_off s;
		char buf[32];
		int n = snprintf(buf, sizeof(buf), "s%llu", (unsigned long long)i);
		TH_CHECK_RC(uh_string_new(h, buf, (size_t)n, &s));
		v = vr(UH_T_STRING, s);
		TH_CHECK_RC(uh_array_set(h, r, i, &v, 0));
	}
	TH_CHECK_RC(uh_root_set(h, "dt_array.strs", r));
	TH_CHECK_RC(uh_commit(h));
}

static void check_big(uh_heap *h, const char *when)
{
	uh_off a, r;
	uh_value v;
	uint64_t len = 0;
	int bad = 0;

	printf("checking big arrays %s\n", when);
	TH_CHECK_RC(uh_root_get(h, "dt_array.big", &a));
	TH_CHECK_RC(uh_array_len(h, a, &len));
	TH_CHECK_EQ(len, BIG);
	for (uint64_t i = 0; i + 1 < BIG; i++) {
		int64_t want = i % 997 ? 0 : (int64_t)(i * i) - 5;
		if (uh_array_get(h, a, i, &v) != 0 || v.type != UH_T_I64 || v.u.i != want)
			bad++;
	}
	TH_CHECK_EQ(bad, 0);
	TH_CHECK_RC(uh_array_get(h, a, BIG - 1, &v));
	TH_CHECK_EQ(v.u.i, -77);
	TH_CHECK_RC(uh_root_get(h, "dt_array.strs", &r));
	for (uint64_t i = 0; i < 3000; i++) {
		TH_CHECK_RC(uh_array_get(h, r, i, &v));
		if (i % 100) {
			TH_CHECK_EQ(v.u.ref, 0);
			continue;
		}
		const char *s;
		size_t n;
		char buf[32];
		snprintf(buf, sizeof(buf), "s%llu", (unsigned long long)i);
		TH_CHECK_RC(uh_string_get(h, v.u.ref, &s, &n));
		TH_CHECK(n == strlen(buf) && memcmp(s, buf, n) == 0);
	}
}

static void check_recovery_clean(void)
{
	static char out[1 << 16];
	uint64_t freed = 1, nulled = 1;

	TH_CHECK_EQ(th_heapctl(&d, "status --json", out, sizeof(out)), 0);
	TH_CHECK_EQ(th_find_u64(out, "freed_objects", &freed), 0);
	TH_CHECK_EQ(th_find_u64(out, "nulled_refs", &nulled), 0);
	TH_CHECK_EQ(freed, 0);
	TH_CHECK_EQ(nulled, 0);
}

/* ---- concurrency ---- */

struct round {
	uh_off a;
	int p;
	int64_t r;
};

static int round_body(uh_heap *h, void *arg)
{
	const struct round *x = arg;
	uh_value v = vi(UH_T_I16, x->r), c;
	int rc;

	for (int j = 0; j < R; j++)
		if ((rc = uh_array_set(h, x->a, (uint64_t)(x->p * R + j), &v, 0)) != 0)
			return rc;
	if ((rc = uh_array_get(h, x->a, K * R, &c)) != 0)
		return rc;
	c.u.i++;
	return uh_array_set(h, x->a, K * R, &c, 0);
}

/* A writer process: ROUNDS blocks. Exit code 0 = ok. */
static int writer(const char *sock, uh_off a, int p)
{
	uh_heap *h;
	struct round x = { a, p, 0 };

	if (uh_connect(sock, 0, &h) != 0) {
		fprintf(stderr, "writer %d: connect: %s\n", p, uh_errmsg());
		return 1;
	}
	for (x.r = 1; x.r <= ROUNDS; x.r++) {
		int rc = uh_run(h, round_body, &x, 100000);
		if (rc) {
			fprintf(stderr, "writer %d round %lld: %s: %s\n", p, (long long)x.r,
				uh_strerror(rc), uh_errmsg());
			return 1;
		}
	}
	uh_disconnect(h);
	return 0;
}

struct scan {
	uh_off a;
	int64_t rounds[K];
	char why[200];
};

static int scan_body(uh_heap *h, void *arg)
{
	struct scan *sc = arg;
	uh_value v;
	int64_t sum = 0;
	int rc;

	sc->why[0] = '\0';
	for (int p = 0; p < K; p++) {
		for (int j = 0; j < R; j++) {
			if ((rc = uh_array_get(h, sc->a, (uint64_t)(p * R + j), &v)) != 0)
				return rc;
			if (j == 0)
				sc->rounds[p] = v.u.i;
			else if (v.u.i != sc->rounds[p] && !sc->why[0])
				snprintf(sc->why, sizeof(sc->why), "range %d torn: element %d is "
					 "%lld, element 0 is %lld", p, j, (long long)v.u.i,
					 (long long)sc->rounds[p]);
		}
		sum += sc->rounds[p];
	}
	if ((rc = uh_array_get(h, sc->a, K * R, &v)) != 0)
		return rc;
	if (v.u.i != sum && !sc->why[0])
		snprintf(sc->why, sizeof(sc->why), "counter %lld, rounds add up to %lld",
			 (long long)v.u.i, (long long)sum);
	return 0;
}

static void test_concurrent(uh_heap *h)
{
	struct scan sc = { 0 };
	pid_t pid[K];
	long scans = 0;
	int running = K, bad = 0;

	TH_CHECK_RC(uh_array_new(h, UH_T_I16, K * R + 1, &sc.a));
	for (int p = 0; p < K; p++) {
		char off[32], id[8];
		snprintf(off, sizeof(off), "%llu", (unsigned long long)sc.a);
		snprintf(id, sizeof(id), "%d", p);
		char *argv[] = { (char *)th_bin("test_dt_array"), "--writer", d.sock, off, id,
				 NULL };
		pid[p] = th_spawn(argv, NULL);
		TH_CHECK(pid[p] > 0);
	}
	uint64_t t0 = th_now_ms();
	while (running && th_now_ms() - t0 < 60000) {
		int rc = uh_run(h, scan_body, &sc, 10000);
		if (rc || sc.why[0]) {
			if (bad++ == 0)
				th_fail(__FILE__, __LINE__, "concurrent scan: %s",
					rc ? uh_errmsg() : sc.why);
		}
		scans++;
		for (int p = 0; p < K; p++) {
			int st = pid[p] > 0 ? th_wait_exit_timeout(pid[p], 0) : -2;
			if (st != -2) {
				TH_CHECK_EQ(st, 0);
				pid[p] = 0;
				running--;
			}
		}
	}
	TH_CHECK_EQ(running, 0);
	TH_CHECK_EQ(bad, 0);
	TH_CHECK_RC(uh_run(h, scan_body, &sc, 0));
	for (int p = 0; p < K; p++)
		TH_CHECK_EQ(sc.rounds[p], ROUNDS);
	TH_CHECK(sc.why[0] == '\0');
	printf("concurrent: %d writers x %d blocks, %ld scans\n", K, ROUNDS, scans);
	TH_CHECK_RC(uh_free(h, sc.a));
}

int main(int argc, char **argv)
{
	uh_heap *h = NULL, *ro = NULL;

	if (argc == 5 && !strcmp(argv[1], "--writer"))
		return writer(argv[2], strtoull(argv[3], NULL, 10), atoi(argv[4]));

	printf("%s: no randomness (seed 0)\n", SUITE);
	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		th_fail(__FILE__, __LINE__, "heapd start/connect");
		return th_summary(SUITE);
	}
	test_ints(h);
	test_floats(h);
	test_refs(h);
	test_bad(h);
	test_concurrent(h);
	make_big(h);
	check_big(h, "before restart");
	uh_disconnect(h);
	h = NULL;
	/* The first restart's recovery may reclaim the objects test_bad and
	 * friends left unreachable; the second must find nothing to free. */
	TH_CHECK_EQ(th_heapd_restart(&d), 0);
	TH_CHECK_EQ(th_heapd_restart(&d), 0);
	check_recovery_clean();
	if (th_connect(&d, 0, &h) == 0) {
		check_big(h, "after restart");
		uh_disconnect(h);
	}
	if (th_connect(&d, UH_READONLY, &ro) == 0) {
		uh_off a;
		uh_value v = vi(UH_T_I64, 1);
		TH_CHECK_RC(uh_root_get(ro, "dt_array.big", &a));
		TH_CHECK_ERR(uh_array_set(ro, a, 0, &v, 0), UH_EREADONLY);
		uh_off na;
		TH_CHECK_ERR(uh_array_new(ro, UH_T_I64, 1, &na), UH_EREADONLY);
		check_big(ro, "read-only");
		uh_disconnect(ro);
	}
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
