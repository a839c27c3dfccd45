/*
 * test_gc_cycle.c -- heapd's online GC cycle (`heapctl gc --wait`, the Gc
 * RPC) on a heap no client is attached to during the cycle: everything
 * reachable from the roots stays, with its content; everything else is
 * freed (stale references then fail with UH_EFREED, large regions go
 * back, and so do emptied arenas nobody leases), the heap checks sound,
 * the space is reused, a second cycle frees nothing, and `heapctl status` lists the
 * cycles. Automatic cycles are off here (--gc-every off --gc-fill off) so
 * that the counts are this test's own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define SUITE "test_gc_cycle"
#define LIVE 3000
#define GARBAGE 20000
#define BIG (100u << 10)

static struct th_heapd d;
static char out[16384];

static uint32_t node_class(uh_heap *h)
{
	static const uh_field_spec f[] = {
		{ "v", UH_T_I64, 0 }, { "next", UH_T_REF, 0 }, { "name", UH_T_STRING, 0 },
	};
	uint32_t cls = 0;
	TH_CHECK_RC(uh_class_register(h, "GcNode", f, 3, &cls));
	return cls;
}

struct build {
	uint32_t cls;
	uh_off stale[16];	/* garbage, to read after the cycle */
	uh_off big_garbage;
};

/* LIVE nodes in a list from root "gc.list" (each with a name string) and
 * a large bytes object at "gc.big"; GARBAGE nodes linked to nothing. */
static int build_fn(uh_heap *h, void *arg)
{
	struct build *b = arg;
	uh_off head = 0, n, s;
	int rc;
	for (int i = LIVE - 1; i >= 0; i--) {
		char name[32];
		snprintf(name, sizeof(name), "node-%d", i);
		if ((rc = uh_alloc(h, b->cls, &n)) || (rc = uh_set_i64(h, n, 0, i)) ||
		    (rc = uh_set_ref(h, n, 1, head)) ||
		    (rc = uh_string_new(h, name, strlen(name), &s)) || (rc = uh_set_ref(h, n, 2, s)))
			return rc;
		head = n;
	}
	if ((rc = uh_root_set(h, "gc.list", head)))
		return rc;
	static char big[BIG];
	memset(big, 0x5a, sizeof(big));
	if ((rc = uh_bytes_new(h, big, sizeof(big), &n)) || (rc = uh_root_set(h, "gc.big", n)))
		return rc;
	return uh_bytes_new(h, big, sizeof(big), &b->big_garbage);
}

static int garbage_fn(uh_heap *h, void *arg)
{
	struct build *b = arg;
	for (int i = 0; i < GARBAGE; i++) {
		uh_off n;
		int rc = uh_alloc(h, b->cls, &n);
		if (!rc)
			rc = uh_set_i64(h, n, 0, -i);
		if (rc)
			return rc;
		if (i % (GARBAGE / 16) == 0)
			b->stale[i / (GARBAGE / 16)] = n;
	}
	return 0;
}

/* The list and the big object are there, with their content. */
static void check_live(uh_heap *h)
{
	uh_off n = 0;
	int i = 0;
	TH_CHECK_RC(uh_root_get(h, "gc.list", &n));
	for (; n && i < LIVE + 1; i++) {
		int64_t v = -1;
		uh_off s = 0;
		const char *name;
		size_t len;
		char want[32];
		snprintf(want, sizeof(want), "node-%d", i);
		if (uh_get_i64(h, n, 0, &v) || v != i || uh_get_ref(h, n, 2, &s) ||
		    uh_string_get(h, s, &name, &len) || len != strlen(want) ||
		    memcmp(name, want, len)) {
			TH_CHECK(!"live node intact");
			printf("  node %d at %llu: v=%lld\n", i, (unsigned long long)n, (long long)v);
			return;
		}
		TH_CHECK_RC(uh_get_ref(h, n, 1, &n));
	}
	TH_CHECK_EQ(i, LIVE);
	const void *data;
	size_t len = 0;
	TH_CHECK_RC(uh_root_get(h, "gc.big", &n));
	TH_CHECK_RC(uh_bytes_get(h, n, &data, &len));
	TH_CHECK_EQ(len, BIG);
	TH_CHECK(len == BIG && ((const unsigned char *)data)[BIG - 1] == 0x5a);
}

static uint64_t gc_wait(const char *what)
{
	uint64_t freed = 0;
	int rc = th_heapctl(&d, "--json gc --wait", out, sizeof(out));
	printf("heapctl gc --wait (%s) -> %d: %s", what, rc, out);
	TH_CHECK_EQ(rc, 0);
	TH_CHECK(strstr(out, "\"outcome\":\"done\"") != NULL);
	TH_CHECK(th_find_u64(out, "freed", &freed) == 0);
	return freed;
}

static uint64_t arenas(void)
{
	return th_status_u64(&d, "arenas");
}

int main(void)
{
	uh_heap *h;
	struct build b;
	memset(&b, 0, sizeof(b));
	if (th_heapd_start(&d, "--gc-every off --gc-fill off") != 0 ||
	    th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"heapd start + connect");
		return th_summary(SUITE);
	}
	b.cls = node_class(h);
	TH_CHECK_RC(uh_run(h, build_fn, &b, 0));
	TH_CHECK_RC(uh_run(h, garbage_fn, &b, 0));
	uh_disconnect(h);

	/* 20000 nodes and one big bytes object are garbage. */
	uint64_t before = arenas();
	uint64_t freed = gc_wait("first");
	TH_CHECK_EQ(freed, GARBAGE + 1);
	uint64_t marked = 0;
	TH_CHECK(th_find_u64(out, "marked", &marked) == 0);
	TH_CHECK(marked >= 2 * LIVE + 1);

	TH_CHECK(th_connect(&d, 0, &h) == 0);
	check_live(h);
	for (int i = 0; i < 16; i++) {
		int64_t v;
		TH_CHECK_ERR(uh_get_i64(h, b.stale[i], 0, &v), UH_EFREED);
	}
	const void *data;
	size_t len;
	TH_CHECK_ERR(uh_bytes_get(h, b.big_garbage, &data, &len), UH_EFREED);
	uint64_t objs = 0;
	TH_CHECK_RC(uh_heap_check(h, &objs));
	TH_CHECK_EQ(th_heapctl(&d, "check", out, sizeof(out)), 0);

	/* The space is reused (freed slots, or arenas the cycle emptied and
	 * gave back): as much garbage again takes no more arenas than the
	 * first time. */
	TH_CHECK_RC(uh_run(h, garbage_fn, &b, 0));
	TH_CHECK(arenas() <= before);
	uh_disconnect(h);
	TH_CHECK_EQ(gc_wait("second garbage"), GARBAGE);
	TH_CHECK_EQ(gc_wait("nothing to free"), 0);

	TH_CHECK_EQ(th_heapctl(&d, "status", out, sizeof(out)), 0);
	printf("%s", out);
	TH_CHECK(strstr(out, "last GC cycles") != NULL);
	TH_CHECK(strstr(out, "(command): done") != NULL);
	TH_CHECK_EQ(th_heapctl(&d, "gc", out, sizeof(out)), 0);	/* no wait */
	TH_CHECK(strstr(out, "cycle") != NULL);

	/* A restart (recovery GC included) finds the same live objects. */
	TH_CHECK_EQ(th_heapd_restart(&d), 0);
	TH_CHECK(th_connect(&d, 0, &h) == 0);
	check_live(h);
	TH_CHECK_RC(uh_heap_check(h, &objs));
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
