/*
 * test_dt_smap_scan.c -- sorted-map scans: deleting the entries a scan
 * has handed out while it goes on, a scan beside another session that
 * writes (each batch checked against a model of what may be there), and
 * scans up to a bound (uh_smap_next_until) in every direction, inclusive
 * and exclusive, for i64, string and bytes keys.
 *
 * UH_TEST_SEED=n repeats a run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "uhint.h"

static const char *SUITE = "test_dt_smap_scan";
static struct th_heapd d;
static uint64_t rng;

static uint64_t rnd(void)
{
	return th_xorshift64(&rng);
}

/* The tree's height, from the map header's slot (FORMAT.md 11.4). */
static uint64_t height(uh_heap *h, uh_off m)
{
	return *(const uint64_t *)(h->base + UH_REF_OFFSET(m) + 16 + 3 * 16 + 8);
}

static void long_key(int i, char *buf, uh_key *k)
{
	memset(k, 0, sizeof(*k));
	k->kind = UH_KEY_STRING;
	k->len = (size_t)snprintf(buf, 64, "scan-and-delete-long-key-%04d-xxxxxxxxxx", i);
	k->data = buf;
}

/* Scan and delete every entry as it is returned: outside a block (each
 * call its own block: the scan goes on after the removed anchor via the
 * entry that followed it), inside one, in both directions. */
static void test_scan_delete(uh_heap *h)
{
	enum { N = 200 };
	uh_off m = 0;
	char buf[64], got[64];
	uh_key k;
	uh_value v = { .type = UH_T_I64 };
	uh_iter it;
	uint64_t len = 1;

	TH_CHECK_RC(uh_smap_new(h, UH_KEY_STRING, &m));
	for (int mode = 0; mode < 4; mode++) {
		int rev = mode & 1, in_block = mode >> 1, n = 0, rc;
		for (int i = 0; i < N; i++) {
			long_key(i, buf, &k);
			v.u.i = i;
			TH_CHECK_RC(uh_smap_put(h, m, &k, &v, 0));
		}
		if (in_block)
			TH_CHECK_RC(uh_begin(h));
		TH_CHECK_RC(uh_smap_scan(h, m, NULL, rev ? UH_SCAN_REVERSE : 0, &it));
		while ((rc = uh_smap_next(h, m, &it, &k, &v)) == 0) {
			int want = rev ? N - 1 - n : n;
			if (v.u.i != want)
				break;
			snprintf(got, sizeof(got), "%.*s", (int)k.len, (const char *)k.data);
			uh_key kc = { .kind = UH_KEY_STRING, .data = got, .len = k.len };
			if (uh_smap_remove(h, m, &kc, NULL, 0) != 0)
				break;
			n++;
		}
		TH_CHECK_ERR(rc, UH_ENOTFOUND);
		TH_CHECK_EQ(n, N);
		if (in_block)
			TH_CHECK_RC(uh_commit(h));
		TH_CHECK_RC(uh_smap_len(h, m, &len));
		TH_CHECK_EQ(len, 0);
		TH_CHECK_RC(uh_smap_check(h, m));
	}
	/* Scans from every key, both ways: the first two entries. */
	for (int i = 0; i < N; i++) {
		long_key(i, buf, &k);
		v.u.i = i;
		TH_CHECK_RC(uh_smap_put(h, m, &k, &v, 0));
	}
	int bad = 0;
	for (int i = 0; i < N; i++) {
		for (int rev = 0; rev < 2; rev++) {
			long_key(i, buf, &k);
			if (uh_smap_scan(h, m, &k, rev ? UH_SCAN_REVERSE : 0, &it) != 0 ||
			    uh_smap_next(h, m, &it, &k, &v) != 0 || v.u.i != i)
				bad++;
			int rc = uh_smap_next(h, m, &it, &k, &v);
			int want = rev ? i - 1 : i + 1;
			if (want < 0 || want >= N ? rc != UH_ENOTFOUND : (rc != 0 || v.u.i != want))
				bad++;
		}
	}
	TH_CHECK_EQ(bad, 0);
	for (int i = 0; i < N; i++) {
		long_key(i, buf, &k);
		TH_CHECK_RC(uh_smap_remove(h, m, &k, NULL, 0));
	}
	/* The returned key and the one after it both removed: the scan
	 * cannot know where it was (keys longer than the 16 bytes it keeps). */
	for (int i = 0; i < 5; i++) {
		long_key(i, buf, &k);
		TH_CHECK_RC(uh_smap_put(h, m, &k, &v, 0));
	}
	TH_CHECK_RC(uh_smap_scan(h, m, NULL, 0, &it));
	TH_CHECK_RC(uh_smap_next(h, m, &it, &k, &v));
	for (int i = 0; i < 2; i++) {
		long_key(i, buf, &k);
		TH_CHECK_RC(uh_smap_remove(h, m, &k, NULL, 0));
	}
	TH_CHECK_ERR(uh_smap_next(h, m, &it, &k, &v), UH_ESTATE);
	TH_CHECK(strstr(uh_errmsg(), "lost its place") != NULL);
	/* Short keys: the copied prefix is the whole key. */
	uh_off mi = 0;
	TH_CHECK_RC(uh_smap_new(h, UH_KEY_BYTES, &mi));
	for (int i = 0; i < 5; i++) {
		buf[0] = (char)i;
		uh_key kb = { .kind = UH_KEY_BYTES, .data = buf, .len = 1 };
		TH_CHECK_RC(uh_smap_put(h, mi, &kb, &v, 0));
	}
	TH_CHECK_RC(uh_smap_scan(h, mi, NULL, 0, &it));
	TH_CHECK_RC(uh_smap_next(h, mi, &it, &k, &v));
	for (int i = 0; i < 2; i++) {
		buf[0] = (char)i;
		uh_key kb = { .kind = UH_KEY_BYTES, .data = buf, .len = 1 };
		TH_CHECK_RC(uh_smap_remove(h, mi, &kb, NULL, 0));
	}
	TH_CHECK_RC(uh_smap_next(h, mi, &it, &k, &v));
	TH_CHECK(k.len == 1 && ((const char *)k.data)[0] == 2);
}

/* ---- a scan beside a writer, checked against a model ----
 *
 * Session h scans (both directions) while session h2, between every two
 * steps, puts and removes keys, sometimes the key just returned or the
 * one after it. Each step must return what the scan's contract says
 * (smap_scan.c): the next key after the last one returned if that
 * key is still there. If it was removed: a key of at most 32 bytes is
 * kept whole by the scan, which goes on after it as before; a longer one
 * is kept by its key object, and the scan goes on at the key that
 * followed it when it was returned, if that one is still there (else the
 * end, if none followed it, or UH_ESTATE). The scans run three times:
 * with keys of 10 bytes (inline in packed leaves), of 27 bytes (long in
 * leaves, whole in the scan) and of 44 bytes (long in both), about 1500
 * keys each time: many leaves, so steps stay in a leaf, cross to the next
 * one, and fall back to the general path after a change. A key removed
 * is never put again in the same scan. Scans (each on a fresh set of
 * keys) run until 3000 steps.
 * Every other pair of scans takes its steps in batches (uh_smap_next_n,
 * up to 40 entries): each batch must be the next present keys in order,
 * the first one as a single step's. */

#define IS_N 3000

static const char *is_fmt = "interleaved-scan-key-%06d";

static void is_key(int i, char *buf, uh_key *k)
{
	memset(k, 0, sizeof(*k));
	k->kind = UH_KEY_STRING;
	k->len = (size_t)snprintf(buf, 64, is_fmt, i);
	k->data = buf;
}

/* A number below n from the high bits of rnd() (its low bits repeat
 * patterns from one call to the next). */
static int is_rnd(int n)
{
	return (int)((rnd() >> 32) % (uint64_t)n);
}

/* The present key after (rev: before) i, or -1. */
static int is_after(const unsigned char *present, int i, int rev)
{
	for (int j = rev ? i - 1 : i + 1; j >= 0 && j < IS_N; j += rev ? -1 : 1)
		if (present[j])
			return j;
	return -1;
}

/* The n entries of a batch whose first should be want: each the present
 * key after the one before it, with its value. The last one, or -3. */
static int is_batch_ok(const unsigned char *present, int want, int rev, const uh_key *ks,
		       const uh_value *vs, uint32_t n)
{
	char got[64], buf[64];
	uh_key k;

	for (uint32_t j = 0; j < n; j++) {
		if (j)
			want = is_after(present, want, rev);
		snprintf(got, sizeof(got), "%.*s", (int)ks[j].len, (const char *)ks[j].data);
		if (want < 0 || vs[j].u.i != want)
			return -3;
		is_key(want, buf, &k);
		if (strcmp(got, buf) != 0)
			return -3;
	}
	return want;
}

/* in_block: each scan runs in a block of h, and the changes between its
 * steps are the block's own (h2 is h). Then the key returned last stays
 * readable whatever the block does (a key object the block removes is
 * freed at commit, one it made is its own), and the scan goes on right
 * after it: a scan in a block never loses its place. */
static void scan_beside_writer(uh_heap *h, uh_heap *h2, int in_block)
{
	static unsigned char present[IS_N], removed[IS_N];
	char buf[64];
	uh_value v = { .type = UH_T_I64 }, vs[40];
	uh_off m = 0;
	uh_key k, ks[40];
	uh_iter it;
	uint32_t n, batched = 0;
	int bad = 0, steps = 0, estate = 0;

	char k0[64];
	is_key(0, k0, &k);
	int whole = k.len <= 32;	/* the scan keeps the key it returned last */
	memset(present, 0, sizeof(present));	/* a new map */
	TH_CHECK_RC(uh_smap_new(h, UH_KEY_STRING, &m));
	for (int round = 0; (round < 4 || steps < 3000) && round < 64 && !bad; round++) {
		int rev = round & 1;
		memset(removed, 0, sizeof(removed));
		for (int i = 0; i < IS_N; i++) {
			int want = i % 2 == 0;
			is_key(i, buf, &k);
			v.u.i = i;
			if (want && !present[i])
				TH_CHECK_RC(uh_smap_put(h, m, &k, &v, 0));
			else if (!want && present[i])
				TH_CHECK_RC(uh_smap_remove(h, m, &k, NULL, 0));
			present[i] = (unsigned char)want;
		}
		if (in_block)
			TH_CHECK_RC(uh_begin(h));
		TH_CHECK_RC(uh_smap_scan(h, m, NULL, rev ? UH_SCAN_REVERSE : 0, &it));
		int last = -1, succ = -1, rc;
		while (!bad) {
			if (last >= 0) {
				for (int c = is_rnd(3); c > 0; c--) {	/* h2's changes */
					int pick = is_rnd(16), i;
					/* Both the last key and its successor gone
					 * ends the scan: rarely. */
					int both = present[last] || is_rnd(8) == 0;
					if (pick == 0)
						i = last;
					else if (pick == 1 && succ >= 0 && both)
						i = succ;
					else
						i = is_rnd(IS_N);
					is_key(i, buf, &k);
					v.u.i = i;
					if (present[i]) {
						TH_CHECK_RC(uh_smap_remove(h2, m, &k, NULL, 0));
						present[i] = 0;
						removed[i] = 1;
					} else if (!removed[i]) {
						TH_CHECK_RC(uh_smap_put(h2, m, &k, &v, 0));
						present[i] = 1;
					}
				}
			}
			int want;	/* -1 the end, -2 UH_ESTATE */
			if (last < 0)
				want = is_after(present, rev ? IS_N : -1, rev);
			else if (present[last] || in_block || whole)	/* note above */
				want = is_after(present, last, rev);
			else if (succ < 0)
				want = -1;
			else
				want = present[succ] ? succ : -2;
			uint32_t max = round & 2 ? 1 + (uint32_t)is_rnd(40) : 1;
			vs[0].u.i = -1;
			rc = uh_smap_next_n(h, m, &it, ks, vs, max, &n);
			steps++;
			if (want == -1 ? rc != UH_ENOTFOUND : want == -2 ? rc != UH_ESTATE :
			    rc != 0 || n < 1 || n > max) {
				printf("  step %d (%s): want %d, got rc %d value %lld\n", steps,
				       rev ? "reverse" : "forward", want, rc, (long long)vs[0].u.i);
				bad++;
			}
			if (rc != 0 || bad)
				break;
			batched += n > 1;
			if ((last = is_batch_ok(present, want, rev, ks, vs, n)) < 0) {
				printf("  step %d (%s): a batch of %u from %d is not the next keys\n",
				       steps, rev ? "reverse" : "forward", n, want);
				bad++;
				break;
			}
			succ = is_after(present, last, rev);
		}
		estate += rc == UH_ESTATE;
		if (in_block)
			TH_CHECK_RC(uh_commit(h));
	}
	TH_CHECK_EQ(bad, 0);
	TH_CHECK(steps >= 3000);
	TH_CHECK(batched >= 100);
	printf("  scan beside a writer%s, %zu-byte keys: %d steps (%u batches of more than one), "
	       "%d scans lost their place\n", in_block ? " (in a block, its own changes)" : "",
	       k.len, steps, batched, estate);
	TH_CHECK_RC(uh_smap_check(h, m));
}

static void test_scan_beside_writer(uh_heap *h, uh_heap *h2)
{
	static const char *fmts[] = { "isk-%06d", "interleaved-scan-key-%06d",
				      "interleaved-scan-key-that-is-long-too-%06d" };

	for (int f = 0; f < 3; f++) {
		is_fmt = fmts[f];
		scan_beside_writer(h, h2, 0);
		scan_beside_writer(h, h, 1);
	}
}
/* ---- a scan up to a bound (uh_smap_next_until) ----
 *
 * Keys 0, 2, ..., 2 (UN - 1) (i64; or "u%05d" as string and bytes keys,
 * which sort as the numbers do), 150 of them: several leaves. Every scan
 * from a start (none, a key, between keys) in both directions, to a
 * bound before the first key, at the first, at a key, between keys, at
 * the last and after it, exclusive and inclusive, in batches of 1, 7 and
 * 40 (and once without keys[]), must return exactly the model's keys. */

#define UN 150

static void un_key(uint32_t kind, int64_t x, char *buf, uh_key *k)
{
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->i64 = x;
	if (kind != UH_KEY_I64) {
		/* negative and past-the-end bounds stay in order: "-" < "0" < "u" */
		if (x < 0)
			k->len = (size_t)snprintf(buf, 16, "-");
		else
			k->len = (size_t)snprintf(buf, 16, "u%05lld", (long long)x);
		k->data = buf;
	}
}

/* The model: does even x come next in a scan from f (or an end) to b? */
static int un_in(int64_t x, int has_f, int64_t f, int64_t b, int rev, int incl)
{
	if (has_f && (rev ? x > f : x < f))
		return 0;
	return rev ? (incl ? x >= b : x > b) : (incl ? x <= b : x < b);
}

static void un_scan(uh_heap *h, uh_off m, uint32_t kind, int has_f, int64_t f, int64_t b,
		    int rev, int incl, uint32_t batch, int no_keys)
{
	char fb[16], bb[16];
	uh_key fk, bk, ks[40];
	uh_value vs[40];
	uh_iter it;
	uint32_t n;
	int64_t want = rev ? 2 * (UN - 1) : 0;
	int rc, bad = 0;

	un_key(kind, f, fb, &fk);
	un_key(kind, b, bb, &bk);
	TH_CHECK_RC(uh_smap_scan(h, m, has_f ? &fk : NULL, rev ? UH_SCAN_REVERSE : 0, &it));
	while (has_f && want >= 0 && want < 2 * UN && (rev ? want > f : want < f))
		want += rev ? -2 : 2;	/* bound: UN; before the start */
	for (;;) {	/* bound: UN entries */
		rc = uh_smap_next_until(h, m, &it, &bk, incl ? UH_SCAN_INCLUSIVE : 0,
					no_keys ? NULL : ks, vs, batch, &n);
		if (rc)
			break;
		for (uint32_t j = 0; j < n; j++) {
			if (want < 0 || want >= 2 * UN || !un_in(want, has_f, f, b, rev, incl) ||
			    vs[j].u.i != want)
				bad = 1;
			want += rev ? -2 : 2;
		}
		if (bad)
			break;
	}
	TH_CHECK_ERR(rc, UH_ENOTFOUND);
	TH_CHECK(n == 0);
	/* Every entry the model has was returned, and the scan stays over. */
	TH_CHECK(!bad && !(want >= 0 && want < 2 * UN && un_in(want, has_f, f, b, rev, incl)));
	if (bad || (want >= 0 && want < 2 * UN && un_in(want, has_f, f, b, rev, incl)))
		printf("  kind %u from %s%lld to %lld rev %d incl %d batch %u: wrong at %lld\n",
		       kind, has_f ? "" : "(none) ", (long long)f, (long long)b, rev, incl, batch,
		       (long long)want);
	TH_CHECK_ERR(uh_smap_next_until(h, m, &it, &bk, 0, ks, vs, batch, &n), UH_ENOTFOUND);
}

static void test_scan_until(uh_heap *h)
{
	static const uint32_t kinds[] = { UH_KEY_I64, UH_KEY_STRING, UH_KEY_BYTES };
	static const int64_t bounds[] = { -1, 0, 50, 51, 2 * (UN - 1), 2 * UN + 1 };
	static const int64_t froms[] = { 0, 60, 61, 2 * (UN - 1) };
	static const uint32_t batches[] = { 1, 7, 40 };
	char buf[16];

	for (size_t ki = 0; ki < 3; ki++) {
		uint32_t kd = kinds[ki];
		uh_value v = { .type = UH_T_I64 };
		uh_off m = 0;
		uh_key k;

		TH_CHECK_RC(uh_smap_new(h, kd, &m));
		for (int i = 0; i < UN; i++) {
			un_key(kd, 2 * i, buf, &k);
			v.u.i = 2 * i;
			TH_CHECK_RC(uh_smap_put(h, m, &k, &v, 0));
		}
		TH_CHECK(height(h, m) >= 2);
		for (size_t bi = 0; bi < sizeof(bounds) / sizeof(bounds[0]); bi++)
			for (int rev = 0; rev < 2; rev++)
				for (int incl = 0; incl < 2; incl++) {
					for (size_t si = 0; si < 3; si++)
						un_scan(h, m, kd, 0, 0, bounds[bi], rev, incl,
							batches[si], 0);
					for (size_t fi = 0; fi < 4; fi++)
						un_scan(h, m, kd, 1, froms[fi], bounds[bi], rev,
							incl, batches[fi % 3], fi == 3);
				}
		/* No bound: the whole map; a bound of another kind: UH_ETYPE. */
		uh_iter it;
		uh_key ks[40], other = { .kind = kd == UH_KEY_I64 ? UH_KEY_STRING : UH_KEY_I64,
					  .data = "x", .len = 1 };
		uint32_t n, total = 0;
		TH_CHECK_RC(uh_smap_scan(h, m, NULL, 0, &it));
		while (uh_smap_next_until(h, m, &it, NULL, 0, ks, NULL, 40, &n) == 0)
			total += n;	/* bound: UN entries */
		TH_CHECK_EQ(total, UN);
		TH_CHECK_RC(uh_smap_scan(h, m, NULL, 0, &it));
		TH_CHECK_ERR(uh_smap_next_until(h, m, &it, &other, 0, ks, NULL, 40, &n), UH_ETYPE);
		TH_CHECK_ERR(uh_smap_next_until(h, m, &it, &other, 0, ks, NULL, 40, &n),
			     UH_ENOTFOUND);
	}
}

int main(void)
{
	const char *seed_env = getenv("UH_TEST_SEED");
	uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL);
	uh_heap *h = NULL, *h2 = NULL;

	printf("%s: seed %llu (UH_TEST_SEED to repeat)\n", SUITE, (unsigned long long)seed);
	rng = seed * 2654435761u + 1;
	if (th_heapd_start(&d, "--size 256M") != 0 || th_connect(&d, 0, &h) != 0) {
		th_heapd_cleanup(&d);
		return 1;
	}
	test_scan_delete(h);
	if (th_connect(&d, 0, &h2) == 0) {
		test_scan_beside_writer(h, h2);
		uh_disconnect(h2);
	}
	test_scan_until(h);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
