/*
 * test_gc_commit_window.c -- a reference a block stores must survive a
 * collector cycle that falls between the block's validation and its apply
 * (FORMAT.md 9.3, why it is sound: references a block stores).
 *
 * Session P runs a block that reads the chain under key "a" (made by Q,
 * which then allocates enough for it to leave Q's nursery) and stores
 * its head into the `other` field of node H; the test hook UH_COMMIT_HOLD
 * holds P's commit right after its reads are validated. Meanwhile session
 * Q replaces the chain under "a" (so, in the heap, nothing refers to the
 * old chain any more: only P's log does) and the test asks for a cycle.
 * P's commit holds its busy section from before its validation, having
 * loaded IDLE, so that cycle's first handshake waits for P and the cycle
 * is given up (P is held longer than the handshake's bound). Then P
 * applies, and a cycle after it must keep the old chain: H refers to it.
 * When the section was opened only at the apply, P was not busy while
 * held, the cycle freed the old chain, and P stored a reference to a
 * freed object (what test_gc_model found under load).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *SUITE = "test_gc_commit_window";

enum { F_NEXT, F_OTHER, F_TAG };

#define NURSERY 64	/* a session's nursery: its last 64 allocations */

static struct th_heapd d;
static uh_off map, holder;
static uint32_t node_cls;

static uh_key key_of(const char *s)
{
	return (uh_key){ .kind = UH_KEY_STRING, .data = s, .len = strlen(s) };
}

/* A chain of two nodes tagged tag and tag + 1 under key k, in one block. */
static int put_chain(uh_heap *h, const char *k, int64_t tag)
{
	uh_off a, b;
	int rc;

	if ((rc = uh_begin(h)) != 0)
		return rc;
	uh_key key = key_of(k);
	uh_value v = { .type = UH_T_REF };
	if ((rc = uh_alloc(h, node_cls, &b)) != 0 || (rc = uh_set_i64(h, b, F_TAG, tag + 1)) != 0 ||
	    (rc = uh_alloc(h, node_cls, &a)) != 0 || (rc = uh_set_i64(h, a, F_TAG, tag)) != 0 ||
	    (rc = uh_set_ref(h, a, F_NEXT, b)) != 0)
		goto fail;
	v.u.ref = a;
	if ((rc = uh_map_put(h, map, &key, &v, 0)) != 0)
		goto fail;
	return uh_commit(h);
fail:
	uh_abort(h);
	return rc;
}

/* P: holder.other = the head under "a", in one block (held at commit). */
static void *relink(void *arg)
{
	uh_heap *p = arg;
	uh_key key = key_of("a");
	uh_value v;
	int rc = uh_begin(p);

	if (rc == 0 && (rc = uh_map_get(p, map, &key, &v)) == 0)
		rc = uh_set_ref(p, holder, F_OTHER, v.u.ref);
	rc = rc ? (uh_abort(p), rc) : uh_commit(p);
	return (void *)(intptr_t)rc;
}

static int gc_cycle(uint64_t *freed)
{
	char out[8192];
	int rc = th_heapctl(&d, "gc --wait", out, sizeof(out));
	*freed = 0;
	th_find_u64(out, "freed", freed);
	return rc;
}

static void test_window(void)
{
	static const uh_field_spec f[] = {
		{ "next", UH_T_REF, 0 }, { "other", UH_T_REF, 0 }, { "tag", UH_T_I64, 0 },
	};
	uh_heap *p = NULL, *q = NULL;
	char hold[700];
	uint64_t freed;

	/* Cycles only on request. */
	if (th_heapd_start(&d, "--gc-fill off") != 0 || th_connect(&d, 0, &q) != 0) {
		TH_CHECK(!"heapd started");
		return;
	}
	TH_CHECK_RC(uh_class_register(q, "gcw.Node", f, 3, &node_cls));
	TH_CHECK_RC(uh_map_new(q, UH_KEY_STRING, &map));
	TH_CHECK_RC(uh_root_set(q, "gcw.map", map));
	TH_CHECK_RC(put_chain(q, "a", 100));
	TH_CHECK_RC(put_chain(q, "h", 200));
	/* Out of Q's nursery (FORMAT.md 9.3), which would keep the old chain
	 * whatever the heap says: Q's last allocations are garbage nodes. */
	for (int i = 0; i < 2 * NURSERY; i++) {	/* bound: 2 * NURSERY */
		uh_off junk;
		TH_CHECK_RC(uh_alloc(q, node_cls, &junk));
	}
	uh_key hk = key_of("h"), ak = key_of("a");
	uh_value v;
	TH_CHECK_RC(uh_map_get(q, map, &hk, &v));
	holder = v.u.ref;
	TH_CHECK_RC(uh_map_get(q, map, &ak, &v));
	uh_off old_a = v.u.ref;

	/* P's handle only holds its commit. */
	snprintf(hold, sizeof(hold), "%s/hold", d.dir);
	setenv("UH_COMMIT_HOLD", hold, 1);
	int rc = th_connect(&d, 0, &p);
	unsetenv("UH_COMMIT_HOLD");
	TH_CHECK_RC(rc);
	if (rc)
		return;
	pthread_t t;
	TH_CHECK_EQ(pthread_create(&t, NULL, relink, p), 0);
	TH_CHECK_EQ(th_wait_file(d.dir, "hold.in", 30000), 0);

	/* P is validated and held: the old chain leaves the map, then a cycle
	 * (given up, as P is busy from before the mark). */
	TH_CHECK_RC(put_chain(q, "a", 300));
	gc_cycle(&freed);
	TH_CHECK_EQ(th_signal_file(d.dir, "hold.go", NULL), 0);
	void *prc;
	TH_CHECK_EQ(pthread_join(t, &prc), 0);
	TH_CHECK_EQ((int)(intptr_t)prc, 0);

	/* H refers to the old chain now: no cycle may take it. */
	TH_CHECK_EQ(gc_cycle(&freed), 0);
	TH_CHECK_EQ(gc_cycle(&freed), 0);
	uh_off other = 0, next = 0;
	int64_t tag = 0;
	TH_CHECK_RC(uh_get_ref(q, holder, F_OTHER, &other));
	TH_CHECK_EQ(other, old_a);
	TH_CHECK_RC(uh_get_i64(q, other, F_TAG, &tag));
	TH_CHECK_EQ(tag, 100);
	TH_CHECK_RC(uh_get_ref(q, other, F_NEXT, &next));
	TH_CHECK_RC(uh_get_i64(q, next, F_TAG, &tag));
	TH_CHECK_EQ(tag, 101);
	uint64_t objects = 0;
	TH_CHECK_RC(uh_heap_check(q, &objects));
	uh_disconnect(p);
	uh_disconnect(q);
	th_heapd_stop(&d);
}

int main(void)
{
	test_window();
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
