/*
 * test_gc_writers.c -- space flows between live sessions (FORMAT.md 6.3,
 * "Giving arenas back"): five writer processes run the leak loop
 * (prog_gc_leaker) at once on a 32 MiB heap with heapd's default GC
 * trigger, each switching its node's slot size (32, 64, 128, 256 bytes)
 * every few thousand steps, while only a list of 1,000 nodes and the five
 * current nodes live. Each writer fills arenas of one slot size, then of
 * the next: without the give-back, the arenas it filled before stay its
 * own however empty a cycle leaves them, and the writers' leases soon find
 * the heap full. Every writer must end its run (no HeapFull), the list must
 * be whole, and the heap check sound; the figures (cycles, arenas returned,
 * bytes in arenas) are printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define SUITE "test_gc_writers"
#define WRITERS 5
#define STEPS "300000"		/* each; 5 x 300,000 nodes: ~40 times the heap */
#define SWITCH "5000"		/* steps between two slot sizes */
#define LIVE 1000

static struct th_heapd d;
static char out[65536];

static int list_fn(uh_heap *h, void *arg)
{
	uint32_t cls = *(uint32_t *)arg;
	uh_off head = 0, n;
	int rc = 0;
	for (int i = LIVE - 1; i >= 0 && !rc; i--) {
		if (!(rc = uh_alloc(h, cls, &n)) && !(rc = uh_set_i64(h, n, 0, i)) &&
		    !(rc = uh_set_ref(h, n, 1, head)))
			head = n;
	}
	return rc ? rc : uh_root_set(h, "writers.list", head);
}

static void make_list(void)
{
	static const uh_field_spec f[] = { { "v", UH_T_I64, 0 }, { "next", UH_T_REF, 0 } };
	uint32_t cls;
	uh_heap *h;
	if (th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"connect");
		return;
	}
	TH_CHECK_RC(uh_class_register(h, "GcWritersNode", f, 2, &cls));
	TH_CHECK_RC(uh_run(h, list_fn, &cls, 0));
	uh_disconnect(h);
}

static void check_list(void)
{
	uh_heap *h;
	uh_off n = 0;
	int i = 0;
	if (th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"connect");
		return;
	}
	TH_CHECK_RC(uh_root_get(h, "writers.list", &n));
	for (; n && i <= LIVE; i++) {	/* the list, in order */
		int64_t v = -1;
		if (uh_get_i64(h, n, 0, &v) || v != i || uh_get_ref(h, n, 1, &n))
			break;
	}
	TH_CHECK_EQ(i, LIVE);
	uh_disconnect(h);
}

static void print_figures(const char *when)
{
	uint64_t arena_bytes = 0, returned = 0, cycles = 0, freed = 0;
	TH_CHECK_EQ(th_heapctl(&d, "--json status", out, sizeof(out)), 0);
	th_find_u64(out, "arena_bytes", &arena_bytes);
	TH_CHECK_EQ(th_heapctl(&d, "--json stats", out, sizeof(out)), 0);
	th_find_u64(out, "arenas_returned", &returned);
	th_find_u64(out, "gc_cycles", &cycles);
	th_find_u64(out, "gc_objects_freed", &freed);
	printf("%s: %llu bytes in arenas, %llu arenas returned, %llu GC cycles, "
	       "%llu objects freed\n", when, (unsigned long long)arena_bytes,
	       (unsigned long long)returned, (unsigned long long)cycles,
	       (unsigned long long)freed);
}

int main(void)
{
	pid_t pid[WRITERS];
	if (th_heapd_start(&d, "--size 32M") != 0) {
		TH_CHECK(!"heapd start");
		return th_summary(SUITE);
	}
	make_list();
	for (int w = 0; w < WRITERS; w++) {
		char *argv[] = { (char *)th_bin("prog_gc_leaker"), d.sock, STEPS, "-", SWITCH,
				 NULL };
		pid[w] = th_spawn(argv, NULL);
		TH_CHECK(pid[w] > 0);
	}
	int ok = 0;
	for (int w = 0; w < WRITERS; w++)	/* each ends by itself */
		ok += pid[w] > 0 && th_wait_exit(pid[w]) == 0;
	TH_CHECK_EQ(ok, WRITERS);
	print_figures("after the writers");
	check_list();
	TH_CHECK_EQ(th_heapctl(&d, "check", out, sizeof(out)), 0);
	printf("heapctl check: %s", out);
	if (th_failed)
		th_heapd_log_tail(&d, 6000);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
