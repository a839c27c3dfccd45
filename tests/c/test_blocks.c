/*
 * test_blocks.c -- failure-atomic blocks: commit publishes, abort discards
 * writes, allocations and frees, nesting is flattened, a commit costs two
 * persist barriers for 1 or 100 written fields, with or without new
 * objects (0 for an empty block: FORMAT.md 8.4), conflicts roll back, an oversized block fails cleanly,
 * committed data survives a heapd restart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *SUITE = "test_blocks";

enum { WIDE_N = 100 };
static uint32_t cnt_cls, wide_cls;

static void setup_classes(uh_heap *h)
{
	static const uh_field_spec cnt[] = { { "v", UH_T_I64, 0 }, { "w", UH_T_I64, 0 } };
	static uh_field_spec wide[WIDE_N];
	static char names[WIDE_N][8];

	for (int i = 0; i < WIDE_N; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		wide[i].name = names[i];
		wide[i].type = UH_T_I64;
	}
	TH_CHECK_RC(uh_class_register(h, "Counter", cnt, 2, &cnt_cls));
	TH_CHECK_RC(uh_class_register(h, "Wide", wide, WIDE_N, &wide_cls));
}

static int64_t get(uh_heap *h, uh_off o, uint32_t f)
{
	int64_t v = -999;

	TH_CHECK_RC(uh_get_i64(h, o, f, &v));
	return v;
}

static void test_commit_visible(uh_heap *h, uh_heap *h2)
{
	uh_off o = 0;
	uh_stats s0, s1;

	TH_CHECK_RC(uh_alloc(h, cnt_cls, &o));
	TH_CHECK_RC(uh_set_i64(h, o, 0, 1));
	TH_CHECK_RC(uh_stats_get(h, &s0));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_EQ(uh_in_block(h), 1);
	TH_CHECK_RC(uh_set_i64(h, o, 0, 2));
	TH_CHECK_RC(uh_set_i64(h, o, 1, 3));
	/* the block sees its own writes; others do not until commit */
	TH_CHECK_EQ(get(h, o, 0), 2);
	TH_CHECK_EQ(get(h2, o, 0), 1);
	TH_CHECK_EQ(get(h2, o, 1), 0);
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_EQ(uh_in_block(h), 0);
	TH_CHECK_EQ(get(h2, o, 0), 2);
	TH_CHECK_EQ(get(h2, o, 1), 3);
	TH_CHECK_RC(uh_stats_get(h, &s1));
	TH_CHECK_EQ(s1.commits - s0.commits, 1);

	TH_CHECK_ERR(uh_commit(h), UH_ESTATE);
	TH_CHECK_ERR(uh_abort(h), UH_ESTATE);
	uh_free(h, o);
}

static void test_abort(uh_heap *h)
{
	uh_off o = 0, keep = 0, fresh = 0;
	uint32_t cls;
	uh_stats s0, s1;

	TH_CHECK_RC(uh_alloc(h, cnt_cls, &o));
	TH_CHECK_RC(uh_alloc(h, cnt_cls, &keep));
	TH_CHECK_RC(uh_set_i64(h, o, 0, 10));
	TH_CHECK_RC(uh_set_i64(h, keep, 0, 20));
	TH_CHECK_RC(uh_stats_get(h, &s0));

	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_i64(h, o, 0, 11));
	TH_CHECK_RC(uh_alloc(h, cnt_cls, &fresh));
	TH_CHECK_RC(uh_set_i64(h, fresh, 0, 12));
	TH_CHECK_RC(uh_free(h, keep));
	/* a free is deferred to commit */
	TH_CHECK_EQ(get(h, keep, 0), 20);
	TH_CHECK_RC(uh_abort(h));
	TH_CHECK_EQ(uh_in_block(h), 0);

	TH_CHECK_EQ(get(h, o, 0), 10);			/* write discarded */
	TH_CHECK_ERR(uh_obj_class(h, fresh, &cls), UH_EFREED);	/* alloc discarded */
	TH_CHECK_RC(uh_obj_class(h, keep, &cls));	/* free discarded */
	TH_CHECK_EQ(get(h, keep, 0), 20);
	TH_CHECK_RC(uh_stats_get(h, &s1));
	TH_CHECK_EQ(s1.aborts - s0.aborts, 1);

	/* and a committed free does free */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_free(h, keep));
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_ERR(uh_obj_class(h, keep, &cls), UH_EFREED);
	uh_free(h, o);
}

static void test_nesting(uh_heap *h, uh_heap *h2)
{
	uh_off o = 0;

	TH_CHECK_RC(uh_alloc(h, cnt_cls, &o));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_i64(h, o, 0, 1));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_EQ(uh_in_block(h), 2);
	TH_CHECK_RC(uh_set_i64(h, o, 1, 2));
	TH_CHECK_RC(uh_commit(h));		/* inner: nothing visible yet */
	TH_CHECK_EQ(uh_in_block(h), 1);
	TH_CHECK_EQ(get(h2, o, 0), 0);
	TH_CHECK_EQ(get(h2, o, 1), 0);
	TH_CHECK_RC(uh_commit(h));		/* outer: both fields at once */
	TH_CHECK_EQ(uh_in_block(h), 0);
	TH_CHECK_EQ(get(h2, o, 0), 1);
	TH_CHECK_EQ(get(h2, o, 1), 2);

	/* an abort at any depth rolls back every level */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_i64(h, o, 0, 100));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_i64(h, o, 1, 200));
	TH_CHECK_RC(uh_abort(h));
	TH_CHECK_EQ(uh_in_block(h), 0);
	TH_CHECK_EQ(get(h, o, 0), 1);
	TH_CHECK_EQ(get(h, o, 1), 2);
	uh_free(h, o);
}

/* Barriers per commit: the same for 1 and 100 fields, 0 when empty.
 * Returns the count for a 1-field block. */
static uint64_t barrier_counts(uh_heap *h, const char *what)
{
	uh_off o = 0, n1 = 0, n2 = 0;
	uh_stats s0, s1, s2, s3, s4;
	uint64_t one, hundred, empty, allocating;

	TH_CHECK_RC(uh_alloc(h, wide_cls, &o));
	/* warm up: the first commit may touch fresh log pages */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_i64(h, o, 0, 1));
	TH_CHECK_RC(uh_commit(h));

	TH_CHECK_RC(uh_stats_get(h, &s0));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_i64(h, o, 0, 2));
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_stats_get(h, &s1));
	TH_CHECK_RC(uh_begin(h));
	for (int i = 0; i < WIDE_N; i++)
		TH_CHECK_RC(uh_set_i64(h, o, (uint32_t)i, 1000 + i));
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_stats_get(h, &s2));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_stats_get(h, &s3));
	/* two new objects, one referring to the other, and a field write */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_alloc(h, wide_cls, &n1));
	TH_CHECK_RC(uh_alloc(h, wide_cls, &n2));
	TH_CHECK_RC(uh_set_i64(h, n1, 0, 7));
	TH_CHECK_RC(uh_set_i64(h, o, 1, 1000 + 1));	/* logged: o is not new */
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_stats_get(h, &s4));

	one = s1.barriers - s0.barriers;
	hundred = s2.barriers - s1.barriers;
	empty = s3.barriers - s2.barriers;
	allocating = s4.barriers - s3.barriers;
	printf("%s heap: barriers per commit: 1 field %llu, %d fields %llu, empty %llu, "
	       "allocating %llu\n", what, (unsigned long long)one, WIDE_N,
	       (unsigned long long)hundred, (unsigned long long)empty,
	       (unsigned long long)allocating);
	TH_CHECK_EQ(one, hundred);
	TH_CHECK_EQ(one, 2);
	TH_CHECK_EQ(allocating, 2);
	TH_CHECK_EQ(get(h, n1, 0), 7);
	TH_CHECK_EQ(empty, 0);
	TH_CHECK_EQ(s3.empty_commits - s2.empty_commits, 1);
	TH_CHECK_EQ(s3.commits - s2.commits, 0);
	TH_CHECK(s2.log_bytes - s1.log_bytes > s1.log_bytes - s0.log_bytes);
	for (int i = 0; i < WIDE_N; i++)
		if (get(h, o, (uint32_t)i) != 1000 + i) {
			TH_CHECK(!"wide field value after commit");
			break;
		}
	uh_free(h, o);
	uh_free(h, n1);
	uh_free(h, n2);
	return one;
}

/* On a sync heap barriers are real (msync); the count must be the same
 * two there. */
static void test_barriers_sync(void)
{
	static struct th_heapd ds;
	uh_heap *h;

	if (th_heapd_start(&ds, "--durability sync --size 32M") != 0 ||
	    th_connect(&ds, 0, &h) != 0) {
		TH_CHECK(!"sync heapd start + connect");
		th_heapd_cleanup(&ds);
		return;
	}
	setup_classes(h);
	uint64_t one = barrier_counts(h, "sync");
	TH_CHECK_EQ(one, 2);
	uh_disconnect(h);
	th_heapd_cleanup(&ds);
}

/* Two sessions write the same object: the second loses with ECONFLICT
 * and its block is rolled back; the first commits. */
static void test_conflict(uh_heap *h, uh_heap *h2)
{
	uh_off o = 0;
	uh_stats s0, s1;

	TH_CHECK_RC(uh_alloc(h, cnt_cls, &o));
	TH_CHECK_RC(uh_stats_get(h2, &s0));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_i64(h, o, 0, 1));
	TH_CHECK_RC(uh_begin(h2));
	TH_CHECK_ERR(uh_set_i64(h2, o, 0, 2), UH_ECONFLICT);
	/* The block is rolled back already but stays open ("doomed") so that
	 * nested code cannot mistake it for success: every later call in it,
	 * and its commit, fail with the same code. */
	TH_CHECK_ERR(uh_set_i64(h2, o, 1, 3), UH_ECONFLICT);
	TH_CHECK_ERR(uh_commit(h2), UH_ECONFLICT);
	TH_CHECK_EQ(uh_in_block(h2), 0);
	/* the same when ended by uh_abort */
	TH_CHECK_RC(uh_begin(h2));
	TH_CHECK_ERR(uh_set_i64(h2, o, 0, 2), UH_ECONFLICT);
	TH_CHECK_RC(uh_abort(h2));
	TH_CHECK_EQ(uh_in_block(h2), 0);
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_EQ(get(h2, o, 0), 1);
	TH_CHECK_RC(uh_stats_get(h2, &s1));
	TH_CHECK_EQ(s1.conflicts - s0.conflicts, 2);
	/* after the lock is gone, the loser's retry succeeds */
	TH_CHECK_RC(uh_begin(h2));
	TH_CHECK_RC(uh_set_i64(h2, o, 0, 2));
	TH_CHECK_RC(uh_commit(h2));
	TH_CHECK_EQ(get(h, o, 0), 2);
	uh_free(h, o);
}

/* A block whose redo outgrows the session's log area grows the log
 * (extents leased from heapd, FORMAT.md 8.1), commits, and gives the
 * extents back afterwards; the session goes on as before. */
static void test_log_grows(uh_heap *h)
{
	enum { NOBJ = 1000 };
	uh_off objs[NOBJ];
	uh_stats s0, s1;
	int rc = 0, i, j = 0, bad = 0;

	for (i = 0; i < NOBJ; i++)
		TH_CHECK_RC(uh_alloc(h, wide_cls, &objs[i]));
	TH_CHECK_RC(uh_stats_get(h, &s0));
	TH_CHECK_RC(uh_begin(h));
	/* 100k fields x >= 16 bytes of redo each is far above the 1 MiB log */
	for (i = 0; i < NOBJ && rc == 0; i++)
		for (j = 0; j < WIDE_N && rc == 0; j++)
			rc = uh_set_i64(h, objs[i], (uint32_t)j, i * WIDE_N + j);
	TH_CHECK_RC(rc);
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_stats_get(h, &s1));
	TH_CHECK(s1.log_bytes - s0.log_bytes > 2u << 20);
	for (i = 0; i < NOBJ; i++)
		for (j = 0; j < WIDE_N; j++)
			bad += get(h, objs[i], (uint32_t)j) != i * WIDE_N + j;
	TH_CHECK_EQ(bad, 0);
	/* the same block rolled back leaves nothing behind */
	TH_CHECK_RC(uh_begin(h));
	for (i = 0, rc = 0; i < NOBJ && rc == 0; i++)
		for (j = 0; j < WIDE_N && rc == 0; j++)
			rc = uh_set_i64(h, objs[i], (uint32_t)j, -1);
	TH_CHECK_RC(rc);
	TH_CHECK_RC(uh_abort(h));
	TH_CHECK_EQ(get(h, objs[NOBJ / 2], WIDE_N / 2), NOBJ / 2 * WIDE_N + WIDE_N / 2);
	/* the session still works */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_i64(h, objs[0], 0, 5));
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_EQ(get(h, objs[0], 0), 5);
	for (i = 0; i < NOBJ; i++)
		uh_free(h, objs[i]);
}

/* Committed blocks survive a heapd restart (objects reachable from a root). */
static void test_restart(struct th_heapd *d)
{
	uh_heap *h;
	uh_off o = 0, n = 0, got = 0;

	if (th_connect(d, 0, &h) != 0) {
		TH_CHECK(!"connect");
		return;
	}
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_alloc(h, cnt_cls, &o));
	TH_CHECK_RC(uh_set_i64(h, o, 0, 4242));
	TH_CHECK_RC(uh_set_i64(h, o, 1, -17));
	TH_CHECK_RC(uh_root_set(h, "blocks.kept", o));
	TH_CHECK_RC(uh_commit(h));
	/* a later committed update, and an aborted one */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_i64(h, o, 1, -18));
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_set_i64(h, o, 1, -19));
	TH_CHECK_RC(uh_alloc(h, cnt_cls, &n));
	TH_CHECK_RC(uh_abort(h));
	uh_disconnect(h);

	if (th_heapd_restart(d) != 0 || th_connect(d, 0, &h) != 0) {
		TH_CHECK(!"restart + reconnect");
		return;
	}
	TH_CHECK_RC(uh_root_get(h, "blocks.kept", &got));
	TH_CHECK_EQ(got, o);
	TH_CHECK_EQ(get(h, got, 0), 4242);
	TH_CHECK_EQ(get(h, got, 1), -18);
	uh_disconnect(h);
}

int main(void)
{
	static struct th_heapd d;
	uh_heap *h, *h2;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0 ||
	    th_connect(&d, 0, &h2) != 0) {
		TH_CHECK(!"heapd start + connect");
		return th_summary(SUITE);
	}
	setup_classes(h);
	test_commit_visible(h, h2);
	test_abort(h);
	test_nesting(h, h2);
	barrier_counts(h, "memory");
	test_conflict(h, h2);
	test_log_grows(h);
	uh_disconnect(h2);
	uh_disconnect(h);
	test_restart(&d);
	th_heapd_cleanup(&d);
	test_barriers_sync();
	return th_summary(SUITE);
}
