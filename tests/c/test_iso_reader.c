/*
 * test_iso_reader.c -- issue 3: "a reader process holding no lock is never
 * blocked by a writer that was SIGKILLed mid-block (bounded wait, asserted
 * by a counter, not a clock)".
 *
 * A and B hold 1 and 2. prog_iso_hold begins a block, writes 111 and 222
 * into them (locking both) and waits, never committing. This process then
 * runs read-only blocks (uh_run) over A and B:
 *   1. while the holder lives: every block sees 1 and 2 (the last
 *      committed values), and the reader's uh_stats show read_waits 0,
 *      lock_waits 0, conflicts 0: it never waited for the open block.
 *      (A writer session in this process, meanwhile, is refused A's lock
 *      with UH_ECONFLICT after a bounded wait: the lock is real.)
 *   2. SIGKILL the holder; read on, across heapd's reaping of the dead
 *      session (until heapctl stats counts it): still 1 and 2, still
 *      read_waits 0 and lock_waits 0 (a block may lose a conflict to the
 *      version bump of the rollback, and is then re-run).
 *   3. prog_iso_hold --set 10 20 in another process (retrying until the
 *      dead locks are gone) commits; the reader then sees 10 and 20,
 *      still without waiting.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "iso_model.h"

#define READS 2000

struct rd {
	uh_off a, b;
	int64_t va, vb;
};

static int read_body(uh_heap *h, void *arg)
{
	struct rd *r = arg;
	int rc = uh_get_i64(h, r->a, 0, &r->va);

	return rc ? rc : uh_get_i64(h, r->b, 0, &r->vb);
}

/* n read-only blocks; count those that saw something else than (wa, wb). */
static int read_blocks(uh_heap *h, struct rd *r, int n, int64_t wa, int64_t wb)
{
	int wrong = 0;

	for (int i = 0; i < n; i++) {
		int rc = uh_run(h, read_body, r, 0);
		if (rc != 0) {
			th_fail(__FILE__, __LINE__, "read block: %s: %s", uh_strerror(rc),
				uh_errmsg());
			return -1;
		}
		if ((r->va != wa || r->vb != wb) && wrong++ < 3)
			fprintf(stderr, "read block saw A=%lld B=%lld, want %lld %lld\n",
				(long long)r->va, (long long)r->vb, (long long)wa, (long long)wb);
	}
	return wrong;
}

/* The reader's wait counters (must stay 0), printed with the phase. */
static void check_no_wait(uh_heap *h, const char *phase, int want_no_conflict)
{
	uh_stats st;

	TH_CHECK_RC(uh_stats_get(h, &st));
	printf("%s: read_waits %llu lock_waits %llu conflicts %llu retries %llu "
	       "empty_commits %llu\n", phase, (unsigned long long)st.read_waits,
	       (unsigned long long)st.lock_waits, (unsigned long long)st.conflicts,
	       (unsigned long long)st.retries, (unsigned long long)st.empty_commits);
	TH_CHECK_EQ(st.read_waits, 0);
	TH_CHECK_EQ(st.lock_waits, 0);
	TH_CHECK_EQ(st.commits, 0);	/* read-only: nothing written */
	if (want_no_conflict)
		TH_CHECK_EQ(st.conflicts, 0);
}

static uint64_t reaped(const struct th_heapd *d)
{
	static char out[8192];
	uint64_t n = 0;

	if (th_heapctl(d, "--json stats", out, sizeof(out)) == 0)
		th_find_u64(out, "sessions_reaped", &n);
	return n;
}

static int setup(const struct th_heapd *d, struct rd *r)
{
	struct iso_classes c;
	uh_heap *h;
	int rc;

	if (th_connect(d, 0, &h) != 0)
		return -1;
	rc = iso_register(h, &c);
	if (rc == 0) rc = uh_begin(h);
	if (rc == 0) rc = uh_alloc(h, c.ledger, &r->a);
	if (rc == 0) rc = uh_alloc(h, c.ledger, &r->b);
	if (rc == 0) rc = uh_set_i64(h, r->a, 0, 1);
	if (rc == 0) rc = uh_set_i64(h, r->b, 0, 2);
	if (rc == 0) rc = uh_root_set(h, "rd.a", r->a);
	if (rc == 0) rc = uh_root_set(h, "rd.b", r->b);
	if (rc == 0) rc = uh_commit(h);
	TH_CHECK_RC(rc);
	uh_disconnect(h);
	return rc;
}

/* Phase 1 extra: a writer is refused the held lock, after a bounded wait. */
static void writer_refused(const struct th_heapd *d, const struct rd *r)
{
	uh_heap *w;
	uh_stats st;

	if (th_connect(d, 0, &w) != 0)
		return;
	TH_CHECK_RC(uh_begin(w));
	TH_CHECK_ERR(uh_set_i64(w, r->a, 0, 5), UH_ECONFLICT);
	uh_abort(w);
	TH_CHECK_RC(uh_stats_get(w, &st));
	TH_CHECK(st.lock_waits > 0);
	TH_CHECK_EQ(st.aborts_locked, 1);
	uh_disconnect(w);
}

int main(void)
{
	static struct th_heapd d;
	struct rd r = { 0 };
	uh_heap *h;
	pid_t holder, setter;
	int64_t v;
	int blocks = 0;

	if (th_heapd_start(&d, NULL) != 0 || setup(&d, &r) != 0 || th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"heapd start + setup");
		return th_summary("test_iso_reader");
	}
	{
		char *argv[] = { (char *)th_bin("prog_iso_hold"), "--socket", d.sock, "--hold",
				 d.dir, NULL };
		holder = th_spawn(argv, NULL);
	}
	TH_CHECK(th_wait_file(d.dir, "hold.ready", 10000) == 0);

	/* 1: the holder is alive, its block open. */
	TH_CHECK_EQ(read_blocks(h, &r, READS, 1, 2), 0);
	TH_CHECK_RC(uh_get_i64(h, r.a, 0, &v));	/* plain reads too */
	TH_CHECK_EQ(v, 1);
	TH_CHECK_RC(uh_get_i64(h, r.b, 0, &v));
	TH_CHECK_EQ(v, 2);
	check_no_wait(h, "holder alive", 1);
	writer_refused(&d, &r);

	/* 2: the holder dies mid-block; read across its reaping. */
	TH_CHECK_EQ(th_kill(holder), 128 + SIGKILL);
	do {
		TH_CHECK_EQ(read_blocks(h, &r, 200, 1, 2), 0);
		blocks += 200;
	} while (reaped(&d) < 1 && blocks < 20 * READS);
	TH_CHECK(reaped(&d) >= 1);
	TH_CHECK_EQ(read_blocks(h, &r, READS, 1, 2), 0);
	printf("read %d blocks until heapd had reaped the holder\n", blocks);
	check_no_wait(h, "holder killed", 0);

	/* 3: another process commits new values; the reader sees them. */
	{
		char *argv[] = { (char *)th_bin("prog_iso_hold"), "--socket", d.sock, "--set",
				 "10", "20", NULL };
		setter = th_spawn(argv, NULL);
	}
	TH_CHECK_EQ(th_wait_exit_timeout(setter, 30000), 0);
	TH_CHECK_EQ(read_blocks(h, &r, READS, 10, 20), 0);
	check_no_wait(h, "after a new commit", 0);

	uh_disconnect(h);
	if (th_failed)
		th_heapd_log_tail(&d, 3000);
	th_heapd_cleanup(&d);
	return th_summary("test_iso_reader");
}
