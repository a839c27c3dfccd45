/*
 * prog_gc_leaker.c -- the leak loop of the online GC's tests: each step is
 * one block that allocates a node and stores it in the holder's `cur`
 * field, leaving the previous node unreachable.
 * Usage: prog_gc_leaker <socket> <steps> [syncdir]
 *
 * The holder is root "leak.<pid>" (made here; class GcLeakHolder {cur},
 * GcLeakNode {v, 29 more i64}: a 256-byte slot, so a
 * small heap holds few of them). steps 0 = until killed. Every 1000 steps it checks
 * that cur holds the node it stored; with syncdir it writes
 * <syncdir>/leaker.ready after the first 1000 steps. Exit 0 after steps
 * steps, 1 on any error (UH_ENOSPC included), printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"

struct leak {
	uint32_t node_cls;
	uh_off holder;
	int64_t step;
};

static int step_fn(uh_heap *h, void *arg)
{
	struct leak *l = arg;
	uh_off n;
	int rc = uh_alloc(h, l->node_cls, &n);
	if (!rc)
		rc = uh_set_i64(h, n, 0, l->step);
	if (!rc)
		rc = uh_set_ref(h, l->holder, 0, n);
	return rc;
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "prog_gc_leaker: %s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	return 1;
}

int main(int argc, char **argv)
{
	static const uh_field_spec hf[] = { { "cur", UH_T_REF, 0 } };
	static char names[30][8];
	uh_field_spec nf[30];
	for (int i = 0; i < 30; i++) {	/* v, p1 .. p29 */
		snprintf(names[i], sizeof(names[i]), i ? "p%d" : "v", i);
		nf[i] = (uh_field_spec){ names[i], UH_T_I64, 0 };
	}
	uh_heap *h;
	struct leak l = { 0 };
	uint32_t hcls;
	char root[64];
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: prog_gc_leaker <socket> <steps> [syncdir]\n");
		return 2;
	}
	long steps = atol(argv[2]);
	if ((rc = uh_connect(argv[1], 0, &h)) || (rc = uh_class_register(h, "GcLeakHolder", hf, 1, &hcls)) ||
	    (rc = uh_class_register(h, "GcLeakNode", nf, 30, &l.node_cls)))
		return fail("connect/register", rc);
	snprintf(root, sizeof(root), "leak.%d", (int)getpid());
	if ((rc = uh_begin(h)) || (rc = uh_alloc(h, hcls, &l.holder)) ||
	    (rc = uh_root_set(h, root, l.holder)) || (rc = uh_commit(h)))
		return fail("holder", rc);
	for (l.step = 1; steps == 0 || l.step <= steps; l.step++) {
		if ((rc = uh_run(h, step_fn, &l, 0)))
			return fail("step", rc);
		if (l.step % 1000)
			continue;
		uh_off cur = 0;
		int64_t v = -1;
		if ((rc = uh_get_ref(h, l.holder, 0, &cur)) || (rc = uh_get_i64(h, cur, 0, &v)))
			return fail("check", rc);
		if (v != l.step) {
			fprintf(stderr, "prog_gc_leaker: step %lld: cur holds %lld\n",
				(long long)l.step, (long long)v);
			return 1;
		}
		if (l.step == 1000 && argc > 3)
			th_signal_file(argv[3], "leaker.ready", NULL);
	}
	uh_stats st;
	if (uh_stats_get(h, &st) == 0)
		printf("prog_gc_leaker: %ld steps, %llu arena leases, %llu GC cycles seen, "
		       "%llu greys\n", steps, (unsigned long long)st.arena_leases,
		       (unsigned long long)st.gc_cycles, (unsigned long long)st.gc_greys);
	uh_disconnect(h);
	return 0;
}
