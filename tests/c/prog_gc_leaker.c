/*
 * prog_gc_leaker.c -- the leak loop of the online GC's tests: each step is
 * one block that allocates a node and stores it in the holder's `cur`
 * field, leaving the previous node unreachable.
 * Usage: prog_gc_leaker <socket> <steps> [syncdir|-] [switch] [keep]
 *
 * The holder is root "leak.<pid>" (made here; class GcLeakHolder {cur},
 * GcLeakNode {v, 29 more i64}: a 256-byte slot, so a
 * small heap holds few of them). steps 0 = until killed. Every 1000 steps it checks
 * that cur holds the node it stored; with syncdir (not "-") it writes
 * <syncdir>/leaker.ready after the first 1000 steps. With switch > 0 the
 * node's class changes every switch steps, in turn GcLeakNode2, 6, 14
 * (v and 1, 5, 13 more i64: slots of 32, 64, 128 bytes) and GcLeakNode,
 * so that the session fills arenas of four slot sizes one after the
 * other. With keep > 0 each step also puts a second node (v = step) in a
 * hash map (root "keep.<pid>", i64 key step % keep), dropping the one it
 * replaces: keep nodes of every slot size live among the garbage, in
 * arenas a cycle leaves mostly empty, which the session gives back and
 * another session may lease and fill; every 1000 steps each entry must
 * name a readable node holding the last step of its key (a live object
 * freed reads as freed or as another's bytes). A soundness stress for the
 * give-back (FORMAT.md 6.3); not in test_gc_writers: on its 32 MiB heap
 * the kept nodes hold enough returned arenas that runs beside another
 * end with HeapFull. Exit 0 after steps steps,
 * 1 on any error (UH_ENOSPC included), printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define NCLASSES 4

struct leak {
	uint32_t node_cls;
	uint32_t cls[NCLASSES];
	uh_off holder;
	int64_t step;
	int64_t keep;			/* entries of the kept map, 0: none */
	uh_off kept;			/* the map */
};

static int fail(const char *what, int rc)
{
	fprintf(stderr, "prog_gc_leaker: %s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	return 1;
}

static int step_fn(uh_heap *h, void *arg)
{
	struct leak *l = arg;
	uh_off n;
	int rc = uh_alloc(h, l->node_cls, &n);
	if (!rc)
		rc = uh_set_i64(h, n, 0, l->step);
	if (!rc)
		rc = uh_set_ref(h, l->holder, 0, n);
	if (!rc && l->keep) {
		uh_off k;
		uh_key key = { .kind = UH_KEY_I64, .i64 = l->step % l->keep };
		if (!(rc = uh_alloc(h, l->node_cls, &k)) && !(rc = uh_set_i64(h, k, 0, l->step))) {
			uh_value v = { .type = UH_T_REF, .u.ref = k };
			rc = uh_map_put(h, l->kept, &key, &v, 0);
		}
	}
	return rc;
}

/* Every entry of the kept map names the node of its key's last step. */
static int check_kept(uh_heap *h, const struct leak *l)
{
	for (int64_t k = 0; k < l->keep; k++) {	/* bound: keep entries */
		int64_t last = l->step - ((l->step - k) % l->keep + l->keep) % l->keep, v = -1;
		uh_key key = { .kind = UH_KEY_I64, .i64 = k };
		uh_value val = { 0 };
		int rc = uh_map_get(h, l->kept, &key, &val);
		if (last < 1)
			continue;	/* never put yet */
		if (!rc)
			rc = uh_get_i64(h, val.u.ref, 0, &v);
		if (rc)
			return fail("kept entry", rc);
		if (v != last) {
			fprintf(stderr, "prog_gc_leaker: step %lld: key %lld holds %lld, not %lld\n",
				(long long)l->step, (long long)k, (long long)v, (long long)last);
			return 1;
		}
	}
	return 0;
}

/* The node classes: v and fields - 1 more i64 each; only GcLeakNode
 * unless the class switches (a class descriptor is an object of its own,
 * and those of other sizes would take arenas of a small heap). */
static int register_nodes(uh_heap *h, struct leak *l, int all)
{
	static const uint32_t fields[NCLASSES] = { 2, 6, 14, 30 };
	static char names[30][8];
	uh_field_spec nf[30];
	int rc = 0;
	for (int i = 0; i < 30; i++) {	/* v, p1 .. p29 */
		snprintf(names[i], sizeof(names[i]), i ? "p%d" : "v", i);
		nf[i] = (uh_field_spec){ names[i], UH_T_I64, 0 };
	}
	for (int c = all ? 0 : NCLASSES - 1; c < NCLASSES && !rc; c++) {	/* the last: GcLeakNode */
		char name[32];
		snprintf(name, sizeof(name), c < NCLASSES - 1 ? "GcLeakNode%u" : "GcLeakNode",
			 fields[c]);
		rc = uh_class_register(h, name, nf, fields[c], &l->cls[c]);
	}
	l->node_cls = l->cls[NCLASSES - 1];
	return rc;
}

int main(int argc, char **argv)
{
	static const uh_field_spec hf[] = { { "cur", UH_T_REF, 0 } };
	uh_heap *h;
	struct leak l = { 0 };
	uint32_t hcls;
	char root[64];
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: prog_gc_leaker <socket> <steps> [syncdir|-] [switch] [keep]\n");
		return 2;
	}
	long steps = atol(argv[2]);
	const char *syncdir = argc > 3 && strcmp(argv[3], "-") ? argv[3] : NULL;
	long every = argc > 4 ? atol(argv[4]) : 0;
	l.keep = argc > 5 ? atol(argv[5]) : 0;
	if ((rc = uh_connect(argv[1], 0, &h)) || (rc = uh_class_register(h, "GcLeakHolder", hf, 1, &hcls)) ||
	    (rc = register_nodes(h, &l, every > 0)))
		return fail("connect/register", rc);
	snprintf(root, sizeof(root), "leak.%d", (int)getpid());
	if ((rc = uh_begin(h)) || (rc = uh_alloc(h, hcls, &l.holder)) ||
	    (rc = uh_root_set(h, root, l.holder)) || (rc = uh_commit(h)))
		return fail("holder", rc);
	snprintf(root, sizeof(root), "keep.%d", (int)getpid());
	if (l.keep && ((rc = uh_begin(h)) || (rc = uh_map_new(h, UH_KEY_I64, &l.kept)) ||
		       (rc = uh_root_set(h, root, l.kept)) || (rc = uh_commit(h))))
		return fail("kept map", rc);
	for (l.step = 1; steps == 0 || l.step <= steps; l.step++) {
		if (every > 0)
			l.node_cls = l.cls[(l.step / every) % NCLASSES];
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
		if (check_kept(h, &l))
			return 1;
		if (l.step == 1000 && syncdir)
			th_signal_file(syncdir, "leaker.ready", NULL);
	}
	uh_stats st;
	if (uh_stats_get(h, &st) == 0)
		printf("prog_gc_leaker: %ld steps, %llu arena leases, %llu GC cycles seen, "
		       "%llu greys\n", steps, (unsigned long long)st.arena_leases,
		       (unsigned long long)st.gc_cycles, (unsigned long long)st.gc_greys);
	uh_disconnect(h);
	return 0;
}
