/*
 * test_dt_map.c -- persistent hash maps against an in-memory model.
 *
 * Property test: three maps (string, bytes and i64 keys, including the
 * empty key, a key of exactly UH_KEY_MAX_LEN bytes, multi-byte UTF-8,
 * bytes with zeros, INT64_MIN/MAX) get a long random sequence of put /
 * get / remove / len / next, single or grouped in user blocks that commit
 * or abort, with values of several types (strings as fresh objects the
 * map's entries own, freed with UH_FREE_OLD). Every step's result is
 * checked against the model, and len after every step; the sequence
 * drives each map to ~2000 entries (8 resizes from 8 buckets) and back.
 * Every phase ends with uh_map_check, a full get of every key and a full
 * iteration (each live key exactly once); between phases heapd is
 * restarted, its recovery must free 0 objects and null 0 references (no
 * garbage), and the sequence continues on a new connection.
 *
 * Iteration under own changes: removing each entry just returned, the
 * iteration still visits every entry (none skipped), returns only live
 * ones, and the map is empty after.
 *
 * Bounded steps: growing a map to 6000 entries, no single put logs more
 * than 8 KiB (the resize work is spread over later puts).
 *
 * Bad input: wrong key kind, oversized key, invalid UTF-8, NULL key or
 * value, bad value types, unknown flags, wrong or freed object as the
 * map, an iterator of another map, a read-only handle: each its
 * documented error with a message, and the map unchanged.
 *
 * UH_TEST_SEED=n replays a run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static const char *SUITE = "test_dt_map";
static struct th_heapd d;

enum { NKINDS = 3, NKEYS = 3000, PHASES = 4, STEPS = 2500 };

struct mkey {
	uh_key k;
	unsigned char *buf;	/* owned data of string/bytes keys */
};

struct mval {
	int present;
	uh_value v;
	char s[24];		/* text of a string value */
};

struct mmap {
	uint32_t kind;
	const char *root;
	uh_off m;
	struct mkey keys[NKEYS];
	int *order;		/* key indexes sorted by key, for lookups */
	struct mval vals[NKEYS];
	uint64_t n;		/* live entries in the model */
};

static struct mmap maps[NKINDS];
static uint64_t rng;
static uint64_t nstr;

static uint64_t rnd(void)
{
	return th_xorshift64(&rng);
}

/* ---- key pools ---- */

static void make_string_key(struct mkey *k, int i)
{
	char tmp[64];
	size_t len;

	if (i == 0) {
		len = 0;	/* the empty key */
	} else if (i == 1) {
		len = UH_KEY_MAX_LEN;	/* the longest key */
	} else if (i % 7 == 0) {
		len = (size_t)snprintf(tmp, sizeof(tmp), "\xd0\xba\xd0\xbb\xd1\x8e\xd1\x87-%d-\xe2\x82\xac", i);
	} else {
		len = (size_t)snprintf(tmp, sizeof(tmp), "key.%d", i);
	}
	k->buf = malloc(len + 1);
	if (i == 1)
		memset(k->buf, 'x', len);
	else
		memcpy(k->buf, tmp, len);
	k->k.kind = UH_KEY_STRING;
	k->k.data = k->buf;
	k->k.len = len;
}

static void make_bytes_key(struct mkey *k, int i)
{
	size_t len = i == 0 ? 0 : 4 + (size_t)(rnd() % 37);

	k->buf = malloc(len + 1);
	for (size_t j = 0; j < len; j++)
		k->buf[j] = j < 4 ? (unsigned char)(i >> (8 * j)) : (unsigned char)(rnd() % 3);
	k->k.kind = UH_KEY_BYTES;
	k->k.data = k->buf;
	k->k.len = len;
}

static void make_i64_key(struct mkey *k, int i)
{
	k->k.kind = UH_KEY_I64;
	k->k.i64 = i == 1 ? INT64_MIN : i == 2 ? INT64_MAX : i == 3 ? -1 :
		   (int64_t)((uint64_t)i * 0x9E3779B97F4A7C15ull);
}

static int key_cmp(const uh_key *a, const uh_key *b)
{
	if (a->kind == UH_KEY_I64)
		return a->i64 < b->i64 ? -1 : a->i64 > b->i64;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = n ? memcmp(a->data, b->data, n) : 0;
	return c ? c : (a->len < b->len ? -1 : a->len > b->len);
}

static struct mmap *sort_map;
static int by_key(const void *a, const void *b)
{
	return key_cmp(&sort_map->keys[*(const int *)a].k, &sort_map->keys[*(const int *)b].k);
}

/* Index of key k in map mm's pool, or -1. */
static int key_index(struct mmap *mm, const uh_key *k)
{
	int lo = 0, hi = NKEYS - 1;

	if (k->kind != mm->kind)
		return -1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = key_cmp(&mm->keys[mm->order[mid]].k, k);
		if (c == 0)
			return mm->order[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static void make_pools(void)
{
	static const char *roots[NKINDS] = { "dt_map.s", "dt_map.b", "dt_map.i" };
	static const uint32_t kinds[NKINDS] = { UH_KEY_STRING, UH_KEY_BYTES, UH_KEY_I64 };

	for (int t = 0; t < NKINDS; t++) {
		struct mmap *mm = &maps[t];
		mm->kind = kinds[t];
		mm->root = roots[t];
		mm->order = malloc(NKEYS * sizeof(int));
		for (int i = 0; i < NKEYS; i++) {
			if (t == 0)
				make_string_key(&mm->keys[i], i);
			else if (t == 1)
				make_bytes_key(&mm->keys[i], i);
			else
				make_i64_key(&mm->keys[i], i);
			mm->order[i] = i;
		}
		sort_map = mm;
		qsort(mm->order, NKEYS, sizeof(int), by_key);
	}
}

/* ---- values ---- */

static int same_value(uh_heap *h, const struct mval *mv, const uh_value *v)
{
	if (v->type != mv->v.type)
		return 0;
	if (v->type == UH_T_F64)
		return memcmp(&v->u.f, &mv->v.u.f, 8) == 0;
	if (v->u.i != mv->v.u.i)
		return 0;
	if (v->type != UH_T_STRING)
		return 1;
	const char *s;
	size_t len;
	return uh_string_get(h, v->u.ref, &s, &len) == 0 && len == strlen(mv->s) &&
	       memcmp(s, mv->s, len) == 0;
}

/* A random value; string values are new objects (made in the caller's
 * block, so they commit or vanish with the put). */
static int random_value(uh_heap *h, struct mval *out)
{
	memset(out, 0, sizeof(*out));
	switch (rnd() % 5) {
	case 0: out->v.type = UH_T_I64; out->v.u.i = (int64_t)rnd(); break;
	case 1: out->v.type = UH_T_F64; out->v.u.f = (double)(rnd() % 100000) / 7.0; break;
	case 2: out->v.type = UH_T_BOOL; out->v.u.i = (int64_t)(rnd() & 1); break;
	case 3: out->v.type = UH_T_I32; out->v.u.i = (int32_t)rnd(); break;
	default:
		snprintf(out->s, sizeof(out->s), "val.%llu", (unsigned long long)nstr++);
		out->v.type = UH_T_STRING;
		return uh_string_new(h, out->s, strlen(out->s), &out->v.u.ref);
	}
	return 0;
}

/* ---- checks ---- */

static int check_len(uh_heap *h, struct mmap *mm, const char *when, long step)
{
	uint64_t len = 0;
	int rc = uh_map_len(h, mm->m, &len);

	if (rc == 0 && len == mm->n)
		return 1;
	th_fail(__FILE__, __LINE__, "%s %s step %ld: len rc %d, %llu != model %llu (%s)",
		mm->root, when, step, rc, (unsigned long long)len, (unsigned long long)mm->n,
		uh_errmsg());
	return 0;
}

/* A whole iteration returns every live key exactly once, with its value. */
static void check_iter(uh_heap *h, struct mmap *mm, const char *when)
{
	static unsigned char seen[NKEYS];
	uh_iter it;
	uh_key k;
	uh_value v;
	uint64_t got = 0;
	int rc, bad = 0;

	memset(&it, 0, sizeof(it));
	memset(seen, 0, sizeof(seen));
	while ((rc = uh_map_next(h, mm->m, &it, &k, &v)) == 0 && got <= NKEYS) {
		int i = key_index(mm, &k);
		got++;
		if (i < 0 || !mm->vals[i].present || seen[i]++ || !same_value(h, &mm->vals[i], &v))
			bad++;
	}
	if (rc == UH_ENOTFOUND && got == mm->n && !bad) {
		th_passed++;
		return;
	}
	th_fail(__FILE__, __LINE__, "%s %s: iteration rc %d (%s), %llu entries, model %llu, "
		"%d wrong", mm->root, when, rc, uh_errmsg(), (unsigned long long)got,
		(unsigned long long)mm->n, bad);
}

/* uh_map_check, get of every key of the pool, a full iteration. */
static void check_all(uh_heap *h, struct mmap *mm, const char *when)
{
	int bad = 0, rc;
	uh_value v;

	TH_CHECK_RC(uh_map_check(h, mm->m));
	check_len(h, mm, when, -1);
	for (int i = 0; i < NKEYS; i++) {
		rc = uh_map_get(h, mm->m, &mm->keys[i].k, &v);
		if (mm->vals[i].present ? rc != 0 || !same_value(h, &mm->vals[i], &v) :
					  rc != UH_ENOTFOUND) {
			if (!bad++)
				th_fail(__FILE__, __LINE__, "%s %s: key %d: get rc %d (%s), "
					"model has it: %d", mm->root, when, i, rc, uh_errmsg(),
					mm->vals[i].present);
		}
	}
	if (!bad)
		th_passed++;
	check_iter(h, mm, when);
}

/* ---- the random sequence ---- */

/* Put key i (value made in the same block): 0 or the error. */
static int do_put(uh_heap *h, struct mmap *mm, int i, struct mval *nv)
{
	int rc = uh_begin(h);

	if (rc)
		return rc;
	if ((rc = random_value(h, nv)) != 0 ||
	    (rc = uh_map_put(h, mm->m, &mm->keys[i].k, &nv->v, UH_FREE_OLD)) != 0) {
		uh_abort(h);
		return rc;
	}
	return uh_commit(h);
}

static void step_put(uh_heap *h, struct mmap *mm, int i, long step)
{
	struct mval nv;
	int rc = do_put(h, mm, i, &nv);

	if (rc) {
		th_fail(__FILE__, __LINE__, "%s step %ld: put key %d: %s: %s", mm->root, step, i,
			uh_strerror(rc), uh_errmsg());
		return;
	}
	if (!mm->vals[i].present)
		mm->n++;
	mm->vals[i] = nv;
	mm->vals[i].present = 1;
}

static void step_remove(uh_heap *h, struct mmap *mm, int i, long step)
{
	uh_value old;
	int rc = uh_map_remove(h, mm->m, &mm->keys[i].k, &old, UH_FREE_OLD);

	if (!mm->vals[i].present) {
		if (rc != UH_ENOTFOUND)
			th_fail(__FILE__, __LINE__, "%s step %ld: remove absent key %d: rc %d",
				mm->root, step, i, rc);
		return;
	}
	/* old's string (if any) is freed now: compare type and offset only */
	if (rc != 0 || old.type != mm->vals[i].v.type || old.u.i != mm->vals[i].v.u.i) {
		th_fail(__FILE__, __LINE__, "%s step %ld: remove key %d: rc %d (%s), old type %u",
			mm->root, step, i, rc, uh_errmsg(), old.type);
		return;
	}
	mm->vals[i].present = 0;
	mm->n--;
}

static void step_get(uh_heap *h, struct mmap *mm, int i, long step)
{
	uh_value v;
	int rc = uh_map_get(h, mm->m, &mm->keys[i].k, &v);

	if (mm->vals[i].present ? rc == 0 && same_value(h, &mm->vals[i], &v) : rc == UH_ENOTFOUND)
		return;
	th_fail(__FILE__, __LINE__, "%s step %ld: get key %d: rc %d (%s), model has it: %d",
		mm->root, step, i, rc, uh_errmsg(), mm->vals[i].present);
}

/* A user block of a put and a remove that is aborted: nothing changes. */
static void step_aborted(uh_heap *h, struct mmap *mm, int i, int j, long step)
{
	struct mval nv;
	uh_value v;

	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(random_value(h, &nv));
	TH_CHECK_RC(uh_map_put(h, mm->m, &mm->keys[i].k, &nv.v, 0));
	TH_CHECK_RC(uh_map_get(h, mm->m, &mm->keys[i].k, &v));	/* sees its own put */
	int rc = uh_map_remove(h, mm->m, &mm->keys[j].k, NULL, 0);
	if (rc != ((mm->vals[j].present || i == j) ? 0 : UH_ENOTFOUND))
		th_fail(__FILE__, __LINE__, "%s step %ld: remove in block: rc %d", mm->root,
			step, rc);
	TH_CHECK_RC(uh_abort(h));
	step_get(h, mm, i, step);
	step_get(h, mm, j, step);
}

static void run_steps(uh_heap *h, struct mmap *mm, int phase)
{
	/* phases 0, 1 grow; 2 shrinks; 3 churns */
	unsigned put_pct = phase < 2 ? 70 : phase == 2 ? 25 : 45;
	unsigned rm_pct = phase < 2 ? 8 : phase == 2 ? 55 : 35;

	for (long s = 0; s < STEPS; s++) {
		long step = phase * STEPS + s;
		int i = (int)(rnd() % NKEYS);
		unsigned p = (unsigned)(rnd() % 100);
		if (p < put_pct)
			step_put(h, mm, i, step);
		else if (p < put_pct + rm_pct)
			step_remove(h, mm, i, step);
		else if (p < 97)
			step_get(h, mm, i, step);
		else
			step_aborted(h, mm, i, (int)(rnd() % NKEYS), step);
		if (!check_len(h, mm, "sequence", step))
			return;
		if (s % 700 == 350)
			check_iter(h, mm, "mid-phase");
	}
}

/* Restart heapd; its recovery must find no garbage. Reconnect. */
static int restart(uh_heap **h)
{
	static char out[1 << 16];
	uint64_t freed = 1, nulled = 1;

	uh_disconnect(*h);
	*h = NULL;
	if (th_heapd_restart(&d) != 0 || th_connect(&d, 0, h) != 0) {
		th_fail(__FILE__, __LINE__, "heapd restart");
		return -1;
	}
	TH_CHECK_EQ(th_heapctl(&d, "status --json", out, sizeof(out)), 0);
	TH_CHECK_EQ(th_find_u64(out, "freed_objects", &freed), 0);
	TH_CHECK_EQ(th_find_u64(out, "nulled_refs", &nulled), 0);
	TH_CHECK_EQ(freed, 0);
	TH_CHECK_EQ(nulled, 0);
	for (int t = 0; t < NKINDS; t++)
		TH_CHECK_RC(uh_root_get(*h, maps[t].root, &maps[t].m));
	return 0;
}

static void test_property(uh_heap **h)
{
	for (int t = 0; t < NKINDS; t++) {
		uint32_t kind = 0;
		TH_CHECK_RC(uh_map_new(*h, maps[t].kind, &maps[t].m));
		TH_CHECK_RC(uh_root_set(*h, maps[t].root, maps[t].m));
		TH_CHECK_RC(uh_map_key_kind(*h, maps[t].m, &kind));
		TH_CHECK_EQ(kind, maps[t].kind);
		check_all(*h, &maps[t], "new");
	}
	for (int phase = 0; phase < PHASES; phase++) {
		for (int t = 0; t < NKINDS; t++) {
			run_steps(*h, &maps[t], phase);
			check_all(*h, &maps[t], "phase end");
		}
		printf("phase %d: entries %llu / %llu / %llu\n", phase,
		       (unsigned long long)maps[0].n, (unsigned long long)maps[1].n,
		       (unsigned long long)maps[2].n);
		if (restart(h) != 0)
			return;
		for (int t = 0; t < NKINDS; t++)
			check_all(*h, &maps[t], "after restart");
	}
}

/* Iterate, removing each entry just returned: none skipped, none dead. */
static void test_iter_remove(uh_heap *h)
{
	struct mmap *mm = &maps[2];
	static unsigned char seen[NKEYS];
	uh_iter it;
	uh_key k;
	int rc, bad = 0;
	uint64_t got = 0, want = mm->n;

	memset(&it, 0, sizeof(it));
	memset(seen, 0, sizeof(seen));
	while ((rc = uh_map_next(h, mm->m, &it, &k, NULL)) == 0 && got <= 4 * NKEYS) {
		int i = key_index(mm, &k);
		got++;
		if (i < 0 || !mm->vals[i].present) {
			bad++;
			continue;
		}
		seen[i] = 1;
		if (uh_map_remove(h, mm->m, &k, NULL, UH_FREE_OLD) != 0)
			bad++;
		mm->vals[i].present = 0;
		mm->n--;
	}
	TH_CHECK_ERR(rc, UH_ENOTFOUND);
	TH_CHECK_EQ(bad, 0);
	TH_CHECK_EQ(got, want);
	TH_CHECK_EQ(mm->n, 0);
	check_all(h, mm, "iterate-and-remove");
}

/* ---- bad input ---- */

struct snapshot {
	uint64_t len;
};

static void test_bad(uh_heap *h, uh_heap *ro)
{
	struct mmap *ms = &maps[0], *mi = &maps[2];
	static char big[UH_KEY_MAX_LEN + 2];
	uh_key bad_utf8 = { .kind = UH_KEY_STRING, .data = "ab\xc3(", .len = 4 };
	uh_key too_long = { .kind = UH_KEY_STRING, .data = big, .len = UH_KEY_MAX_LEN + 1 };
	uh_key as_bytes = { .kind = UH_KEY_BYTES, .data = "x", .len = 1 };
	uh_key as_i64 = { .kind = UH_KEY_I64, .i64 = 5 };
	uh_key null_data = { .kind = UH_KEY_STRING, .data = NULL, .len = 3 };
	uh_key odd_kind = { .kind = 9, .i64 = 5 };
	uh_value v = { .type = UH_T_I64, .u.i = 1 }, got;
	uh_value bad_type = { .type = 99 }, bad_i8 = { .type = UH_T_I8, .u.i = 300 };
	uh_value str_to_map = { .type = UH_T_STRING };
	uh_off s, m2, freed;
	uint64_t len0 = ms->n, len;
	uh_iter it;

	memset(big, 'y', sizeof(big));
	TH_CHECK_RC(uh_string_new(h, "not a map", 9, &s));
	str_to_map.u.ref = mi->m;	/* a map is not a string */

	TH_CHECK_ERR(uh_map_new(h, 0, &m2), UH_EINVAL);
	TH_CHECK_ERR(uh_map_new(h, 4, &m2), UH_EINVAL);
	TH_CHECK_ERR(uh_map_new(h, UH_KEY_I64, NULL), UH_EINVAL);
	TH_CHECK_ERR(uh_map_new(ro, UH_KEY_I64, &m2), UH_EREADONLY);

	TH_CHECK_ERR(uh_map_put(h, ms->m, &as_bytes, &v, 0), UH_ETYPE);
	TH_CHECK(strstr(uh_errmsg(), "kind") != NULL);
	TH_CHECK_ERR(uh_map_put(h, ms->m, &as_i64, &v, 0), UH_ETYPE);
	TH_CHECK_ERR(uh_map_get(h, ms->m, &as_i64, &got), UH_ETYPE);
	TH_CHECK_ERR(uh_map_remove(h, ms->m, &as_bytes, NULL, 0), UH_ETYPE);
	TH_CHECK_ERR(uh_map_get(h, mi->m, &ms->keys[5].k, &got), UH_ETYPE);
	TH_CHECK_ERR(uh_map_put(h, ms->m, &too_long, &v, 0), UH_EINVAL);
	TH_CHECK(strstr(uh_errmsg(), "4096") != NULL);
	TH_CHECK_ERR(uh_map_get(h, ms->m, &too_long, &got), UH_EINVAL);
	TH_CHECK_ERR(uh_map_put(h, ms->m, &bad_utf8, &v, 0), UH_EUTF8);
	TH_CHECK(strstr(uh_errmsg(), "UTF-8") != NULL);
	TH_CHECK_ERR(uh_map_get(h, ms->m, &bad_utf8, &got), UH_EUTF8);
	TH_CHECK_ERR(uh_map_remove(h, ms->m, &bad_utf8, NULL, 0), UH_EUTF8);
	TH_CHECK_ERR(uh_map_put(h, ms->m, NULL, &v, 0), UH_EINVAL);
	TH_CHECK_ERR(uh_map_get(h, ms->m, NULL, &got), UH_EINVAL);
	TH_CHECK_ERR(uh_map_remove(h, ms->m, NULL, NULL, 0), UH_EINVAL);
	TH_CHECK_ERR(uh_map_put(h, ms->m, &null_data, &v, 0), UH_EINVAL);
	TH_CHECK_ERR(uh_map_put(h, ms->m, &odd_kind, &v, 0), UH_EINVAL);

	TH_CHECK_ERR(uh_map_put(h, ms->m, &ms->keys[5].k, NULL, 0), UH_EINVAL);
	TH_CHECK_ERR(uh_map_put(h, ms->m, &ms->keys[5].k, &bad_type, 0), UH_ETYPE);
	TH_CHECK_ERR(uh_map_put(h, ms->m, &ms->keys[5].k, &bad_i8, 0), UH_ERANGE);
	TH_CHECK_ERR(uh_map_put(h, ms->m, &ms->keys[5].k, &str_to_map, 0), UH_ETYPE);
	TH_CHECK_ERR(uh_map_put(h, ms->m, &ms->keys[5].k, &v, 0x10), UH_EINVAL);
	TH_CHECK_ERR(uh_map_remove(h, ms->m, &ms->keys[5].k, NULL, 0x10), UH_EINVAL);

	/* wrong objects as the map */
	TH_CHECK_ERR(uh_map_put(h, s, &ms->keys[5].k, &v, 0), UH_ETYPE);
	TH_CHECK(strstr(uh_errmsg(), "not a") != NULL);
	TH_CHECK_ERR(uh_map_get(h, s, &ms->keys[5].k, &got), UH_ETYPE);
	TH_CHECK_ERR(uh_map_len(h, s, &len), UH_ETYPE);
	TH_CHECK_ERR(uh_map_check(h, s), UH_ETYPE);
	memset(&it, 0, sizeof(it));
	TH_CHECK_ERR(uh_map_next(h, s, &it, NULL, NULL), UH_ETYPE);
	TH_CHECK_ERR(uh_map_len(h, 0, &len), UH_EFREED);
	TH_CHECK_ERR(uh_map_len(h, 12345, &len), UH_EFREED);
	TH_CHECK_RC(uh_map_new(h, UH_KEY_I64, &freed));
	TH_CHECK_RC(uh_free(h, freed));
	TH_CHECK_ERR(uh_map_put(h, freed, &as_i64, &v, 0), UH_EFREED);
	TH_CHECK_ERR(uh_map_len(h, ms->m, NULL), UH_EINVAL);
	TH_CHECK_ERR(uh_map_key_kind(h, ms->m, NULL), UH_EINVAL);

	/* iterators */
	TH_CHECK_ERR(uh_map_next(h, ms->m, NULL, NULL, NULL), UH_EINVAL);
	memset(&it, 0, sizeof(it));
	if (ms->n) {
		TH_CHECK_RC(uh_map_next(h, ms->m, &it, NULL, NULL));
		TH_CHECK_ERR(uh_map_next(h, mi->m, &it, NULL, NULL), UH_EINVAL);
	}
	memset(&it, 0xff, sizeof(it));
	it.s[0] = ms->m;
	TH_CHECK_ERR(uh_map_next(h, ms->m, &it, NULL, NULL), UH_EINVAL);

	/* read-only handle: reads work, writes refused */
	TH_CHECK_ERR(uh_map_put(ro, ms->m, &ms->keys[5].k, &v, 0), UH_EREADONLY);
	TH_CHECK_ERR(uh_map_remove(ro, ms->m, &ms->keys[5].k, NULL, 0), UH_EREADONLY);
	TH_CHECK_RC(uh_map_len(ro, ms->m, &len));
	TH_CHECK_EQ(len, len0);
	TH_CHECK_RC(uh_map_check(ro, ms->m));
	check_iter(ro, ms, "read-only handle");

	/* nothing changed */
	TH_CHECK_RC(uh_map_len(h, ms->m, &len));
	TH_CHECK_EQ(len, len0);
	check_all(h, ms, "after bad input");
	TH_CHECK_RC(uh_free(h, s));
}

/* Inside a user block: reads see the block's own puts and removes, the
 * iteration too; commit publishes all of them at once. */
static void test_block(uh_heap *h)
{
	uh_off m;
	uh_iter it;
	uh_key k;
	uh_value v = { .type = UH_T_I64 }, got;
	uint64_t len = 0, n = 0;

	TH_CHECK_RC(uh_map_new(h, UH_KEY_I64, &m));
	TH_CHECK_RC(uh_root_set(h, "dt_map.block", m));
	TH_CHECK_RC(uh_begin(h));
	for (int i = 0; i < 300; i++) {	/* several resizes in one block */
		uh_key key = { .kind = UH_KEY_I64, .i64 = i };
		v.u.i = i * 10;
		TH_CHECK_RC(uh_map_put(h, m, &key, &v, 0));
	}
	for (int i = 0; i < 300; i += 3) {
		uh_key key = { .kind = UH_KEY_I64, .i64 = i };
		TH_CHECK_RC(uh_map_remove(h, m, &key, NULL, 0));
	}
	TH_CHECK_RC(uh_map_len(h, m, &len));
	TH_CHECK_EQ(len, 200);
	TH_CHECK_RC(uh_map_check(h, m));
	memset(&it, 0, sizeof(it));
	while (uh_map_next(h, m, &it, &k, &got) == 0 && n <= 300)
		n += got.u.i == k.i64 * 10 && k.i64 % 3 != 0;
	TH_CHECK_EQ(n, 200);
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_map_len(h, m, &len));
	TH_CHECK_EQ(len, 200);
	TH_CHECK_RC(uh_map_check(h, m));

	/* A miss and the end of an iteration are answers, not aborts. */
	uh_stats s0, s1;
	uh_key absent = { .kind = UH_KEY_I64, .i64 = 3 };
	TH_CHECK_RC(uh_stats_get(h, &s0));
	TH_CHECK_ERR(uh_map_get(h, m, &absent, &got), UH_ENOTFOUND);
	memset(&it, 0, sizeof(it));
	for (n = 0; uh_map_next(h, m, &it, &k, &got) == 0 && n <= 300; n++)
		;
	TH_CHECK_EQ(n, 200);
	TH_CHECK_ERR(uh_map_next(h, m, &it, &k, &got), UH_ENOTFOUND);	/* stays at the end */
	TH_CHECK_RC(uh_stats_get(h, &s1));
	TH_CHECK_EQ(s1.aborts, s0.aborts);
}

static uint64_t rd64(uh_heap *h, uh_off obj, uint32_t off)
{
	uint64_t v = 0;
	TH_CHECK_RC(uh_read(h, obj, off, &v, 8));
	return v;
}

static void wr64(uh_heap *h, uh_off obj, uint32_t off, uint64_t v)
{
	TH_CHECK_RC(uh_write(h, obj, off, &v, 8));
}

/* The word hash (FORMAT.md 11.3) of an i64 key, its 8 little-endian
 * bytes one word, written out from the spec: its bucket in a new map. */
static uint64_t key_hash(int64_t i)
{
	uint64_t hh = 0x9e3779b97f4a7c15ull ^ 8;

	hh = (hh ^ (uint64_t)i) * 0xff51afd7ed558ccdull;
	hh ^= hh >> 32;
	hh ^= hh >> 33;
	hh *= 0xc4ceb9fe1a85ec53ull;
	return hh ^ (hh >> 33);
}

/* The check finds damage (made with raw writes) and names it; lookups
 * in a damaged map fail cleanly instead of looping. Offsets from the
 * layout at the top of map.c: header slot i's value at 16 + 16 * i + 8,
 * bucket b of a table at 16 + 8 * b, an entry's next at 32 and its (i64)
 * key at 40. */
static void test_check_detects(uh_heap *h)
{
	uh_off m, table, e = 0;
	uh_value v = { .type = UH_T_I64 }, got;
	uh_key k = { .kind = UH_KEY_I64 };
	uint64_t b, count;

	TH_CHECK_RC(uh_map_new(h, UH_KEY_I64, &m));
	for (int i = 0; i < 5; i++) {	/* 5 entries, 8 buckets: no resize */
		k.i64 = i;
		TH_CHECK_RC(uh_map_put(h, m, &k, &v, 0));
	}
	TH_CHECK_RC(uh_map_check(h, m));
	table = rd64(h, m, 16 + 16 * 2 + 8);
	for (b = 0; b < 8 && !e; b++)
		e = rd64(h, table, 16 + 8 * (uint32_t)b);
	b--;
	TH_CHECK(e != 0);

	count = rd64(h, m, 16 + 16 * 1 + 8);
	wr64(h, m, 16 + 16 * 1 + 8, count + 1);
	TH_CHECK_ERR(uh_map_check(h, m), UH_EINTERNAL);
	TH_CHECK(strstr(uh_errmsg(), "count") != NULL);
	wr64(h, m, 16 + 16 * 1 + 8, count);

	/* A key whose hash names another bucket than the one it is in. */
	int64_t key = (int64_t)rd64(h, e, 40), moved = key + 1000;
	while ((key_hash(moved) & 7) == b)
		moved++;
	wr64(h, e, 40, (uint64_t)moved);
	TH_CHECK_ERR(uh_map_check(h, m), UH_EINTERNAL);
	TH_CHECK(strstr(uh_errmsg(), "bucket") != NULL);
	wr64(h, e, 40, (uint64_t)key);

	uint64_t next = rd64(h, e, 32);
	wr64(h, e, 32, e);	/* a cycle */
	TH_CHECK_ERR(uh_map_check(h, m), UH_EINTERNAL);
	if (!strstr(uh_errmsg(), "cycle"))
		th_fail(__FILE__, __LINE__, "cycle not named: %s", uh_errmsg());
	for (k.i64 = 100; k.i64 < 200; k.i64++) {	/* some land in bucket b */
		int rc = uh_map_get(h, m, &k, &got);
		if (rc != UH_ENOTFOUND && rc != UH_EINTERNAL)
			TH_CHECK_ERR(rc, UH_EINTERNAL);
	}
	wr64(h, e, 32, next);

	wr64(h, table, 16 + 8 * (uint32_t)b, 12345);	/* not an object */
	TH_CHECK_ERR(uh_map_check(h, m), UH_EINTERNAL);
	k.i64 = key;	/* in bucket b: a get must not follow 12345 */
	TH_CHECK_ERR(uh_map_get(h, m, &k, &got), UH_EINTERNAL);
	wr64(h, table, 16 + 8 * (uint32_t)b, e);
	TH_CHECK_RC(uh_map_check(h, m));
	TH_CHECK_RC(uh_free(h, m));	/* (its table and entries: garbage) */
}

/* A get outside blocks takes a lean path while the map header's view is
 * kept from an earlier read and the chain is short (map.c, get_lean), and
 * the general optimistic path otherwise (a changed header, a chain longer
 * than the lean path follows): the same answers either way, each one
 * optimistic read and no block. */
static void test_lean_gets(uh_heap *h)
{
	enum { N = 12 };
	int64_t key[N];
	uh_off m;
	uh_value v = { .type = UH_T_I64 }, got;
	uh_key k = { .kind = UH_KEY_I64 };
	uh_stats s0, s1;
	int n = 0;

	/* Keys whose hashes agree in their low 12 bits: one chain in any
	 * table of up to 4096 buckets. */
	for (int64_t i = 0; n < N; i++)
		if ((key_hash(i) & 4095) == (key_hash(0) & 4095))
			key[n++] = i;
	TH_CHECK_RC(uh_map_new(h, UH_KEY_I64, &m));
	for (int i = 0; i < N; i++) {
		k.i64 = key[i];
		v.u.i = i;
		TH_CHECK_RC(uh_map_put(h, m, &k, &v, 0));
		for (int j = 0; j <= i; j++) {	/* chains of 1 to N entries */
			k.i64 = key[j];
			TH_CHECK_RC(uh_stats_get(h, &s0));
			TH_CHECK_RC(uh_map_get(h, m, &k, &got));
			TH_CHECK_RC(uh_stats_get(h, &s1));
			TH_CHECK_EQ(got.type, UH_T_I64);
			TH_CHECK_EQ(got.u.i, j);
			TH_CHECK_EQ(s1.opt_reads - s0.opt_reads, 1);
			TH_CHECK_EQ(s1.commits + s1.empty_commits, s0.commits + s0.empty_commits);
		}
		k.i64 = -1 - i;	/* not a key (they are >= 0) */
		TH_CHECK_ERR(uh_map_get(h, m, &k, &got), UH_ENOTFOUND);
		uh_key s = { .kind = UH_KEY_STRING, .data = "x", .len = 1 };
		TH_CHECK_ERR(uh_map_get(h, m, &s, &got), UH_ETYPE);	/* wrong kind */
	}
	TH_CHECK_RC(uh_map_check(h, m));
	TH_CHECK_RC(uh_free(h, m));
}

/* A get outside blocks beside another session's open block that locked
 * the map's header and entry: the committed value (the locked objects'
 * bytes are still their old version while the owner's block is ACTIVE),
 * then the new one once that block commits, the same after an abort. */
static void test_get_beside_open_block(uh_heap *h, uh_heap *h2)
{
	uh_off m;
	uh_value v = { .type = UH_T_I64 }, got;
	uh_key k = { .kind = UH_KEY_I64, .i64 = 1 };

	TH_CHECK_RC(uh_map_new(h, UH_KEY_I64, &m));
	v.u.i = 10;
	TH_CHECK_RC(uh_map_put(h, m, &k, &v, 0));
	TH_CHECK_RC(uh_map_get(h2, m, &k, &got));	/* h2 keeps the header's view */
	TH_CHECK_EQ(got.u.i, 10);
	TH_CHECK_RC(uh_begin(h));
	v.u.i = 20;
	TH_CHECK_RC(uh_map_put(h, m, &k, &v, 0));	/* header and entry locked */
	for (int i = 0; i < 3; i++) {
		TH_CHECK_RC(uh_map_get(h2, m, &k, &got));
		TH_CHECK_EQ(got.u.i, 10);
	}
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_map_get(h2, m, &k, &got));
	TH_CHECK_EQ(got.u.i, 20);
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_map_remove(h, m, &k, NULL, 0));
	TH_CHECK_RC(uh_map_get(h2, m, &k, &got));
	TH_CHECK_EQ(got.u.i, 20);
	uh_abort(h);
	TH_CHECK_RC(uh_map_get(h2, m, &k, &got));
	TH_CHECK_EQ(got.u.i, 20);
	TH_CHECK_RC(uh_free(h, m));
}

/* Growth happens in bounded steps: whatever the map's size, no put logs
 * more than a few KiB (8 old buckets moved at most), even the puts that
 * start a resize or finish one. */
static void test_bounded_steps(uh_heap *h)
{
	enum { N = 6000 };
	uh_off m;
	uh_value v = { .type = UH_T_I64 };
	uh_key k = { .kind = UH_KEY_I64 };
	uint64_t max_log = 0, sum_log = 0;
	uh_stats s0, s1;

	TH_CHECK_RC(uh_map_new(h, UH_KEY_I64, &m));
	for (int i = 0; i < N; i++) {
		k.i64 = i;
		v.u.i = i;
		uh_stats_get(h, &s0);
		int rc = uh_map_put(h, m, &k, &v, 0);
		uh_stats_get(h, &s1);
		if (rc) {
			TH_CHECK_RC(rc);
			break;
		}
		uint64_t logged = s1.log_bytes - s0.log_bytes;
		max_log = logged > max_log ? logged : max_log;
		sum_log += logged;
	}
	TH_CHECK_RC(uh_map_check(h, m));
	printf("bounded steps: %d puts (10 resizes), log bytes per put: max %llu, mean %llu\n",
	       N, (unsigned long long)max_log, (unsigned long long)(sum_log / N));
	TH_CHECK(max_log < 8192);
}

/* The word hash (FORMAT.md, Conventions) of n bytes, written out from the spec a
 * byte at a time: the bucket of a string key in a new map. */
static uint64_t spec_words_hash(const unsigned char *p, size_t n)
{
	uint64_t hh = 0x9e3779b97f4a7c15ull ^ n;

	for (size_t i = 0; i < n; i += 8) {
		uint64_t w = 0;
		for (size_t j = 0; j < 8 && i + j < n; j++)
			w |= (uint64_t)p[i + j] << (8 * j);
		hh = (hh ^ w) * 0xff51afd7ed558ccdull;
		hh ^= hh >> 32;
	}
	hh ^= hh >> 33;
	hh *= 0xc4ceb9fe1a85ec53ull;
	return hh ^ (hh >> 33);
}

/* A string key of every length from 0 to 40 lands in the bucket its word
 * hash names (the first table has 8 buckets), read back with raw reads. */
static void test_word_hash_buckets(uh_heap *h)
{
	unsigned char buf[41];
	uh_value v = { .type = UH_T_I64, .u.i = 1 };
	uh_off m;

	for (size_t n = 0; n <= 40; n++) {
		for (size_t i = 0; i < n; i++)
			buf[i] = (unsigned char)('a' + (i * 7 + n) % 26);
		uh_key k = { .kind = UH_KEY_STRING, .data = buf, .len = n };
		TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &m));
		TH_CHECK_RC(uh_map_put(h, m, &k, &v, 0));
		uh_off table = rd64(h, m, 16 + 16 * 2 + 8);
		uint64_t want = spec_words_hash(buf, n) & 7, found = 8;
		for (uint64_t b = 0; b < 8; b++)
			if (rd64(h, table, 16 + 8 * (uint32_t)b))
				found = b;
		TH_CHECK_EQ(found, want);
		TH_CHECK_RC(uh_free(h, m));
	}
}

/* A map created before the word hash (its kind slot without
 * DT_KIND_WORDS, 0x100, as written here on an empty map) hashes with
 * FNV-1a 64 for good: puts through several resizes, gets, removes and the
 * check (which verifies every entry's bucket by the map's hash) agree,
 * and the kind slot keeps saying so. A new map says DT_KIND_WORDS (and
 * DT_KIND_INLINE: test_dt_map_inline). */
static void test_fnv_map(uh_heap *h)
{
	uh_off m;
	uh_value v = { .type = UH_T_I64 }, got;
	uh_key k = { .kind = UH_KEY_STRING };
	char buf[32];
	uint32_t kind;

	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &m));
	TH_CHECK_EQ(rd64(h, m, 16 + 8), 0x300u | UH_KEY_STRING);	/* word hash, inline values */
	wr64(h, m, 16 + 8, UH_KEY_STRING);
	TH_CHECK_RC(uh_map_key_kind(h, m, &kind));
	TH_CHECK_EQ(kind, UH_KEY_STRING);
	for (int i = 0; i < 300; i++) {
		k.len = (size_t)snprintf(buf, sizeof(buf), "old-map-key-%d", i);
		k.data = buf;
		v.u.i = i;
		TH_CHECK_RC(uh_map_put(h, m, &k, &v, 0));
	}
	for (int i = 0; i < 300; i += 3) {
		k.len = (size_t)snprintf(buf, sizeof(buf), "old-map-key-%d", i);
		k.data = buf;
		TH_CHECK_RC(uh_map_remove(h, m, &k, NULL, 0));
	}
	for (int i = 0; i < 300; i++) {
		k.len = (size_t)snprintf(buf, sizeof(buf), "old-map-key-%d", i);
		k.data = buf;
		if (i % 3 == 0) {
			TH_CHECK_ERR(uh_map_get(h, m, &k, &got), UH_ENOTFOUND);
		} else {
			TH_CHECK_RC(uh_map_get(h, m, &k, &got));
			TH_CHECK_EQ(got.u.i, i);
		}
	}
	TH_CHECK_RC(uh_map_check(h, m));
	TH_CHECK_EQ(rd64(h, m, 16 + 8), UH_KEY_STRING);
	TH_CHECK_RC(uh_free(h, m));
}

int main(void)
{
	const char *seed_env = getenv("UH_TEST_SEED");
	uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL);
	uh_heap *h = NULL, *ro = NULL;

	rng = seed ? seed : 1;
	printf("%s: seed %llu (UH_TEST_SEED=%llu replays)\n", SUITE, (unsigned long long)seed,
	       (unsigned long long)seed);
	make_pools();
	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0)
		return th_summary(SUITE);
	test_block(h);
	test_property(&h);
	if (h && th_connect(&d, UH_READONLY, &ro) == 0) {
		test_bad(h, ro);
		test_iter_remove(h);
		test_check_detects(h);
		test_lean_gets(h);
		test_fnv_map(h);
		test_word_hash_buckets(h);
		uh_heap *h2 = NULL;
		if (th_connect(&d, 0, &h2) == 0) {
			test_get_beside_open_block(h, h2);
			uh_disconnect(h2);
		}
		test_bounded_steps(h);
		uh_disconnect(ro);
	}
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
