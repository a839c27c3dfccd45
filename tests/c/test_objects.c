/*
 * test_objects.c -- objects and fields: many allocations and frees, every
 * field type through uh_read/uh_write (and uh_read of several fields at
 * once) and the typed accessors, strings and
 * bytes, references, freed and out-of-range objects, read-only handles,
 * session counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *SUITE = "test_objects";

/* Field indexes of class "All" (one field of every type). */
enum { F_BOOL, F_I8, F_I16, F_I32, F_I64, F_F32, F_F64, F_REF, F_STR, F_BYTES, F_N };

static const uh_field_spec all_fields[F_N] = {
	{ "b", UH_T_BOOL, 0 }, { "i8", UH_T_I8, 0 }, { "i16", UH_T_I16, 0 },
	{ "i32", UH_T_I32, 0 }, { "i64", UH_T_I64, 0 }, { "f32", UH_T_F32, 0 },
	{ "f64", UH_T_F64, 0 }, { "r", UH_T_REF, 0 }, { "s", UH_T_STRING, 0 },
	{ "by", UH_T_BYTES, 0 },
};

static uint32_t all_cls, node_cls;
static uint32_t off[F_N];	/* field offsets of "All" */

static void setup_classes(uh_heap *h)
{
	static const uh_field_spec node[] = { { "v", UH_T_I64, 0 }, { "next", UH_T_REF, 0 } };

	TH_CHECK_RC(uh_class_register(h, "All", all_fields, F_N, &all_cls));
	TH_CHECK_RC(uh_class_register(h, "Node", node, 2, &node_cls));
	for (uint32_t i = 0; i < F_N; i++) {
		uh_field_info fi;
		TH_CHECK_RC(uh_field_info_get(h, all_cls, i, &fi));
		off[i] = fi.offset;
	}
}

static void test_info(const struct th_heapd *d, uh_heap *h)
{
	uh_info in;

	TH_CHECK(uh_version() && uh_version()[0]);
	TH_CHECK_EQ(uh_format_version(), 10);
	TH_CHECK_RC(uh_heap_info(h, &in));
	TH_CHECK_EQ(in.durability, UH_DUR_MEMORY);
	TH_CHECK_EQ(in.format_version, 10);
	TH_CHECK_EQ(in.heap_size, 64ull << 20);
	TH_CHECK_EQ(in.readonly, 0);
	TH_CHECK(in.session >= 1);
	TH_CHECK(strstr(in.path, "heap.uh") != NULL);
	TH_CHECK(strcmp(uh_durability_name(UH_DUR_MEMORY), "memory") == 0);
	TH_CHECK(uh_base(h) != NULL);
	for (int e = UH_EINVAL; e >= UH_LAST_ERRCODE; e--)
		TH_CHECK(uh_strerror(e) && uh_strerror(e)[0]);
	(void)d;
}

/* Raw reads/writes of every width, then the typed accessors. */
static void test_fields(uh_heap *h)
{
	uh_off o = 0, o2 = 0;
	uint8_t b = 1, rb = 0;
	int8_t i8 = -7, r8 = 0;
	int16_t i16 = -30000, r16 = 0;
	int32_t i32 = -2000000000, r32 = 0;
	int64_t i64 = -(1ll << 62), r64 = 0;
	float f32 = 3.5f, rf32 = 0;
	double f64 = -1e300, rf64 = 0;
	uint32_t cls = 0;

	TH_CHECK_RC(uh_alloc(h, all_cls, &o));
	TH_CHECK_RC(uh_alloc(h, all_cls, &o2));
	TH_CHECK(o != 0 && o2 != 0 && o != o2);
	TH_CHECK_RC(uh_obj_class(h, o, &cls));
	TH_CHECK_EQ(cls, all_cls);

	/* a new object is zeroed */
	r64 = 1;
	TH_CHECK_RC(uh_read(h, o, off[F_I64], &r64, 8));
	TH_CHECK_EQ(r64, 0);

	TH_CHECK_RC(uh_write(h, o, off[F_BOOL], &b, 1));
	TH_CHECK_RC(uh_write(h, o, off[F_I8], &i8, 1));
	TH_CHECK_RC(uh_write(h, o, off[F_I16], &i16, 2));
	TH_CHECK_RC(uh_write(h, o, off[F_I32], &i32, 4));
	TH_CHECK_RC(uh_write(h, o, off[F_I64], &i64, 8));
	TH_CHECK_RC(uh_write(h, o, off[F_F32], &f32, 4));
	TH_CHECK_RC(uh_write(h, o, off[F_F64], &f64, 8));
	TH_CHECK_RC(uh_read(h, o, off[F_BOOL], &rb, 1));
	TH_CHECK_RC(uh_read(h, o, off[F_I8], &r8, 1));
	TH_CHECK_RC(uh_read(h, o, off[F_I16], &r16, 2));
	TH_CHECK_RC(uh_read(h, o, off[F_I32], &r32, 4));
	TH_CHECK_RC(uh_read(h, o, off[F_I64], &r64, 8));
	TH_CHECK_RC(uh_read(h, o, off[F_F32], &rf32, 4));
	TH_CHECK_RC(uh_read(h, o, off[F_F64], &rf64, 8));
	TH_CHECK_EQ(rb, 1);
	TH_CHECK_EQ(r8, i8);
	TH_CHECK_EQ(r16, i16);
	TH_CHECK_EQ(r32, i32);
	TH_CHECK_EQ(r64, i64);
	TH_CHECK(rf32 == f32);
	TH_CHECK(rf64 == f64);
	/* the other object is untouched */
	TH_CHECK_RC(uh_read(h, o2, off[F_I64], &r64, 8));
	TH_CHECK_EQ(r64, 0);

	/* field address = base + the reference's offset + field offset, for bindings */
	TH_CHECK(memcmp((char *)uh_base(h) + UH_REF_OFFSET(o) + off[F_I64], &i64, 8) == 0);

	/* typed accessors check the field type */
	TH_CHECK_RC(uh_set_i64(h, o, F_I64, 123456789012345ll));
	TH_CHECK_RC(uh_get_i64(h, o, F_I64, &r64));
	TH_CHECK_EQ(r64, 123456789012345ll);
	TH_CHECK_RC(uh_set_f64(h, o, F_F64, 2.25));
	TH_CHECK_RC(uh_get_f64(h, o, F_F64, &rf64));
	TH_CHECK(rf64 == 2.25);
	TH_CHECK_ERR(uh_get_i64(h, o, F_F64, &r64), UH_ETYPE);
	TH_CHECK_ERR(uh_set_i64(h, o, F_F64, 1), UH_ETYPE);
	TH_CHECK_ERR(uh_set_i64(h, o, F_REF, 1), UH_ETYPE);
	TH_CHECK_ERR(uh_set_f64(h, o, F_I64, 1.0), UH_ETYPE);
	TH_CHECK_ERR(uh_set_ref(h, o, F_I64, o2), UH_ETYPE);
	/* the i64 accessors serve every integer field */
	TH_CHECK_RC(uh_set_i64(h, o, F_I32, -5));
	TH_CHECK_RC(uh_get_i64(h, o, F_I32, &r64));
	TH_CHECK_EQ(r64, -5);
	TH_CHECK_RC(uh_read(h, o, off[F_I32], &r32, 4));
	TH_CHECK_EQ(r32, -5);
	TH_CHECK_ERR(uh_get_f64(h, o, F_I64, &rf64), UH_ETYPE);
	TH_CHECK_ERR(uh_get_ref(h, o, F_I64, &o2), UH_ETYPE);
	TH_CHECK_ERR(uh_get_i64(h, o, F_N, &r64), UH_ERANGE);

	/* references */
	uh_off r = 1;
	TH_CHECK_RC(uh_get_ref(h, o, F_REF, &r));
	TH_CHECK_EQ(r, 0);
	TH_CHECK_RC(uh_set_ref(h, o, F_REF, o2));
	TH_CHECK_RC(uh_get_ref(h, o, F_REF, &r));
	TH_CHECK_EQ(r, o2);
	TH_CHECK_RC(uh_set_ref(h, o2, F_REF, o2));	/* self reference */
	TH_CHECK_RC(uh_set_ref(h, o, F_REF, 0));	/* null */
	TH_CHECK_RC(uh_get_ref(h, o, F_REF, &r));
	TH_CHECK_EQ(r, 0);
	int rc = uh_set_ref(h, o, F_REF, o + 8);	/* not an object */
	TH_CHECK(rc == UH_ETYPE || rc == UH_EFREED);
	TH_CHECK_RC(uh_get_ref(h, o, F_REF, &r));
	TH_CHECK_EQ(r, 0);
}

static void test_typed_ref(uh_heap *h)
{
	uh_field_spec f[] = { { "node", UH_T_REF, node_cls } };
	uint32_t cls;
	uh_off holder, node, other;

	TH_CHECK_RC(uh_class_register(h, "NodeHolder", f, 1, &cls));
	TH_CHECK_RC(uh_alloc(h, cls, &holder));
	TH_CHECK_RC(uh_alloc(h, node_cls, &node));
	TH_CHECK_RC(uh_alloc(h, all_cls, &other));
	TH_CHECK_RC(uh_set_ref(h, holder, 0, node));
	TH_CHECK_ERR(uh_set_ref(h, holder, 0, other), UH_ETYPE);
	TH_CHECK(uh_errmsg()[0] != '\0');
}

static void test_strings(uh_heap *h)
{
	static const char txt[] = "h\xc3\xa9llo, w\xc3\xb6rld \xe2\x82\xac \xf0\x9f\x98\x80";
	static const char *bad[] = {
		"\xff", "ab\xc3\x28", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
		"\xe2\x82", "\x80",
	};
	static const uint8_t raw[] = { 0, 1, 2, 0xff, 0xfe, 0, 0x80 };
	const char *sd;
	const void *bd;
	size_t len;
	uh_off s = 0, bo = 0, e = 0, o = 0, got = 0;
	uint32_t cls;

	TH_CHECK_RC(uh_string_new(h, txt, sizeof(txt) - 1, &s));
	TH_CHECK_RC(uh_obj_class(h, s, &cls));
	TH_CHECK_EQ(cls, UH_CLASS_STRING);
	TH_CHECK_RC(uh_string_get(h, s, &sd, &len));
	TH_CHECK_EQ(len, sizeof(txt) - 1);
	TH_CHECK(len == sizeof(txt) - 1 && memcmp(sd, txt, len) == 0);

	TH_CHECK_RC(uh_string_new(h, "", 0, &e));
	TH_CHECK_RC(uh_string_get(h, e, &sd, &len));
	TH_CHECK_EQ(len, 0);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uh_off x = 0;
		TH_CHECK_ERR(uh_string_new(h, bad[i], strlen(bad[i]), &x), UH_EUTF8);
	}
	/* an embedded NUL is valid UTF-8 */
	TH_CHECK_RC(uh_string_new(h, "a\0b", 3, &e));

	TH_CHECK_RC(uh_bytes_new(h, raw, sizeof(raw), &bo));
	TH_CHECK_RC(uh_obj_class(h, bo, &cls));
	TH_CHECK_EQ(cls, UH_CLASS_BYTES);
	TH_CHECK_RC(uh_bytes_get(h, bo, &bd, &len));
	TH_CHECK_EQ(len, sizeof(raw));
	TH_CHECK(len == sizeof(raw) && memcmp(bd, raw, len) == 0);

	/* a large string gets its own region */
	size_t big = 200000;
	char *buf = malloc(big);
	if (buf) {
		for (size_t i = 0; i < big; i++)
			buf[i] = (char)('a' + i % 26);
		uh_off bs = 0;
		TH_CHECK_RC(uh_string_new(h, buf, big, &bs));
		TH_CHECK_RC(uh_string_get(h, bs, &sd, &len));
		TH_CHECK_EQ(len, big);
		TH_CHECK(len == big && memcmp(sd, buf, big) == 0);
		TH_CHECK_RC(uh_free(h, bs));
		free(buf);
	}

	/* string and bytes fields hold references to them */
	TH_CHECK_RC(uh_alloc(h, all_cls, &o));
	TH_CHECK_RC(uh_write(h, o, off[F_STR], &s, 8));
	TH_CHECK_RC(uh_write(h, o, off[F_BYTES], &bo, 8));
	TH_CHECK_RC(uh_read(h, o, off[F_STR], &got, 8));
	TH_CHECK_EQ(got, s);
	TH_CHECK_RC(uh_string_get(h, got, &sd, &len));
	TH_CHECK_EQ(len, sizeof(txt) - 1);

	/* wrong kinds */
	TH_CHECK_ERR(uh_string_get(h, o, &sd, &len), UH_ETYPE);
	TH_CHECK_ERR(uh_bytes_get(h, o, &bd, &len), UH_ETYPE);
	TH_CHECK_ERR(uh_string_get(h, 0, &sd, &len), UH_EFREED);
}

static void test_bad_offsets(uh_heap *h)
{
	uh_info in;
	uh_class_info ci;
	uh_off o = 0;
	uint64_t v = 0;
	uint32_t cls;
	int rc;

	TH_CHECK_RC(uh_heap_info(h, &in));
	TH_CHECK_RC(uh_class_info_get(h, node_cls, &ci));
	TH_CHECK_RC(uh_alloc(h, node_cls, &o));

	/* field offsets outside the payload or misaligned */
	TH_CHECK_ERR(uh_read(h, o, 16 + ci.payload_size, &v, 8), UH_ERANGE);
	TH_CHECK_ERR(uh_read(h, o, 0, &v, 8), UH_ERANGE);
	TH_CHECK_ERR(uh_read(h, o, 8, &v, 8), UH_ERANGE);
	TH_CHECK_ERR(uh_read(h, o, 17, &v, 8), UH_ERANGE);
	TH_CHECK_ERR(uh_write(h, o, 1u << 30, &v, 8), UH_ERANGE);
	TH_CHECK_ERR(uh_write(h, o, 0xfffffff8u, &v, 8), UH_ERANGE);
	rc = uh_read(h, o, 16, &v, 3);
	TH_CHECK(rc == UH_EINVAL || rc == UH_ERANGE);

	/* offsets that are not objects */
	const uh_off bad[] = { 0, 1, 8, o + 8, o + 16, in.heap_size - 8, in.heap_size,
			       in.heap_size + 4096, ~0ull, ~0ull - 15 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = uh_read(h, bad[i], 16, &v, 8);
		TH_CHECK(rc == UH_EFREED || rc == UH_ERANGE);
		if (rc != UH_EFREED && rc != UH_ERANGE)
			fprintf(stderr, "  read at offset %llu -> %d\n",
				(unsigned long long)bad[i], rc);
		rc = uh_write(h, bad[i], 16, &v, 8);
		TH_CHECK(rc == UH_EFREED || rc == UH_ERANGE);
		TH_CHECK_ERR(uh_obj_class(h, bad[i], &cls), UH_EFREED);
		TH_CHECK_ERR(uh_free(h, bad[i]), UH_EFREED);
	}
}

/* uh_read of several fields at once: as single reads give them, outside
 * and inside a block (with the block's own writes of several widths),
 * and its length and alignment checked. */
static void test_span_read(uh_heap *h)
{
	uh_class_info ci;
	uh_off o = 0, fresh = 0;
	int64_t i64 = -42;
	int16_t i16 = 7;
	int8_t i8 = -3;
	double f64 = 0.5;
	unsigned char span[256], want[256];

	TH_CHECK_RC(uh_class_info_get(h, all_cls, &ci));
	TH_CHECK(ci.payload_size % 8 == 0 && ci.payload_size <= sizeof(span));
	const uint32_t len = ci.payload_size;
	TH_CHECK_RC(uh_alloc(h, all_cls, &o));
	TH_CHECK_RC(uh_write(h, o, off[F_I64], &i64, 8));
	TH_CHECK_RC(uh_write(h, o, off[F_I16], &i16, 2));
	TH_CHECK_RC(uh_read(h, o, 16, span, len));
	memcpy(want, (char *)uh_base(h) + UH_REF_OFFSET(o) + 16, len);
	TH_CHECK(memcmp(span, want, len) == 0);
	TH_CHECK(memcmp(span + off[F_I64] - 16, &i64, 8) == 0);

	/* In a block: its writes over the bytes in place, and a new object. */
	TH_CHECK_RC(uh_begin(h));
	i64 = 99;
	TH_CHECK_RC(uh_write(h, o, off[F_I64], &i64, 8));
	TH_CHECK_RC(uh_write(h, o, off[F_I8], &i8, 1));
	TH_CHECK_RC(uh_write(h, o, off[F_F64], &f64, 8));
	TH_CHECK_RC(uh_read(h, o, 16, span, len));
	memcpy(want + off[F_I64] - 16, &i64, 8);
	memcpy(want + off[F_I8] - 16, &i8, 1);
	memcpy(want + off[F_F64] - 16, &f64, 8);
	TH_CHECK(memcmp(span, want, len) == 0);
	TH_CHECK_RC(uh_alloc(h, all_cls, &fresh));
	TH_CHECK_RC(uh_write(h, fresh, off[F_I16], &i16, 2));
	TH_CHECK_RC(uh_read(h, fresh, 16, span, len));
	TH_CHECK(memcmp(span + off[F_I16] - 16, &i16, 2) == 0);
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_read(h, o, 16, span, len));
	TH_CHECK(memcmp(span, want, len) == 0);

	/* A span is a multiple of 8 bytes at an 8-byte boundary, inside the
	 * payload; writes stay one field wide. */
	TH_CHECK_ERR(uh_read(h, o, 16, span, 12), UH_EINVAL);
	TH_CHECK(strstr(uh_errmsg(), "multiple of 8") != NULL);
	TH_CHECK_ERR(uh_read(h, o, 20, span, 16), UH_ERANGE);
	TH_CHECK_ERR(uh_read(h, o, 16, span, len + 8), UH_ERANGE);
	TH_CHECK_ERR(uh_write(h, o, 16, span, 16), UH_EINVAL);
	TH_CHECK_RC(uh_free(h, o));
	TH_CHECK_ERR(uh_read(h, o, 16, span, len), UH_EFREED);
	TH_CHECK_RC(uh_free(h, fresh));
}

static void test_freed(uh_heap *h)
{
	uh_off o = 0;
	uint32_t cls;
	int64_t v;
	uh_stats s0, s1;

	TH_CHECK_RC(uh_stats_get(h, &s0));
	TH_CHECK_RC(uh_alloc(h, node_cls, &o));
	TH_CHECK_RC(uh_set_i64(h, o, 0, 5));
	TH_CHECK_RC(uh_free(h, o));
	TH_CHECK_ERR(uh_get_i64(h, o, 0, &v), UH_EFREED);
	TH_CHECK_ERR(uh_set_i64(h, o, 0, 6), UH_EFREED);
	TH_CHECK_ERR(uh_obj_class(h, o, &cls), UH_EFREED);
	TH_CHECK_ERR(uh_read(h, o, 16, &v, 8), UH_EFREED);
	TH_CHECK_ERR(uh_free(h, o), UH_EFREED);
	TH_CHECK(uh_errmsg()[0] != '\0');
	TH_CHECK_RC(uh_stats_get(h, &s1));
	TH_CHECK_EQ(s1.allocs - s0.allocs, 1);
	TH_CHECK_EQ(s1.frees - s0.frees, 1);
}

/* 10k objects in a linked list, checked, then all freed. */
static void test_many(uh_heap *h)
{
	enum { N = 10000 };
	uh_off *objs = calloc(N, sizeof(*objs));
	uh_stats s0, s1;
	int bad = 0;

	if (!objs) {
		TH_CHECK(!"out of memory");
		return;
	}
	TH_CHECK_RC(uh_stats_get(h, &s0));
	for (int i = 0; i < N; i++) {
		if (uh_alloc(h, node_cls, &objs[i]) != 0 ||
		    uh_set_i64(h, objs[i], 0, i * 7) != 0 ||
		    (i > 0 && uh_set_ref(h, objs[i - 1], 1, objs[i]) != 0)) {
			th_fail(__FILE__, __LINE__, "building the list, object %d: %s",
				i, uh_errmsg());
			free(objs);
			return;
		}
	}
	/* walk the list from the head */
	uh_off cur = objs[0];
	for (int i = 0; i < N; i++) {
		int64_t v = -1;
		if (cur != objs[i] || uh_get_i64(h, cur, 0, &v) != 0 || v != i * 7) {
			bad++;
			break;
		}
		if (uh_get_ref(h, cur, 1, &cur) != 0) {
			bad++;
			break;
		}
	}
	TH_CHECK_EQ(bad, 0);
	TH_CHECK_EQ(cur, 0);
	/* all distinct, none overlapping */
	for (int i = 1; i < N && !bad; i++)
		if (objs[i] == objs[i - 1])
			bad++;
	TH_CHECK_EQ(bad, 0);
	for (int i = 0; i < N; i++)
		if (uh_free(h, objs[i]) != 0)
			bad++;
	TH_CHECK_EQ(bad, 0);
	TH_CHECK_RC(uh_stats_get(h, &s1));
	TH_CHECK_EQ(s1.allocs - s0.allocs, N);
	TH_CHECK_EQ(s1.frees - s0.frees, N);
	TH_CHECK(s1.arena_leases >= 1);

	/* freed slots are reused: a second round leases few new arenas */
	uint64_t leases_before = s1.arena_leases;
	for (int i = 0; i < N; i++)
		if (uh_alloc(h, node_cls, &objs[i]) != 0)
			bad++;
	TH_CHECK_EQ(bad, 0);
	TH_CHECK_RC(uh_stats_get(h, &s1));
	TH_CHECK(s1.arena_leases - leases_before <= 1);
	for (int i = 0; i < N; i++)
		uh_free(h, objs[i]);
	free(objs);
}

static void test_readonly(const struct th_heapd *d, uh_heap *h)
{
	uh_heap *ro;
	uh_off o = 0, x;
	int64_t v = 0;
	uh_info in;

	TH_CHECK_RC(uh_alloc(h, node_cls, &o));
	TH_CHECK_RC(uh_set_i64(h, o, 0, 77));
	if (th_connect(d, UH_READONLY, &ro) != 0) {
		TH_CHECK(!"readonly connect");
		return;
	}
	TH_CHECK_RC(uh_heap_info(ro, &in));
	TH_CHECK_EQ(in.readonly, 1);
	TH_CHECK_RC(uh_get_i64(ro, o, 0, &v));
	TH_CHECK_EQ(v, 77);
	TH_CHECK_ERR(uh_set_i64(ro, o, 0, 1), UH_EREADONLY);
	TH_CHECK_ERR(uh_write(ro, o, 16, &v, 8), UH_EREADONLY);
	TH_CHECK_ERR(uh_alloc(ro, node_cls, &x), UH_EREADONLY);
	TH_CHECK_ERR(uh_free(ro, o), UH_EREADONLY);
	/* a read-only block: a snapshot, and still no writes */
	TH_CHECK_RC(uh_begin(ro));
	TH_CHECK_RC(uh_get_i64(ro, o, 0, &v));
	TH_CHECK_EQ(v, 77);
	TH_CHECK_ERR(uh_set_i64(ro, o, 0, 1), UH_EREADONLY);
	TH_CHECK_ERR(uh_alloc(ro, node_cls, &x), UH_EREADONLY);
	TH_CHECK_RC(uh_commit(ro));
	uh_disconnect(ro);
	TH_CHECK_RC(uh_get_i64(h, o, 0, &v));
	TH_CHECK_EQ(v, 77);
	uh_free(h, o);
}

/* A session that leases an arena another session used before must not
 * hand out that session's live objects again. */
static void test_arena_reuse(const struct th_heapd *d)
{
	uh_heap *h1, *h2;
	uh_off kept = 0, fresh = 0, got = 0;
	int64_t v = 0;

	if (th_connect(d, 0, &h1) != 0) {
		TH_CHECK(!"connect");
		return;
	}
	TH_CHECK_RC(uh_begin(h1));
	TH_CHECK_RC(uh_alloc(h1, node_cls, &kept));
	TH_CHECK_RC(uh_set_i64(h1, kept, 0, 4242));
	TH_CHECK_RC(uh_root_set(h1, "objects.kept", kept));
	TH_CHECK_RC(uh_commit(h1));
	uh_disconnect(h1);	/* its arenas go back to heapd */

	if (th_connect(d, 0, &h2) != 0) {
		TH_CHECK(!"connect");
		return;
	}
	for (int i = 0; i < 3; i++) {
		TH_CHECK_RC(uh_alloc(h2, node_cls, &fresh));
		TH_CHECK(fresh != kept);
		TH_CHECK_RC(uh_set_i64(h2, fresh, 0, -1));
	}
	TH_CHECK_RC(uh_root_get(h2, "objects.kept", &got));
	TH_CHECK_EQ(got, kept);
	TH_CHECK_RC(uh_get_i64(h2, kept, 0, &v));
	TH_CHECK_EQ(v, 4242);
	uh_disconnect(h2);
}

static void test_bad_class(uh_heap *h)
{
	uh_off o = 0;

	TH_CHECK_ERR(uh_alloc(h, 4000, &o), UH_ENOTFOUND);
	TH_CHECK_ERR(uh_alloc(h, 0, &o), UH_ENOTFOUND);
	/* strings and bytes are made with uh_string_new/uh_bytes_new */
	int rc = uh_alloc(h, UH_CLASS_STRING, &o);
	TH_CHECK(rc == UH_EINVAL || rc == UH_ENOTFOUND || rc == UH_ETYPE);
}

int main(void)
{
	static struct th_heapd d;
	uh_heap *h;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"heapd start + connect");
		return th_summary(SUITE);
	}
	setup_classes(h);
	test_info(&d, h);
	test_fields(h);
	test_typed_ref(h);
	test_strings(h);
	test_bad_offsets(h);
	test_span_read(h);
	test_freed(h);
	test_many(h);
	test_readonly(&d, h);
	test_bad_class(h);
	test_arena_reuse(&d);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
