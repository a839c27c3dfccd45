/*
 * test_starve_lease.c -- a block that keeps losing on a lock held across
 * a lease waits for it rather than give up (FORMAT.md 8.6, the GC file's
 * `calling` word).
 *
 * Session A's block writes a counter (locking it), then allocates a large
 * object, which needs a lease from heapd. heapd is stopped (SIGSTOP) for
 * HOLD_MS, standing for a lease that runs GC cycles for seconds on a full
 * heap. Meanwhile session B runs a block that increments the same counter
 * with TRIES tries: each loses on A's lock. Its first 16 back off (tens of
 * milliseconds in all); the rest would each wait 20 ms for the lock, so
 * all TRIES fit well inside HOLD_MS, and B gave up ("gave up after 40
 * tries") before A's session said it waits in a lease. With the word, B's
 * starving tries wait while A is in the lease; once heapd runs again, A
 * commits and B then commits on A's value.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>

#include "harness.h"

#define SUITE "test_starve_lease"
#define TRIES 40
#define HOLD_MS 3000
#define BIG (1u << 20)	/* past the small classes: always a lease */

static uh_off counter;
static volatile int a_locked;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* A: counter += 1, then a large object in the same block. */
static void *a_block(void *arg)
{
	uh_heap *h = arg;
	static unsigned char buf[BIG];
	int64_t v = 0;
	uh_off big;
	int rc = uh_begin(h);

	if (rc == 0 && (rc = uh_get_i64(h, counter, 0, &v)) == 0)
		rc = uh_set_i64(h, counter, 0, v + 1);
	__atomic_store_n(&a_locked, 1, __ATOMIC_RELEASE);
	if (rc == 0)
		rc = uh_bytes_new(h, buf, sizeof(buf), &big);
	rc = rc ? (uh_abort(h), rc) : uh_commit(h);
	return (void *)(intptr_t)rc;
}

static int add_ten(uh_heap *h, void *arg)
{
	(void)arg;
	int64_t v;
	int rc = uh_get_i64(h, counter, 0, &v);
	return rc ? rc : uh_set_i64(h, counter, 0, v + 10);
}

struct b_run {
	uh_heap *h;
	int rc;
	uint64_t done_ms;
};

static void *b_block(void *arg)
{
	struct b_run *b = arg;
	b->rc = uh_run(b->h, add_ten, NULL, TRIES);
	if (b->rc)
		fprintf(stderr, "B: %s\n", uh_errmsg());
	b->done_ms = th_now_ms();
	return NULL;
}

int main(void)
{
	static const uh_field_spec f[] = { { "n", UH_T_I64, 0 } };
	static struct th_heapd d;
	uh_heap *a = NULL, *b = NULL;
	uint32_t cls;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &a) != 0 ||
	    th_connect(&d, 0, &b) != 0) {
		TH_CHECK(!"heapd start + connect");
		return th_summary(SUITE);
	}
	TH_CHECK_RC(uh_class_register(a, "starve.Counter", f, 1, &cls));
	TH_CHECK_RC(uh_begin(a));
	TH_CHECK_RC(uh_alloc(a, cls, &counter));
	TH_CHECK_RC(uh_root_set(a, "starve.counter", counter));
	TH_CHECK_RC(uh_commit(a));
	int64_t v = -1;
	TH_CHECK_RC(uh_get_i64(b, counter, 0, &v));	/* B can read it */

	/* heapd stopped: A's lease waits until it runs again. */
	TH_CHECK_EQ(kill(d.pid, SIGSTOP), 0);
	pthread_t ta, tb;
	struct b_run br = { b, -1, 0 };
	TH_CHECK_EQ(pthread_create(&ta, NULL, a_block, a), 0);
	while (!__atomic_load_n(&a_locked, __ATOMIC_ACQUIRE))	/* bound: A's first steps */
		sleep_ms(1);
	sleep_ms(50);	/* A is in its lease call */
	TH_CHECK_EQ(pthread_create(&tb, NULL, b_block, &br), 0);
	sleep_ms(HOLD_MS);
	uint64_t resumed_ms = th_now_ms();
	TH_CHECK_EQ(kill(d.pid, SIGCONT), 0);

	void *arc;
	TH_CHECK_EQ(pthread_join(ta, &arc), 0);
	TH_CHECK_EQ(pthread_join(tb, NULL), 0);
	TH_CHECK_EQ((int)(intptr_t)arc, 0);
	TH_CHECK_EQ(br.rc, 0);
	/* B was running all along and finished only after A's lease. */
	TH_CHECK(br.done_ms >= resumed_ms);
	uh_stats st;
	TH_CHECK_RC(uh_stats_get(b, &st));
	TH_CHECK(st.retries >= 16);	/* it starved: the wait was the word's */
	TH_CHECK_RC(uh_get_i64(b, counter, 0, &v));
	TH_CHECK_EQ(v, 11);

	char out[4096];
	TH_CHECK_EQ(th_heapctl(&d, "check", out, sizeof(out)), 0);
	uh_disconnect(a);
	uh_disconnect(b);
	th_heapd_stop(&d);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
