/*
 * prog_gold_check.c -- verify a heap holds exactly the golden content
 * (prog_gold_model.h): format version, built-in and user class
 * descriptors (ids, kinds, field offsets by the layout rule), roots, every
 * field value through the C API, and the same values read as raw bytes at
 * the offsets FORMAT.md specifies (object header, fields), so a library
 * and a spec that drifted apart together would still be caught.
 *   prog_gold_check --socket S
 * Prints each mismatch and "gold check: ok" / "FAILED"; exit 0 / 1 / 2.
 */
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "prog_gold_model.h"
#include <stdio.h>

#define GOLD_PROG "prog_gold_check"
#include "prog_gold_util.h"

static uh_heap *h;
static const char *base;
static int bad;

static void check_class(const char *name, uint32_t want_id, uint32_t kind,
			const uh_field_spec *spec, const uint32_t *offs, uint32_t n,
			uint32_t payload)
{
	uint32_t id = 0;
	uh_class_info ci;
	int rc = uh_class_find(h, name, &id);

	CHECK(rc == 0 && id == want_id, "class %s: id %u, want %u", name, id, want_id);
	if (rc != 0)
		return;
	rc = uh_class_info_get(h, id, &ci);
	CHECK(rc == 0, "class %s info", name);
	if (rc != 0)
		return;
	CHECK(ci.kind == kind, "class %s kind %u, want %u", name, ci.kind, kind);
	CHECK(ci.nfields == n, "class %s has %u fields, want %u", name, ci.nfields, n);
	CHECK(ci.payload_size == payload, "class %s payload %u, want %u", name,
	      ci.payload_size, payload);
	CHECK(strcmp(ci.name, name) == 0, "class %u name %s, want %s", id, ci.name, name);
	for (uint32_t i = 0; i < n && i < ci.nfields; i++) {
		uh_field_info fi;
		CHECK(uh_field_info_get(h, id, i, &fi) == 0, "field %u of %s", i, name);
		CHECK(strcmp(fi.name, spec[i].name) == 0, "%s field %u name %s", name, i,
		      fi.name);
		CHECK(fi.type == spec[i].type, "%s.%s type %u", name, spec[i].name, fi.type);
		CHECK(fi.offset == offs[i], "%s.%s offset %u, want %u", name, spec[i].name,
		      fi.offset, offs[i]);
		CHECK(fi.ref_class == spec[i].ref_class, "%s.%s ref_class %u", name,
		      spec[i].name, fi.ref_class);
	}
}

/* Ids 1..4, and the data types' 5..15 that heapd adds to an older heap
 * when it opens it (15 since format 6). */
static void check_builtins(void)
{
	static const char *names[] = {
		NULL, "uniheap.string", "uniheap.bytes", "uniheap.rootmap", "uniheap.reftable",
		"uniheap.array", "uniheap.list", "uniheap.values", "uniheap.map",
		"uniheap.map.table", "uniheap.map.entry", "uniheap.sortedmap",
		"uniheap.sortedmap.node", "uniheap.map.entry.inline", "uniheap.map.table.refs",
		"uniheap.sortedmap.leaf",
	};
	static const uint32_t kinds[] = {
		0, UH_K_STRING, UH_K_BYTES, UH_K_RECORD, UH_K_REFTABLE,
		UH_K_ARRAY, UH_K_VALUES, UH_K_VALUES, UH_K_VALUES, UH_K_VALUES, UH_K_VALUES,
		UH_K_VALUES, UH_K_VALUES, UH_K_PACKED, UH_K_REFTABLE, UH_K_PACKED,
	};
	_Static_assert(sizeof(names) / sizeof(names[0]) == UH_CLASS_BUILTIN_LAST + 1, "names");
	_Static_assert(sizeof(kinds) / sizeof(kinds[0]) == UH_CLASS_BUILTIN_LAST + 1, "kinds");

	for (uint32_t id = 1; id <= UH_CLASS_BUILTIN_LAST; id++) {
		uh_class_info ci;
		int rc = uh_class_info_get(h, id, &ci);
		CHECK(rc == 0, "built-in class %u", id);
		if (rc == 0) {
			CHECK(strcmp(ci.name, names[id]) == 0, "class %u is %s, want %s", id,
			      ci.name, names[id]);
			CHECK(ci.kind == kinds[id], "class %u kind %u", id, ci.kind);
		}
	}
}

/* The object header reference o names, read raw: class and generation
 * (the reference's), payload size, valid. */
static void check_header(uh_off o, uint32_t cls, uint32_t payload, const char *what)
{
	const struct uh_objhdr *oh = (const void *)(base + UH_REF_OFFSET(o));
	uint32_t want = UH_OBJ_CLASS_WORD(cls, UH_REF_GEN(o));

	CHECK(oh->class_word == want, "%s: header class word 0x%x, want 0x%x", what,
	      oh->class_word, want);
	CHECK(oh->size == (UH_OBJ_VALID | payload), "%s: header size word 0x%x, want 0x%x",
	      what, oh->size, UH_OBJ_VALID | payload);
	CHECK(!uh_lock_is_locked(oh->lock), "%s: lock word 0x%llx is locked", what,
	      (unsigned long long)oh->lock);
}

static void check_str(uh_off s, const char *want, const char *what)
{
	const char *data = NULL;
	size_t len = 0;
	int rc = uh_string_get(h, s, &data, &len);

	CHECK(rc == 0 && len == strlen(want) && memcmp(data, want, len) == 0,
	      "%s: string \"%.*s\", want \"%s\"", what, rc ? 0 : (int)len, rc ? "" : data, want);
	if (rc == 0)
		check_header(s, UH_CLASS_STRING, (uint32_t)strlen(want), what);
}

static void check_bytes_obj(uh_off b, uint32_t n, uint8_t (*gen)(uint32_t), const char *what)
{
	const void *data = NULL;
	size_t len = 0;
	int rc = uh_bytes_get(h, b, &data, &len);

	CHECK(rc == 0 && len == n, "%s: %zu bytes, want %u", what, len, n);
	if (rc != 0 || len != n)
		return;
	for (uint32_t i = 0; i < n; i++)
		if (((const uint8_t *)data)[i] != gen(i)) {
			CHECK(0, "%s: byte %u is %u, want %u", what, i,
			      ((const uint8_t *)data)[i], gen(i));
			break;
		}
	check_header(b, UH_CLASS_BYTES, n, what);
}

static uint8_t ident(uint32_t i) { return (uint8_t)i; }
static uint8_t bigb(uint32_t i) { return gold_big_byte(i); }

/* Field f of o, read raw at its format offset, must equal want[0..n). */
static void raw_eq(uh_off o, uint32_t off, const void *want, size_t n, const char *what)
{
	CHECK(memcmp(base + UH_REF_OFFSET(o) + off, want, n) == 0, "%s: raw bytes at +%u differ", what, off);
}

static void check_vals(uh_off o, const struct gold_vals *v, uh_off other, const char *what)
{
	int64_t i;
	double f;
	uh_off r;
	float ratio = v->ratio;

	check_header(o, GOLD_ALL_ID, GOLD_ALL_PAYLOAD, what);
	CHECK(uh_get_i64(h, o, GA_FLAG, &i) == 0 && i == v->flag, "%s.flag %lld", what,
	      (long long)i);
	CHECK(uh_get_i64(h, o, GA_TINY, &i) == 0 && i == v->tiny, "%s.tiny %lld", what,
	      (long long)i);
	CHECK(uh_get_i64(h, o, GA_SMALL, &i) == 0 && i == v->small, "%s.small %lld", what,
	      (long long)i);
	CHECK(uh_get_i64(h, o, GA_MID, &i) == 0 && i == v->mid, "%s.mid %lld", what,
	      (long long)i);
	CHECK(uh_get_i64(h, o, GA_BIG, &i) == 0 && i == v->big, "%s.big %lld", what,
	      (long long)i);
	CHECK(uh_get_f64(h, o, GA_RATIO, &f) == 0 && f == (double)v->ratio, "%s.ratio %g",
	      what, f);
	CHECK(uh_get_f64(h, o, GA_REAL, &f) == 0 && f == v->real, "%s.real %g", what, f);
	CHECK(uh_get_ref(h, o, GA_LINK, &r) == 0 && r == other, "%s.link", what);
	raw_eq(o, 16, &v->flag, 1, what);
	raw_eq(o, 17, &v->tiny, 1, what);
	raw_eq(o, 18, &v->small, 2, what);
	raw_eq(o, 20, &v->mid, 4, what);
	raw_eq(o, 24, &v->big, 8, what);
	raw_eq(o, 32, &ratio, 4, what);
	raw_eq(o, 40, &v->real, 8, what);
	raw_eq(o, 48, &other, 8, what);

	CHECK(uh_get_ref(h, o, GA_TEXT, &r) == 0, "%s.text", what);
	if (v->text)
		check_str(r, v->text, "text");
	else
		CHECK(r == 0, "%s.text not null", what);
	raw_eq(o, 56, &r, 8, what);
	CHECK(uh_get_ref(h, o, GA_BLOB, &r) == 0, "%s.blob", what);
	if (v->blob)
		check_bytes_obj(r, 256, ident, "blob");
	else
		CHECK(r == 0, "%s.blob not null", what);
	raw_eq(o, 64, &r, 8, what);
}

static uh_off root(const char *name)
{
	uh_off v = 0;

	CHECK(uh_root_get(h, name, &v) == 0 && v != 0, "root %s", name);
	return v;
}

static void check_chain(uh_off n)
{
	char text[32];
	int64_t i = 0, v;

	for (; n && i <= GOLD_CHAIN_LEN; i++) {
		uh_off s;
		check_header(n, GOLD_ALL_ID, GOLD_ALL_PAYLOAD, "chain node");
		CHECK(uh_get_i64(h, n, GA_BIG, &v) == 0 && v == i, "chain node %lld: %lld",
		      (long long)i, (long long)v);
		CHECK(uh_get_ref(h, n, GA_TEXT, &s) == 0, "chain text");
		snprintf(text, sizeof(text), "node %lld", (long long)i);
		check_str(s, text, "chain text");
		if (uh_get_ref(h, n, GA_LINK, &n) != 0)
			break;
	}
	CHECK(i == GOLD_CHAIN_LEN, "chain of %lld nodes, want %d", (long long)i, GOLD_CHAIN_LEN);
}

int main(int argc, char **argv)
{
	const char *sock = argc == 3 && !strcmp(argv[1], "--socket") ? argv[2] : NULL;
	uh_info info;
	uint64_t nroots = 0;
	int64_t i;
	uh_off one, two, pr, r;
	int rc;

	if (!sock) {
		fprintf(stderr, "usage: prog_gold_check --socket PATH\n");
		return 2;
	}
	if ((rc = uh_connect(sock, UH_READONLY, &h)) != 0) {
		fprintf(stderr, "prog_gold_check: uh_connect: %s: %s\n", uh_strerror(rc),
			uh_errmsg());
		return 2;
	}
	base = uh_base(h);
	/* heapd upgrades an older heap in place when it opens it. */
	CHECK(uh_heap_info(h, &info) == 0 && info.format_version == UH_FORMAT_VERSION, "format version %u",
	      info.format_version);
	check_builtins();
	check_class("GoldAll", GOLD_ALL_ID, UH_K_RECORD, gold_all_fields, gold_all_offsets,
		    GA_NFIELDS, GOLD_ALL_PAYLOAD);
	check_class("GoldPair", GOLD_PAIR_ID, UH_K_RECORD, gold_pair_fields, gold_pair_offsets,
		    GP_NFIELDS, GOLD_PAIR_PAYLOAD);
	CHECK(uh_root_count(h, &nroots) == 0 && nroots == GOLD_NROOTS, "%llu roots",
	      (unsigned long long)nroots);

	one = root("gold.one");
	two = root("gold.two");
	pr = root("gold.pair");
	CHECK(root(GOLD_ROOT_UTF8) == one, "root gold.\\u00fcn\\u00ef is not one");
	if (one && two) {
		check_vals(one, &gold_one, two, "one");
		check_vals(two, &gold_two, one, "two");
	}
	if (pr) {
		check_header(pr, GOLD_PAIR_ID, GOLD_PAIR_PAYLOAD, "pair");
		CHECK(uh_get_i64(h, pr, GP_TAG, &i) == 0 && i == GOLD_PAIR_TAG, "pair.tag");
		CHECK(uh_get_ref(h, pr, GP_LEFT, &r) == 0 && r == one, "pair.left");
		CHECK(uh_get_ref(h, pr, GP_RIGHT, &r) == 0 && r == root("gold.big"),
		      "pair.right");
		CHECK(uh_get_i64(h, pr, GP_OK, &i) == 0 && i == 1, "pair.ok");
	}
	if ((r = root("gold.big")) != 0)
		check_bytes_obj(r, GOLD_BIG_LEN, bigb, "big");
	if ((r = root("gold.chain")) != 0)
		check_chain(r);
	uh_disconnect(h);
	printf("gold check: %s (%d mismatches)\n", bad ? "FAILED" : "ok", bad);
	return bad ? 1 : 0;
}
