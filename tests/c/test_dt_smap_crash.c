/*
 * test_dt_smap_crash.c -- enumerated crash points of sorted map
 * operations.
 *
 * The template heap (prog_dt_smap_crash --setup) holds a string-keyed map
 * whose next put at the end splits a leaf, the full root and adds a level,
 * and an i64-keyed map of two leaves. The workload (prog_dt_smap_crash
 * --work: that put, a plain insert, replaces and a remove with
 * UH_FREE_OLD of string values made in the block, a block that empties
 * and frees the first leaf, one that empties a leaf so the root
 * collapses, a block of three operations) is run once without the hook
 * to count its persist barriers N; then for every k in 1..N on a fresh
 * copy of the template with UH_CRASH_AT=k (SIGKILL right before its k-th
 * barrier):
 *   live:   heapd keeps running and reaps the dead session (every k);
 *   frozen: heapd is SIGSTOPped once the workload is set up, SIGKILLed
 *           after the crash and started again, so start-up recovery
 *           repairs (odd k, to stay within ~30 s; UH_DT_SMAP_CRASH_FULL=1
 *           for every k).
 * After each crash: restart heapd, prog_dt_smap_crash --check
 * (uh_smap_check on both maps; content = model of the acknowledged ops,
 * or of one more: the op in flight all or nothing), restart heapd again
 * and require that this second recovery freed 0 objects and nulled 0
 * references.
 *
 * UH_CRASH_ENUM_MAX=k limits the run to k crash points. Deterministic.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define KILLED (128 + SIGKILL)

static const char *SUITE = "test_dt_smap_crash";
static struct th_heapd d;
static char template_path[700], ack_path[700], nkeys[32];
static long undone_done[2];	/* checks that found the op in flight undone / done */

static int copy_file(const char *from, const char *to)
{
	char buf[1 << 16];
	ssize_t n = 0;
	int in = open(from, O_RDONLY);
	int out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (out < 0) {
		if (in >= 0)
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

static int fresh_heap(void)
{
	th_heapd_kill(&d);
	unlink(ack_path);
	if (copy_file(template_path, d.heap) != 0) {
		fprintf(stderr, "copy %s: %s\n", template_path, strerror(errno));
		return -1;
	}
	return th_heapd_start(&d, NULL);
}

static void prog_argv(char **argv, const char *mode, char *rfd, char *gfd)
{
	int n = 0;

	argv[n++] = (char *)th_bin("prog_dt_smap_crash");
	argv[n++] = (char *)mode;
	argv[n++] = "--socket";
	argv[n++] = d.sock;
	argv[n++] = "--ack";
	argv[n++] = ack_path;
	argv[n++] = "--n";
	argv[n++] = nkeys;
	if (rfd) {
		argv[n++] = "--ready-fd";
		argv[n++] = rfd;
		argv[n++] = "--go-fd";
		argv[n++] = gfd;
	}
	argv[n] = NULL;
}

/* The checker, then one more restart whose recovery finds no garbage. */
static int check_heap(const char *what)
{
	static char out[1 << 16];
	char *argv[16];
	uint64_t freed = 1, nulled = 1, state = 0, acked = 0;

	prog_argv(argv, "--check", NULL, NULL);
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0) {
		th_fail(__FILE__, __LINE__, "%s: checker exit %d:\n%s", what, rc, out);
		th_heapd_log_tail(&d, 3000);
		return -1;
	}
	if (th_find_u64(out, "state", &state) == 0 && th_find_u64(out, "acked", &acked) == 0)
		undone_done[state > acked]++;
	if (th_heapd_restart(&d) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd did not restart", what);
		return -1;
	}
	rc = th_heapctl(&d, "status --json", out, sizeof(out));
	if (rc != 0 || th_find_u64(out, "freed_objects", &freed) != 0 ||
	    th_find_u64(out, "nulled_refs", &nulled) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapctl status --json (exit %d):\n%s", what, rc, out);
		return -1;
	}
	if (freed || nulled) {
		th_fail(__FILE__, __LINE__, "%s: second recovery freed %llu objects, nulled %llu refs",
			what, (unsigned long long)freed, (unsigned long long)nulled);
		return -1;
	}
	th_passed++;
	return 0;
}

static void expect_killed(int rc, const char *what)
{
	if (rc == KILLED)
		th_passed++;
	else
		th_fail(__FILE__, __LINE__, "%s: workload exit %d, want SIGKILL (%d)", what, rc, KILLED);
}

static void crash_live(long k)
{
	char what[64], env0[64];
	char *argv[16], *env[] = { env0, NULL };

	snprintf(what, sizeof(what), "k=%ld live", k);
	snprintf(env0, sizeof(env0), "UH_CRASH_AT=%ld", k);
	if (fresh_heap() != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd start", what);
		return;
	}
	prog_argv(argv, "--work", NULL, NULL);
	pid_t pid = th_spawn(argv, env);
	int rc = th_wait_exit_timeout(pid, 20000);
	if (rc == -2)
		rc = th_kill(pid);
	expect_killed(rc, what);
	if (th_heapd_restart(&d) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd did not restart", what);
		return;
	}
	check_heap(what);
}

static int read_byte(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&p, 1, ms) == 1 && read(fd, &c, 1) == 1;
}

static void crash_frozen(long k)
{
	char what[64], env0[64], rfd[16], gfd[16];
	char *argv[16], *env[] = { env0, NULL };
	int ready[2], go[2], rc, frozen = 0;

	snprintf(what, sizeof(what), "k=%ld frozen", k);
	snprintf(env0, sizeof(env0), "UH_CRASH_AT=%ld", k);
	if (fresh_heap() != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd start", what);
		return;
	}
	if (pipe(ready) != 0 || pipe(go) != 0) {
		th_fail(__FILE__, __LINE__, "pipe: %s", strerror(errno));
		return;
	}
	snprintf(rfd, sizeof(rfd), "%d", ready[1]);
	snprintf(gfd, sizeof(gfd), "%d", go[0]);
	prog_argv(argv, "--work", rfd, gfd);
	pid_t pid = th_spawn(argv, env);
	close(ready[1]);
	close(go[0]);
	/* No byte: the crash point lies in the setup (heapd reaps it). */
	if (read_byte(ready[0], 20000)) {
		kill(d.pid, SIGSTOP);
		frozen = 1;
		if (write(go[1], "g", 1) != 1)
			th_fail(__FILE__, __LINE__, "%s: go write", what);
	}
	close(ready[0]);
	close(go[1]);
	rc = th_wait_exit_timeout(pid, 20000);
	if (rc == -2)
		rc = th_kill(pid);
	expect_killed(rc, what);
	if (frozen) {
		th_heapd_kill(&d);
		rc = th_heapd_start(&d, NULL);
	} else {
		rc = th_heapd_restart(&d);
	}
	if (rc != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd did not restart", what);
		return;
	}
	check_heap(what);
}

static long count_barriers(void)
{
	static char out[8192];
	char *argv[16];
	uint64_t n = 0, ha = 0, hb = 0;

	if (fresh_heap() != 0)
		return -1;
	prog_argv(argv, "--work", NULL, NULL);
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0 || th_find_u64(out, "barriers", &n) != 0) {
		th_fail(__FILE__, __LINE__, "workload without crash: exit %d:\n%s", rc, out);
		return -1;
	}
	printf("workload: %s", out);
	/* The ops did split the root (a new level) and collapse one. */
	TH_CHECK(th_find_u64(out, "height_a", &ha) == 0 && ha == 3);
	TH_CHECK(th_find_u64(out, "height_b", &hb) == 0 && hb == 1);
	if (check_heap("no crash") != 0)
		return -1;
	return (long)n;
}

static int make_template(void)
{
	static char out[4096];
	char *argv[] = { (char *)th_bin("prog_dt_smap_crash"), "--setup", "--socket", NULL, NULL };
	uint64_t n = 0, ha = 0;

	/* A small heap: it is copied for every crash point. */
	if (th_heapd_start(&d, "--size 32M") != 0)
		return -1;
	argv[3] = d.sock;
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0 || th_find_u64(out, "n", &n) != 0) {
		fprintf(stderr, "setup: exit %d:\n%s", rc, out);
		return -1;
	}
	printf("setup: %s", out);
	TH_CHECK(th_find_u64(out, "height_a", &ha) == 0 && ha == 2);
	snprintf(nkeys, sizeof(nkeys), "%llu", (unsigned long long)n);
	th_heapd_stop(&d);
	snprintf(template_path, sizeof(template_path), "%s/template.uh", d.dir);
	snprintf(ack_path, sizeof(ack_path), "%s/ack.smap", d.dir);
	return copy_file(d.heap, template_path);
}

int main(void)
{
	const char *max_env = getenv("UH_CRASH_ENUM_MAX");
	int full = getenv("UH_DT_SMAP_CRASH_FULL") != NULL;
	uint64_t t0 = th_now_ms();
	long n, max;

	printf("%s: seed 0 (deterministic)\n", SUITE);
	if (make_template() != 0) {
		th_fail(__FILE__, __LINE__, "could not make the template heap");
		th_heapd_cleanup(&d);
		return th_summary(SUITE);
	}
	n = count_barriers();
	TH_CHECK(n > 0);
	max = max_env ? atol(max_env) : n;
	if (n > 0 && max > n)
		max = n;
	for (long k = 1; n > 0 && k <= max; k++) {
		int before = th_failed;
		crash_live(k);
		if (full || k % 2)
			crash_frozen(k);
		if (th_failed != before)
			fprintf(stderr, "crash point k=%ld failed (UH_CRASH_AT=%ld)\n", k, k);
		fflush(stdout);
	}
	printf("%ld crash points in %llu ms; op in flight found undone %ld, done %ld times\n",
	       max > 0 ? max : 0, (unsigned long long)(th_now_ms() - t0), undone_done[0],
	       undone_done[1]);
	TH_CHECK(n <= 0 || undone_done[1] > 0);	/* some crash fell after a commit point */
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
