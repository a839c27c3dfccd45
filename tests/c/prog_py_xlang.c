/*
 * prog_py_xlang.c -- the C side of the Python binding's cross-language
 * tests (bindings-python/tests/test_xlang.py).
 *
 * Usage: prog_py_xlang <command> <socket>
 *
 *   create    C -> Python. Registers two classes Python never declares and
 *             publishes, in one block:
 *               xlang.Point {x i64, y i64, w f64, label string, next ref}
 *               xlang.Kinds {flag bool, tiny i8, small i16, mid i32,
 *                            ratio f32, raw bytes, big i64}
 *             root "xlang.points": a chain of NPOINTS points, point i has
 *               x = i + 1, y = -10 * (i + 1), w = 1.5 * (i + 1),
 *               label = LABELS[i], next = point i + 1 (the last: null);
 *             root "xlang.kinds": flag 1, tiny -128, small 32767,
 *               mid INT32_MIN, ratio 0.5, raw "\0\1\377\0", big INT64_MAX;
 *             root "xlang.index": a hash map with string keys:
 *               "origin" -> point 0, "count" -> NPOINTS (i64),
 *               "name" -> "points" (string), "ratio" -> 0.25 (f64),
 *               "yes" -> true (bool);
 *             root "xlang.inline": a hash map with string keys put with
 *               uh_map_put_bytes, for n in INL_LENS: "s<n>" -> inl_text(n),
 *               "b<n>" -> inl_bytes(n) (values of up to UH_MAP_INLINE_MAX
 *               bytes kept in their entries, the longer as objects).
 *
 *   verify    Python's updates of what create made are visible from C:
 *               every point: x + 100, y unchanged, w * 2, label + "/py";
 *               the last point's next = point 0 (a cycle);
 *               kinds: flag 0, tiny 127, small unchanged, mid INT32_MAX,
 *               ratio -2.25, raw "py\0bytes", big INT64_MIN;
 *               index: "count" -> NPOINTS + 1, "py" -> "from python"
 *               (a string in its entry or an object: either place),
 *               "yes" removed, the rest unchanged.
 *
 *   check-py  Python -> C. Checks what test_xlang.py created with classes
 *             and collections Python declared (see check_py() below).
 *
 * Prints one line per failed check and "<command>: N passed, N failed";
 * exits 0 when every check passed, 1 otherwise, 2 on bad usage.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define NPOINTS 3
static const char *const LABELS[NPOINTS] = { "point-0", "p\xc3\xbcnkt \xe2\x9c\x93", "" };

static uh_heap *h;

static const uh_field_spec point_fields[] = {
	{ "x", UH_T_I64, 0 },
	{ "y", UH_T_I64, 0 },
	{ "w", UH_T_F64, 0 },
	{ "label", UH_T_STRING, 0 },
	{ "next", UH_T_REF, 0 },
};

static const uh_field_spec kinds_fields[] = {
	{ "flag", UH_T_BOOL, 0 },
	{ "tiny", UH_T_I8, 0 },
	{ "small", UH_T_I16, 0 },
	{ "mid", UH_T_I32, 0 },
	{ "ratio", UH_T_F32, 0 },
	{ "raw", UH_T_BYTES, 0 },
	{ "big", UH_T_I64, 0 },
};

static const char RAW_C[] = { 0, 1, (char)0xff, 0 };
static const char RAW_PY[] = "py\0bytes";	/* 8 bytes */

/* ---- field access by name (the class table decides the index) ---- */

static uint32_t field(uint32_t cls, const char *name)
{
	uint32_t idx = UINT32_MAX;
	int rc = uh_field_find(h, cls, name, &idx);

	if (rc != 0)
		th_fail(__FILE__, __LINE__, "field %s: %s: %s", name, uh_strerror(rc),
			uh_errmsg());
	return idx;
}

static int64_t get_i(uh_off o, uint32_t cls, const char *name)
{
	int64_t v = 0;
	int rc = uh_get_i64(h, o, field(cls, name), &v);

	if (rc != 0)
		th_fail(__FILE__, __LINE__, "get %s: %s: %s", name, uh_strerror(rc), uh_errmsg());
	return v;
}

static double get_f(uh_off o, uint32_t cls, const char *name)
{
	double v = 0;
	int rc = uh_get_f64(h, o, field(cls, name), &v);

	if (rc != 0)
		th_fail(__FILE__, __LINE__, "get %s: %s: %s", name, uh_strerror(rc), uh_errmsg());
	return v;
}

static uh_off get_r(uh_off o, uint32_t cls, const char *name)
{
	uh_off v = 0;
	int rc = uh_get_ref(h, o, field(cls, name), &v);

	if (rc != 0)
		th_fail(__FILE__, __LINE__, "get %s: %s: %s", name, uh_strerror(rc), uh_errmsg());
	return v;
}

/* 1 when s is a string object holding exactly want[0..len). */
static int string_is(uh_off s, const char *want, size_t len)
{
	const char *data;
	size_t n;

	if (s == 0 || uh_string_get(h, s, &data, &n) != 0)
		return 0;
	return n == len && memcmp(data, want, len) == 0;
}

static int bytes_is(uh_off b, const void *want, size_t len)
{
	const void *data;
	size_t n;

	if (b == 0 || uh_bytes_get(h, b, &data, &n) != 0)
		return 0;
	return n == len && memcmp(data, want, len) == 0;
}

/* 1 when v is a string (type UH_T_STRING) or bytes (UH_T_BYTES) value
 * holding exactly want[0..len), in an object of its own or, in a hash
 * map, inline in its entry (UH_T_ISTRING, UH_T_IBYTES): a reader takes
 * either place. */
static int value_is(const uh_value *v, uint32_t type, const void *want, size_t len)
{
	uint32_t inl = type == UH_T_STRING ? UH_T_ISTRING : UH_T_IBYTES;
	const void *data;
	size_t n;

	if ((v->type != type && v->type != inl) || uh_value_bytes(h, v, &data, &n) != 0)
		return 0;
	return n == len && memcmp(data, want, len) == 0;
}

/* ---- the inline-values map, the same on both sides ----
 * For n in INL_LENS: "s<n>" -> inl_text(n), "b<n>" -> inl_bytes(n). The
 * lengths are 0, 1 and UH_MAP_INLINE_MAX (kept in the entry) and one
 * more (an object); test_xlang.py makes the same values. */
static const size_t INL_LENS[] = { 0, 1, UH_MAP_INLINE_MAX, UH_MAP_INLINE_MAX + 1 };
#define NINL (sizeof(INL_LENS) / sizeof(INL_LENS[0]))
#define INL_BUF (UH_MAP_INLINE_MAX + 1)

/* n UTF-8 bytes: U+00E9 (2 bytes) n / 2 times, then "x" if n is odd. */
static void inl_text(size_t n, char *buf)
{
	for (size_t i = 0; i + 1 < n; i += 2) {
		buf[i] = (char)0xc3;
		buf[i + 1] = (char)0xa9;
	}
	if (n % 2)
		buf[n - 1] = 'x';
}

/* n bytes, byte i = i * 7 mod 256: NULs and 0xff among them. */
static void inl_bytes(size_t n, char *buf)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)(i * 7 % 256);
}

/* Check that field `name` of cls has type `type` in the class table. */
static void check_field_type(uint32_t cls, const char *name, uint32_t type)
{
	uh_field_info fi;
	uint32_t idx = field(cls, name);

	TH_CHECK_RC(uh_field_info_get(h, cls, idx, &fi));
	if (fi.type != type)
		th_fail(__FILE__, __LINE__, "field %s has type %u, want %u", name, fi.type, type);
	else
		th_passed++;
}

static uh_key skey(const char *s)
{
	uh_key k = { UH_KEY_STRING, 0, s, strlen(s), 0 };

	return k;
}

static uh_key bkey(const void *p, size_t len)
{
	uh_key k = { UH_KEY_BYTES, 0, p, len, 0 };

	return k;
}

static uh_key ikey(int64_t i)
{
	uh_key k = { UH_KEY_I64, 0, NULL, 0, i };

	return k;
}

static uh_value ival(uint32_t type, int64_t i)
{
	uh_value v = { type, 0, { .i = i } };

	return v;
}

static uh_value fval(double f)
{
	uh_value v = { UH_T_F64, 0, { .f = f } };

	return v;
}

static uh_value rval(uint32_t type, uh_off r)
{
	uh_value v = { type, 0, { .ref = r } };

	return v;
}

/* Map value of a string key; type 0 when absent (or on error). */
static uh_value map_get(uh_off m, const char *key)
{
	uh_key k = skey(key);
	uh_value v;
	int rc = uh_map_get(h, m, &k, &v);

	if (rc != 0) {
		if (rc != UH_ENOTFOUND)
			th_fail(__FILE__, __LINE__, "map get %s: %s: %s", key, uh_strerror(rc),
				uh_errmsg());
		memset(&v, 0, sizeof(v));
	}
	return v;
}

static uh_off root(const char *name)
{
	uh_off o = 0;
	int rc = uh_root_get(h, name, &o);

	if (rc != 0)
		th_fail(__FILE__, __LINE__, "root %s: %s: %s", name, uh_strerror(rc), uh_errmsg());
	return o;
}

/* ---- create ---- */

static int new_string(const char *s, size_t len, uh_off *out)
{
	return uh_string_new(h, s, len, out);
}

static int create_points(uint32_t pcls, uh_off *first)
{
	uh_off pts[NPOINTS];
	uint32_t label = field(pcls, "label");
	int rc = 0;

	for (int i = 0; rc == 0 && i < NPOINTS; i++) {
		uh_off s = 0;
		rc = uh_alloc(h, pcls, &pts[i]);
		if (rc == 0) rc = uh_set_i64(h, pts[i], field(pcls, "x"), i + 1);
		if (rc == 0) rc = uh_set_i64(h, pts[i], field(pcls, "y"), -10 * (i + 1));
		if (rc == 0) rc = uh_set_f64(h, pts[i], field(pcls, "w"), 1.5 * (i + 1));
		if (rc == 0) rc = new_string(LABELS[i], strlen(LABELS[i]), &s);
		if (rc == 0) rc = uh_set_ref(h, pts[i], label, s);
	}
	for (int i = 0; rc == 0 && i + 1 < NPOINTS; i++)
		rc = uh_set_ref(h, pts[i], field(pcls, "next"), pts[i + 1]);
	*first = pts[0];
	return rc;
}

static int create_kinds(uint32_t kcls, uh_off *out)
{
	uh_off raw = 0;
	int rc = uh_alloc(h, kcls, out);

	if (rc == 0) rc = uh_set_i64(h, *out, field(kcls, "flag"), 1);
	if (rc == 0) rc = uh_set_i64(h, *out, field(kcls, "tiny"), -128);
	if (rc == 0) rc = uh_set_i64(h, *out, field(kcls, "small"), 32767);
	if (rc == 0) rc = uh_set_i64(h, *out, field(kcls, "mid"), INT32_MIN);
	if (rc == 0) rc = uh_set_f64(h, *out, field(kcls, "ratio"), 0.5);
	if (rc == 0) rc = uh_bytes_new(h, RAW_C, sizeof(RAW_C), &raw);
	if (rc == 0) rc = uh_set_ref(h, *out, field(kcls, "raw"), raw);
	if (rc == 0) rc = uh_set_i64(h, *out, field(kcls, "big"), INT64_MAX);
	return rc;
}

static int create_index(uh_off first, uh_off *out)
{
	uh_off name = 0;
	uh_key k;
	uh_value v;
	int rc = uh_map_new(h, UH_KEY_STRING, out);

	k = skey("origin"), v = rval(UH_T_REF, first);
	if (rc == 0) rc = uh_map_put(h, *out, &k, &v, 0);
	k = skey("count"), v = ival(UH_T_I64, NPOINTS);
	if (rc == 0) rc = uh_map_put(h, *out, &k, &v, 0);
	if (rc == 0) rc = new_string("points", 6, &name);
	k = skey("name"), v = rval(UH_T_STRING, name);
	if (rc == 0) rc = uh_map_put(h, *out, &k, &v, 0);
	k = skey("ratio"), v = fval(0.25);
	if (rc == 0) rc = uh_map_put(h, *out, &k, &v, 0);
	k = skey("yes"), v = ival(UH_T_BOOL, 1);
	if (rc == 0) rc = uh_map_put(h, *out, &k, &v, 0);
	return rc;
}

/* Key <c><n> of map m := inl_text(n) (c 's') or inl_bytes(n) (c 'b'). */
static int put_inline(uh_off m, char c, size_t n)
{
	char name[16], buf[INL_BUF];

	snprintf(name, sizeof(name), "%c%zu", c, n);
	uh_key k = skey(name);
	(c == 's' ? inl_text : inl_bytes)(n, buf);
	return uh_map_put_bytes(h, m, &k, c == 's' ? UH_T_STRING : UH_T_BYTES, buf, n, 0);
}

static int create_inline(uh_off *out)
{
	int rc = uh_map_new(h, UH_KEY_STRING, out);

	for (size_t i = 0; rc == 0 && i < NINL; i++) {
		rc = put_inline(*out, 's', INL_LENS[i]);
		if (rc == 0)
			rc = put_inline(*out, 'b', INL_LENS[i]);
	}
	return rc;
}

static int create(void)
{
	uint32_t pcls, kcls;
	uh_off first = 0, kinds = 0, index = 0, inl = 0;
	int rc = uh_class_register(h, "xlang.Point", point_fields, 5, &pcls);

	if (rc == 0) rc = uh_class_register(h, "xlang.Kinds", kinds_fields, 7, &kcls);
	if (rc == 0) rc = uh_begin(h);
	if (rc == 0) rc = create_points(pcls, &first);
	if (rc == 0) rc = create_kinds(kcls, &kinds);
	if (rc == 0) rc = create_index(first, &index);
	if (rc == 0) rc = create_inline(&inl);
	if (rc == 0) rc = uh_root_set(h, "xlang.points", first);
	if (rc == 0) rc = uh_root_set(h, "xlang.kinds", kinds);
	if (rc == 0) rc = uh_root_set(h, "xlang.index", index);
	if (rc == 0) rc = uh_root_set(h, "xlang.inline", inl);
	if (rc == 0)
		rc = uh_commit(h);
	else if (uh_in_block(h))
		uh_abort(h);
	TH_CHECK_RC(rc);
	if (rc == 0)
		printf("created %d points, kinds, index and inline values\n", NPOINTS);
	return rc;
}

/* ---- verify ---- */

static void verify_points(uint32_t pcls)
{
	uh_off first = root("xlang.points"), p = first;
	char want[64];

	for (int i = 0; i < NPOINTS && p; i++) {
		TH_CHECK_EQ(get_i(p, pcls, "x"), i + 1 + 100);
		TH_CHECK_EQ(get_i(p, pcls, "y"), -10 * (i + 1));
		TH_CHECK(get_f(p, pcls, "w") == 3.0 * (i + 1));
		snprintf(want, sizeof(want), "%s/py", LABELS[i]);
		if (!string_is(get_r(p, pcls, "label"), want, strlen(want)))
			th_fail(__FILE__, __LINE__, "point %d: label is not \"%s\"", i, want);
		else
			th_passed++;
		p = get_r(p, pcls, "next");
		if (i == NPOINTS - 1)
			TH_CHECK(p == first);	/* Python closed the cycle */
		else
			TH_CHECK(p != 0);
	}
}

static void verify_kinds(uint32_t kcls)
{
	uh_off k = root("xlang.kinds");

	TH_CHECK_EQ(get_i(k, kcls, "flag"), 0);
	TH_CHECK_EQ(get_i(k, kcls, "tiny"), 127);
	TH_CHECK_EQ(get_i(k, kcls, "small"), 32767);
	TH_CHECK_EQ(get_i(k, kcls, "mid"), INT32_MAX);
	TH_CHECK(get_f(k, kcls, "ratio") == -2.25);
	TH_CHECK(bytes_is(get_r(k, kcls, "raw"), RAW_PY, sizeof(RAW_PY) - 1));
	TH_CHECK(get_i(k, kcls, "big") == INT64_MIN);
}

static void verify_index(void)
{
	uh_off m = root("xlang.index");
	uint64_t len = 0;
	uh_value v;

	TH_CHECK_RC(uh_map_len(h, m, &len));
	TH_CHECK_EQ(len, 5);	/* origin, count, name, ratio, py */
	v = map_get(m, "origin");
	TH_CHECK(v.type == UH_T_REF && v.u.ref == root("xlang.points"));
	v = map_get(m, "count");
	TH_CHECK(v.type == UH_T_I64 && v.u.i == NPOINTS + 1);
	v = map_get(m, "name");
	TH_CHECK(v.type == UH_T_STRING && string_is(v.u.ref, "points", 6));
	v = map_get(m, "ratio");
	TH_CHECK(v.type == UH_T_F64 && v.u.f == 0.25);
	v = map_get(m, "py");
	TH_CHECK(value_is(&v, UH_T_STRING, "from python", 11));
	v = map_get(m, "yes");
	TH_CHECK(v.type == 0);	/* removed by Python */
}

static int verify(void)
{
	uint32_t pcls = 0, kcls = 0;

	TH_CHECK_RC(uh_class_find(h, "xlang.Point", &pcls));
	TH_CHECK_RC(uh_class_find(h, "xlang.Kinds", &kcls));
	if (th_failed)
		return 1;
	verify_points(pcls);
	verify_kinds(kcls);
	verify_index();
	return th_failed ? 1 : 0;
}

/* ---- check-py ----
 *
 * What test_xlang.py creates before running `check-py`:
 *   class "pyx.Person": name string, age i32, score f64, active bool,
 *     tag bytes, friend ref, level i8, rank i16, weight f32, id i64
 *   alice: "Alice", 30, 97.5, True, b"\0A\0", bob, -5, 1000, 0.5, 1 << 40
 *   bob: "B\u00f8b \U0001f40d", 40, -1.25, False, b"", alice, 127, -32768,
 *     -2.0, -1
 *   root "pyx.alice" = alice
 *   root "pyx.map": PMap(str): "alice" -> alice, "bob" -> bob, "n" -> 42,
 *     "pi" -> 3.5, "s" -> "text \u2713", "b" -> b"\0\xff", "t" -> True,
 *     "none" -> None
 *   root "pyx.imap": PMap(int): i -> i * i for i in -5..99
 *   root "pyx.smap": PSortedMap(bytes): b"k%03d" % i -> i for i in 0..49
 *     (inserted in a shuffled order)
 *   root "pyx.list": PList [1, "two", 3.0, None, alice]
 *   root "pyx.arr": PArray("i32", [0, -1, 2, -3, 4])
 *   root "pyx.inline": PMap(str), the values of create_inline (above)
 *   (a PMap keeps a str or bytes value of up to UH_MAP_INLINE_MAX bytes
 *   in its entry, so "s" and "b" of "pyx.map" are there too)
 */

static const char BOB[] = "B\xc3\xb8" "b \xf0\x9f\x90\x8d";

static void check_person(uint32_t cls, uh_off p, uh_off friend_, int is_alice)
{
	TH_CHECK(p != 0);
	if (!p)
		return;
	if (is_alice) {
		TH_CHECK(string_is(get_r(p, cls, "name"), "Alice", 5));
		TH_CHECK_EQ(get_i(p, cls, "age"), 30);
		TH_CHECK(get_f(p, cls, "score") == 97.5);
		TH_CHECK_EQ(get_i(p, cls, "active"), 1);
		TH_CHECK(bytes_is(get_r(p, cls, "tag"), "\0A\0", 3));
		TH_CHECK_EQ(get_i(p, cls, "level"), -5);
		TH_CHECK_EQ(get_i(p, cls, "rank"), 1000);
		TH_CHECK(get_f(p, cls, "weight") == 0.5);
		TH_CHECK(get_i(p, cls, "id") == (int64_t)1 << 40);
	} else {
		TH_CHECK(string_is(get_r(p, cls, "name"), BOB, sizeof(BOB) - 1));
		TH_CHECK_EQ(get_i(p, cls, "age"), 40);
		TH_CHECK(get_f(p, cls, "score") == -1.25);
		TH_CHECK_EQ(get_i(p, cls, "active"), 0);
		TH_CHECK(bytes_is(get_r(p, cls, "tag"), "", 0));	/* empty, not null */
		TH_CHECK_EQ(get_i(p, cls, "level"), 127);
		TH_CHECK_EQ(get_i(p, cls, "rank"), -32768);
		TH_CHECK(get_f(p, cls, "weight") == -2.0);
		TH_CHECK_EQ(get_i(p, cls, "id"), -1);
	}
	TH_CHECK(get_r(p, cls, "friend") == friend_);
}

static void check_layout(uint32_t cls)
{
	static const struct { const char *name; uint32_t type; } want[] = {
		{ "name", UH_T_STRING }, { "age", UH_T_I32 }, { "score", UH_T_F64 },
		{ "active", UH_T_BOOL }, { "tag", UH_T_BYTES }, { "friend", UH_T_REF },
		{ "level", UH_T_I8 }, { "rank", UH_T_I16 }, { "weight", UH_T_F32 },
		{ "id", UH_T_I64 },
	};
	uh_class_info ci;

	TH_CHECK_RC(uh_class_info_get(h, cls, &ci));
	TH_CHECK_EQ(ci.nfields, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uh_field_info fi;
		TH_CHECK_RC(uh_field_info_get(h, cls, (uint32_t)i, &fi));
		/* declaration order is layout order */
		TH_CHECK(strcmp(fi.name, want[i].name) == 0);
		check_field_type(cls, want[i].name, want[i].type);
	}
}

static void check_py_map(uh_off alice, uh_off bob)
{
	uh_off m = root("pyx.map");
	uint64_t len = 0;
	uint32_t kind = 0;
	uh_value v;

	TH_CHECK_RC(uh_map_key_kind(h, m, &kind));
	TH_CHECK_EQ(kind, UH_KEY_STRING);
	TH_CHECK_RC(uh_map_len(h, m, &len));
	TH_CHECK_EQ(len, 8);
	v = map_get(m, "alice");
	TH_CHECK(v.type == UH_T_REF && v.u.ref == alice);
	v = map_get(m, "bob");
	TH_CHECK(v.type == UH_T_REF && v.u.ref == bob);
	v = map_get(m, "n");
	TH_CHECK(v.type == UH_T_I64 && v.u.i == 42);
	v = map_get(m, "pi");
	TH_CHECK(v.type == UH_T_F64 && v.u.f == 3.5);
	v = map_get(m, "s");
	TH_CHECK(v.type == UH_T_ISTRING && value_is(&v, UH_T_STRING, "text \xe2\x9c\x93", 8));
	v = map_get(m, "b");
	TH_CHECK(v.type == UH_T_IBYTES && value_is(&v, UH_T_BYTES, "\0\xff", 2));
	v = map_get(m, "t");
	TH_CHECK(v.type == UH_T_BOOL && v.u.i == 1);
	{
		/* None: present, and either no type or a null reference */
		uh_key k = skey("none");
		int rc = uh_map_get(h, m, &k, &v);
		TH_CHECK_RC(rc);
		TH_CHECK(rc == 0 && (v.type == 0 || ((v.type == UH_T_REF || v.type == UH_T_STRING ||
						      v.type == UH_T_BYTES) && v.u.ref == 0)));
	}
	v = map_get(m, "missing");
	TH_CHECK(v.type == 0);
}

static void check_py_imap(void)
{
	uh_off m = root("pyx.imap");
	uint64_t len = 0;
	uint32_t kind = 0;
	int bad = 0;

	TH_CHECK_RC(uh_map_key_kind(h, m, &kind));
	TH_CHECK_EQ(kind, UH_KEY_I64);
	TH_CHECK_RC(uh_map_len(h, m, &len));
	TH_CHECK_EQ(len, 105);
	for (int64_t i = -5; i < 100; i++) {
		uh_key k = ikey(i);
		uh_value v;
		if (uh_map_get(h, m, &k, &v) != 0 || v.type != UH_T_I64 || v.u.i != i * i) {
			if (!bad++)
				th_fail(__FILE__, __LINE__, "imap[%lld] wrong", (long long)i);
		}
	}
	TH_CHECK_EQ(bad, 0);
}

static void check_py_smap(void)
{
	uh_off m = root("pyx.smap");
	uh_iter it;
	uh_key k;
	uh_value v;
	uint64_t len = 0;
	uint32_t kind = 0;
	int n = 0, bad = 0;
	char want[16];

	TH_CHECK_RC(uh_smap_key_kind(h, m, &kind));
	TH_CHECK_EQ(kind, UH_KEY_BYTES);
	TH_CHECK_RC(uh_smap_len(h, m, &len));
	TH_CHECK_EQ(len, 50);
	TH_CHECK_RC(uh_smap_scan(h, m, NULL, 0, &it));
	while (uh_smap_next(h, m, &it, &k, &v) == 0) {
		snprintf(want, sizeof(want), "k%03d", n);
		if (k.len != 4 || memcmp(k.data, want, 4) != 0 || v.type != UH_T_I64 || v.u.i != n)
			bad++;
		n++;
	}
	TH_CHECK_EQ(n, 50);
	TH_CHECK_EQ(bad, 0);
	/* reverse scan from "k025": k025, k024, ... k000 */
	{
		uh_key from = bkey("k025", 4);
		TH_CHECK_RC(uh_smap_scan(h, m, &from, UH_SCAN_REVERSE, &it));
		n = 25;
		while (uh_smap_next(h, m, &it, &k, &v) == 0) {
			if (v.type != UH_T_I64 || v.u.i != n)
				bad++;
			n--;
		}
		TH_CHECK_EQ(n, -1);
		TH_CHECK_EQ(bad, 0);
	}
}

static void check_py_list(uh_off alice)
{
	uh_off l = root("pyx.list");
	uint64_t len = 0;
	uh_value v;

	TH_CHECK_RC(uh_list_len(h, l, &len));
	TH_CHECK_EQ(len, 5);
	TH_CHECK_RC(uh_list_get(h, l, 0, &v));
	TH_CHECK(v.type == UH_T_I64 && v.u.i == 1);
	TH_CHECK_RC(uh_list_get(h, l, 1, &v));
	TH_CHECK(v.type == UH_T_STRING && string_is(v.u.ref, "two", 3));
	TH_CHECK_RC(uh_list_get(h, l, 2, &v));
	TH_CHECK(v.type == UH_T_F64 && v.u.f == 3.0);
	TH_CHECK_RC(uh_list_get(h, l, 3, &v));
	TH_CHECK(v.type == 0 || v.u.ref == 0);
	TH_CHECK_RC(uh_list_get(h, l, 4, &v));
	TH_CHECK(v.type == UH_T_REF && v.u.ref == alice);
}

static void check_py_array(void)
{
	static const int64_t want[] = { 0, -1, 2, -3, 4 };
	uh_off a = root("pyx.arr");
	uint64_t len = 0;
	uint32_t et = 0;

	TH_CHECK_RC(uh_array_len(h, a, &len));
	TH_CHECK_EQ(len, 5);
	TH_CHECK_RC(uh_array_elem_type(h, a, &et));
	TH_CHECK_EQ(et, UH_T_I32);
	for (uint64_t i = 0; i < 5 && i < len; i++) {
		uh_value v;
		TH_CHECK_RC(uh_array_get(h, a, i, &v));
		TH_CHECK(v.u.i == want[i]);
	}
}

/* The value of key (s<n> or b<n>) is where a hash map keeps one of its
 * length, and holds what create_inline puts there. */
static int inline_entry_is(const uh_key *k, const uh_value *v)
{
	char want[INL_BUF], name[8];
	size_t n = 0;

	if (k->len < 2 || k->len >= sizeof(name))
		return 0;
	memcpy(name, k->data, k->len);	/* a key's bytes end with no NUL */
	name[k->len] = 0;
	int text = name[0] == 's';
	if ((!text && name[0] != 'b') || sscanf(name + 1, "%zu", &n) != 1 || n > sizeof(want))
		return 0;
	(text ? inl_text : inl_bytes)(n, want);
	uint32_t type = n <= UH_MAP_INLINE_MAX ? (text ? UH_T_ISTRING : UH_T_IBYTES)
					       : (text ? UH_T_STRING : UH_T_BYTES);
	return v->type == type && value_is(v, text ? UH_T_STRING : UH_T_BYTES, want, n);
}

/* "pyx.inline": every value by get and by iteration. */
static void check_py_inline(void)
{
	uh_off m = root("pyx.inline");
	char name[16];
	uint64_t len = 0;
	uh_iter it = { 0 };
	uh_key k;
	uh_value v;
	int n = 0, bad = 0;

	TH_CHECK_RC(uh_map_len(h, m, &len));
	TH_CHECK_EQ(len, 2 * NINL);
	for (size_t i = 0; i < 2 * NINL; i++) {
		snprintf(name, sizeof(name), "%c%zu", i % 2 ? 'b' : 's', INL_LENS[i / 2]);
		k = skey(name);
		v = map_get(m, name);
		if (!inline_entry_is(&k, &v))
			th_fail(__FILE__, __LINE__, "pyx.inline[%s] is not as made", name);
		else
			th_passed++;
	}
	while (uh_map_next(h, m, &it, &k, &v) == 0) {
		bad += !inline_entry_is(&k, &v);
		n++;
	}
	TH_CHECK_EQ(n, 2 * NINL);
	TH_CHECK_EQ(bad, 0);
}

static int check_py(void)
{
	uint32_t cls = 0, ocls = 0;
	uh_off alice, bob;

	TH_CHECK_RC(uh_class_find(h, "pyx.Person", &cls));
	if (th_failed)
		return 1;
	check_layout(cls);
	alice = root("pyx.alice");
	TH_CHECK_RC(uh_obj_class(h, alice, &ocls));
	TH_CHECK_EQ(ocls, cls);
	bob = get_r(alice, cls, "friend");
	check_person(cls, alice, bob, 1);
	check_person(cls, bob, alice, 0);
	check_py_map(alice, bob);
	check_py_imap();
	check_py_smap();
	check_py_list(alice);
	check_py_array();
	check_py_inline();
	return th_failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: prog_py_xlang create|verify|check-py <socket>\n");
		return 2;
	}
	rc = uh_connect(argv[2], 0, &h);
	if (rc != 0) {
		fprintf(stderr, "prog_py_xlang: connect %s: %s: %s\n", argv[2], uh_strerror(rc),
			uh_errmsg());
		return 1;
	}
	if (strcmp(argv[1], "create") == 0)
		rc = create();
	else if (strcmp(argv[1], "verify") == 0)
		rc = verify();
	else if (strcmp(argv[1], "check-py") == 0)
		rc = check_py();
	else {
		fprintf(stderr, "prog_py_xlang: unknown command %s\n", argv[1]);
		uh_disconnect(h);
		return 2;
	}
	uh_disconnect(h);
	rc = th_summary(argv[1]) || rc;
	return rc ? 1 : 0;
}
