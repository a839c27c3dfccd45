/*
 * prog_log_chain_crash.c -- the workload and the checker of
 * test_crash_chain: blocks whose redo log spans the log area and two
 * extents (the heap is made with --log-size 64K).
 *
 *   prog_log_chain_crash --setup --socket S
 *   prog_log_chain_crash --work --socket S --ack FILE [--ready-fd R --go-fd G]
 *   prog_log_chain_crash --check --socket S --ack FILE
 *
 * --setup: root "chain.vals", an i64 array of NVALS zeros; root
 * "chain.tag", a one-element bytes array holding "op 0".
 * --work: first one block as big as an op, rolled back, so the log's
 * extents are leased (and kept: the test may freeze heapd); then op i
 * (i = 1..NOPS), each one uh_run block: every element of chain.vals
 * becomes i (NVALS logged writes, ~128 KiB of redo: the log area and
 * both extents), and chain.tag's element a new bytes object "op i", the
 * old one freed (an ALLOC and a FREE entry, at the chain's end). The op's
 * number goes to the ack file right after it returned.
 * --check: uh_heap_check; every element of chain.vals equal to one v,
 * v = the acknowledged ops or one more (all or nothing across every
 * segment of the log), and chain.tag's bytes "op v". Prints "state=<v>";
 * exit 0 if so, 2 if not (printed).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash_campaign.h"

#define NVALS 4000
#define NOPS 3

static uh_off vals, tag;

static void die(const char *what, int rc)
{
	fprintf(stderr, "prog_log_chain_crash: %s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	exit(1);
}

static int set_tag(uh_heap *h, int i)
{
	char text[16];
	int n = snprintf(text, sizeof(text), "op %d", i);
	uh_value v = { .type = UH_T_BYTES };
	int rc = uh_bytes_new(h, text, (size_t)n, &v.u.ref);

	return rc ? rc : uh_array_set(h, tag, 0, &v, UH_FREE_OLD);
}

static int op_body(uh_heap *h, void *arg)
{
	int i = *(const int *)arg, rc = 0;
	uh_value v = { .type = UH_T_I64, .u.i = i };

	for (uint64_t j = 0; j < NVALS && rc == 0; j++)
		rc = uh_array_set(h, vals, j, &v, 0);
	return rc ? rc : set_tag(h, i);
}

static int setup_body(uh_heap *h, void *arg)
{
	int rc;

	(void)arg;
	if ((rc = uh_array_new(h, UH_T_I64, NVALS, &vals)) != 0 ||
	    (rc = uh_array_new(h, UH_T_BYTES, 1, &tag)) != 0 ||
	    (rc = uh_root_set(h, "chain.vals", vals)) != 0 ||
	    (rc = uh_root_set(h, "chain.tag", tag)) != 0)
		return rc;
	return set_tag(h, 0);
}

static void work(uh_heap *h, const char *ack, int ready_fd, int go_fd)
{
	static const uint32_t slots[] = { 32 };
	static const int ops[NOPS] = { 1, 2, 3 };
	int warm = -1, rc;
	uh_stats st;

	/* Lease the extents now; a rolled-back block keeps them. */
	if ((rc = uh_begin(h)) != 0 || (rc = op_body(h, &warm)) != 0)
		die("warm-up block", rc);
	uh_abort(h);
	const char *failed = cc_run_ops(h, ack, ready_fd, go_fd, slots, 1, op_body, ops,
					sizeof(ops[0]), NOPS, &rc);
	if (failed)
		die(failed, rc);
	uh_stats_get(h, &st);
	printf("barriers=%llu commits=%llu log_bytes=%llu\n", (unsigned long long)st.barriers,
	       (unsigned long long)st.commits, (unsigned long long)st.log_bytes);
}

/* The one value every element holds, or -1 if they differ. */
static int64_t common_value(uh_heap *h)
{
	uh_value v, first;

	if (uh_array_get(h, vals, 0, &first) != 0)
		die("read chain.vals", -1);
	for (uint64_t j = 1; j < NVALS; j++)
		if (uh_array_get(h, vals, j, &v) != 0 || v.u.i != first.u.i) {
			fprintf(stderr, "element %llu is %lld, element 0 is %lld\n",
				(unsigned long long)j, (long long)v.u.i, (long long)first.u.i);
			return -1;
		}
	return first.u.i;
}

static int check(uh_heap *h, const char *ack)
{
	int acked = (int)th_count_lines(ack), rc;
	uint64_t objects;
	uh_value t;
	const void *data;
	size_t len;
	char want[16];

	if ((rc = uh_heap_check(h, &objects)) != 0) {
		fprintf(stderr, "uh_heap_check: %s\n", uh_errmsg());
		return 2;
	}
	int64_t v = common_value(h);
	if (v != acked && v != acked + 1) {
		fprintf(stderr, "chain.vals holds %lld after %d acknowledged ops\n", (long long)v,
			acked);
		return 2;
	}
	snprintf(want, sizeof(want), "op %lld", (long long)v);
	if ((rc = uh_array_get(h, tag, 0, &t)) != 0 ||
	    (rc = uh_bytes_get(h, t.u.ref, &data, &len)) != 0 || len != strlen(want) ||
	    memcmp(data, want, len) != 0) {
		fprintf(stderr, "chain.tag is not \"%s\"\n", want);
		return 2;
	}
	printf("state=%lld acked=%d\n", (long long)v, acked);
	return 0;
}

int main(int argc, char **argv)
{
	struct cc_args a;
	uh_heap *h;
	int rc;

	cc_parse_args(argc, argv, &a);
	if (!a.mode || !a.sock)
		die("usage: --setup|--work|--check --socket S [--ack FILE]", UH_EINVAL);
	if ((rc = uh_connect(a.sock, 0, &h)) != 0)
		die("uh_connect", rc);
	if (!strcmp(a.mode, "--setup")) {
		if ((rc = uh_run(h, setup_body, NULL, 0)) != 0)
			die("setup", rc);
		uh_disconnect(h);
		return 0;
	}
	if ((rc = uh_root_get(h, "chain.vals", &vals)) != 0 ||
	    (rc = uh_root_get(h, "chain.tag", &tag)) != 0)
		die("roots", rc);
	if (!a.ack)
		die("--ack FILE is required", UH_EINVAL);
	if (!strcmp(a.mode, "--work")) {
		work(h, a.ack, a.ready_fd, a.go_fd);
		uh_disconnect(h);
		return 0;
	}
	rc = check(h, a.ack);
	uh_disconnect(h);
	return rc;
}
