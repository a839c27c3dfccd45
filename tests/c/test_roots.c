/*
 * test_roots.c -- named durable roots: set/get/del/next/count, bad names,
 * 1000 roots (table growth), allocate+publish as one atomic step (an
 * aborted block leaves neither root nor object), recovery GC frees what no
 * root reaches, values survive a heapd restart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *SUITE = "test_roots";

enum { NROOTS = 1000 };
static uint32_t item_cls;
static uh_off items[NROOTS];

static void root_name(char *buf, size_t len, int i)
{
	snprintf(buf, len, "roots.item.%04d", i);
}

static void test_basic(uh_heap *h, uh_heap *h2)
{
	uh_off a = 0, b = 0, got = 0;
	uint64_t n0 = 0, n = 0;

	TH_CHECK_RC(uh_root_count(h, &n0));
	TH_CHECK_RC(uh_alloc(h, item_cls, &a));
	TH_CHECK_RC(uh_alloc(h, item_cls, &b));
	TH_CHECK_ERR(uh_root_get(h, "basic", &got), UH_ENOTFOUND);
	TH_CHECK_RC(uh_root_set(h, "basic", a));
	TH_CHECK_RC(uh_root_get(h, "basic", &got));
	TH_CHECK_EQ(got, a);
	TH_CHECK_RC(uh_root_get(h2, "basic", &got));	/* another session */
	TH_CHECK_EQ(got, a);
	TH_CHECK_RC(uh_root_count(h, &n));
	TH_CHECK_EQ(n, n0 + 1);
	TH_CHECK_RC(uh_root_set(h, "basic", b));	/* overwrite */
	TH_CHECK_RC(uh_root_get(h, "basic", &got));
	TH_CHECK_EQ(got, b);
	TH_CHECK_RC(uh_root_count(h, &n));
	TH_CHECK_EQ(n, n0 + 1);
	TH_CHECK_RC(uh_root_set(h, "na\xc3\xafve \xe2\x82\xac", a));
	TH_CHECK_RC(uh_root_get(h, "na\xc3\xafve \xe2\x82\xac", &got));
	TH_CHECK_EQ(got, a);
	TH_CHECK_RC(uh_root_del(h, "na\xc3\xafve \xe2\x82\xac"));
	TH_CHECK_RC(uh_root_del(h, "basic"));
	TH_CHECK_ERR(uh_root_del(h, "basic"), UH_ENOTFOUND);
	TH_CHECK_ERR(uh_root_get(h, "basic", &got), UH_ENOTFOUND);
	TH_CHECK_RC(uh_root_count(h, &n));
	TH_CHECK_EQ(n, n0);
	uh_free(h, a);
	uh_free(h, b);
}

static void test_bad(uh_heap *h)
{
	char longname[UH_ROOT_NAME_MAX + 8];
	uh_off a = 0, f = 0, got;

	TH_CHECK_RC(uh_alloc(h, item_cls, &a));
	TH_CHECK_ERR(uh_root_set(h, "zero", 0), UH_EINVAL);
	TH_CHECK_ERR(uh_root_set(h, "", a), UH_EINVAL);
	TH_CHECK_ERR(uh_root_set(h, NULL, a), UH_EINVAL);
	memset(longname, 'r', UH_ROOT_NAME_MAX + 1);
	longname[UH_ROOT_NAME_MAX + 1] = '\0';
	TH_CHECK_ERR(uh_root_set(h, longname, a), UH_EINVAL);
	TH_CHECK(uh_errmsg()[0] != '\0');
	int rc = uh_root_get(h, longname, &got);
	TH_CHECK(rc == UH_EINVAL || rc == UH_ENOTFOUND);
	TH_CHECK_ERR(uh_root_set(h, "not-an-object", a + 8), UH_EFREED);
	TH_CHECK_RC(uh_alloc(h, item_cls, &f));
	TH_CHECK_RC(uh_free(h, f));
	TH_CHECK_ERR(uh_root_set(h, "freed", f), UH_EFREED);
	TH_CHECK_ERR(uh_root_get(h, "freed", &got), UH_ENOTFOUND);
	/* the longest allowed name works */
	longname[UH_ROOT_NAME_MAX] = '\0';
	TH_CHECK_RC(uh_root_set(h, longname, a));
	TH_CHECK_RC(uh_root_get(h, longname, &got));
	TH_CHECK_EQ(got, a);
	TH_CHECK_RC(uh_root_del(h, longname));
	uh_free(h, a);
}

/* Walk every root; count how many of ours (roots.item.*) are seen and
 * check each maps to the object we set. */
static int walk_items(uh_heap *h, int *wrong)
{
	uint64_t cursor = 0;
	const char *name;
	size_t nl;
	uh_off v;
	int seen = 0, guard = 0;

	*wrong = 0;
	while (uh_root_next(h, &cursor, &name, &nl, &v) == 0 && guard++ < 100000) {
		if (nl == 15 && strncmp(name, "roots.item.", 11) == 0) {
			int i = atoi(name + 11);
			seen++;
			if (i < 0 || i >= NROOTS || v != items[i])
				(*wrong)++;
		}
	}
	return seen;
}

/* 1000 roots make the root map grow several times. */
static void test_many(uh_heap *h)
{
	char name[32];
	uint64_t n0 = 0, n = 0;
	int wrong = 0, seen;

	TH_CHECK_RC(uh_root_count(h, &n0));
	for (int i = 0; i < NROOTS; i++) {
		root_name(name, sizeof(name), i);
		if (uh_alloc(h, item_cls, &items[i]) != 0 ||
		    uh_set_i64(h, items[i], 0, i) != 0 ||
		    uh_root_set(h, name, items[i]) != 0) {
			th_fail(__FILE__, __LINE__, "root %d: %s", i, uh_errmsg());
			return;
		}
	}
	TH_CHECK_RC(uh_root_count(h, &n));
	TH_CHECK_EQ(n, n0 + NROOTS);
	seen = walk_items(h, &wrong);
	TH_CHECK_EQ(seen, NROOTS);
	TH_CHECK_EQ(wrong, 0);
	for (int i = 0; i < NROOTS; i++) {
		uh_off got = 0;
		root_name(name, sizeof(name), i);
		if (uh_root_get(h, name, &got) != 0 || got != items[i])
			wrong++;
	}
	TH_CHECK_EQ(wrong, 0);

	/* delete the odd ones, inside one block */
	TH_CHECK_RC(uh_begin(h));
	for (int i = 1; i < NROOTS; i += 2) {
		root_name(name, sizeof(name), i);
		if (uh_root_del(h, name) != 0)
			wrong++;
	}
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_EQ(wrong, 0);
	/* the odd items are now unreachable: recovery frees them */
	TH_CHECK_RC(uh_root_count(h, &n));
	TH_CHECK_EQ(n, n0 + NROOTS / 2);
	seen = walk_items(h, &wrong);
	TH_CHECK_EQ(seen, NROOTS / 2);
	TH_CHECK_EQ(wrong, 0);
}

/* Allocate and publish in one block, then abort: neither survives. */
static uh_off test_abort_publish(uh_heap *h, uh_heap *h2)
{
	uh_off o = 0, got = 0;
	uint32_t cls;

	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_alloc(h, item_cls, &o));
	TH_CHECK_RC(uh_set_i64(h, o, 0, 99));
	TH_CHECK_RC(uh_root_set(h, "aborted", o));
	TH_CHECK_RC(uh_root_get(h, "aborted", &got));	/* the block sees it */
	TH_CHECK_EQ(got, o);
	TH_CHECK_ERR(uh_root_get(h2, "aborted", &got), UH_ENOTFOUND);	/* others don't */
	TH_CHECK_RC(uh_abort(h));
	TH_CHECK_ERR(uh_root_get(h, "aborted", &got), UH_ENOTFOUND);
	TH_CHECK_ERR(uh_obj_class(h, o, &cls), UH_EFREED);

	/* the committed version of the same step is visible to others */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_alloc(h, item_cls, &o));
	TH_CHECK_RC(uh_set_i64(h, o, 0, 100));
	TH_CHECK_RC(uh_root_set(h, "committed", o));
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_root_get(h2, "committed", &got));
	TH_CHECK_EQ(got, o);
	return o;
}

int main(void)
{
	static const uh_field_spec f[] = { { "v", UH_T_I64, 0 }, { "next", UH_T_REF, 0 } };
	static struct th_heapd d;
	uh_heap *h, *h2;
	uh_off committed, orphan = 0, chained = 0, got = 0;
	uint32_t cls;
	int wrong = 0;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0 ||
	    th_connect(&d, 0, &h2) != 0) {
		TH_CHECK(!"heapd start + connect");
		return th_summary(SUITE);
	}
	TH_CHECK_RC(uh_class_register(h, "Item", f, 2, &item_cls));
	test_basic(h, h2);
	test_bad(h);
	test_many(h);
	committed = test_abort_publish(h, h2);
	/* an object only reachable through a ref from a root object stays */
	TH_CHECK_RC(uh_alloc(h, item_cls, &chained));
	TH_CHECK_RC(uh_set_i64(h, chained, 0, 7));
	TH_CHECK_RC(uh_set_ref(h, committed, 1, chained));
	/* an object allocated outside a block and never published is garbage */
	TH_CHECK_RC(uh_alloc(h, item_cls, &orphan));
	uh_disconnect(h2);
	uh_disconnect(h);

	if (th_heapd_restart(&d) != 0 || th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"restart + reconnect");
		return th_summary(SUITE);
	}
	TH_CHECK_ERR(uh_root_get(h, "aborted", &got), UH_ENOTFOUND);
	TH_CHECK_RC(uh_root_get(h, "committed", &got));
	TH_CHECK_EQ(got, committed);
	int64_t v = 0;
	TH_CHECK_RC(uh_get_i64(h, committed, 0, &v));
	TH_CHECK_EQ(v, 100);
	TH_CHECK_RC(uh_get_ref(h, committed, 1, &got));
	TH_CHECK_EQ(got, chained);
	TH_CHECK_RC(uh_get_i64(h, chained, 0, &v));
	TH_CHECK_EQ(v, 7);
	/* recovery GC freed what no root reaches */
	TH_CHECK_ERR(uh_obj_class(h, orphan, &cls), UH_EFREED);
	/* the surviving half of the 1000 roots, with their values */
	TH_CHECK_EQ(walk_items(h, &wrong), NROOTS / 2);
	TH_CHECK_EQ(wrong, 0);
	for (int i = 0; i < NROOTS; i += 2) {
		if (uh_get_i64(h, items[i], 0, &v) != 0 || v != i)
			wrong++;
	}
	TH_CHECK_EQ(wrong, 0);
	/* and the objects of the deleted roots are gone */
	for (int i = 1; i < NROOTS; i += 2)
		if (uh_obj_class(h, items[i], &cls) != UH_EFREED)
			wrong++;
	TH_CHECK_EQ(wrong, 0);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
