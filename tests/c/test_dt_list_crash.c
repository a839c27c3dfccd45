/*
 * test_dt_list_crash.c -- enumerated crash points of list (and array)
 * operations.
 *
 * prog_dt_list_crash --work runs a fixed sequence of list operations
 * (appends that grow the storage 8 -> 16 -> 32 -> 64, inserts and pops
 * that rebuild it or shift in place, pops and sets with UH_FREE_OLD,
 * groups of operations in one block; string elements of an array set with
 * UH_FREE_OLD, alone and in a block with a list append). It is run once
 * without the hook to count its persist barriers N; then for every k in
 * 1..N on a fresh copy of a small heap holding just the empty list and
 * array, with UH_CRASH_AT=k, so
 * libuniheap SIGKILLs it right before its k-th barrier. After each crash:
 * heapd is SIGKILLed and started again (start-up recovery repairs the
 * log, if heapd's reaper has not already) and its recovery must have
 * freed no object (garbage would be a leak of list.c: the block in
 * flight is undone through its log, not by GC), prog_dt_list_crash --check
 * requires the list to equal the model of the acknowledged operations,
 * plus the one in flight all or nothing, and a sound structure; then one
 * more heapd restart must free 0 objects, null 0 references, and find
 * exactly the live objects the model says (template + list and array
 * data).
 *
 * UH_CRASH_ENUM_MAX=k limits the run to k crash points (debugging).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static const char *SUITE = "test_dt_list_crash";
static struct th_heapd d;
static char template_path[700], ack_path[700];
/* A small heap: it is copied and recovered three times per crash point. */
#define HEAPD_ARGS "--size 32M"

static uint64_t base_live;	/* live objects of the template, less list and array */

static int copy_file(const char *from, const char *to)
{
	char buf[1 << 16];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	close(in);
	close(out);
	return n < 0 ? -1 : 0;
}

/* heapd SIGKILLed and started again: start-up recovery runs. */
static int heapd_crash_restart(void)
{
	th_heapd_kill(&d);
	return th_heapd_start(&d, HEAPD_ARGS);
}

static int status(uint64_t *live, uint64_t *freed, uint64_t *nulled)
{
	static char out[1 << 16];
	int rc = th_heapctl(&d, "status --json", out, sizeof(out));

	if (rc != 0 || th_find_u64(out, "live_objects", live) != 0 ||
	    th_find_u64(out, "freed_objects", freed) != 0 ||
	    th_find_u64(out, "nulled_refs", nulled) != 0) {
		th_fail(__FILE__, __LINE__, "heapctl status --json (exit %d):\n%s", rc, out);
		return -1;
	}
	return 0;
}

/* Heap with the empty list, copied as the template of every run. */
static int make_template(void)
{
	static char out[4096];
	uint64_t live, freed, nulled;

	if (th_heapd_start(&d, HEAPD_ARGS) != 0)
		return -1;
	char *argv[] = { (char *)th_bin("prog_dt_list_crash"), "--socket", d.sock, "--setup",
			 NULL };
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0) {
		th_fail(__FILE__, __LINE__, "setup exit %d:\n%s", rc, out);
		return -1;
	}
	if (heapd_crash_restart() != 0 || status(&live, &freed, &nulled) != 0)
		return -1;
	base_live = live - 2;
	th_heapd_kill(&d);
	snprintf(template_path, sizeof(template_path), "%s/template.uh", d.dir);
	snprintf(ack_path, sizeof(ack_path), "%s/ack", d.dir);
	return copy_file(d.heap, template_path);
}

static int fresh_heap(void)
{
	th_heapd_kill(&d);
	unlink(ack_path);
	if (copy_file(template_path, d.heap) != 0) {
		fprintf(stderr, "copy %s: %s\n", template_path, strerror(errno));
		return -1;
	}
	return th_heapd_start(&d, HEAPD_ARGS);
}

/* After the restart that followed the crash: that recovery rolled the
 * block in flight back (or forward) through its log, so its GC found no
 * garbage either: an object the list code failed to free (or a reference
 * it left dangling) shows up here. Then the checker, then a second
 * recovery that must find nothing to repair. */
static int check_heap(const char *what)
{
	static char out[1 << 14];
	char *argv[] = { (char *)th_bin("prog_dt_list_crash"), "--socket", d.sock, "--check",
			 "--ack", ack_path, NULL };
	uint64_t data = 0, live = 0, freed = 1, nulled = 1;

	if (status(&live, &freed, &nulled) != 0)
		return -1;
	if (freed || nulled) {
		th_fail(__FILE__, __LINE__, "%s: recovery after the crash freed %llu objects, "
			"nulled %llu references", what, (unsigned long long)freed,
			(unsigned long long)nulled);
		return -1;
	}
	freed = nulled = 1;
	int rc = th_run_capture(argv, out, sizeof(out));

	if (rc != 0 || th_find_u64(out, "data_objects", &data) != 0) {
		th_fail(__FILE__, __LINE__, "%s: checker exit %d:\n%s", what, rc, out);
		th_heapd_log_tail(&d, 2000);
		return -1;
	}
	if (heapd_crash_restart() != 0 || status(&live, &freed, &nulled) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd did not restart", what);
		return -1;
	}
	if (freed || nulled || live != base_live + data) {
		th_fail(__FILE__, __LINE__, "%s: second recovery freed %llu, nulled %llu, "
			"live %llu (model %llu); checker said: %s", what,
			(unsigned long long)freed, (unsigned long long)nulled,
			(unsigned long long)live, (unsigned long long)(base_live + data), out);
		return -1;
	}
	th_passed++;
	return 0;
}

static long count_barriers(void)
{
	static char out[4096];
	char *argv[] = { (char *)th_bin("prog_dt_list_crash"), "--socket", d.sock, "--work",
			 "--ack", ack_path, NULL };
	uint64_t n = 0;

	if (fresh_heap() != 0)
		return -1;
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0 || th_find_u64(out, "barriers", &n) != 0) {
		th_fail(__FILE__, __LINE__, "workload without crash: exit %d:\n%s", rc, out);
		return -1;
	}
	printf("workload: %s", out);
	if (heapd_crash_restart() != 0 || check_heap("no crash") != 0)
		return -1;
	return (long)n;
}

static void crash_at(long k)
{
	char what[64], env0[64];
	char *argv[] = { (char *)th_bin("prog_dt_list_crash"), "--socket", d.sock, "--work",
			 "--ack", ack_path, NULL };
	char *env[] = { env0, NULL };

	snprintf(what, sizeof(what), "k=%ld", k);
	snprintf(env0, sizeof(env0), "UH_CRASH_AT=%ld", k);
	if (fresh_heap() != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd start", what);
		return;
	}
	pid_t pid = th_spawn(argv, env);
	int rc = th_wait_exit_timeout(pid, 20000);
	if (rc == -2)
		rc = th_kill(pid);
	if (rc != 128 + SIGKILL)
		th_fail(__FILE__, __LINE__, "%s: workload exit %d, want SIGKILL", what, rc);
	if (heapd_crash_restart() != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd did not restart", what);
		return;
	}
	check_heap(what);
}

int main(void)
{
	const char *max_env = getenv("UH_CRASH_ENUM_MAX");
	uint64_t t0 = th_now_ms();

	printf("%s: deterministic workload (seed 0)\n", SUITE);
	if (make_template() != 0) {
		th_fail(__FILE__, __LINE__, "could not make the template heap");
		th_heapd_cleanup(&d);
		return th_summary(SUITE);
	}
	long n = count_barriers();
	TH_CHECK(n > 0);
	long max = max_env ? atol(max_env) : n;
	if (max > n)
		max = n;
	for (long k = 1; k <= max; k++) {
		int before = th_failed;
		crash_at(k);
		if (th_failed != before)
			fprintf(stderr, "crash point k=%ld failed (UH_CRASH_AT=%ld)\n", k, k);
	}
	printf("%ld crash points in %llu ms\n", max > 0 ? max : 0,
	       (unsigned long long)(th_now_ms() - t0));
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
