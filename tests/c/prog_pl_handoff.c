/*
 * prog_pl_handoff.c -- the two-session workload of test_powerloss: blocks
 * of one session take over what a block of the other just released.
 *
 *   prog_pl_handoff --setup --socket S      (root "r": an i64 array of 1, -1)
 *   prog_pl_handoff --work --socket S --ack F
 *       two threads, each with its own session (A runs the ops i with
 *       i % 3 == 0, B the others), take turns; op i is one block:
 *         - unless i % 3 == 2: r[0] = i (the other session wrote it last);
 *         - a 40-byte bytes object of pattern i, published as root "b<i>";
 *         - unless i % 3 == 2: root "b<i-1>" (the other session's object)
 *           deleted and freed, so its slot goes back to the other session's
 *           arena, whose next allocation of that size may reuse it.
 *       After op i its thread appends "i\n" to F.
 *   prog_pl_handoff --check --socket S --ack F
 *       r[0] and the roots must be the model after the acknowledged ops,
 *       or after one more (the op in flight). Prints "live=<n>".
 *
 * Why two sessions: a commit leaves its log APPLIED without a barrier of
 * its own (FORMAT.md 8.4). After a power loss such a log may still read
 * COMMITTED; if B's later blocks (which wrote r[0], or reused the slot A
 * freed) are no longer in B's log, replaying A's block would undo them.
 * With i % 3 == 2, B commits a block that touches neither right after one
 * that did: only the barriers' flushing of the lazy logs keeps A's log from
 * being replayed then (UH_MUTANT=lazy-flush drops it: test_powerloss_mutant).
 * Each thread barriers only for its own session, and the power-loss
 * campaign fences a thread's flushes only at that thread's barriers.
 * Exit 0 ok, 1 mismatch or error (printed).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash_campaign.h"
#include "powerloss.h"

#define NOPS 15
#define OBJ_BYTES 40

static const char *sock;
static int ack_fd = -1;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn = PTHREAD_COND_INITIALIZER;
static int next_op;		/* under mu */
static int failed;		/* under mu */

static void pattern(int i, char *buf)
{
	for (int k = 0; k < OBJ_BYTES; k++)
		buf[k] = (char)(i * 37 + k * 11 + 1);
}

static int writes_r(int i)
{
	return i % 3 != 2;
}

static int root_r(uh_heap *h, uh_off *r)
{
	return uh_root_get(h, "r", r);
}

static int op_body(uh_heap *h, void *arg)
{
	int i = *(const int *)arg;
	char name[16], buf[OBJ_BYTES];
	uh_off r, o;
	int rc;

	if (writes_r(i)) {
		uh_value v = { .type = UH_T_I64, .u.i = i };
		if ((rc = root_r(h, &r)) != 0 || (rc = uh_array_set(h, r, 0, &v, 0)) != 0)
			return rc;
	}
	pattern(i, buf);
	snprintf(name, sizeof(name), "b%d", i);
	if ((rc = uh_bytes_new(h, buf, OBJ_BYTES, &o)) != 0 || (rc = uh_root_set(h, name, o)) != 0)
		return rc;
	if (i == 0 || !writes_r(i))
		return 0;
	snprintf(name, sizeof(name), "b%d", i - 1);
	if ((rc = uh_root_get(h, name, &o)) != 0 || (rc = uh_root_del(h, name)) != 0)
		return rc;
	return uh_free(h, o);
}

static int ack(int i)
{
	char line[16];
	int n = snprintf(line, sizeof(line), "%d\n", i);

	if (write(ack_fd, line, (size_t)n) != n)
		return -1;
	pl_mark(line, (size_t)n);
	return 0;
}

/* One session's thread: its ops, each when its turn comes. */
static void *worker(void *arg)
{
	int mine = *(const int *)arg;	/* 0: A (i % 3 == 0), 1: B */
	uh_heap *h = NULL;
	int rc = uh_connect(sock, 0, &h);

	if (rc)
		printf("connect: %s\n", uh_errmsg());
	for (int i = 0; i < NOPS; i++) {
		if ((i % 3 == 0) != (mine == 0))
			continue;
		pthread_mutex_lock(&mu);
		while (next_op != i && !failed)
			pthread_cond_wait(&turn, &mu);
		pthread_mutex_unlock(&mu);
		if (!rc && (rc = uh_run(h, op_body, &i, 0)) != 0)
			printf("FAIL op %d: %s: %s\n", i, uh_strerror(rc), uh_errmsg());
		if (!rc && (rc = ack(i)) != 0)
			printf("FAIL ack write\n");
		pthread_mutex_lock(&mu);
		failed |= rc != 0;
		next_op = i + 1;
		pthread_cond_broadcast(&turn);
		pthread_mutex_unlock(&mu);
		if (rc)
			break;
	}
	if (h && !rc)
		uh_disconnect(h);
	return NULL;
}

static int work(const char *ackp)
{
	pthread_t t[2];
	int who[2] = { 0, 1 };

	if ((ack_fd = open(ackp, O_WRONLY | O_CREAT | O_APPEND, 0600)) < 0)
		return 1;
	for (int k = 0; k < 2; k++)
		pthread_create(&t[k], NULL, worker, &who[k]);
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	close(ack_fd);
	if (!failed)
		printf("ops=%d\n", NOPS);
	return failed;
}

/* Root b<j> is present after n ops. */
static int present(int j, int n)
{
	return j < n && !(j + 1 < n && writes_r(j + 1));
}

static int matches(uh_heap *h, int n, uint64_t *live, int say)
{
	int64_t want = -1;
	uint64_t count = 0, roots = 0;
	uh_value v = { 0 };
	uh_off r;

	for (int i = 0; i < n; i++)
		if (writes_r(i))
			want = i;
	if (root_r(h, &r) != 0 || uh_array_get(h, r, 0, &v) != 0 || v.u.i != want) {
		if (say)
			printf("after %d ops: r[0] = %lld, want %lld\n", n, (long long)v.u.i,
			       (long long)want);
		return 0;
	}
	for (int j = 0; j < NOPS; j++) {
		char name[16], buf[OBJ_BYTES];
		int here = present(j, n);
		snprintf(name, sizeof(name), "b%d", j);
		pattern(j, buf);
		if (!cc_root_bytes(h, name, here ? buf : NULL, OBJ_BYTES, n, say))
			return 0;
		count += (uint64_t)here;
	}
	if (uh_root_count(h, &roots) != 0 || roots != count + 1) {
		if (say)
			printf("after %d ops: %llu roots, want %llu\n", n, (unsigned long long)roots,
			       (unsigned long long)count + 1);
		return 0;
	}
	/* root map and its table, root r (name, array), a name and an object per b root */
	*live = 4 + 2 * count;
	return 1;
}

static int setup(uh_heap *h)
{
	uh_value v = { .type = UH_T_I64, .u.i = -1 };
	uh_off r;
	int rc;

	if ((rc = uh_begin(h)) != 0)
		return rc;
	if ((rc = uh_array_new(h, UH_T_I64, 1, &r)) != 0 ||
	    (rc = uh_array_set(h, r, 0, &v, 0)) != 0 || (rc = uh_root_set(h, "r", r)) != 0) {
		uh_abort(h);
		return rc;
	}
	return uh_commit(h);
}

int main(int argc, char **argv)
{
	struct cc_args a;
	uh_heap *h;
	int rc;

	cc_parse_args(argc, argv, &a);
	if (!a.mode || !a.sock || (strcmp(a.mode, "--setup") && !a.ack)) {
		fprintf(stderr,
			"usage: prog_pl_handoff --setup|--work|--check --socket S [--ack F]\n");
		return 1;
	}
	sock = a.sock;
	if (!strcmp(a.mode, "--work"))
		return work(a.ack);
	if ((rc = uh_connect(a.sock, 0, &h)) != 0) {
		printf("connect: %s\n", uh_errmsg());
		return 1;
	}
	if (!strcmp(a.mode, "--setup") && (rc = setup(h)) != 0)
		printf("setup: %s: %s\n", uh_strerror(rc), uh_errmsg());
	else if (!strcmp(a.mode, "--check"))
		rc = cc_check_acked(h, a.ack, NOPS, matches);
	uh_disconnect(h);
	return rc != 0;
}
