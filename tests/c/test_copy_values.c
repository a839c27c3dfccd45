/*
 * test_copy_values.c -- uh_copy_values, the copy of string and bytes
 * values that bindings make: values and the other fields read together,
 * a null reference, errors that stand (wrong class, the copy's own, the
 * fetch's own, too many values), a value freed under every try (the
 * UH_READ_TRIES bound), a reference that stays freed, reads inside a
 * block, and a reader copying a record's string and bytes fields while
 * another process (prog_copy_writer) replaces both in every block: every
 * copy is whole, and the two are of the same block. The same with a hash
 * map's values, inline in their entries or objects by length, replaced
 * by uh_map_put_bytes: every copy of an inline value is whole and no
 * older than the one before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy_value.h"
#include "harness.h"

static const char *SUITE = "test_copy_values";

static uint32_t pair_cls;
static uint32_t span_lo, span_len;	/* fields s, b, n: bytes of one uh_read */

/* What fetch and copy share. */
struct reader {
	uh_off rec;		/* the record fetch_fields reads */
	uh_off fixed;		/* or: the one reference fetch_fixed gives */
	int fetches;
	int copies;
	int copy_rc;		/* what copy returns */
	int fetch_rc;		/* what fetch returns */
	size_t len[3];
	char buf[3][CV_MAX];
};

/* The record's three fields, read at one instant (uh_read of their span). */
static int fetch_fields(uh_heap *h, void *arg, uh_value *vals, uint32_t *n)
{
	struct reader *r = arg;
	uint64_t w[3];
	int rc;

	r->fetches++;
	if (r->fetch_rc)
		return r->fetch_rc;
	if ((rc = uh_read(h, r->rec, span_lo, w, span_len)) != 0)
		return rc;
	vals[0] = (uh_value){ .type = UH_T_STRING, .u.ref = w[0] };
	vals[1] = (uh_value){ .type = UH_T_BYTES, .u.ref = w[1] };
	vals[2] = (uh_value){ .type = UH_T_I64, .u.i = (int64_t)w[2] };
	*n = 3;
	return 0;
}

/* A reference that cannot change: freed on the second call. */
static int fetch_fixed(uh_heap *h, void *arg, uh_value *vals, uint32_t *n)
{
	struct reader *r = arg;

	(void)h;
	if (r->fetches++)
		return UH_EFREED;
	vals[0] = (uh_value){ .type = UH_T_STRING, .u.ref = r->fixed };
	*n = 1;
	return 0;
}

/* A new string every try, freed before it is copied. */
static int fetch_dead(uh_heap *h, void *arg, uh_value *vals, uint32_t *n)
{
	struct reader *r = arg;
	uh_off s;
	int rc;

	r->fetches++;
	if ((rc = uh_string_new(h, "gone", 4, &s)) != 0 || (rc = uh_free(h, s)) != 0)
		return rc;
	vals[0] = (uh_value){ .type = UH_T_STRING, .u.ref = s };
	*n = 1;
	return 0;
}

static int fetch_too_many(uh_heap *h, void *arg, uh_value *vals, uint32_t *n)
{
	(void)h;
	(void)arg;
	(void)vals;
	*n = 4;
	return 0;
}

static int copy_out(void *arg, uint32_t i, const void *data, size_t len)
{
	struct reader *r = arg;

	r->copies++;
	if (i > 2 || len > CV_MAX)
		return -100;
	memcpy(r->buf[i], data, len);
	r->len[i] = len;
	return r->copy_rc;
}

static void set_pair(uh_heap *h, uh_off rec, uint32_t k)
{
	char buf[CV_MAX];
	uh_off s, b;

	TH_CHECK_RC(uh_string_new(h, buf, cv_make(k, 'a', buf, 0), &s));
	TH_CHECK_RC(uh_bytes_new(h, buf, cv_make(k, 'A', buf, 0), &b));
	TH_CHECK_RC(uh_set_ref(h, rec, 0, s));
	TH_CHECK_RC(uh_set_ref(h, rec, 1, b));
	TH_CHECK_RC(uh_set_i64(h, rec, 2, k));
}

static void setup(uh_heap *h, uh_off *rec)
{
	static const uh_field_spec f[] = { { "s", UH_T_STRING, 0 }, { "b", UH_T_BYTES, 0 },
					   { "n", UH_T_I64, 0 } };
	uh_field_info s, n;

	TH_CHECK_RC(uh_class_register(h, "CopyPair", f, 3, &pair_cls));
	TH_CHECK_RC(uh_field_info_get(h, pair_cls, 0, &s));
	TH_CHECK_RC(uh_field_info_get(h, pair_cls, 2, &n));
	span_lo = s.offset;
	span_len = n.offset + 8 - s.offset;
	TH_CHECK_EQ(span_len, 24);
	TH_CHECK_RC(uh_alloc(h, pair_cls, rec));
}

static void test_basics(uh_heap *h, uh_off rec)
{
	struct reader r = { .rec = rec };
	uh_value v[3];

	/* null references: nothing to copy */
	TH_CHECK_RC(uh_copy_values(h, fetch_fields, copy_out, &r, v, 3));
	TH_CHECK_EQ(r.fetches, 1);
	TH_CHECK_EQ(r.copies, 0);

	set_pair(h, rec, 7);
	memset(&r, 0, sizeof(r));
	r.rec = rec;
	TH_CHECK_RC(uh_copy_values(h, fetch_fields, copy_out, &r, v, 3));
	TH_CHECK_EQ(r.fetches, 1);
	TH_CHECK_EQ(r.copies, 2);
	TH_CHECK_EQ(cv_parse(r.buf[0], r.len[0], 'a', 0), 7);
	TH_CHECK_EQ(cv_parse(r.buf[1], r.len[1], 'A', 0), 7);
	TH_CHECK_EQ(v[2].type, UH_T_I64);	/* left for the caller */
	TH_CHECK_EQ(v[2].u.i, 7);

	/* the copy's and the fetch's own codes stand; so does a wrong class */
	r.copy_rc = 42;
	TH_CHECK_EQ(uh_copy_values(h, fetch_fields, copy_out, &r, v, 3), 42);
	r.copy_rc = 0;
	r.fetch_rc = 5;
	r.copies = 0;
	TH_CHECK_EQ(uh_copy_values(h, fetch_fields, copy_out, &r, v, 3), 5);
	TH_CHECK_EQ(r.copies, 0);
	r.fetch_rc = 0;
	r.fixed = rec;	/* a record, not a string */
	r.fetches = 0;
	TH_CHECK_ERR(uh_copy_values(h, fetch_fixed, copy_out, &r, v, 3), UH_ETYPE);
	TH_CHECK_ERR(uh_copy_values(h, fetch_too_many, copy_out, &r, v, 3), UH_EINVAL);
	TH_CHECK_ERR(uh_copy_values(h, NULL, copy_out, &r, v, 3), UH_EINVAL);
	TH_CHECK_ERR(uh_copy_values(h, fetch_fields, NULL, &r, v, 3), UH_EINVAL);
	TH_CHECK_ERR(uh_copy_values(NULL, fetch_fields, copy_out, &r, v, 3), UH_EINVAL);
}

/* Freed under every try: UH_READ_TRIES fetches, then UH_ECONFLICT. A
 * reference that stays freed: the fetch's UH_EFREED, the message naming
 * the object. */
static void test_freed(uh_heap *h)
{
	struct reader r = { 0 };
	uh_value v[1];

	TH_CHECK_ERR(uh_copy_values(h, fetch_dead, copy_out, &r, v, 1), UH_ECONFLICT);
	TH_CHECK_EQ(r.fetches, UH_READ_TRIES);
	TH_CHECK_EQ(r.copies, 0);
	TH_CHECK(strstr(uh_errmsg(), "inside a block") != NULL);

	memset(&r, 0, sizeof(r));
	TH_CHECK_RC(uh_string_new(h, "old", 3, &r.fixed));
	TH_CHECK_RC(uh_free(h, r.fixed));
	TH_CHECK_ERR(uh_copy_values(h, fetch_fixed, copy_out, &r, v, 1), UH_EFREED);
	TH_CHECK_EQ(r.fetches, 2);
	TH_CHECK(strstr(uh_errmsg(), "freed") != NULL);
}

/* Inside a block: copied from the block's snapshot; a freed reference is
 * an error at once, not a retry. */
static void test_in_block(uh_heap *h, uh_off rec)
{
	struct reader r = { .rec = rec };
	uh_value v[3];
	uh_off s;

	TH_CHECK_RC(uh_begin(h));
	set_pair(h, rec, 9);
	TH_CHECK_RC(uh_copy_values(h, fetch_fields, copy_out, &r, v, 3));
	TH_CHECK_EQ(cv_parse(r.buf[0], r.len[0], 'a', 0), 9);
	TH_CHECK_EQ(cv_parse(r.buf[1], r.len[1], 'A', 0), 9);
	TH_CHECK_RC(uh_commit(h));

	TH_CHECK_RC(uh_string_new(h, "x", 1, &s));
	TH_CHECK_RC(uh_free(h, s));
	memset(&r, 0, sizeof(r));
	r.fixed = s;
	TH_CHECK_RC(uh_begin(h));
	int rc = uh_copy_values(h, fetch_fixed, copy_out, &r, v, 1);
	TH_CHECK(rc == UH_EFREED || rc == UH_ECONFLICT);
	TH_CHECK_EQ(r.fetches, 1);
	uh_abort(h);
}

/* A reader copies while prog_copy_writer replaces both values in every
 * block and frees the old ones: every copy is a whole value, and the
 * string and the bytes are of the same block. */
static void test_writer(const struct th_heapd *d, uh_heap *h, uh_off rec)
{
	char ref[32], rounds[] = "3000";
	struct reader r = { .rec = rec };
	uh_value v[3];
	long reads = 0, bad = 0, again = 0;
	uint32_t last = 0;
	int status = -2;

	set_pair(h, rec, 1);
	snprintf(ref, sizeof(ref), "%llu", (unsigned long long)rec);
	char *argv[] = { (char *)th_bin("prog_copy_writer"), (char *)d->sock, ref, rounds, NULL };
	pid_t w = th_spawn(argv, NULL);
	TH_CHECK(w > 0);
	/* bound: the writer's rounds; th_wait_exit_timeout ends the loop */
	while (w > 0 && (status = th_wait_exit_timeout(w, 0)) == -2) {
		r.fetches = 0;
		int rc = uh_copy_values(h, fetch_fields, copy_out, &r, v, 3);
		if (rc == UH_ECONFLICT)
			continue;	/* replaced UH_READ_TRIES times: possible, not wrong */
		if (rc != 0) {	/* counted, not checked per read: one check below */
			if (!bad++)
				fprintf(stderr, "copy: %s: %s\n", uh_strerror(rc), uh_errmsg());
			continue;
		}
		uint32_t ks = cv_parse(r.buf[0], r.len[0], 'a', 0);
		uint32_t kb = cv_parse(r.buf[1], r.len[1], 'A', 0);
		if (ks == 0 || ks != kb || ks < last)
			bad++;
		last = ks;
		reads++;
		again += r.fetches - 1;
	}
	TH_CHECK_EQ(status, 0);
	TH_CHECK_EQ(bad, 0);
	TH_CHECK(reads > 0);
	TH_CHECK_RC(uh_copy_values(h, fetch_fields, copy_out, &r, v, 3));
	TH_CHECK_EQ(cv_parse(r.buf[0], r.len[0], 'a', 0), 3001);
	printf("%ld reads copied while the writer replaced the values 3000 times; %ld "
	       "read again (a value replaced under its copy)\n", reads, again);
}

struct map_reader {
	uh_off m;
	uh_key k;
	size_t len;
	char buf[CV_MAX];
};

static int fetch_map(uh_heap *h, void *arg, uh_value *vals, uint32_t *n)
{
	struct map_reader *r = arg;
	*n = 1;
	return uh_map_get(h, r->m, &r->k, vals);
}

static int copy_map(void *arg, uint32_t i, const void *data, size_t len)
{
	struct map_reader *r = arg;
	(void)i;
	r->len = len < CV_MAX ? len : CV_MAX;
	memcpy(r->buf, data, r->len);
	return 0;
}

/* One key's copies while the writer replaces it: whole, never older. */
static void read_key(uh_heap *h, struct map_reader *r, char fill0, uint32_t *last, long *bad,
		     long *inl)
{
	uh_value v;
	int rc = uh_copy_values(h, fetch_map, copy_map, r, &v, 1);

	if (rc == UH_ECONFLICT)
		return;
	uint32_t k = rc ? 0 : cv_parse(r->buf, r->len, fill0, 1);
	if (rc && !*bad)
		fprintf(stderr, "map copy: %s: %s\n", uh_strerror(rc), uh_errmsg());
	if (k == 0 || k < *last)
		(*bad)++;
	*last = k;
	*inl += v.type == UH_T_ISTRING || v.type == UH_T_IBYTES;
}

static void test_map_writer(const struct th_heapd *d, uh_heap *h)
{
	char ref[32], rounds[] = "3000", buf[CV_MAX];
	struct map_reader rs = { .k = { .kind = UH_KEY_STRING, .data = "s", .len = 1 } };
	struct map_reader rb = { .k = { .kind = UH_KEY_STRING, .data = "b", .len = 1 } };
	uint32_t last_s = 0, last_b = 0;
	long reads = 0, bad = 0, inl = 0;
	int status = -2;
	uh_off m;

	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &m));
	TH_CHECK_RC(uh_root_set(h, "copy.map", m));
	TH_CHECK_RC(uh_map_put_bytes(h, m, &rs.k, UH_T_STRING, buf, cv_make(1, 'a', buf, 1), 0));
	TH_CHECK_RC(uh_map_put_bytes(h, m, &rb.k, UH_T_BYTES, buf, cv_make(1, 'A', buf, 1), 0));
	rs.m = rb.m = m;
	snprintf(ref, sizeof(ref), "%llu", (unsigned long long)m);
	char *argv[] = { (char *)th_bin("prog_copy_writer"), (char *)d->sock, ref, rounds, "map",
			 NULL };
	pid_t w = th_spawn(argv, NULL);
	TH_CHECK(w > 0);
	/* bound: the writer's rounds; th_wait_exit_timeout ends the loop */
	while (w > 0 && (status = th_wait_exit_timeout(w, 0)) == -2) {
		read_key(h, &rs, 'a', &last_s, &bad, &inl);
		read_key(h, &rb, 'A', &last_b, &bad, &inl);
		reads += 2;
	}
	TH_CHECK_EQ(status, 0);
	TH_CHECK_EQ(bad, 0);
	TH_CHECK(inl > 0);
	read_key(h, &rs, 'a', &last_s, &bad, &inl);
	TH_CHECK_EQ(last_s, 3001);
	TH_CHECK_RC(uh_map_check(h, m));
	printf("%ld map values copied while the writer replaced them 3000 times (%ld inline)\n",
	       reads, inl);
}

int main(void)
{
	static struct th_heapd d;
	uh_heap *h;
	uh_off rec = 0;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"heapd start + connect");
		return th_summary(SUITE);
	}
	setup(h, &rec);
	test_basics(h, rec);
	test_freed(h);
	test_in_block(h, rec);
	test_writer(&d, h, rec);
	test_map_writer(&d, h);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
