/*
 * test_crash_enum.c -- enumerated crash points. The workload
 * (prog_crash_work, 20 blocks) is run once without the hook to count its
 * persist barriers N; then for every k in 1..N it is run on a fresh copy of
 * the same empty heap with UH_CRASH_AT=k, so libuniheap SIGKILLs it right
 * before its k-th barrier. Each k is run twice:
 *   live:   heapd keeps running and reaps the dead session itself;
 *   frozen: heapd is SIGSTOPped after the workload's setup, SIGKILLed
 *           after the crash and started again, so start-up recovery (not
 *           the reaper) repairs the log.
 * After each crash: restart heapd, run prog_crash_check --probe (oracle of
 * acknowledged blocks + invariants + no lock left), restart heapd once
 * more and require that this second recovery freed 0 objects and nulled 0
 * references (the first recovery left no garbage).
 *
 * UH_CRASH_ENUM_MAX=k limits the run to k crash points (debugging).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define BLOCKS "20"
#define KILLED (128 + SIGKILL)

static struct th_heapd d;
static char template_path[700], ack_path[700];

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

/* Start heapd on a fresh copy of the empty template heap. */
static int fresh_heap(void)
{
	th_heapd_stop(&d);
	unlink(ack_path);
	if (copy_file(template_path, d.heap) != 0) {
		fprintf(stderr, "copy %s: %s\n", template_path, strerror(errno));
		return -1;
	}
	return th_heapd_start(&d, NULL);
}

static void work_argv(char **argv, char *rfd, char *gfd)
{
	int n = 0;

	argv[n++] = (char *)th_bin("prog_crash_work");
	argv[n++] = "--socket";
	argv[n++] = d.sock;
	argv[n++] = "--ack";
	argv[n++] = ack_path;
	argv[n++] = "--blocks";
	argv[n++] = BLOCKS;
	argv[n++] = "--prelease";
	if (rfd) {
		argv[n++] = "--ready-fd";
		argv[n++] = rfd;
		argv[n++] = "--go-fd";
		argv[n++] = gfd;
	}
	argv[n] = NULL;
}

/* Checker + leak check. Returns 0 when both pass. */
static int check_heap(const char *what)
{
	static char out[1 << 16];
	char *argv[] = { (char *)th_bin("prog_crash_check"), "--socket", d.sock,
			 "--ack-dir", d.dir, "--probe", NULL };
	uint64_t freed = 1, nulled = 1, want_live = 0, live = 0;
	int rc = th_run_capture(argv, out, sizeof(out));

	th_find_u64(out, "expect_live", &want_live);

	if (rc != 0) {
		th_fail(__FILE__, __LINE__, "%s: checker exit %d:\n%s", what, rc, out);
		th_heapd_log_tail(&d, 3000);
		return -1;
	}
	if (th_heapd_restart(&d) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd did not restart", what);
		return -1;
	}
	rc = th_heapctl(&d, "status --json", out, sizeof(out));
	if (rc != 0 || th_find_u64(out, "freed_objects", &freed) != 0 ||
	    th_find_u64(out, "nulled_refs", &nulled) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapctl status --json (exit %d):\n%s", what,
			rc, out);
		return -1;
	}
	if (freed || nulled) {
		th_fail(__FILE__, __LINE__,
			"%s: second recovery freed %llu objects, nulled %llu refs:\n%s", what,
			(unsigned long long)freed, (unsigned long long)nulled, out);
		return -1;
	}
	/* Recovery GC marked exactly what the model says is reachable. */
	if (th_find_u64(out, "live_objects", &live) != 0 || live != want_live) {
		th_fail(__FILE__, __LINE__, "%s: recovery found %llu live objects, model %llu",
			what, (unsigned long long)live, (unsigned long long)want_live);
		return -1;
	}
	th_passed++;
	return 0;
}

/* The workload must die by the hook's SIGKILL. */
static void expect_killed(int rc, const char *what)
{
	if (rc == KILLED)
		th_passed++;
	else
		th_fail(__FILE__, __LINE__, "%s: workload exit %d, want SIGKILL (%d)", what,
			rc, KILLED);
}

static void crash_live(long k)
{
	char what[64], env0[64];
	char *argv[16], *env[] = { env0, NULL };
	pid_t pid;

	snprintf(what, sizeof(what), "k=%ld live", k);
	snprintf(env0, sizeof(env0), "UH_CRASH_AT=%ld", k);
	if (fresh_heap() != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd start", what);
		return;
	}
	work_argv(argv, NULL, NULL);
	pid = th_spawn(argv, env);
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

/* 1 when fd became readable within ms and a byte was read. */
static int read_byte(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, ms) != 1)
		return 0;
	return read(fd, &c, 1) == 1;
}

static void crash_frozen(long k)
{
	char what[64], env0[64], rfd[16], gfd[16];
	char *argv[16], *env[] = { env0, NULL };
	int ready[2], go[2];
	pid_t pid;
	int rc, frozen = 0;

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
	work_argv(argv, rfd, gfd);
	pid = th_spawn(argv, env);
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

/* Run the workload without the hook; return its barrier count or -1. */
static long count_barriers(void)
{
	static char out[8192];
	char *argv[16];
	uint64_t n = 0;
	int rc;

	if (fresh_heap() != 0)
		return -1;
	work_argv(argv, NULL, NULL);
	rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0 || th_find_u64(out, "barriers", &n) != 0) {
		th_fail(__FILE__, __LINE__, "workload without crash: exit %d:\n%s", rc, out);
		return -1;
	}
	printf("workload: %s", out);
	if (check_heap("no crash") != 0)
		return -1;
	return (long)n;
}

/* Make the empty template heap that every run starts from. */
static int make_template(void)
{
	if (th_heapd_start(&d, NULL) != 0)
		return -1;
	th_heapd_stop(&d);
	snprintf(template_path, sizeof(template_path), "%s/template.uh", d.dir);
	snprintf(ack_path, sizeof(ack_path), "%s/ack.0", d.dir);
	return copy_file(d.heap, template_path);
}

int main(void)
{
	const char *max_env = getenv("UH_CRASH_ENUM_MAX");
	long n, max;
	uint64_t t0 = th_now_ms();

	if (make_template() != 0) {
		th_fail(__FILE__, __LINE__, "could not make the template heap");
		return th_summary("test_crash_enum");
	}
	n = count_barriers();
	TH_CHECK(n > 0);
	max = max_env ? atol(max_env) : n;
	if (n > 0 && max > n)
		max = n;
	if (n > 0)
		printf("crash points: 1..%ld of %ld barriers\n", max, n);
	for (long k = 1; n > 0 && k <= max; k++) {
		int before = th_failed;
		crash_live(k);
		crash_frozen(k);
		if (th_failed != before)
			fprintf(stderr, "crash point k=%ld failed (UH_CRASH_AT=%ld)\n", k, k);
		fflush(stdout);
	}
	printf("%ld crash points x 2 modes in %llu ms\n", max > 0 ? max : 0,
	       (unsigned long long)(th_now_ms() - t0));
	th_heapd_cleanup(&d);
	return th_summary("test_crash_enum");
}
