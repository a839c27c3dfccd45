/*
 * test_gc_ended_session.c -- what a session pushed into its grey ring
 * during a cycle's mark still counts when the session ends before the
 * collector drains the ring (FORMAT.md 9.3, the write barrier).
 *
 * Node A (root "a") refers to node X; node B is root "b". The first
 * cycle is held once its roots are grey, before it scans anything (test
 * hook UNIHEAP_GC_HOLD). Session Q, attached then, moves X from A into
 * a node N it allocates (in an arena it leases now, which the mark's
 * snapshot does not hold: the mark does not follow references into it)
 * and links N from B, in one block: its barrier pushes X, the value it
 * overwrites in A, and that push is X's only trace the mark can see. Q
 * detaches at once; the cycle then marks and sweeps, and X must
 * survive. When heapd zeroed an ended session's area without taking what
 * its ring held, the push was lost and the sweep freed X (what
 * test_gold's maps showed under load: a hash map's resize moves entries
 * from its old table to its new one, and the session that did it
 * detached during the mark).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *SUITE = "test_gc_ended_session";

enum { F_OTHER, F_TAG };

#define NURSERY 64	/* a session's nursery: its last 64 allocations */

static struct th_heapd d;
static uint32_t node_cls;

static int node(uh_heap *h, int64_t tag, uh_off other, uh_off *out)
{
	int rc = uh_alloc(h, node_cls, out);
	if (!rc)
		rc = uh_set_i64(h, *out, F_TAG, tag);
	if (!rc && other)
		rc = uh_set_ref(h, *out, F_OTHER, other);
	return rc;
}

/* Roots "a" (A, tag 1, other: X, tag 7) and "b" (B, tag 2), made by
 * session S, which stays attached so that its arena stays leased (Q's
 * node goes to an arena Q leases during the mark) and then allocates
 * garbage until X has left its nursery: nothing but A keeps X. */
static uh_heap *make_graph(void)
{
	static const uh_field_spec f[] = { { "other", UH_T_REF, 0 }, { "tag", UH_T_I64, 0 } };
	uh_heap *s = NULL;
	uh_off a, b, x;

	if (th_connect(&d, 0, &s) != 0) {
		TH_CHECK(!"connected");
		return NULL;
	}
	TH_CHECK_RC(uh_class_register(s, "gce.Node", f, 2, &node_cls));
	TH_CHECK_RC(uh_begin(s));
	TH_CHECK_RC(node(s, 7, 0, &x));
	TH_CHECK_RC(node(s, 1, x, &a));
	TH_CHECK_RC(node(s, 2, 0, &b));
	TH_CHECK_RC(uh_root_set(s, "a", a));
	TH_CHECK_RC(uh_root_set(s, "b", b));
	TH_CHECK_RC(uh_commit(s));
	for (int i = 0; i < 2 * NURSERY; i++) {	/* bound: 2 * NURSERY */
		uh_off junk;
		TH_CHECK_RC(uh_alloc(s, node_cls, &junk));
	}
	return s;
}

/* Q: N = a new node, N.other = A.other, B.other = N, A.other = 0, in one
 * block; then Q detaches. */
static void move_and_detach(void)
{
	uh_heap *q = NULL;
	uh_off a = 0, b = 0, x = 0, n = 0;

	if (th_connect(&d, 0, &q) != 0) {
		TH_CHECK(!"Q connected");
		return;
	}
	TH_CHECK_RC(uh_begin(q));
	TH_CHECK_RC(uh_root_get(q, "a", &a));
	TH_CHECK_RC(uh_root_get(q, "b", &b));
	TH_CHECK_RC(uh_get_ref(q, a, F_OTHER, &x));
	TH_CHECK_RC(node(q, 3, x, &n));
	TH_CHECK_RC(uh_set_ref(q, b, F_OTHER, n));
	TH_CHECK_RC(uh_set_ref(q, a, F_OTHER, 0));
	TH_CHECK_RC(uh_commit(q));
	uh_disconnect(q);
}

static void test_ended_session(void)
{
	char out[16384];
	uh_heap *p = NULL;

	/* Cycles only on request; the first one held (its files beside the
	 * heap). */
	setenv("UNIHEAP_GC_HOLD", "held", 1);
	int rc = th_heapd_start(&d, "--gc-fill off");
	unsetenv("UNIHEAP_GC_HOLD");
	if (rc != 0) {
		TH_CHECK(!"heapd started");
		return;
	}
	uh_heap *s = make_graph();
	TH_CHECK_EQ(th_heapctl(&d, "gc", out, sizeof(out)), 0);
	TH_CHECK_EQ(th_wait_file(d.dir, "held.in", 30000), 0);
	move_and_detach();
	TH_CHECK_EQ(th_signal_file(d.dir, "held.go", NULL), 0);
	/* A cycle that begins after the held one: the held one is over. */
	TH_CHECK_EQ(th_heapctl(&d, "gc --wait", out, sizeof(out)), 0);
	TH_CHECK_EQ(th_heapctl(&d, "status", out, sizeof(out)), 0);
	/* The held cycle swept (given up, it would prove nothing). */
	TH_CHECK(strstr(out, "cycle 1 (command): done;") != NULL);

	TH_CHECK_RC(th_connect(&d, 0, &p));
	if (!p)
		return;
	uh_off a = 0, b = 0, n = 0, x = 0, ax = 1;
	int64_t tag = 0;
	TH_CHECK_RC(uh_root_get(p, "a", &a));
	TH_CHECK_RC(uh_root_get(p, "b", &b));
	TH_CHECK_RC(uh_get_ref(p, a, F_OTHER, &ax));
	TH_CHECK_EQ(ax, 0);
	TH_CHECK_RC(uh_get_ref(p, b, F_OTHER, &n));
	TH_CHECK_RC(uh_get_i64(p, n, F_TAG, &tag));
	TH_CHECK_EQ(tag, 3);
	TH_CHECK_RC(uh_get_ref(p, n, F_OTHER, &x));
	TH_CHECK(x != 0);
	TH_CHECK_RC(uh_get_i64(p, x, F_TAG, &tag));	/* UH_EFREED when the push was lost */
	TH_CHECK_EQ(tag, 7);
	uint64_t objects = 0;
	TH_CHECK_RC(uh_heap_check(p, &objects));
	uh_disconnect(p);
	uh_disconnect(s);
	th_heapd_stop(&d);
}

int main(void)
{
	test_ended_session();
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
