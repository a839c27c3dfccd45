/*
 * test_gc_reattach_slot.c -- a session's pins survive its re-attach when
 * another session takes its old slot at once (FORMAT.md 9.3, re-attach).
 *
 * Session W pins ten objects that nothing else keeps, then heapd
 * restarts. W's next block re-attaches: in its Attach call heapd copies
 * W's pins into the new slot's area and frees the old slot. The test hook
 * UH_REATTACH_HOLD holds W right after that call; meanwhile new sessions
 * attach until one gets W's old slot (its attach zeroes the area) and
 * pins objects of its own there. Then W goes on. Its pins must be its
 * own: two GC cycles keep its ten objects, and every pin of W and of the
 * newcomer unpins once. When W copied its pins from the old area after
 * the call, it took the newcomer's table (three entries, none of its
 * objects): the cycles freed W's objects, and both sessions wrote one pin
 * table (a Python reader of tests/grow crashed on the free list that
 * left).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *SUITE = "test_gc_reattach_slot";

#define NPINS 10
#define NURSERY 64	/* a session's nursery: its last 64 allocations */
#define TRIES 8		/* sessions attached, at most, to get W's old slot */

static struct th_heapd d;
static uint32_t node_cls;

static uint32_t slot_of(uh_heap *h)
{
	uh_info info;
	return uh_heap_info(h, &info) == 0 ? info.session : 0;
}

/* W's first block after the restart: it re-attaches. */
static void *reattach(void *arg)
{
	uh_heap *w = arg;
	int rc = uh_begin(w);
	if (rc == 0)
		rc = uh_abort(w);
	return (void *)(intptr_t)rc;
}

static int gc_cycle(void)
{
	char out[8192];
	return th_heapctl(&d, "gc --wait", out, sizeof(out));
}

static void test_reattach_slot(void)
{
	static const uh_field_spec f[] = { { "tag", UH_T_I64, 0 } };
	uh_heap *w = NULL, *n[TRIES] = { 0 };
	uh_off obj[NPINS], mine[3];
	uint32_t pin[NPINS], npin[3];
	char hold[700];

	if (th_heapd_start(&d, "--gc-fill off") != 0 || th_connect(&d, 0, &w) != 0) {
		TH_CHECK(!"heapd started, W connected");
		return;
	}
	TH_CHECK_RC(uh_class_register(w, "grs.Node", f, 1, &node_cls));
	for (int i = 0; i < NPINS; i++) {	/* bound: NPINS */
		TH_CHECK_RC(uh_begin(w));
		TH_CHECK_RC(uh_alloc(w, node_cls, &obj[i]));
		TH_CHECK_RC(uh_set_i64(w, obj[i], 0, 100 + i));
		TH_CHECK_RC(uh_commit(w));
		TH_CHECK_RC(uh_pin(w, obj[i], &pin[i]));
	}
	for (int i = 0; i < 2 * NURSERY; i++) {	/* out of W's nursery */
		uh_off junk;
		TH_CHECK_RC(uh_alloc(w, node_cls, &junk));
	}
	uint32_t old = slot_of(w);

	/* The GC file stays: W is still attached, the next heapd reuses it. */
	TH_CHECK_EQ(th_heapd_restart(&d), 0);
	snprintf(hold, sizeof(hold), "%s/rh", d.dir);
	setenv("UH_REATTACH_HOLD", hold, 1);
	pthread_t t;
	TH_CHECK_EQ(pthread_create(&t, NULL, reattach, w), 0);
	TH_CHECK_EQ(th_wait_file(d.dir, "rh.in", 30000), 0);

	/* heapd has freed W's old slot: take it, and pin there. */
	int k = -1;
	for (int i = 0; i < TRIES && k < 0; i++) {	/* bound: TRIES */
		TH_CHECK_RC(th_connect(&d, 0, &n[i]));
		if (n[i] && slot_of(n[i]) == old)
			k = i;
	}
	TH_CHECK(k >= 0);	/* else the test proves nothing */
	for (int i = 0; k >= 0 && i < 3; i++) {	/* bound: 3 */
		TH_CHECK_RC(uh_begin(n[k]));
		TH_CHECK_RC(uh_alloc(n[k], node_cls, &mine[i]));
		TH_CHECK_RC(uh_commit(n[k]));
		TH_CHECK_RC(uh_pin(n[k], mine[i], &npin[i]));
	}
	TH_CHECK_EQ(th_signal_file(d.dir, "rh.go", NULL), 0);
	void *prc;
	TH_CHECK_EQ(pthread_join(t, &prc), 0);
	unsetenv("UH_REATTACH_HOLD");
	TH_CHECK_EQ((int)(intptr_t)prc, 0);
	TH_CHECK(slot_of(w) != old);

	/* Only W's pins keep its objects. */
	TH_CHECK_EQ(gc_cycle(), 0);
	TH_CHECK_EQ(gc_cycle(), 0);
	for (int i = 0; i < NPINS; i++) {	/* bound: NPINS */
		int64_t tag = 0;
		TH_CHECK_RC(uh_get_i64(w, obj[i], 0, &tag));
		TH_CHECK_EQ(tag, 100 + i);
	}
	for (int i = 0; i < NPINS; i++)	/* bound: NPINS */
		TH_CHECK_RC(uh_unpin(w, pin[i]));
	for (int i = 0; k >= 0 && i < 3; i++)	/* bound: 3 */
		TH_CHECK_RC(uh_unpin(n[k], npin[i]));
	/* W pins again from its own free list. */
	uint32_t again;
	TH_CHECK_RC(uh_pin(w, obj[0], &again));
	TH_CHECK_RC(uh_unpin(w, again));
	for (int i = 0; i < TRIES; i++)	/* bound: TRIES */
		if (n[i])
			uh_disconnect(n[i]);
	uh_disconnect(w);
	th_heapd_stop(&d);
}

int main(void)
{
	test_reattach_slot();
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
