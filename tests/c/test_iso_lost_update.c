/*
 * test_iso_lost_update.c -- the lost-update test of issue 3: K processes
 * (prog_iso_counter) each increment one shared counter object M times,
 * every increment a read-modify-write block run with uh_run() (with a
 * busy-wait between the read and the write, so that they overlap). The
 * counter must end at exactly K * M, each process must report M
 * increments done, and the processes' uh_stats must show that their
 * blocks did collide (conflicts > 0): otherwise the test proved nothing.
 * Two rounds: with the dwell (many conflicts) and without (short blocks).
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "iso_model.h"

#define K 4
#define WAIT_MS 60000

static uint64_t run_round(const struct th_heapd *d, int round, long m, unsigned dwell_us,
			  int64_t base)
{
	char cnt[16], dw[16], go[700], res[K][700], gname[16];
	uint64_t conflicts = 0, retries = 0, waits = 0, t0 = th_now_ms();
	pid_t pids[K];
	int64_t v = -1;
	uh_heap *h;

	snprintf(cnt, sizeof(cnt), "%ld", m);
	snprintf(dw, sizeof(dw), "%u", dwell_us);
	snprintf(gname, sizeof(gname), "go.%d", round);
	snprintf(go, sizeof(go), "%s/%s", d->dir, gname);
	for (int i = 0; i < K; i++) {
		char *argv[] = { (char *)th_bin("prog_iso_counter"), "--socket", (char *)d->sock,
				 "--count", cnt, "--dwell-us", dw, "--go", go, "--result", res[i],
				 NULL };
		snprintf(res[i], sizeof(res[i]), "%s/res.%d.%d", d->dir, round, i);
		pids[i] = th_spawn(argv, NULL);
	}
	th_signal_file(d->dir, gname, NULL);
	for (int i = 0; i < K; i++) {
		int rc = th_wait_exit_timeout(pids[i], WAIT_MS);
		uint64_t done = 0, c = 0, r = 0, w = 0;
		char text[256] = "";
		FILE *f;

		if (rc == -2) {
			th_fail(__FILE__, __LINE__, "incrementer %d still running after %d ms", i,
				WAIT_MS);
			rc = th_kill(pids[i]);
		}
		TH_CHECK_EQ(rc, 0);
		if ((f = fopen(res[i], "r")) != NULL) {
			if (!fgets(text, sizeof(text), f))
				text[0] = '\0';
			fclose(f);
		}
		if (th_find_u64(text, "done", &done) || th_find_u64(text, "conflicts", &c) ||
		    th_find_u64(text, "retries", &r) || th_find_u64(text, "lock_waits", &w)) {
			th_fail(__FILE__, __LINE__, "incrementer %d: no result", i);
			continue;
		}
		TH_CHECK_EQ(done, m);
		conflicts += c;
		retries += r;
		waits += w;
	}
	if (th_connect(d, 0, &h) == 0) {
		uh_off counter;
		TH_CHECK_RC(uh_root_get(h, "iso.counter", &counter));
		TH_CHECK_RC(uh_get_i64(h, counter, 0, &v));
		uh_disconnect(h);
	}
	TH_CHECK_EQ(v - base, (int64_t)K * m);
	printf("round %d: %d x %ld increments, dwell %u us: counter +%lld, conflicts %llu, "
	       "retries %llu, lock_waits %llu, %llu ms\n", round, K, m, dwell_us,
	       (long long)(v - base), (unsigned long long)conflicts,
	       (unsigned long long)retries, (unsigned long long)waits,
	       (unsigned long long)(th_now_ms() - t0));
	return conflicts;
}

int main(void)
{
	static struct th_heapd d;
	struct iso_classes c;
	uh_off counter;
	uh_heap *h;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"heapd start + connect");
		return th_summary("test_iso_lost_update");
	}
	TH_CHECK_RC(iso_register(h, &c));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_alloc(h, c.ledger, &counter));
	TH_CHECK_RC(uh_root_set(h, "iso.counter", counter));
	TH_CHECK_RC(uh_commit(h));
	uh_disconnect(h);

	TH_CHECK(run_round(&d, 1, 2000, 20, 0) > 0);
	run_round(&d, 2, 20000, 0, (int64_t)K * 2000);
	if (th_failed)
		th_heapd_log_tail(&d, 3000);
	th_heapd_cleanup(&d);
	return th_summary("test_iso_lost_update");
}
