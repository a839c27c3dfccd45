/*
 * test_heap_full.c -- a small heap (--size 24M) filled up. Blocks of 1000
 * linked nodes are committed until an allocation fails: it must fail with
 * UH_ENOSPC and a message, roll its block back, and leave a heap that still
 * works: existing objects can be updated in blocks and outside them, a
 * too-big object is refused the same way, heapd restarts (recovers) and
 * a fresh client sees every node committed before, intact.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define BATCH 1000
#define SIZE "24M"	/* 16M leaves room for a single 1 MiB arena */

static struct th_heapd d;
static uint32_t node_cls;

enum { F_VALUE, F_NEXT };

static int register_node(uh_heap *h)
{
	uh_field_spec f[] = { { "value", UH_T_I64, 0 }, { "next", UH_T_REF, 0 } };

	return uh_class_register(h, "FullNode", f, 2, &node_cls);
}

/* One block adding BATCH nodes in front of the list; 0 or the error. */
static int add_batch(uh_heap *h, int64_t first, uh_off *head)
{
	uh_off cur = *head, n;
	int rc = uh_begin(h);

	for (int i = 0; rc == 0 && i < BATCH; i++) {
		rc = uh_alloc(h, node_cls, &n);
		if (rc == 0)
			rc = uh_set_i64(h, n, F_VALUE, first + i);
		if (rc == 0)
			rc = uh_set_ref(h, n, F_NEXT, cur);
		cur = n;
	}
	if (rc == 0)
		rc = uh_root_set(h, "list", cur);
	if (rc == 0)
		rc = uh_commit(h);
	if (rc == 0)
		*head = cur;
	else if (uh_in_block(h))
		uh_abort(h);
	return rc;
}

/* The list must hold values count-1 .. 0 from the head. */
static void check_list(uh_heap *h, int64_t count, const char *when)
{
	uh_off cur = 0;
	int64_t seen = 0, v = 0;

	if (uh_root_get(h, "list", &cur) != 0) {
		th_fail(__FILE__, __LINE__, "%s: root list missing", when);
		return;
	}
	while (cur && seen <= count) {
		if (uh_get_i64(h, cur, F_VALUE, &v) != 0 || v != count - 1 - seen) {
			th_fail(__FILE__, __LINE__, "%s: node %lld holds %lld: %s", when,
				(long long)seen, (long long)v, uh_errmsg());
			return;
		}
		seen++;
		if (uh_get_ref(h, cur, F_NEXT, &cur) != 0)
			break;
	}
	TH_CHECK_EQ(seen, count);
}

static int64_t fill(uh_heap *h)
{
	uh_off head = 0;
	int64_t count = 0;
	int rc;

	while ((rc = add_batch(h, count, &head)) == 0)
		count += BATCH;
	printf("heap full after %lld nodes: %s: %s\n", (long long)count, uh_strerror(rc),
	       uh_errmsg());
	TH_CHECK_EQ(rc, UH_ENOSPC);
	TH_CHECK(strlen(uh_errmsg()) > 0);
	TH_CHECK(count > 0);
	return count;
}

/* The full heap still takes changes to existing objects. */
static void still_works(uh_heap *h, int64_t count)
{
	uh_off head, big;
	int64_t v;

	TH_CHECK_RC(uh_root_get(h, "list", &head));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_i64(h, head, F_VALUE, -1));
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_get_i64(h, head, F_VALUE, &v));
	TH_CHECK_EQ(v, -1);
	TH_CHECK_RC(uh_set_i64(h, head, F_VALUE, count - 1));	/* outside a block */
	/* 8 MiB can't fit a 16 MiB heap that is already full. */
	{
		size_t n = 8u << 20;
		char *buf = calloc(1, n);
		int rc = buf ? uh_bytes_new(h, buf, n, &big) : UH_ENOMEM;
		printf("8 MiB bytes object: %s: %s\n", uh_strerror(rc), uh_errmsg());
		TH_CHECK_EQ(rc, UH_ENOSPC);
		free(buf);
	}
}

int main(void)
{
	uh_heap *h = NULL;
	int64_t count;

	if (th_heapd_start(&d, "--size " SIZE) != 0 || th_connect(&d, 0, &h) != 0) {
		th_fail(__FILE__, __LINE__, "heapd start/connect");
		th_heapd_cleanup(&d);
		return th_summary("test_heap_full");
	}
	TH_CHECK_RC(register_node(h));
	count = fill(h);
	check_list(h, count, "after filling");
	still_works(h, count);
	check_list(h, count, "after updates");
	uh_disconnect(h);

	if (th_heapd_restart(&d) != 0 || th_connect(&d, 0, &h) != 0) {
		th_fail(__FILE__, __LINE__, "heapd restart/connect on the full heap");
		th_heapd_log_tail(&d, 3000);
	} else {
		TH_CHECK_RC(register_node(h));
		check_list(h, count, "after restart");
		uh_disconnect(h);
	}
	th_heapd_cleanup(&d);
	return th_summary("test_heap_full");
}
