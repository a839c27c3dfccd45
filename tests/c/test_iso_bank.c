/*
 * test_iso_bank.c -- the bank test of issue 3: serializable blocks across
 * processes.
 *
 * Four prog_iso_bank writers each commit a fixed number of random
 * transfers between 16 accounts (iso_model.h) with uh_run(), while a
 * prog_iso_audit process runs read-only blocks over the whole bank. Then:
 *   - every audit saw the exact total and no negative balance (writers
 *     move at most the source balance), and audits ran between commits;
 *   - each writer's acknowledged count equals its ledger object (which
 *     its transfer blocks increment) and the number it was asked to do;
 *   - every final balance is the initial one plus the sum of the
 *     per-account effects the writers acknowledged (no lost update).
 * Two variants: uniform transfers, and a hot set (90% of the transfers
 * between accounts 0 and 1, with a short dwell inside the block) that
 * must show conflicts and retries in the writers' uh_stats.
 *
 * The seed is printed; UH_TEST_SEED=<n> replays the writers' choices
 * (the interleaving still varies).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "iso_model.h"

#define NWRITERS 4
#define MIN_AUDITS 20
#define MIN_CHANGES 10
#define WAIT_MS 60000

struct variant {
	const char *name;
	int hot;		/* % of transfers between accounts 0 and 1 */
	unsigned dwell_us;
	int transfers;		/* per writer */
	int want_conflicts;
};

struct wres {
	uint64_t acks, conflicts, retries, lock_waits, aborts_stale, aborts_locked;
	int64_t net[ISO_NACCT];
};

static unsigned long long seed;

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[4096];
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Parse a writer's result file. @return 0 or -1 (printed). */
static int read_wres(const char *dir, int w, struct wres *r)
{
	char path[700];
	char *t, *p;

	snprintf(path, sizeof(path), "%s/res.%d", dir, w);
	t = slurp(path);
	if (!t || th_find_u64(t, "acks", &r->acks) || th_find_u64(t, "conflicts", &r->conflicts) ||
	    th_find_u64(t, "retries", &r->retries) ||
	    th_find_u64(t, "lock_waits", &r->lock_waits) ||
	    th_find_u64(t, "aborts_stale", &r->aborts_stale) ||
	    th_find_u64(t, "aborts_locked", &r->aborts_locked) || !(p = strstr(t, "net="))) {
		th_fail(__FILE__, __LINE__, "writer %d: bad result file %s: %s", w, path,
			t ? t : "(missing)");
		return -1;
	}
	p += 4;
	for (int i = 0; i < ISO_NACCT; i++)
		r->net[i] = strtoll(p, &p, 10);
	return 0;
}

static pid_t spawn_auditor(const struct th_heapd *d)
{
	char stop[700], ready[700], res[700], nw[8];
	char *argv[] = { (char *)th_bin("prog_iso_audit"), "--socket", (char *)d->sock,
			 "--writers", nw, "--nonneg", "--stop", stop, "--ready", ready,
			 "--result", res, "--pause-us", "100", NULL };

	snprintf(nw, sizeof(nw), "%d", NWRITERS);
	snprintf(stop, sizeof(stop), "%s/stop", d->dir);
	snprintf(ready, sizeof(ready), "%s/audit.ready", d->dir);
	snprintf(res, sizeof(res), "%s/audit.res", d->dir);
	return th_spawn(argv, NULL);
}

static pid_t spawn_writer(const struct th_heapd *d, const struct variant *v, int w)
{
	char wb[8], n[16], sd[32], hot[8], dw[16], res[700], go[700];
	char *argv[] = { (char *)th_bin("prog_iso_bank"), "--socket", (char *)d->sock,
			 "--writer", wb, "--transfers", n, "--seed", sd, "--hot", hot,
			 "--dwell-us", dw, "--result", res, "--go", go, NULL };

	snprintf(wb, sizeof(wb), "%d", w);
	snprintf(n, sizeof(n), "%d", v->transfers);
	snprintf(sd, sizeof(sd), "%llu", seed);
	snprintf(hot, sizeof(hot), "%d", v->hot);
	snprintf(dw, sizeof(dw), "%u", v->dwell_us);
	snprintf(res, sizeof(res), "%s/res.%d", d->dir, w);
	snprintf(go, sizeof(go), "%s/go", d->dir);
	return th_spawn(argv, NULL);
}

static int wait_child(pid_t pid, const char *what)
{
	int rc = th_wait_exit_timeout(pid, WAIT_MS);

	if (rc == -2) {
		th_fail(__FILE__, __LINE__, "%s did not finish in %d ms", what, WAIT_MS);
		rc = th_kill(pid);
	}
	return rc;
}

/* The auditor's result line: violations 0, enough audits between commits. */
static void check_auditor(const struct th_heapd *d, int rc)
{
	char path[700];
	uint64_t audits = 0, changes = 0, viol = 1;
	char *t;

	snprintf(path, sizeof(path), "%s/audit.res", d->dir);
	t = slurp(path);
	TH_CHECK_EQ(rc, 0);
	if (!t || th_find_u64(t, "audits", &audits) || th_find_u64(t, "changes", &changes) ||
	    th_find_u64(t, "violations", &viol)) {
		th_fail(__FILE__, __LINE__, "auditor result missing: %s", t ? t : "(none)");
		return;
	}
	printf("  auditor: %s", t);
	TH_CHECK_EQ(viol, 0);
	TH_CHECK(audits >= MIN_AUDITS);
	TH_CHECK(changes >= MIN_CHANGES);
}

/* Final heap vs. what the writers acknowledged. */
static void check_heap(const struct th_heapd *d, const struct variant *v,
		       const struct wres r[NWRITERS])
{
	struct iso_bank b;
	int64_t bal[ISO_NACCT], led[NWRITERS], total = 0;
	uh_heap *h;

	if (th_connect(d, 0, &h) != 0) {
		TH_CHECK(!"connect for the final check");
		return;
	}
	TH_CHECK_RC(iso_open(h, NWRITERS, &b));
	for (int w = 0; w < NWRITERS; w++) {
		TH_CHECK_RC(uh_get_i64(h, b.ledger[w], 0, &led[w]));
		TH_CHECK_EQ(led[w], r[w].acks);
		TH_CHECK_EQ(led[w], v->transfers);
	}
	for (int i = 0; i < ISO_NACCT; i++) {
		int64_t want = ISO_INIT_BALANCE;
		TH_CHECK_RC(uh_get_i64(h, b.acct[i], 0, &bal[i]));
		for (int w = 0; w < NWRITERS; w++)
			want += r[w].net[i];
		if (bal[i] != want)
			th_fail(__FILE__, __LINE__, "%s: account %d has %lld, acknowledged "
				"transfers imply %lld", v->name, i, (long long)bal[i],
				(long long)want);
		else
			th_passed++;
		TH_CHECK(bal[i] >= 0);
		total += bal[i];
	}
	TH_CHECK_EQ(total, (int64_t)ISO_NACCT * ISO_INIT_BALANCE);
	uh_disconnect(h);
}

static void run_variant(const struct variant *v)
{
	struct th_heapd d = { 0 };
	struct iso_bank b;
	struct wres r[NWRITERS];
	pid_t writers[NWRITERS], auditor;
	uint64_t conflicts = 0, retries = 0, t0 = th_now_ms();
	uh_heap *h;
	int ok = 1;

	printf("variant %s: %d writers x %d transfers, hot %d%%, dwell %u us\n", v->name,
	       NWRITERS, v->transfers, v->hot, v->dwell_us);
	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"heapd start + connect");
		th_heapd_cleanup(&d);
		return;
	}
	TH_CHECK_RC(iso_create(h, NWRITERS, ISO_INIT_BALANCE, &b));
	uh_disconnect(h);
	auditor = spawn_auditor(&d);
	TH_CHECK(th_wait_file(d.dir, "audit.ready", 10000) == 0);
	for (int w = 0; w < NWRITERS; w++)
		writers[w] = spawn_writer(&d, v, w);
	th_signal_file(d.dir, "go", NULL);
	for (int w = 0; w < NWRITERS; w++) {
		int rc = wait_child(writers[w], "writer");
		TH_CHECK_EQ(rc, 0);
		if (rc != 0 || read_wres(d.dir, w, &r[w]) != 0) {
			ok = 0;
			continue;
		}
		printf("  writer %d: acks %llu conflicts %llu (locked %llu, stale %llu) "
		       "retries %llu lock_waits %llu\n", w, (unsigned long long)r[w].acks,
		       (unsigned long long)r[w].conflicts, (unsigned long long)r[w].aborts_locked,
		       (unsigned long long)r[w].aborts_stale, (unsigned long long)r[w].retries,
		       (unsigned long long)r[w].lock_waits);
		conflicts += r[w].conflicts;
		retries += r[w].retries;
	}
	th_signal_file(d.dir, "stop", NULL);
	check_auditor(&d, wait_child(auditor, "auditor"));
	if (ok)
		check_heap(&d, v, r);
	if (v->want_conflicts) {
		TH_CHECK(conflicts > 0);
		TH_CHECK(retries > 0);
	}
	printf("  %s: conflicts %llu, retries %llu, %llu ms\n", v->name,
	       (unsigned long long)conflicts, (unsigned long long)retries,
	       (unsigned long long)(th_now_ms() - t0));
	if (th_failed)
		th_heapd_log_tail(&d, 3000);
	th_heapd_cleanup(&d);
}

int main(void)
{
	static const struct variant variants[] = {
		{ "uniform", 0, 0, 100000, 0 },
		{ "hot", 90, 20, 4000, 1 },
	};
	const char *env = getenv("UH_TEST_SEED");

	seed = env ? strtoull(env, NULL, 0) : (unsigned long long)time(NULL) ^ (unsigned)getpid();
	printf("test_iso_bank: seed %llu (UH_TEST_SEED=%llu to replay)\n", seed, seed);
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
		run_variant(&variants[i]);
	return th_summary("test_iso_bank");
}
