/*
 * test_sessions.c -- several sessions of one process over one mapping
 * (uh_session_open): one mapping shared, independent blocks and locks,
 * threads transferring on a shared bank each in its own session (total
 * constant, every acknowledged transfer present), disconnect in any order,
 * read-only inheritance, and the retry backoff bindings use.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *SUITE = "test_sessions";

enum { ACCOUNTS = 16, THREADS = 4, TRANSFERS = 3000, START = 1000 };

static uint32_t acct_cls;
static uh_off accts[ACCOUNTS];

struct worker {
	uh_heap *parent;
	int id;
	int done;		/* acknowledged transfers */
	int64_t delta[ACCOUNTS];	/* sum of acknowledged effects */
	int rc;
};

struct transfer { uh_off from, to; int64_t amount; };

static int transfer_fn(uh_heap *h, void *arg)
{
	struct transfer *t = arg;
	int64_t a, b;
	int rc;

	if ((rc = uh_get_i64(h, t->from, 0, &a)) || (rc = uh_get_i64(h, t->to, 0, &b)))
		return rc;
	if ((rc = uh_set_i64(h, t->from, 0, a - t->amount)))
		return rc;
	return uh_set_i64(h, t->to, 0, b + t->amount);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uh_heap *h;

	if ((w->rc = uh_session_open(w->parent, 0, &h)) != 0) {
		fprintf(stderr, "worker %d: %s\n", w->id, uh_errmsg());
		return NULL;
	}
	for (int i = 0; i < TRANSFERS; i++) {
		uint64_t r = th_mix64((uint64_t)w->id << 32 | (uint64_t)i);
		int from = r % ACCOUNTS, to = (r >> 16) % ACCOUNTS;
		if (from == to)
			to = (to + 1) % ACCOUNTS;
		struct transfer t = { accts[from], accts[to], (int64_t)(r >> 40) % 50 + 1 };
		if ((w->rc = uh_run(h, transfer_fn, &t, 1000)) != 0) {
			fprintf(stderr, "worker %d: %s\n", w->id, uh_errmsg());
			break;
		}
		w->delta[from] -= t.amount;
		w->delta[to] += t.amount;
		w->done++;
	}
	uh_disconnect(h);
	return NULL;
}

static int64_t balance(uh_heap *h, int i)
{
	int64_t v = -1;
	TH_CHECK_RC(uh_get_i64(h, accts[i], 0, &v));
	return v;
}

static void test_threads_bank(uh_heap *h)
{
	struct worker w[THREADS];
	pthread_t t[THREADS];
	int64_t total = 0;

	memset(w, 0, sizeof(w));
	for (int i = 0; i < THREADS; i++) {
		w[i].parent = h;
		w[i].id = i;
		TH_CHECK_EQ(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		TH_CHECK_RC(w[i].rc);
		TH_CHECK_EQ(w[i].done, TRANSFERS);
	}
	for (int a = 0; a < ACCOUNTS; a++) {
		int64_t want = START;
		for (int i = 0; i < THREADS; i++)
			want += w[i].delta[a];
		TH_CHECK_EQ(balance(h, a), want);
		total += balance(h, a);
	}
	TH_CHECK_EQ(total, (int64_t)ACCOUNTS * START);
}

/* Two sessions of one process are two sessions to the isolation rules:
 * a lock held by one is a conflict for the other. */
static void test_independent_blocks(uh_heap *h)
{
	uh_heap *s;
	int64_t v;

	TH_CHECK_RC(uh_session_open(h, 0, &s));
	TH_CHECK(uh_base(s) == uh_base(h));
	uh_info a, b;
	TH_CHECK_RC(uh_heap_info(h, &a));
	TH_CHECK_RC(uh_heap_info(s, &b));
	TH_CHECK(a.session != b.session);
	TH_CHECK_EQ(strcmp(a.path, b.path), 0);

	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_i64(h, accts[0], 0, 12345));
	TH_CHECK_EQ(uh_in_block(s), 0);
	TH_CHECK_RC(uh_get_i64(s, accts[0], 0, &v));	/* outside a block: in place */
	TH_CHECK(v != 12345);
	TH_CHECK_RC(uh_begin(s));
	TH_CHECK_ERR(uh_set_i64(s, accts[0], 0, 1), UH_ECONFLICT);
	TH_CHECK_ERR(uh_commit(s), UH_ECONFLICT);
	TH_CHECK_RC(uh_abort(h));
	TH_CHECK_RC(uh_get_i64(s, accts[0], 0, &v));
	TH_CHECK(v != 12345);

	/* The first session may go first: the mapping stays for the other. */
	uh_heap *s2;
	TH_CHECK_RC(uh_session_open(s, 0, &s2));
	uh_disconnect(s);
	TH_CHECK_RC(uh_get_i64(s2, accts[1], 0, &v));
	TH_CHECK_RC(uh_set_i64(s2, accts[1], 0, v));
	uh_disconnect(s2);
}

static void test_readonly(const struct th_heapd *d, uh_heap *h)
{
	uh_heap *ro, *s;
	uh_info i;

	TH_CHECK_RC(uh_session_open(h, UH_READONLY, &s));
	TH_CHECK_ERR(uh_set_i64(s, accts[0], 0, 1), UH_EREADONLY);
	uh_disconnect(s);

	TH_CHECK_RC(th_connect(d, UH_READONLY, &ro));
	TH_CHECK_RC(uh_session_open(ro, 0, &s));	/* read-only mapping: read-only */
	TH_CHECK_RC(uh_heap_info(s, &i));
	TH_CHECK_EQ(i.readonly, 1);
	TH_CHECK_ERR(uh_set_i64(s, accts[0], 0, 1), UH_EREADONLY);
	uh_disconnect(ro);
	int64_t v;
	TH_CHECK_RC(uh_get_i64(s, accts[0], 0, &v));	/* still mapped */
	uh_disconnect(s);
}

static void test_bad_args(uh_heap *h)
{
	uh_heap *s = NULL;

	TH_CHECK_ERR(uh_session_open(NULL, 0, &s), UH_EINVAL);
	TH_CHECK_ERR(uh_session_open(h, 0, NULL), UH_EINVAL);
	TH_CHECK_ERR(uh_session_open(h, 0x80, &s), UH_EINVAL);
	TH_CHECK(s == NULL);
	TH_CHECK_ERR(uh_retry_wait(NULL, 1), UH_EINVAL);
	uh_stats a, b;
	TH_CHECK_RC(uh_stats_get(h, &a));
	TH_CHECK_RC(uh_retry_wait(h, 0));
	TH_CHECK_RC(uh_retry_wait(h, 3));
	TH_CHECK_RC(uh_stats_get(h, &b));
	TH_CHECK_EQ(b.retries, a.retries + 1);
}

/* heapd restarted on another heap file at the same path (the old one was
 * moved away): a session of the old mapping is refused instead of being
 * bound to the wrong file; the old mapping keeps working. */
static void test_replaced_heap(struct th_heapd *d, uh_heap *h)
{
	char old[700];
	uh_heap *s = NULL;
	int64_t v;

	snprintf(old, sizeof(old), "%s.old", d->heap);
	th_heapd_stop(d);
	TH_CHECK_EQ(rename(d->heap, old), 0);
	TH_CHECK_EQ(th_heapd_start(d, NULL), 0);	/* creates a new heap */
	TH_CHECK_ERR(uh_session_open(h, 0, &s), UH_EIO);
	TH_CHECK(s == NULL);
	TH_CHECK(strstr(uh_errmsg(), "not the heap this process mapped") != NULL);
	TH_CHECK_RC(uh_get_i64(h, accts[0], 0, &v));
	th_heapd_stop(d);
	TH_CHECK_EQ(rename(old, d->heap), 0);
	TH_CHECK_EQ(th_heapd_start(d, NULL), 0);
}

int main(void)
{
	struct th_heapd d = { 0 };
	static const uh_field_spec f[] = { { "balance", UH_T_I64, 0 } };
	uh_heap *h;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0)
		return 1;
	TH_CHECK_RC(uh_class_register(h, "bank.Account", f, 1, &acct_cls));
	for (int i = 0; i < ACCOUNTS; i++) {
		TH_CHECK_RC(uh_alloc(h, acct_cls, &accts[i]));
		TH_CHECK_RC(uh_set_i64(h, accts[i], 0, START));
	}
	test_independent_blocks(h);
	test_threads_bank(h);
	test_readonly(&d, h);
	test_bad_args(h);
	test_replaced_heap(&d, h);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
