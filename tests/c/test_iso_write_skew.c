/*
 * test_iso_write_skew.c -- the write-skew test of issue 3: two invariants
 * across two objects (x.bal + y.bal >= 0, x.oncall + y.oncall >= 1; see
 * prog_iso_skew.c), kept by blocks that read both objects and write one.
 * Four prog_iso_skew workers run a random mix of such blocks (seeded; the
 * seed is printed, UH_TEST_SEED=<n> replays the choices), with a busy-wait
 * between the check and the write so that blocks overlap, while a
 * prog_iso_skew auditor runs read-only blocks. Asserted:
 *   - no worker block and no audit ever saw an invariant broken;
 *   - the final state keeps both invariants, and the final balance is
 *     exactly 100 + 30 * deposits - 60 * withdrawals that the workers
 *     report committed (no lost or phantom update);
 *   - blocks did collide (conflicts > 0 in the workers' uh_stats), the
 *     guarded writes did happen (withdrawals, off-calls > 0), and audits
 *     ran between commits.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "iso_model.h"

#define K 4
#define OPS "20000"
#define DWELL "20"
#define WAIT_MS 60000

struct totals {
	uint64_t withdrawals, deposits, offcalls, conflicts;
};

static int create_pair(const struct th_heapd *d)
{
	static const uh_field_spec f[] = { { "bal", UH_T_I64, 0 }, { "oncall", UH_T_I64, 0 } };
	static const char *roots[2] = { "skew.x", "skew.y" };
	uint32_t cls;
	uh_heap *h;
	int rc;

	if (th_connect(d, 0, &h) != 0)
		return -1;
	rc = uh_class_register(h, "IsoSkew", f, 2, &cls);
	if (rc == 0)
		rc = uh_begin(h);
	for (int i = 0; rc == 0 && i < 2; i++) {
		uh_off o;
		rc = uh_alloc(h, cls, &o);
		if (rc == 0) rc = uh_set_i64(h, o, 0, 50);
		if (rc == 0) rc = uh_set_i64(h, o, 1, 1);
		if (rc == 0) rc = uh_root_set(h, roots[i], o);
	}
	if (rc == 0)
		rc = uh_commit(h);
	TH_CHECK_RC(rc);
	uh_disconnect(h);
	return rc;
}

static const char *read_line(const char *path)
{
	static char text[512];
	FILE *f = fopen(path, "r");

	text[0] = '\0';
	if (f) {
		if (!fgets(text, sizeof(text), f))
			text[0] = '\0';
		fclose(f);
	}
	return text;
}

static int wait_ok(pid_t pid, const char *what, int i)
{
	int rc = th_wait_exit_timeout(pid, WAIT_MS);

	if (rc == -2) {
		th_fail(__FILE__, __LINE__, "%s %d still running after %d ms", what, i, WAIT_MS);
		rc = th_kill(pid);
	}
	if (rc != 0)
		th_fail(__FILE__, __LINE__, "%s %d exited with %d", what, i, rc);
	else
		th_passed++;
	return rc;
}

static void add_worker(const char *path, int i, struct totals *t)
{
	const char *s = read_line(path);
	uint64_t w, dep, off, c, viol;

	if (th_find_u64(s, "withdrawals", &w) || th_find_u64(s, "deposits", &dep) ||
	    th_find_u64(s, "offcalls", &off) || th_find_u64(s, "conflicts", &c) ||
	    th_find_u64(s, "violations", &viol)) {
		th_fail(__FILE__, __LINE__, "worker %d: no result (%s)", i, s);
		return;
	}
	printf("  worker %d: %s", i, s);
	TH_CHECK_EQ(viol, 0);
	t->withdrawals += w;
	t->deposits += dep;
	t->offcalls += off;
	t->conflicts += c;
}

static void check_final(const struct th_heapd *d, const struct totals *t)
{
	int64_t v[4] = { 0 };
	uh_off x, y;
	uh_heap *h;

	if (th_connect(d, 0, &h) != 0) {
		TH_CHECK(!"connect for the final check");
		return;
	}
	TH_CHECK_RC(uh_root_get(h, "skew.x", &x));
	TH_CHECK_RC(uh_root_get(h, "skew.y", &y));
	for (int i = 0; i < 4; i++)
		TH_CHECK_RC(uh_get_i64(h, i < 2 ? x : y, (uint32_t)(i % 2), &v[i]));
	uh_disconnect(h);
	printf("  final: x.bal %lld y.bal %lld x.oncall %lld y.oncall %lld\n", (long long)v[0],
	       (long long)v[2], (long long)v[1], (long long)v[3]);
	TH_CHECK(v[0] + v[2] >= 0);
	TH_CHECK(v[1] + v[3] >= 1);
	TH_CHECK_EQ(v[0] + v[2],
		    100 + 30 * (int64_t)t->deposits - 60 * (int64_t)t->withdrawals);
}

int main(void)
{
	static struct th_heapd d;
	const char *env = getenv("UH_TEST_SEED");
	unsigned long long seed = env ? strtoull(env, NULL, 0)
				      : (unsigned long long)time(NULL) ^ (unsigned)getpid();
	char go[700], stop[700], ready[700], ares[700], res[K][700], sd[K][32];
	struct totals t = { 0 };
	uint64_t audits = 0, changes = 0, aviol = 1, t0 = th_now_ms();
	pid_t workers[K], aud;
	const char *s;

	printf("test_iso_write_skew: seed %llu (UH_TEST_SEED=%llu to replay)\n", seed, seed);
	if (th_heapd_start(&d, NULL) != 0 || create_pair(&d) != 0) {
		TH_CHECK(!"heapd start + setup");
		return th_summary("test_iso_write_skew");
	}
	snprintf(go, sizeof(go), "%s/go", d.dir);
	snprintf(stop, sizeof(stop), "%s/stop", d.dir);
	snprintf(ready, sizeof(ready), "%s/audit.ready", d.dir);
	snprintf(ares, sizeof(ares), "%s/audit.res", d.dir);
	{
		char *argv[] = { (char *)th_bin("prog_iso_skew"), "--socket", d.sock, "--audit",
				 "--stop", stop, "--ready", ready, "--result", ares,
				 "--pause-us", "100", NULL };
		aud = th_spawn(argv, NULL);
	}
	TH_CHECK(th_wait_file(d.dir, "audit.ready", 10000) == 0);
	for (int i = 0; i < K; i++) {
		char *argv[] = { (char *)th_bin("prog_iso_skew"), "--socket", d.sock, "--ops", OPS,
				 "--seed", sd[i], "--dwell-us", DWELL, "--go", go, "--result",
				 res[i], NULL };
		snprintf(sd[i], sizeof(sd[i]), "%llu", seed + (unsigned long long)i);
		snprintf(res[i], sizeof(res[i]), "%s/res.%d", d.dir, i);
		workers[i] = th_spawn(argv, NULL);
	}
	th_signal_file(d.dir, "go", NULL);
	/* A worker that saw a violation exits 1 but still reports its counts. */
	for (int i = 0; i < K; i++) {
		wait_ok(workers[i], "worker", i);
		add_worker(res[i], i, &t);
	}
	th_signal_file(d.dir, "stop", NULL);
	wait_ok(aud, "auditor", 0);
	s = read_line(ares);
	printf("  auditor: %s", s);
	if (th_find_u64(s, "audits", &audits) || th_find_u64(s, "changes", &changes) ||
	    th_find_u64(s, "violations", &aviol))
		th_fail(__FILE__, __LINE__, "auditor: no result");
	TH_CHECK_EQ(aviol, 0);
	TH_CHECK(audits >= 20);
	TH_CHECK(changes >= 10);
	check_final(&d, &t);
	TH_CHECK(t.withdrawals > 0);
	TH_CHECK(t.offcalls > 0);
	TH_CHECK(t.conflicts > 0);
	printf("withdrawals %llu, deposits %llu, off-calls %llu, conflicts %llu, %llu ms\n",
	       (unsigned long long)t.withdrawals, (unsigned long long)t.deposits,
	       (unsigned long long)t.offcalls, (unsigned long long)t.conflicts,
	       (unsigned long long)(th_now_ms() - t0));
	if (th_failed)
		th_heapd_log_tail(&d, 3000);
	th_heapd_cleanup(&d);
	return th_summary("test_iso_write_skew");
}
