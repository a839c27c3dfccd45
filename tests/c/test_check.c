/*
 * test_check.c -- `heapctl check` (uniheap-check, uh_heap_check): a sound
 * heap with every data type passes; a damaged map count and a reference
 * to a non-object are each reported, naming the object; nothing crashes.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define SUITE "test_check"

static struct th_heapd d;

static uh_key skey(const char *s)
{
	uh_key k = { .kind = UH_KEY_STRING, .data = s, .len = strlen(s) };
	return k;
}

/* A record pointing at a map, a sorted map, a list and an array of strings. */
static void build(uh_heap *h, uh_off *rec, uh_off *map, uint32_t *ref_field)
{
	static const uh_field_spec f[] = {
		{ "map", UH_T_REF, 0 }, { "smap", UH_T_REF, 0 }, { "list", UH_T_REF, 0 },
		{ "arr", UH_T_REF, 0 }, { "name", UH_T_STRING, 0 },
	};
	uint32_t cls;
	uh_off sm, l, a, s;

	TH_CHECK_RC(uh_class_register(h, "CheckHolder", f, 5, &cls));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_alloc(h, cls, rec));
	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, map));
	TH_CHECK_RC(uh_smap_new(h, UH_KEY_I64, &sm));
	TH_CHECK_RC(uh_list_new(h, &l));
	TH_CHECK_RC(uh_array_new(h, UH_T_STRING, 50, &a));
	for (int i = 0; i < 200; i++) {
		char name[32];
		snprintf(name, sizeof(name), "key-%d", i);
		uh_key k = skey(name);
		uh_value v = { .type = UH_T_I64, .u.i = i };
		uh_key ik = { .kind = UH_KEY_I64, .i64 = i };
		TH_CHECK_RC(uh_map_put(h, *map, &k, &v, 0));
		TH_CHECK_RC(uh_smap_put(h, sm, &ik, &v, 0));
		TH_CHECK_RC(uh_list_append(h, l, &v));
		if (i < 50) {
			TH_CHECK_RC(uh_string_new(h, name, strlen(name), &s));
			uh_value sv = { .type = UH_T_STRING, .u.ref = s };
			TH_CHECK_RC(uh_array_set(h, a, (uint64_t)i, &sv, 0));
		}
	}
	TH_CHECK_RC(uh_string_new(h, "holder", 6, &s));
	TH_CHECK_RC(uh_set_ref(h, *rec, 0, *map));
	TH_CHECK_RC(uh_set_ref(h, *rec, 1, sm));
	TH_CHECK_RC(uh_set_ref(h, *rec, 2, l));
	TH_CHECK_RC(uh_set_ref(h, *rec, 3, a));
	TH_CHECK_RC(uh_set_ref(h, *rec, 4, s));
	TH_CHECK_RC(uh_root_set(h, "check.holder", *rec));
	TH_CHECK_RC(uh_commit(h));
	uh_field_info fi;
	TH_CHECK_RC(uh_field_info_get(h, cls, 3, &fi));
	*ref_field = fi.offset;
}

static int check(const char *args, char *out, size_t n)
{
	int rc = th_heapctl(&d, args, out, n);
	printf("heapctl %s -> %d: %s", args, rc, out);
	return rc;
}

int main(void)
{
	static char out[8192];
	uh_heap *h;
	uh_off rec = 0, map = 0;
	uint32_t arr_off = 0;
	uint64_t objs = 0;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"heapd start + connect");
		return th_summary(SUITE);
	}
	TH_CHECK_EQ(check("check", out, sizeof(out)), 0);
	TH_CHECK(strstr(out, "ok:") != NULL);	/* an empty heap is sound */

	build(h, &rec, &map, &arr_off);
	TH_CHECK_EQ(check("check", out, sizeof(out)), 0);
	TH_CHECK(strstr(out, "ok:") != NULL);
	TH_CHECK_EQ(check("--json check", out, sizeof(out)), 0);
	TH_CHECK(th_find_u64(out, "objects", &objs) == 0 && objs > 200);
	TH_CHECK_RC(uh_heap_check(h, &objs));
	TH_CHECK(objs > 200);

	/* damage the map's count (header slot 1, value at 16 + 16 + 8) */
	int64_t bad = 12345, good = 0;
	TH_CHECK_RC(uh_read(h, map, 40, &good, 8));
	TH_CHECK_EQ(good, 200);
	TH_CHECK_RC(uh_write(h, map, 40, &bad, 8));
	TH_CHECK_EQ(check("check", out, sizeof(out)), 1);
	TH_CHECK(strstr(out, "PROBLEM") != NULL);
	TH_CHECK_ERR(uh_heap_check(h, NULL), UH_EINTERNAL);
	TH_CHECK_RC(uh_write(h, map, 40, &good, 8));
	TH_CHECK_EQ(check("check", out, sizeof(out)), 0);

	/* a reference to something that is not an object */
	uint64_t junk = rec + 8, keep = 0;
	TH_CHECK_RC(uh_read(h, rec, arr_off, &keep, 8));
	TH_CHECK_RC(uh_write(h, rec, arr_off, &junk, 8));
	TH_CHECK_EQ(check("--json check", out, sizeof(out)), 1);
	TH_CHECK(strstr(out, "\"ok\": false") != NULL);
	char want[64];
	snprintf(want, sizeof(want), "object %llu refers to", (unsigned long long)rec);
	TH_CHECK(strstr(out, want) != NULL);
	TH_CHECK_RC(uh_write(h, rec, arr_off, &keep, 8));
	TH_CHECK_EQ(check("check", out, sizeof(out)), 0);

	/* inside a block it refuses, clearly */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_ERR(uh_heap_check(h, NULL), UH_ESTATE);
	TH_CHECK_RC(uh_abort(h));

	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
