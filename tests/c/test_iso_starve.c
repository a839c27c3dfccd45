/*
 * test_iso_starve.c -- a block that keeps losing goes first (FORMAT.md
 * 8.6): a slow read-modify-write block commits within uh_run's default
 * 100 tries while two processes (prog_iso_counter, no dwell) increment the
 * same counter as fast as they can.
 *
 * The slow block reads the counter, stays on the CPU for DWELL_US, then
 * writes it: any commit of a writer in between makes it lose, and the
 * writers commit every few microseconds, so without the starving word it
 * would lose every try (uh_run: "gave up after 100 tries"). With it, once
 * the block has lost 16 tries, the writers hold back their new blocks
 * until it commits. Each of ROUNDS slow blocks must commit, the slow
 * blocks must have lost tries (else the test proved nothing), and the
 * writers must still be running when the last one commits (so they
 * competed all along); then the writers are stopped and the heap checked.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "iso_model.h"

#define SUITE "test_iso_starve"
#define WRITERS 2
#define ROUNDS 5
#define DWELL_US 5000
#define WARM_MS 20000	/* the writers' first increments: at most this long */

static int64_t counter_value(uh_heap *h, uh_off counter)
{
	int64_t v = -1;
	TH_CHECK_RC(uh_get_i64(h, counter, 0, &v));
	return v;
}

int main(void)
{
	static struct th_heapd d;
	struct iso_classes c;
	struct iso_inc s = { 0, DWELL_US };
	pid_t pids[WRITERS];
	uh_heap *h;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"heapd start + connect");
		return th_summary(SUITE);
	}
	TH_CHECK_RC(iso_register(h, &c));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_alloc(h, c.ledger, &s.counter));
	TH_CHECK_RC(uh_root_set(h, "iso.counter", s.counter));
	TH_CHECK_RC(uh_commit(h));

	for (int i = 0; i < WRITERS; i++) {
		char *argv[] = { (char *)th_bin("prog_iso_counter"), "--socket", (char *)d.sock,
				 "--count", "100000000", NULL };
		pids[i] = th_spawn(argv, NULL);
	}
	uint64_t t0 = th_now_ms();
	while (counter_value(h, s.counter) < 10000 && th_now_ms() - t0 < WARM_MS)
		usleep(1000);
	TH_CHECK(counter_value(h, s.counter) >= 10000);

	struct uh_stats before, after;
	uh_stats_get(h, &before);
	int committed = 0;
	for (int r = 0; r < ROUNDS; r++) {
		int rc = uh_run(h, iso_inc_body, &s, 0);
		if (rc)
			th_fail(__FILE__, __LINE__, "slow block %d: %s: %s", r, uh_strerror(rc),
				uh_errmsg());
		else
			committed++;
	}
	uh_stats_get(h, &after);
	uint64_t lost = after.conflicts - before.conflicts;
	printf("%d of %d slow blocks (%d us each) committed beside %d writers; %llu tries "
	       "lost\n", committed, ROUNDS, DWELL_US, WRITERS, (unsigned long long)lost);
	TH_CHECK_EQ(committed, ROUNDS);
	TH_CHECK(lost > 0);
	for (int i = 0; i < WRITERS; i++)	/* still incrementing: they competed */
		TH_CHECK_EQ(th_kill(pids[i]), 128 + SIGKILL);
	uint64_t objects = 0;
	TH_CHECK_RC(uh_heap_check(h, &objects));
	uh_disconnect(h);
	if (th_failed)
		th_heapd_log_tail(&d, 3000);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
