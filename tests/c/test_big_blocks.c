/*
 * test_big_blocks.c -- no size walls (the redo log grows, FORMAT.md 8.1;
 * long lists are rebuilt, not shifted in place):
 *  - front insert and pop on a 1M-element list: each an ALLOC, a FREE and
 *    a few writes in the log, whatever the length; values checked;
 *  - one block of 100k map puts on a heap of the default settings (256M,
 *    1 MiB session log): it commits, every key is there, and the log's
 *    extents go back to heapd afterwards;
 *  - a block that fills the heap fails with UH_ENOSPC, is rolled back, and
 *    leaves the heap consistent (uh_heap_check, the data of before, a
 *    restart whose recovery frees and nulls nothing).
 * Times are printed for the record, never asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *SUITE = "test_big_blocks";

#define LIST_N 1000000
#define MAP_N 100000

static int fill_list(uh_heap *h, uh_off l, int64_t from, int64_t to)
{
	uh_value v = { .type = UH_T_I64 };
	int rc = uh_begin(h);

	for (int64_t i = from; i < to && rc == 0; i++) {
		v.u.i = i;
		rc = uh_list_append(h, l, &v);
	}
	return rc ? (uh_abort(h), rc) : uh_commit(h);
}

static int64_t elem(uh_heap *h, uh_off l, uint64_t i)
{
	uh_value v = { 0 };
	return uh_list_get(h, l, i, &v) == 0 ? v.u.i : INT64_MIN;
}

static void test_list_front(uh_heap *h)
{
	uh_off l;
	uh_value v = { .type = UH_T_I64, .u.i = -1 };
	uh_stats s0, s1;
	uint64_t len, t0;

	TH_CHECK_RC(uh_list_new(h, &l));
	TH_CHECK_RC(uh_root_set(h, "big.list", l));
	t0 = th_now_ms();
	TH_CHECK_RC(fill_list(h, l, 0, LIST_N));	/* one block of 1M appends */
	printf("list: %d appends in one block: %llu ms\n", LIST_N,
	       (unsigned long long)(th_now_ms() - t0));
	TH_CHECK_RC(uh_stats_get(h, &s0));
	t0 = th_now_ms();
	TH_CHECK_RC(uh_list_insert(h, l, 0, &v));
	uint64_t t_ins = th_now_ms() - t0;
	TH_CHECK_RC(uh_stats_get(h, &s1));
	TH_CHECK(s1.log_bytes - s0.log_bytes < 1024);	/* no shift in the log */
	TH_CHECK_RC(uh_list_len(h, l, &len));
	TH_CHECK_EQ(len, LIST_N + 1);
	TH_CHECK_EQ(elem(h, l, 0), -1);
	TH_CHECK_EQ(elem(h, l, 1), 0);
	TH_CHECK_EQ(elem(h, l, LIST_N), LIST_N - 1);
	t0 = th_now_ms();
	TH_CHECK_RC(uh_list_pop(h, l, 0, &v, 0));
	TH_CHECK_RC(uh_list_pop(h, l, 0, &v, 0));
	uint64_t t_pop = (th_now_ms() - t0) / 2;
	TH_CHECK_EQ(v.u.i, 0);
	TH_CHECK_RC(uh_list_len(h, l, &len));
	TH_CHECK_EQ(len, LIST_N - 1);
	TH_CHECK_EQ(elem(h, l, 0), 1);
	TH_CHECK_EQ(elem(h, l, LIST_N - 2), LIST_N - 1);
	printf("list of %d: front insert %llu ms, front pop %llu ms, %llu log bytes\n",
	       LIST_N, (unsigned long long)t_ins, (unsigned long long)t_pop,
	       (unsigned long long)(s1.log_bytes - s0.log_bytes));
	/* in a block with other changes to the same list: still one switch */
	TH_CHECK_RC(uh_begin(h));
	v.u.i = 7;
	TH_CHECK_RC(uh_list_set(h, l, 5, &v, 0));
	TH_CHECK_RC(uh_list_insert(h, l, 0, &v));
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_EQ(elem(h, l, 6), 7);
	TH_CHECK_EQ(elem(h, l, 0), 7);
	TH_CHECK_RC(uh_root_del(h, "big.list"));
	TH_CHECK_RC(uh_free(h, l));
}

static uh_key ikey(int64_t i)
{
	uh_key k = { .kind = UH_KEY_I64, .i64 = i };
	return k;
}

static void test_map_block(uh_heap *h)
{
	uh_off m;
	uh_value v = { .type = UH_T_I64 };
	uh_stats s0, s1;
	int rc = 0, bad = 0;
	uint64_t n, t0;

	TH_CHECK_RC(uh_map_new(h, UH_KEY_I64, &m));
	TH_CHECK_RC(uh_root_set(h, "big.map", m));
	TH_CHECK_RC(uh_stats_get(h, &s0));
	t0 = th_now_ms();
	TH_CHECK_RC(uh_begin(h));
	for (int64_t i = 0; i < MAP_N && rc == 0; i++) {
		uh_key k = ikey(i);
		v.u.i = i * 3;
		rc = uh_map_put(h, m, &k, &v, 0);
	}
	TH_CHECK_RC(rc);
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_stats_get(h, &s1));
	printf("map: %d puts in one block: %llu ms, %llu log bytes\n", MAP_N,
	       (unsigned long long)(th_now_ms() - t0),
	       (unsigned long long)(s1.log_bytes - s0.log_bytes));
	TH_CHECK(s1.log_bytes - s0.log_bytes > (1u << 20));	/* beyond the log area */
	TH_CHECK_RC(uh_map_len(h, m, &n));
	TH_CHECK_EQ(n, MAP_N);
	for (int64_t i = 0; i < MAP_N; i += 7) {
		uh_key k = ikey(i);
		bad += uh_map_get(h, m, &k, &v) != 0 || v.u.i != i * 3;
	}
	TH_CHECK_EQ(bad, 0);
	TH_CHECK_RC(uh_map_check(h, m));
}

/* Set every element of arr, then allocate 1 MiB objects until the heap is
 * full. */
struct fill_arg { uh_off arr; uint64_t n; int allocs; };

static int fill_body(uh_heap *h, void *p)
{
	struct fill_arg *a = p;
	static char mib[1 << 20];
	uh_value v = { .type = UH_T_I64 };
	uh_off o;
	int rc = 0;

	a->allocs = 0;
	for (uint64_t i = 0; i < a->n && rc == 0; i++) {
		v.u.i = -(int64_t)i;
		rc = uh_array_set(h, a->arr, i, &v, 0);
	}
	while (rc == 0 && a->allocs < 100000) {	/* bound: the heap's size */
		if ((rc = uh_bytes_new(h, mib, sizeof(mib), &o)) == 0)
			a->allocs++;
	}
	return rc;
}

static void test_fill_heap(void)
{
	struct th_heapd d = { 0 };
	struct fill_arg a = { .n = 200000 };
	uh_heap *h = NULL;
	uh_value v;
	uint64_t objects;
	char out[8192];

	if (th_heapd_start(&d, "--size 48M") != 0 || th_connect(&d, 0, &h) != 0) {
		th_fail(__FILE__, __LINE__, "heapd or connect failed");
		th_heapd_cleanup(&d);
		return;
	}
	TH_CHECK_RC(uh_array_new(h, UH_T_I64, a.n, &a.arr));
	TH_CHECK_RC(uh_root_set(h, "full.arr", a.arr));
	v = (uh_value){ .type = UH_T_I64, .u.i = 42 };
	TH_CHECK_RC(uh_array_set(h, a.arr, 7, &v, 0));
	/* The log is what cannot grow: the heap is full of objects first. */
	static uh_off hog[64];
	static char mib[1 << 20];
	int nhog = 0;
	while (nhog < 64 && uh_bytes_new(h, mib, sizeof(mib), &hog[nhog]) == 0)
		nhog++;
	TH_CHECK(nhog < 64);
	TH_CHECK_RC(uh_begin(h));
	int rc = 0;
	for (uint64_t i = 0; i < a.n && rc == 0; i++) {
		v.u.i = 1;
		rc = uh_array_set(h, a.arr, i, &v, 0);
	}
	TH_CHECK_ERR(rc, UH_ENOSPC);
	printf("block whose log filled the heap: %s\n", uh_errmsg());
	TH_CHECK(strstr(uh_errmsg(), "log") != NULL);
	TH_CHECK_ERR(uh_commit(h), UH_ENOSPC);
	for (int i = 0; i < nhog; i++)
		TH_CHECK_RC(uh_free(h, hog[i]));
	/* Now both the log and the arenas grow, and one of them hits the end. */
	TH_CHECK_ERR(uh_run(h, fill_body, &a, 0), UH_ENOSPC);
	printf("heap-filling block: %d MiB objects before UH_ENOSPC: %s\n", a.allocs, uh_errmsg());
	TH_CHECK_EQ(uh_in_block(h), 0);
	TH_CHECK_RC(uh_array_get(h, a.arr, 7, &v));
	TH_CHECK_EQ(v.u.i, 42);
	TH_CHECK_RC(uh_array_get(h, a.arr, 8, &v));
	TH_CHECK_EQ(v.u.i, 0);
	TH_CHECK_RC(uh_heap_check(h, &objects));
	/* the space came back: a smaller block of the same kind commits */
	TH_CHECK_RC(uh_begin(h));
	v.u.i = 42;
	TH_CHECK_RC(uh_array_set(h, a.arr, 8, &v, 0));
	TH_CHECK_RC(uh_commit(h));
	uh_disconnect(h);
	h = NULL;
	TH_CHECK(th_heapd_restart(&d) == 0);
	TH_CHECK(th_heapd_restart(&d) == 0);
	TH_CHECK(th_heapctl(&d, "--json status", out, sizeof(out)) == 0);
	uint64_t freed = 1, nulled = 1;
	TH_CHECK(th_find_u64(out, "freed_objects", &freed) == 0 && freed == 0);
	TH_CHECK(th_find_u64(out, "nulled_refs", &nulled) == 0 && nulled == 0);
	if (th_connect(&d, 0, &h) == 0) {
		TH_CHECK_RC(uh_root_get(h, "full.arr", &a.arr));
		TH_CHECK_RC(uh_array_get(h, a.arr, 8, &v));
		TH_CHECK_EQ(v.u.i, 42);
		TH_CHECK_RC(uh_heap_check(h, &objects));
		uh_disconnect(h);
	}
	th_heapd_cleanup(&d);
}

int main(void)
{
	struct th_heapd d = { 0 };
	uh_heap *h = NULL;

	/* The defaults of heapd --create: 256M, 1 MiB session log. */
	if (th_heapd_start(&d, "--size 256M") != 0 || th_connect(&d, 0, &h) != 0) {
		th_fail(__FILE__, __LINE__, "heapd or connect failed");
		th_heapd_cleanup(&d);
		return th_summary(SUITE);
	}
	test_list_front(h);
	test_map_block(h);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	test_fill_heap();
	return th_summary(SUITE);
}
