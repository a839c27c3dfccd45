/*
 * test_iso_kill.c -- the kill campaign of issue 3: the bank of
 * test_iso_bank (iso_model.h) in model mode, with random SIGKILLs of
 * writers (>= 200) and of heapd (>= 20).
 *
 * Four prog_iso_bank --model writers run transfers (transfer s of writer
 * w is iso_move(w, s); each is acknowledged in ack.<w> right after its
 * commit) and a prog_iso_audit --model auditor checks, in every read-only
 * block, that the total is constant and every balance is what the
 * ledgers imply. In cycles:
 *   - ten times: let them run 5..50 ms, SIGKILL a random writer, start it
 *     again (its next transfer is ledger + 1: nothing to recover by hand);
 *   - SIGKILL heapd, start it again 0..20 ms later while the clients run
 *     (clients whose control call fails exit 3 and are started again;
 *     writers 2 and 3 make none and keep working on the mapping, their
 *     sessions inherited by the new heapd); run 20..80 ms more;
 *   - live check (prog_iso_check, writers running): every acknowledged
 *     transfer is in the heap, balances match the ledgers;
 *   - quiesce: stop the auditor, SIGKILL every writer, wait until heapd has
 *     reaped their sessions (dead holders' locks released with heapd
 *     running), then prog_iso_check --quiet --probe: ledger = acks or
 *     acks + 1, balances exact, and a block writing every account commits
 *     without waiting for a lock; then SIGKILL heapd once more and require
 *     that its recovery freed 0 objects, nulled 0 refs, cleared 0 locks.
 * The final check also verifies every ack line against the model; heapd's
 * log must show dead writers reaped with a block in flight (rolled back,
 * locks released), i.e. kills did land inside blocks.
 *
 * The seed is printed; UH_TEST_SEED=<n> replays the choices (not the
 * interleaving).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "iso_model.h"

#define NWRITERS 4
#define MIN_WRITER_KILLS 200
#define MIN_HEAPD_KILLS 20
#define KILLS_PER_CYCLE 10
#define MIN_AUDITS 1000
#define TIME_LIMIT_MS 120000
#define KILLED (128 + SIGKILL)

static struct th_heapd d;
static pid_t writers[NWRITERS], auditor;
static int auditor_gen;
static unsigned long long rng;
static int writer_kills, heapd_kills, quiesce_kills, writer_restarts, auditor_restarts;
static int live_checks, full_checks;

static unsigned rnd(unsigned n)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (unsigned)((rng * 0x2545f4914f6cdd1dull) >> 33) % n;
}

static void start_writer(int w)
{
	char wb[8], ack[700];
	/* Writers 0 and 1 ping heapd (and exit 3 once it is gone); 2 and 3
	 * never make a control call, so they keep working across heapd
	 * restarts as sessions inherited by the new heapd. */
	char *argv[] = { (char *)th_bin("prog_iso_bank"), "--socket", d.sock, "--writer", wb,
			 "--model", "--ack", ack, "--ping", w < 2 ? "32" : "0", "--dwell-us",
			 "10", "--hold-us", "200", NULL };

	snprintf(wb, sizeof(wb), "%d", w);
	snprintf(ack, sizeof(ack), "%s/ack.%d", d.dir, w);
	writers[w] = th_spawn(argv, NULL);
}

static void start_auditor(void)
{
	char nw[8], stop[700], res[700];
	char *argv[] = { (char *)th_bin("prog_iso_audit"), "--socket", d.sock, "--writers", nw,
			 "--model", "--ping", "256", "--stop", stop, "--result", res, NULL };

	snprintf(nw, sizeof(nw), "%d", NWRITERS);
	snprintf(stop, sizeof(stop), "%s/stop.%d", d.dir, ++auditor_gen);
	snprintf(res, sizeof(res), "%s/audit.res", d.dir);
	auditor = th_spawn(argv, NULL);
}

/* A client that ended by itself: fine if it lost heapd, else a failure. */
static void client_exited(const char *what, int i, int rc, int *restarts)
{
	if (rc == ISO_EXIT_LOST_HEAPD) {
		(*restarts)++;
		return;
	}
	th_fail(__FILE__, __LINE__, "%s %d exited with %d by itself", what, i, rc);
}

/* Collect clients that exited; start them again if heapd is up. */
static void reap(int restart)
{
	int rc;

	for (int w = 0; w < NWRITERS; w++) {
		if (writers[w] > 0 && (rc = th_wait_exit_timeout(writers[w], 0)) != -2) {
			writers[w] = 0;
			client_exited("writer", w, rc, &writer_restarts);
		}
		if (restart && writers[w] == 0 && d.pid > 0)
			start_writer(w);
	}
	if (auditor > 0 && (rc = th_wait_exit_timeout(auditor, 0)) != -2) {
		auditor = 0;
		client_exited("auditor", 0, rc, &auditor_restarts);
	}
	if (restart && auditor == 0 && d.pid > 0)
		start_auditor();
}

static void sleep_running(unsigned ms)
{
	uint64_t end = th_now_ms() + ms;

	while (th_now_ms() < end) {
		th_sleep_ms(5);
		reap(1);
	}
}

static void kill_writer(int w, int *counter)
{
	int rc;

	if (writers[w] <= 0)
		return;
	rc = th_kill(writers[w]);
	writers[w] = 0;
	if (rc == KILLED)
		(*counter)++;
	else
		client_exited("writer", w, rc, &writer_restarts);
}

static int run_checker(const char *extra, const char *what)
{
	static char out[1 << 16];
	char nw[8], args[3][16] = { "", "", "" };
	char *argv[11] = { (char *)th_bin("prog_iso_check"), "--socket", d.sock, "--ack-dir",
			   d.dir, "--writers", nw };
	int n = 7, rc;

	snprintf(nw, sizeof(nw), "%d", NWRITERS);
	/* extra: up to three space-separated flags */
	if (extra && sscanf(extra, "%15s %15s %15s", args[0], args[1], args[2]) > 0)
		for (int i = 0; i < 3 && args[i][0]; i++)
			argv[n++] = args[i];
	argv[n] = NULL;
	rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0) {
		th_fail(__FILE__, __LINE__, "%s: checker exit %d:\n%s", what, rc, out);
		th_heapd_log_tail(&d, 3000);
		return -1;
	}
	th_passed++;
	return 0;
}

/* heapd's live session count, from heapctl status. -1 if unknown. */
static long sessions(void)
{
	static char out[8192];
	uint64_t n;

	if (th_heapctl(&d, "status --json", out, sizeof(out)) != 0 ||
	    th_find_u64(out, "sessions", &n) != 0)
		return -1;
	return (long)n;
}

/* After one more heapd restart (SIGKILL, nothing running), recovery must
 * find nothing to free, null or unlock. */
static void check_second_recovery(void)
{
	static char out[8192];
	uint64_t freed = 1, nulled = 1, cleared = 1;
	int rc;

	th_heapd_kill(&d);
	quiesce_kills++;
	if (th_heapd_start(&d, NULL) != 0) {
		th_fail(__FILE__, __LINE__, "heapd start after the quiet kill failed");
		return;
	}
	rc = th_heapctl(&d, "status --json", out, sizeof(out));
	if (rc != 0 || th_find_u64(out, "freed_objects", &freed) ||
	    th_find_u64(out, "nulled_refs", &nulled) || th_find_u64(out, "locks_cleared", &cleared)) {
		th_fail(__FILE__, __LINE__, "heapctl status (exit %d):\n%s", rc, out);
		return;
	}
	if (freed || nulled || cleared)
		th_fail(__FILE__, __LINE__, "quiet restart %d: recovery freed %llu objects, "
			"nulled %llu refs, cleared %llu locks (want 0)", full_checks,
			(unsigned long long)freed, (unsigned long long)nulled,
			(unsigned long long)cleared);
	else
		th_passed++;
}

/* Stop everything, let heapd reap, check exactly, restart heapd. */
static void quiesce_and_check(const char *extra)
{
	uint64_t end;
	long n = -1;

	if (auditor > 0) {
		int rc;
		char name[32];
		snprintf(name, sizeof(name), "stop.%d", auditor_gen);
		th_signal_file(d.dir, name, NULL);
		rc = th_wait_exit_timeout(auditor, 10000);
		if (rc == -2)
			rc = th_kill(auditor);
		auditor = 0;
		if (rc != 0)
			client_exited("auditor", 0, rc, &auditor_restarts);
	}
	for (int w = 0; w < NWRITERS; w++)
		kill_writer(w, &writer_kills);
	/* heapd releases dead holders' locks by itself, while running. */
	for (end = th_now_ms() + 10000; th_now_ms() < end && (n = sessions()) != 0;)
		th_sleep_ms(10);
	if (n != 0) {
		th_fail(__FILE__, __LINE__, "heapd still has %ld sessions 10 s after every client "
			"was killed", n);
		return;
	}
	full_checks++;
	if (run_checker(extra, "quiet check") == 0)
		check_second_recovery();
}

static void kill_heapd(void)
{
	th_heapd_kill(&d);
	heapd_kills++;
	th_sleep_ms(rnd(21));
	reap(0);
	if (th_heapd_start(&d, NULL) != 0)
		th_fail(__FILE__, __LINE__, "heapd start after kill %d failed", heapd_kills);
}

static void cycle(void)
{
	for (int i = 0; i < KILLS_PER_CYCLE; i++) {
		sleep_running(5 + rnd(46));
		kill_writer((int)rnd(NWRITERS), &writer_kills);
		reap(1);
	}
	kill_heapd();
	reap(1);
	sleep_running(20 + rnd(61));
	live_checks++;
	run_checker(NULL, "live check");
	quiesce_and_check("--quiet --probe");
	reap(1);
}

/* Sum the auditor's result lines: audits done, violations seen. */
static void check_audits(void)
{
	char path[700], line[512];
	uint64_t audits = 0, viol = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/audit.res", d.dir);
	if (!(f = fopen(path, "r"))) {
		th_fail(__FILE__, __LINE__, "no auditor results");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		uint64_t a = 0, v = 0;
		th_find_u64(line, "audits", &a);
		th_find_u64(line, "violations", &v);
		audits += a;
		viol += v;
	}
	fclose(f);
	printf("auditors: %llu audits, %llu violations, %d restarts after lost heapd\n",
	       (unsigned long long)audits, (unsigned long long)viol, auditor_restarts);
	TH_CHECK_EQ(viol, 0);
	TH_CHECK(audits >= MIN_AUDITS);
}

/* heapd's log: how many dead sessions it reaped with a block in flight
 * (rolled back or replayed), and locks released that way. Proof that the
 * kills did hit writers mid-block. */
static void count_reaps(void)
{
	char line[1024];
	uint64_t rolled = 0, replayed = 0, locks = 0;
	FILE *f = fopen(d.log, "r");

	while (f && fgets(line, sizeof(line), f)) {
		uint64_t n = 0;
		if (!strstr(line, "event=reap "))
			continue;
		rolled += strstr(line, "rolled_back=1") != NULL;
		replayed += strstr(line, "replayed=1") != NULL;
		if (th_find_u64(line, "locks_released", &n) == 0)
			locks += n;
	}
	if (f)
		fclose(f);
	printf("heapd reaped dead writers mid-block: %llu rolled back, %llu replayed, %llu "
	       "locks released\n", (unsigned long long)rolled, (unsigned long long)replayed,
	       (unsigned long long)locks);
	TH_CHECK(rolled > 0);
	TH_CHECK(locks > 0);
}

static int setup(void)
{
	struct iso_bank b;
	uh_heap *h;
	int rc;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0)
		return -1;
	rc = iso_create(h, NWRITERS, ISO_INIT_BALANCE, &b);
	uh_disconnect(h);
	return rc;
}

int main(void)
{
	const char *env = getenv("UH_TEST_SEED");
	unsigned long long seed = env ? strtoull(env, NULL, 0)
				      : (unsigned long long)time(NULL) ^ (unsigned)getpid();
	uint64_t t0 = th_now_ms();

	rng = seed ? seed : 1;
	printf("test_iso_kill: seed %llu (UH_TEST_SEED=%llu to replay)\n", seed, seed);
	fflush(stdout);
	if (setup() != 0) {
		th_fail(__FILE__, __LINE__, "setup failed");
		return th_summary("test_iso_kill");
	}
	reap(1);
	while (writer_kills < MIN_WRITER_KILLS || heapd_kills < MIN_HEAPD_KILLS) {
		int failed_before = th_failed;
		cycle();
		/* Stop at the first failing cycle: the heap is now suspect. */
		if (th_failed != failed_before || th_now_ms() - t0 > TIME_LIMIT_MS)
			break;
	}
	if (!th_failed)
		quiesce_and_check("--quiet --probe --all-acks");
	check_audits();
	count_reaps();
	TH_CHECK(writer_kills >= MIN_WRITER_KILLS);
	TH_CHECK(heapd_kills >= MIN_HEAPD_KILLS);
	printf("writer kills %d, heapd kills %d (+%d quiet), writer restarts after lost heapd "
	       "%d, live checks %d, quiet checks %d, %llu ms (seed %llu)\n", writer_kills,
	       heapd_kills, quiesce_kills, writer_restarts, live_checks, full_checks,
	       (unsigned long long)(th_now_ms() - t0), seed);
	th_heapd_cleanup(&d);
	return th_summary("test_iso_kill");
}
