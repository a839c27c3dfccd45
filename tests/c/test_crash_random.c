/*
 * test_crash_random.c -- random SIGKILLs under concurrent load.
 *
 * Three prog_crash_work writers run blocks against one heapd, on shared
 * accounts and a shared counter (so they conflict and retry). In cycles:
 *   - ten times: sleep 5..50 ms, SIGKILL a random writer, start it again;
 *   - SIGKILL heapd, sleep 0..20 ms, start it again while the writers run
 *     (writers whose control calls fail exit with code 3 and are started
 *     again once heapd is back); let them run 20..80 ms more;
 *   - quiesce: SIGKILL every writer, restart heapd, run prog_crash_check
 *     --probe against the ack files, restart heapd and require that the
 *     second recovery freed nothing and nulled nothing; start the writers.
 * until at least 200 writer kills and 20 heapd kills happened.
 *
 * Before that, a baseline without kills: three writers in --read-first
 * mode (read shared objects, then write them) run 2000 blocks each; the
 * heap must then match the model exactly, which needs serializable
 * blocks. The kill phase runs the writers in lock-first mode, so that it
 * tests crash consistency alone.
 *
 * The RNG seed is printed; UH_TEST_SEED=<n> replays the same choices
 * (timing still varies, so a replay is likely, not certain, to hit the
 * same interleaving).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define NWRITERS 3
#define MIN_WRITER_KILLS 200
#define MIN_HEAPD_KILLS 20
#define KILLS_PER_CYCLE 10
#define EXIT_LOST_HEAPD 3
#define KILLED (128 + SIGKILL)

static struct th_heapd d;
static pid_t writers[NWRITERS];
static char ack_paths[NWRITERS][700];
static unsigned long long rng;
static int writer_kills, heapd_kills, writer_restarts, checks;

static unsigned rnd(unsigned n)
{
	/* xorshift64*: reproducible from the printed seed */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (unsigned)((rng * 0x2545f4914f6cdd1dull) >> 33) % n;
}

static void start_writer(int w)
{
	char wbuf[8];
	char *argv[] = { (char *)th_bin("prog_crash_work"), "--socket", d.sock, "--ack",
			 ack_paths[w], "--writer", wbuf, NULL };

	snprintf(wbuf, sizeof(wbuf), "%d", w);
	writers[w] = th_spawn(argv, NULL);
}

/* A writer that ended by itself: fine if it lost heapd, else a failure. */
static void writer_exited(int w, int rc)
{
	writers[w] = 0;
	if (rc == EXIT_LOST_HEAPD) {
		writer_restarts++;
		return;
	}
	th_fail(__FILE__, __LINE__, "writer %d exited with %d by itself", w, rc);
}

/* Collect writers that exited and start them again. */
static void reap_and_restart(void)
{
	for (int w = 0; w < NWRITERS; w++) {
		if (writers[w] > 0) {
			int rc = th_wait_exit_timeout(writers[w], 0);
			if (rc == -2)
				continue;
			writer_exited(w, rc);
		}
		if (writers[w] == 0 && d.pid > 0)
			start_writer(w);
	}
}

static void sleep_running(unsigned ms)
{
	uint64_t end = th_now_ms() + ms;

	while (th_now_ms() < end) {
		th_sleep_ms(5);
		reap_and_restart();
	}
}

static void kill_writer(int w)
{
	int rc;

	if (writers[w] <= 0)
		return;
	rc = th_kill(writers[w]);
	if (rc == KILLED) {
		writers[w] = 0;
		writer_kills++;
	} else {
		writer_exited(w, rc);
	}
}

static void run_checker(void)
{
	static char out[1 << 16];
	char nw[8];
	char *argv[] = { (char *)th_bin("prog_crash_check"), "--socket", d.sock,
			 "--ack-dir", d.dir, "--writers", nw, "--probe", NULL };
	uint64_t freed = 1, nulled = 1, want_live = 0, live = 0;
	int rc;

	snprintf(nw, sizeof(nw), "%d", NWRITERS);
	rc = th_run_capture(argv, out, sizeof(out));
	th_find_u64(out, "expect_live", &want_live);
	checks++;
	if (rc != 0) {
		th_fail(__FILE__, __LINE__, "check %d: checker exit %d:\n%s", checks, rc, out);
		th_heapd_log_tail(&d, 3000);
		return;
	}
	th_passed++;
	if (th_heapd_restart(&d) != 0) {
		th_fail(__FILE__, __LINE__, "check %d: heapd restart failed", checks);
		return;
	}
	rc = th_heapctl(&d, "status --json", out, sizeof(out));
	if (rc != 0 || th_find_u64(out, "freed_objects", &freed) != 0 ||
	    th_find_u64(out, "nulled_refs", &nulled) != 0)
		th_fail(__FILE__, __LINE__, "check %d: heapctl status (exit %d):\n%s", checks,
			rc, out);
	else if (freed || nulled)
		th_fail(__FILE__, __LINE__,
			"check %d: second recovery freed %llu, nulled %llu (garbage left)",
			checks, (unsigned long long)freed, (unsigned long long)nulled);
	else if (th_find_u64(out, "live_objects", &live) != 0 || live != want_live)
		th_fail(__FILE__, __LINE__, "check %d: recovery found %llu live objects, model %llu",
			checks, (unsigned long long)live, (unsigned long long)want_live);
	else
		th_passed++;
}

/* Stop all writers, recover, check, leak-check. */
static void quiesce_and_check(void)
{
	for (int w = 0; w < NWRITERS; w++)
		kill_writer(w);
	if (th_heapd_restart(&d) != 0) {
		th_fail(__FILE__, __LINE__, "heapd restart before check failed");
		return;
	}
	run_checker();
}

static void kill_heapd(void)
{
	th_heapd_kill(&d);
	heapd_kills++;
	th_sleep_ms(rnd(21));
	/* Writers that lost heapd meanwhile are collected, not restarted. */
	for (int w = 0; w < NWRITERS; w++)
		if (writers[w] > 0) {
			int rc = th_wait_exit_timeout(writers[w], 0);
			if (rc != -2)
				writer_exited(w, rc);
		}
	if (th_heapd_start(&d, NULL) != 0)
		th_fail(__FILE__, __LINE__, "heapd start after kill %d failed", heapd_kills);
}

static void cycle(void)
{
	for (int i = 0; i < KILLS_PER_CYCLE; i++) {
		sleep_running(5 + rnd(46));
		kill_writer((int)rnd(NWRITERS));
		reap_and_restart();
	}
	kill_heapd();
	reap_and_restart();
	sleep_running(20 + rnd(61));
	quiesce_and_check();
	reap_and_restart();
}

/* Concurrent writers without kills, reading before writing. */
static void baseline(void)
{
	static char out[1 << 16];
	struct th_heapd b = { 0 };
	char acks[NWRITERS][700], wbuf[NWRITERS][8];
	pid_t pids[NWRITERS];
	int rc;

	if (th_heapd_start(&b, NULL) != 0) {
		th_fail(__FILE__, __LINE__, "baseline: heapd start");
		return;
	}
	for (int w = 0; w < NWRITERS; w++) {
		char *argv[] = { (char *)th_bin("prog_crash_work"), "--socket", b.sock, "--ack",
				 acks[w], "--writer", wbuf[w], "--blocks", w ? "2000" : "1",
				 "--read-first", NULL };
		snprintf(acks[w], sizeof(acks[w]), "%s/ack.%d", b.dir, w);
		snprintf(wbuf[w], sizeof(wbuf[w]), "%d", w);
		pids[w] = th_spawn(argv, NULL);
		/* Writer 0 makes the bank (1 block) before the others start. */
		if (w == 0) {
			TH_CHECK_EQ(th_wait_exit(pids[0]), 0);
			argv[8] = "2000";
			pids[0] = th_spawn(argv, NULL);
		}
	}
	for (int w = 0; w < NWRITERS; w++) {
		rc = th_wait_exit_timeout(pids[w], 60000);
		if (rc == -2)
			rc = th_kill(pids[w]);
		TH_CHECK_EQ(rc, 0);
	}
	{
		char nw[8];
		char *argv[] = { (char *)th_bin("prog_crash_check"), "--socket", b.sock,
				 "--ack-dir", b.dir, "--writers", nw, NULL };
		snprintf(nw, sizeof(nw), "%d", NWRITERS);
		rc = th_run_capture(argv, out, sizeof(out));
	}
	if (rc != 0)
		th_fail(__FILE__, __LINE__,
			"baseline (no kills, read-first): heap differs from the model, so "
			"concurrent blocks are not serializable:\n%s", out);
	else
		th_passed++;
	th_heapd_cleanup(&b);
}

/* Writer 0 creates the bank before the others start. */
static int setup(void)
{
	static char out[4096];
	char *argv[] = { (char *)th_bin("prog_crash_work"), "--socket", d.sock, "--ack",
			 ack_paths[0], "--writer", "0", "--blocks", "1", NULL };
	int rc;

	if (th_heapd_start(&d, NULL) != 0)
		return -1;
	for (int w = 0; w < NWRITERS; w++)
		snprintf(ack_paths[w], sizeof(ack_paths[w]), "%s/ack.%d", d.dir, w);
	rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0) {
		fprintf(stderr, "setup writer exit %d:\n%s\n", rc, out);
		return -1;
	}
	return 0;
}

int main(void)
{
	const char *seed_env = getenv("UH_TEST_SEED");
	unsigned long long seed = seed_env ? strtoull(seed_env, NULL, 0)
					   : (unsigned long long)time(NULL) ^ (unsigned)getpid();
	uint64_t t0 = th_now_ms();
	int failed_before;

	rng = seed ? seed : 1;
	printf("test_crash_random: seed %llu (UH_TEST_SEED=%llu to replay)\n", seed, seed);
	fflush(stdout);
	baseline();
	if (setup() != 0) {
		th_fail(__FILE__, __LINE__, "setup failed");
		return th_summary("test_crash_random");
	}
	reap_and_restart();
	while (writer_kills < MIN_WRITER_KILLS || heapd_kills < MIN_HEAPD_KILLS) {
		failed_before = th_failed;
		cycle();
		/* Stop at the first failing cycle: the heap is now suspect. */
		if (th_failed != failed_before || th_now_ms() - t0 > 170000)
			break;
	}
	for (int w = 0; w < NWRITERS; w++)
		kill_writer(w);
	if (!th_failed) {
		th_heapd_restart(&d);
		run_checker();
	}
	TH_CHECK(writer_kills >= MIN_WRITER_KILLS);
	TH_CHECK(heapd_kills >= MIN_HEAPD_KILLS);
	printf("writer kills %d, heapd kills %d, writer restarts after lost heapd %d, "
	       "checks %d, %llu ms (seed %llu)\n", writer_kills, heapd_kills,
	       writer_restarts, checks, (unsigned long long)(th_now_ms() - t0), seed);
	th_heapd_cleanup(&d);
	return th_summary("test_crash_random");
}
