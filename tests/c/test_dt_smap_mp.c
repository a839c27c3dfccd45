/*
 * test_dt_smap_mp.c -- three processes (prog_dt_smap_mp) put and remove
 * keys of their own ranges in one shared sorted map while scanning all of
 * it, forward and backward, outside and inside blocks: every scan is
 * strictly ordered, no entry is torn, each writer sees exactly its own keys
 * (see the prog). Afterwards the map holds exactly the merge of the three
 * writers' final keys, passes uh_smap_check, and still does after a heapd
 * restart.
 *
 * UH_TEST_SEED=n repeats a run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static const char *SUITE = "test_dt_smap_mp";
static struct th_heapd d;

enum { K = 3, RANGE = 700, OPS = 5000 };

static int64_t want[K][RANGE];

static int load_out(const char *path, int w)
{
	FILE *f = fopen(path, "r");
	int num;
	long long v;

	if (!f)
		return -1;
	while (fscanf(f, "%d %lld", &num, &v) == 2)
		if (num >= 0 && num < RANGE)
			want[w][num] = v;
	fclose(f);
	return 0;
}

static void check_merge(uh_heap *h, uh_off m)
{
	uh_iter it;
	uh_key k;
	uh_value v;
	uint64_t n = 0, wantn = 0, len = 0;
	int rc, bad = 0;

	for (int w = 0; w < K; w++)
		for (int i = 0; i < RANGE; i++)
			wantn += want[w][i] != 0;
	TH_CHECK_RC(uh_smap_check(h, m));
	TH_CHECK_RC(uh_smap_len(h, m, &len));
	TH_CHECK_EQ(len, wantn);
	TH_CHECK_RC(uh_smap_scan(h, m, NULL, 0, &it));
	while ((rc = uh_smap_next(h, m, &it, &k, &v)) == 0) {
		char buf[64];
		int w, num;
		snprintf(buf, sizeof(buf), "%.*s", (int)k.len, (const char *)k.data);
		if (sscanf(buf, "w%d-%d", &w, &num) != 2 || w < 0 || w >= K || num < 0 ||
		    num >= RANGE || want[w][num] != v.u.i) {
			if (bad++ < 5)
				th_fail(__FILE__, __LINE__, "entry '%s' = %llx not acknowledged", buf,
					(unsigned long long)v.u.i);
		}
		n++;
	}
	TH_CHECK_ERR(rc, UH_ENOTFOUND);
	TH_CHECK_EQ(n, wantn);
	TH_CHECK_EQ(bad, 0);
}

int main(void)
{
	const char *seed_env = getenv("UH_TEST_SEED");
	uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL);
	uh_heap *h = NULL;
	uh_off m = 0;
	pid_t pids[K];
	char out[K][700], ids[K][8], ops[16], seeds[32];

	printf("%s: seed %llu (UH_TEST_SEED to repeat)\n", SUITE, (unsigned long long)seed);
	if (th_heapd_start(&d, "--size 128M") != 0 || th_connect(&d, 0, &h) != 0) {
		th_heapd_cleanup(&d);
		return 1;
	}
	TH_CHECK_RC(uh_smap_new(h, UH_KEY_STRING, &m));
	TH_CHECK_RC(uh_root_set(h, "smap.mp", m));
	snprintf(ops, sizeof(ops), "%d", OPS);
	snprintf(seeds, sizeof(seeds), "%llu", (unsigned long long)seed);
	for (int w = 0; w < K; w++) {
		snprintf(out[w], sizeof(out[w]), "%s/writer%d.out", d.dir, w);
		snprintf(ids[w], sizeof(ids[w]), "%d", w);
		char *argv[] = { (char *)th_bin("prog_dt_smap_mp"), d.sock, ids[w], ops, seeds,
				 out[w], NULL };
		pids[w] = th_spawn(argv, NULL);
		TH_CHECK(pids[w] > 0);
	}
	for (int w = 0; w < K; w++) {
		int rc = pids[w] > 0 ? th_wait_exit(pids[w]) : -1;
		if (rc != 0)
			th_fail(__FILE__, __LINE__, "writer %d exited with %d", w, rc);
		else
			th_passed++;
		TH_CHECK(load_out(out[w], w) == 0);
	}
	check_merge(h, m);
	uh_disconnect(h);
	h = NULL;
	if (th_heapd_restart(&d) == 0 && th_connect(&d, 0, &h) == 0 &&
	    uh_root_get(h, "smap.mp", &m) == 0)
		check_merge(h, m);
	else
		th_fail(__FILE__, __LINE__, "restart: %s", uh_errmsg());
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
