/*
 * gc_graph.c -- builds the GC benchmarks' random graph (gc_graph.h).
 * The node offsets are kept in the client's memory only while the graph
 * is built: every block commits nodes that the next one links to, and
 * no cycle runs meanwhile (the benchmarks start heapd with automatic
 * cycles off), so nothing is pinned.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "gc_graph.h"

#define BLOCK 10000

struct build {
	uint32_t cls;
	uint64_t n, done;
	uh_off *nodes;
	uint64_t rng;
};

uint64_t gc_graph_heap_mib(uint64_t n)
{
	return (n * 48 * 2 >> 20) + 64;
}

static int build_block(uh_heap *h, void *arg)
{
	struct build *b = arg;
	uint64_t end = b->done + BLOCK < b->n ? b->done + BLOCK : b->n;
	for (uint64_t i = b->done; i < end; i++) {	/* <= BLOCK */
		uh_off n;
		int rc = uh_alloc(h, b->cls, &n);
		if (!rc && i > 0)
			rc = uh_set_ref(h, n, 0, b->nodes[i - 1]);
		if (!rc && i > 0)
			rc = uh_set_ref(h, n, 1, b->nodes[th_xorshift64(&b->rng) % i]);
		if (!rc)
			rc = uh_set_i64(h, n, 2, (int64_t)i);
		if (rc)
			return rc;
		b->nodes[i] = n;
	}
	return 0;
}

void gc_graph_build(const struct th_heapd *d, const char *prog, uint64_t n)
{
	static const uh_field_spec f[] = {
		{ "next", UH_T_REF, 0 }, { "other", UH_T_REF, 0 }, { "v", UH_T_I64, 0 },
	};
	uh_heap *h;
	struct build b = { .n = n, .rng = 0x9e3779b97f4a7c15ull };
	if (th_connect(d, 0, &h) != 0)
		exit(1);
	bench_must(prog, uh_class_register(h, "GcMarkNode", f, 3, &b.cls), "register");
	b.nodes = malloc(n * sizeof(*b.nodes));
	if (!b.nodes) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	uint64_t t0 = bench_now_ns();
	for (; b.done < n; b.done += BLOCK)	/* n / BLOCK blocks */
		bench_must(prog, uh_run(h, build_block, &b, 0), "build");
	bench_must(prog, uh_root_set(h, "bench.graph", b.nodes[n - 1]), "root");
	printf("built %llu objects in %.1f s\n", (unsigned long long)n,
	       (double)(bench_now_ns() - t0) / 1e9);
	free(b.nodes);
	uh_disconnect(h);
}
