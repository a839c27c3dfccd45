/*
 * test_inline.c -- inline string and bytes fields (FORMAT.md 3.2): the
 * layout heapd gives them, capacity checks at registration (and in the
 * ClassMismatch of a redeclaration), writes in place outside and inside
 * blocks (read-your-writes, abort, the zeros past a shorter value), the
 * refusal of a value longer than the capacity, the whole-record read (of
 * one record and of a scan's, a leaf at a time), and
 * heapctl check and the GC over records with inline values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "harness.h"

static const char *SUITE = "test_inline";

static const uh_field_spec rec_fields[] = {
	{ "k", UH_T_I64, 0 },
	{ "v", UH_T_IBYTES, 10 },
	{ "w", UH_T_I8, 0 },
	{ "s", UH_T_ISTRING, 5 },
};

static void test_layout(uh_heap *h, uint32_t *cls)
{
	uh_field_info fi;
	uh_class_info ci;
	uint32_t id = 0;

	TH_CHECK_RC(uh_class_register(h, "InlineRec", rec_fields, 4, cls));
	TH_CHECK_RC(uh_class_register(h, "InlineRec", rec_fields, 4, &id));
	TH_CHECK_EQ(id, *cls);
	/* FORMAT.md 3.3: k@16, v@24 (4 + 10), w@38, s@40 (4 + 5) -> 49 -> 56 */
	static const uint32_t offs[] = { 16, 24, 38, 40 };
	for (uint32_t i = 0; i < 4; i++) {
		TH_CHECK_RC(uh_field_info_get(h, *cls, i, &fi));
		TH_CHECK_EQ(fi.offset, offs[i]);
		/* the spec's third word is an inline field's capacity */
		TH_CHECK_EQ(fi.capacity,
			    uh_type_is_inline(fi.type) ? rec_fields[i].ref_class : 0);
		TH_CHECK_EQ(fi.type, rec_fields[i].type);
	}
	TH_CHECK_RC(uh_class_info_get(h, *cls, &ci));
	TH_CHECK_EQ(ci.payload_size, 56 - 16);

	/* The YCSB record: ten fields of 100 bytes, 104 each. */
	uh_field_spec y[10];
	char names[10][8];
	for (int i = 0; i < 10; i++) {
		snprintf(names[i], sizeof(names[i]), "field%d", i);
		y[i] = (uh_field_spec){ names[i], UH_T_IBYTES, 100 };
	}
	TH_CHECK_RC(uh_class_register(h, "InlineYcsb", y, 10, &id));
	TH_CHECK_RC(uh_class_info_get(h, id, &ci));
	TH_CHECK_EQ(ci.payload_size, 1040);
	TH_CHECK_RC(uh_field_info_get(h, id, 9, &fi));
	TH_CHECK_EQ(fi.offset, 16 + 9 * 104);
}

static void test_bad_declarations(uh_heap *h)
{
	uh_field_spec f[1] = { { "v", UH_T_IBYTES, 0 } };
	uint32_t id;

	TH_CHECK_ERR(uh_class_register(h, "BadCap0", f, 1, &id), UH_EINVAL);
	TH_CHECK(strstr(uh_errmsg(), "capacity") != NULL);
	f[0].ref_class = UH_INLINE_MAX + 1;
	TH_CHECK_ERR(uh_class_register(h, "BadCapBig", f, 1, &id), UH_EINVAL);
	f[0] = (uh_field_spec){ "v", UH_T_BYTES, 10 };
	TH_CHECK_ERR(uh_class_register(h, "CapOnRef", f, 1, &id), UH_EINVAL);
	f[0] = (uh_field_spec){ "v", UH_T_IBYTES, UH_INLINE_MAX };
	TH_CHECK_RC(uh_class_register(h, "BigCap", f, 1, &id));

	/* Another capacity is another layout: ClassMismatch naming both. */
	uh_field_spec other[4];
	memcpy(other, rec_fields, sizeof(other));
	other[1].ref_class = 11;
	TH_CHECK_ERR(uh_class_register(h, "InlineRec", other, 4, &id), UH_ECLASSMISMATCH);
	TH_CHECK(strstr(uh_errmsg(), "capacity 10") && strstr(uh_errmsg(), "capacity 11"));
	other[1] = (uh_field_spec){ "v", UH_T_BYTES, 0 };
	TH_CHECK_ERR(uh_class_register(h, "InlineRec", other, 4, &id), UH_ECLASSMISMATCH);
	other[1] = (uh_field_spec){ "v", UH_T_ISTRING, 10 };
	TH_CHECK_ERR(uh_class_register(h, "InlineRec", other, 4, &id), UH_ECLASSMISMATCH);
}

static void check_value(uh_heap *h, uh_off o, uint32_t field, const char *want)
{
	char buf[16];
	size_t n = 99;

	TH_CHECK_RC(uh_get_inline(h, o, field, buf, sizeof(buf), &n));
	TH_CHECK_EQ(n, strlen(want));
	TH_CHECK(n == strlen(want) && memcmp(buf, want, n) == 0);
}

static void test_values(uh_heap *h, uint32_t cls, uh_off *keep)
{
	uh_off o = 0;
	char buf[16];
	size_t n = 0;

	TH_CHECK_RC(uh_alloc(h, cls, &o));
	check_value(h, o, 1, "");	/* a new object's inline fields are empty */
	TH_CHECK_RC(uh_set_inline(h, o, 1, "0123456789", 10));
	check_value(h, o, 1, "0123456789");
	TH_CHECK_RC(uh_set_inline(h, o, 1, "abc", 3));
	check_value(h, o, 1, "abc");
	/* the bytes past a shorter value are zero (FORMAT.md 3.2) */
	unsigned char raw[16];
	TH_CHECK_RC(uh_read(h, o, 24, raw, 16));
	TH_CHECK(raw[0] == 3 && raw[4] == 'a' && raw[7] == 0 && raw[13] == 0);

	/* too long: refused, naming field, capacity and length; value kept */
	TH_CHECK_ERR(uh_set_inline(h, o, 1, "0123456789X", 11), UH_ERANGE);
	TH_CHECK(strstr(uh_errmsg(), "'v'") && strstr(uh_errmsg(), "10") &&
		 strstr(uh_errmsg(), "11"));
	check_value(h, o, 1, "abc");
	/* a buffer too small: UH_ERANGE with the length */
	TH_CHECK_ERR(uh_get_inline(h, o, 1, buf, 2, &n), UH_ERANGE);
	TH_CHECK_EQ(n, 3);
	/* strings are UTF-8 */
	TH_CHECK_ERR(uh_set_inline(h, o, 3, "\xff", 1), UH_EUTF8);
	TH_CHECK_RC(uh_set_inline(h, o, 3, "h\xc3\xa9", 3));
	check_value(h, o, 3, "h\xc3\xa9");
	/* other field kinds */
	TH_CHECK_ERR(uh_set_inline(h, o, 0, "x", 1), UH_ETYPE);
	TH_CHECK_ERR(uh_get_inline(h, o, 2, buf, sizeof(buf), &n), UH_ETYPE);
	int64_t iv = 0;
	TH_CHECK_ERR(uh_get_i64(h, o, 1, &iv), UH_ETYPE);
	uh_off rv = 0;
	TH_CHECK_ERR(uh_get_ref(h, o, 1, &rv), UH_ETYPE);
	TH_CHECK_RC(uh_set_i64(h, o, 0, 42));
	TH_CHECK_RC(uh_set_i64(h, o, 2, -7));

	/* inside a block: own writes seen, abort restores */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_inline(h, o, 1, "in-block", 8));
	check_value(h, o, 1, "in-block");
	TH_CHECK_RC(uh_set_inline(h, o, 3, "xy", 2));
	check_value(h, o, 3, "xy");
	TH_CHECK_RC(uh_abort(h));
	check_value(h, o, 1, "abc");
	check_value(h, o, 3, "h\xc3\xa9");
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_inline(h, o, 1, "committed", 9));
	TH_CHECK_RC(uh_set_inline(h, o, 1, "twice", 5));
	check_value(h, o, 1, "twice");
	TH_CHECK_RC(uh_commit(h));
	check_value(h, o, 1, "twice");

	/* the whole record in one copy */
	unsigned char rec[64];
	size_t len = 0;
	TH_CHECK_RC(uh_record_read(h, o, rec, sizeof(rec), &len));
	TH_CHECK_EQ(len, 40);
	int64_t k;
	uint32_t vn, sn;
	memcpy(&k, rec + 0, 8);
	memcpy(&vn, rec + 8, 4);
	memcpy(&sn, rec + 24, 4);
	TH_CHECK_EQ(k, 42);
	TH_CHECK(vn == 5 && memcmp(rec + 12, "twice", 5) == 0);
	TH_CHECK_EQ((int8_t)rec[22], -7);
	TH_CHECK(sn == 3 && memcmp(rec + 28, "h\xc3\xa9", 3) == 0);
	TH_CHECK_ERR(uh_record_read(h, o, rec, 39, &len), UH_ERANGE);
	TH_CHECK_EQ(len, 40);
	/* inside a block, after a write: the block's bytes */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_inline(h, o, 1, "0123456789", 10));
	TH_CHECK_RC(uh_record_read(h, o, rec, sizeof(rec), &len));
	memcpy(&vn, rec + 8, 4);
	TH_CHECK(vn == 10 && memcmp(rec + 12, "0123456789", 10) == 0);
	TH_CHECK_RC(uh_commit(h));

	/* one allocation, fields written in the same block */
	uh_off n2 = 0;
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_alloc(h, cls, &n2));
	TH_CHECK_RC(uh_set_inline(h, n2, 1, "new", 3));
	check_value(h, n2, 1, "new");
	TH_CHECK_RC(uh_commit(h));
	check_value(h, n2, 1, "new");
	*keep = o;
	TH_CHECK_RC(uh_root_set(h, "inline.rec", o));
	TH_CHECK_RC(uh_root_set(h, "inline.rec2", n2));
}

static void test_check_and_gc(const struct th_heapd *d)
{
	char out[8192];
	int rc = th_heapctl(d, "check", out, sizeof(out));

	TH_CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "heapctl check:\n%s\n", out);
	rc = th_heapctl(d, "gc --wait", out, sizeof(out));
	TH_CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "heapctl gc --wait:\n%s\n", out);
}

/* uh_map_get_record / uh_smap_get_record: the lookup and the copy of the
 * record found, the same bytes uh_record_read copies. */
static void check_get_record(uh_heap *h, uh_off m, int sorted, uint32_t cls, uh_off o)
{
	uh_key k = { UH_KEY_STRING, 0, "rec", 3, 0 };
	uh_key num = { UH_KEY_STRING, 0, "num", 3, 0 };
	uh_key none = { UH_KEY_STRING, 0, "none", 4, 0 };
	uh_value rv = { .type = UH_T_REF, .u.ref = o };
	uh_value iv = { .type = UH_T_I64, .u.i = 5 };
	unsigned char want[64], got[64];
	size_t wlen = 0, len = 0;
	uint32_t c = 0;
	int (*get)(uh_heap *, uh_off, const uh_key *, void *, size_t, size_t *, uint32_t *) =
		sorted ? uh_smap_get_record : uh_map_get_record;

	TH_CHECK_RC(sorted ? uh_smap_put(h, m, &k, &rv, 0) : uh_map_put(h, m, &k, &rv, 0));
	TH_CHECK_RC(sorted ? uh_smap_put(h, m, &num, &iv, 0) : uh_map_put(h, m, &num, &iv, 0));
	TH_CHECK_RC(uh_record_read(h, o, want, sizeof(want), &wlen));
	TH_CHECK_RC(get(h, m, &k, got, sizeof(got), &len, &c));
	TH_CHECK_EQ(len, wlen);
	TH_CHECK_EQ(c, cls);
	TH_CHECK(memcmp(got, want, wlen) == 0);
	TH_CHECK_ERR(get(h, m, &none, got, sizeof(got), &len, &c), UH_ENOTFOUND);
	TH_CHECK_ERR(get(h, m, &num, got, sizeof(got), &len, &c), UH_ETYPE);
	TH_CHECK_ERR(get(h, m, &k, got, wlen - 1, &len, &c), UH_ERANGE);
	TH_CHECK_EQ(len, wlen);
	TH_CHECK_ERR(get(h, m, &k, got, sizeof(got), NULL, &c), UH_EINVAL);
	/* one inline field of the record under the key, by name */
	int (*set)(uh_heap *, uh_off, const uh_key *, const char *, const void *, size_t) =
		sorted ? uh_smap_set_inline : uh_map_set_inline;
	char was[16];
	size_t wn = 0;
	TH_CHECK_RC(uh_get_inline(h, o, 1, was, sizeof(was), &wn));
	TH_CHECK_RC(set(h, m, &k, "v", "by-key", 6));
	check_value(h, o, 1, "by-key");
	TH_CHECK_ERR(set(h, m, &k, "v", "01234567890", 11), UH_ERANGE);
	TH_CHECK_ERR(set(h, m, &k, "nope", "x", 1), UH_EINVAL);
	TH_CHECK_ERR(set(h, m, &k, "k", "x", 1), UH_ETYPE);
	TH_CHECK_ERR(set(h, m, &none, "v", "x", 1), UH_ENOTFOUND);
	TH_CHECK_ERR(set(h, m, &num, "v", "x", 1), UH_ETYPE);
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(set(h, m, &k, "v", "rolled", 6));
	check_value(h, o, 1, "rolled");
	TH_CHECK_RC(uh_abort(h));
	check_value(h, o, 1, "by-key");
	TH_CHECK_RC(uh_set_inline(h, o, 1, was, wn));
	/* inside a block: the block's own write */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_inline(h, o, 1, "blk", 3));
	TH_CHECK_RC(get(h, m, &k, got, sizeof(got), &len, &c));
	TH_CHECK(memcmp(got + 8, "\x03\0\0\0blk", 7) == 0);
	TH_CHECK_RC(uh_abort(h));
}

/* uh_map_put_record / uh_smap_put_record: a new record under a key, its
 * inline fields set, in one call; UH_FREE_OLD frees the one replaced. */
static void check_put_record(uh_heap *h, uh_off m, int sorted, uint32_t cls)
{
	uh_key k = { UH_KEY_STRING, 0, "put", 3, 0 };
	uh_inline_value vals[2] = { { 1, 3, "abc" }, { 3, 2, "hi" } };
	int (*put)(uh_heap *, uh_off, const uh_key *, uint32_t, const uh_inline_value *, uint32_t,
		   uint32_t) = sorted ? uh_smap_put_record : uh_map_put_record;
	uh_value v;
	int64_t i = -1;

	TH_CHECK_RC(put(h, m, &k, cls, vals, 2, 0));
	TH_CHECK_RC(sorted ? uh_smap_get(h, m, &k, &v) : uh_map_get(h, m, &k, &v));
	TH_CHECK_EQ(v.type, UH_T_REF);
	uh_off first = v.u.ref;
	check_value(h, first, 1, "abc");
	check_value(h, first, 3, "hi");
	TH_CHECK_RC(uh_get_i64(h, first, 0, &i));
	TH_CHECK_EQ(i, 0);	/* a field not given is zero */
	/* replaced: without UH_FREE_OLD the old record lives on; with it, freed */
	vals[0] = (uh_inline_value){ 1, 1, "2" };
	TH_CHECK_RC(put(h, m, &k, cls, vals, 1, 0));
	check_value(h, first, 1, "abc");
	TH_CHECK_RC(sorted ? uh_smap_get(h, m, &k, &v) : uh_map_get(h, m, &k, &v));
	uh_off second = v.u.ref;
	vals[0] = (uh_inline_value){ 1, 1, "3" };
	TH_CHECK_RC(put(h, m, &k, cls, vals, 1, UH_FREE_OLD));
	TH_CHECK_ERR(uh_get_i64(h, second, 0, &i), UH_EFREED);
	TH_CHECK_RC(uh_free(h, first));
	/* refused: past a capacity, a field not inline; nothing stored */
	uh_key k2 = { UH_KEY_STRING, 0, "bad", 3, 0 };
	vals[0] = (uh_inline_value){ 1, 11, "01234567890" };
	TH_CHECK_ERR(put(h, m, &k2, cls, vals, 1, 0), UH_ERANGE);
	vals[0] = (uh_inline_value){ 0, 1, "x" };
	TH_CHECK_ERR(put(h, m, &k2, cls, vals, 1, 0), UH_ETYPE);
	TH_CHECK_ERR(sorted ? uh_smap_get(h, m, &k2, &v) : uh_map_get(h, m, &k2, &v), UH_ENOTFOUND);
	TH_CHECK_ERR(put(h, m, &k2, cls, NULL, 1, 0), UH_EINVAL);
	/* in a block: rolled back with it */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(put(h, m, &k2, cls, vals, 0, 0));
	TH_CHECK_RC(uh_abort(h));
	TH_CHECK_ERR(sorted ? uh_smap_get(h, m, &k2, &v) : uh_map_get(h, m, &k2, &v), UH_ENOTFOUND);
}

static void test_get_record(uh_heap *h, uint32_t cls, uh_off o)
{
	uh_off m = 0, sm = 0;

	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &m));
	TH_CHECK_RC(uh_root_set(h, "inline.map", m));
	check_get_record(h, m, 0, cls, o);
	check_put_record(h, m, 0, cls);
	TH_CHECK_RC(uh_smap_new(h, UH_KEY_STRING, &sm));
	TH_CHECK_RC(uh_root_set(h, "inline.smap", sm));
	check_get_record(h, sm, 1, cls, o);
	check_put_record(h, sm, 1, cls);
}

/* The records of keys r<from>..r<to - 1> of sm, gathered with
 * uh_smap_next_records into a dst of cap bytes: each is the key's record
 * (the bytes uh_record_read copies), in key order; one past the rest of
 * dst is UH_ERANGE with its size. Returns how many came. */
static int scan_records(uh_heap *h, uh_off sm, int from, int to, size_t cap, uint32_t cls)
{
	char fk[16], tk[16];
	snprintf(fk, sizeof(fk), "r%02d", from);
	snprintf(tk, sizeof(tk), "r%02d", to);
	uh_key f = { UH_KEY_STRING, 0, fk, 3, 0 }, t = { UH_KEY_STRING, 0, tk, 3, 0 };
	unsigned char dst[256], want[64];
	uh_scan_record recs[32];
	uh_iter it;
	int seen = 0, rc;
	uint32_t n = 0;

	TH_CHECK_RC(uh_smap_scan(h, sm, &f, 0, &it));
	while ((rc = uh_smap_next_records(h, sm, &it, &t, 0, dst, cap, recs, 32, &n)) == 0) {
		TH_CHECK(n >= 1 && n <= 32);
		for (uint32_t i = 0; i < n; i++, seen++) {	/* bound: n */
			char k[16];
			size_t wlen = 0;
			snprintf(k, sizeof(k), "r%02d", from + seen);
			TH_CHECK(recs[i].key.len == 3 && memcmp(recs[i].key.data, k, 3) == 0);
			TH_CHECK_EQ(recs[i].class_id, cls);
			TH_CHECK_RC(uh_record_read(h, recs[i].ref, want, sizeof(want), &wlen));
			TH_CHECK_EQ(recs[i].len, wlen);
			TH_CHECK(recs[i].status == 0 || recs[i].status == UH_ERANGE);
			if (recs[i].status == 0) {
				TH_CHECK(recs[i].at % 8 == 0 && recs[i].at + wlen <= cap);
				TH_CHECK(memcmp(dst + recs[i].at, want, wlen) == 0);
			}
		}
	}
	TH_CHECK_ERR(rc, UH_ENOTFOUND);
	TH_CHECK_EQ(n, 0);
	return seen;
}

/* uh_smap_next_records: a scan's records copied a leaf at a time. */
static void test_scan_records(uh_heap *h, uint32_t cls)
{
	uh_off sm = 0;
	unsigned char dst[256];
	uh_scan_record recs[4];
	size_t plen = 0;
	uint32_t n = 0;
	uh_iter it;

	TH_CHECK_RC(uh_smap_new(h, UH_KEY_STRING, &sm));
	TH_CHECK_RC(uh_root_set(h, "inline.scan", sm));
	for (int i = 0; i < 40; i++) {	/* bound: 40 records, two leaves and more */
		char k[16], v[16];
		snprintf(k, sizeof(k), "r%02d", i);
		snprintf(v, sizeof(v), "v%d", i);
		uh_key key = { UH_KEY_STRING, 0, k, 3, 0 };
		uh_inline_value iv = { 1, (uint32_t)strlen(v), v };
		TH_CHECK_RC(uh_smap_put_record(h, sm, &key, cls, &iv, 1, 0));
	}
	TH_CHECK_EQ(scan_records(h, sm, 5, 30, sizeof(dst), cls), 25);
	TH_CHECK_EQ(scan_records(h, sm, 0, 99, sizeof(dst), cls), 40);
	/* a dst with room for one record and a half: the rest are UH_ERANGE */
	uh_key k0 = { UH_KEY_STRING, 0, "r00", 3, 0 };
	uint32_t c = 0;
	TH_CHECK_RC(uh_smap_get_record(h, sm, &k0, dst, sizeof(dst), &plen, &c));
	TH_CHECK_EQ(scan_records(h, sm, 0, 40, plen + plen / 2, cls), 40);
	TH_CHECK_RC(uh_smap_scan(h, sm, NULL, 0, &it));
	TH_CHECK_RC(uh_smap_next_records(h, sm, &it, NULL, 0, dst, plen + plen / 2, recs, 4, &n));
	TH_CHECK_EQ(n, 4);
	TH_CHECK(recs[0].status == 0 && recs[1].status == UH_ERANGE && recs[1].len == plen);
	/* in a block: the block's own write is what is copied */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_smap_set_inline(h, sm, &k0, "v", "blk", 3));
	TH_CHECK_RC(uh_smap_scan(h, sm, NULL, 0, &it));
	TH_CHECK_RC(uh_smap_next_records(h, sm, &it, NULL, 0, dst, sizeof(dst), recs, 1, &n));
	TH_CHECK(n == 1 && memcmp(dst + recs[0].at + 8, "\x03\0\0\0blk", 7) == 0);
	TH_CHECK_RC(uh_abort(h));
	/* a value that is not a record; bad arguments */
	uh_value iv = { .type = UH_T_I64, .u.i = 5 };
	TH_CHECK_RC(uh_smap_put(h, sm, &k0, &iv, 0));
	TH_CHECK_RC(uh_smap_scan(h, sm, NULL, 0, &it));
	TH_CHECK_ERR(uh_smap_next_records(h, sm, &it, NULL, 0, dst, sizeof(dst), recs, 4, &n),
		     UH_ETYPE);
	TH_CHECK_ERR(uh_smap_next_records(h, sm, &it, NULL, 0, dst, sizeof(dst), recs, 0, &n),
		     UH_EINVAL);
	TH_CHECK_ERR(uh_smap_next_records(h, sm, &it, NULL, 0, dst, sizeof(dst), NULL, 4, &n),
		     UH_EINVAL);
}

int main(void)
{
	static struct th_heapd d;
	uh_heap *h = NULL;
	uint32_t cls = 0;
	uh_off o = 0;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"heapd start + connect");
		th_heapd_cleanup(&d);
		return th_summary(SUITE);
	}
	test_layout(h, &cls);
	test_bad_declarations(h);
	test_values(h, cls, &o);
	test_get_record(h, cls, o);
	test_scan_records(h, cls);
	test_check_and_gc(&d);
	check_value(h, o, 1, "0123456789");
	uh_disconnect(h);
	/* after a restart (recovery and its mark walk records with inline
	 * values), the values are there */
	if (th_heapd_restart(&d) == 0 && th_connect(&d, 0, &h) == 0) {
		uh_off r = 0;
		TH_CHECK_RC(uh_root_get(h, "inline.rec", &r));
		check_value(h, r, 1, "0123456789");
		check_value(h, r, 3, "h\xc3\xa9");
		TH_CHECK_RC(uh_root_get(h, "inline.rec2", &r));
		check_value(h, r, 1, "new");
		uh_disconnect(h);
		test_check_and_gc(&d);
	} else {
		TH_CHECK(!"restart + reconnect");
	}
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
