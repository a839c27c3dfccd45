/*
 * crash_campaign.c -- the enumerated-crash driver (see crash_campaign.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash_campaign.h"
#include "powerloss.h"

#define KILLED (128 + SIGKILL)

int cc_save_template(struct crash_campaign *c, const char *ack_name)
{
	snprintf(c->template_path, sizeof(c->template_path), "%s/template.uh", c->d->dir);
	snprintf(c->ack_path, sizeof(c->ack_path), "%s/%s", c->d->dir, ack_name);
	return th_copy_file(c->d->heap, c->template_path);
}

/* Start heapd on a fresh copy of the template heap. */
static int fresh_heap(struct crash_campaign *c)
{
	c->heapd_down(c->d);
	unlink(c->ack_path);
	if (th_copy_file(c->template_path, c->d->heap) != 0) {
		fprintf(stderr, "copy %s: %s\n", c->template_path, strerror(errno));
		return -1;
	}
	return th_heapd_start(c->d, c->heapd_args);
}

int cc_restart(struct crash_campaign *c)
{
	if (!c->kill_restart)
		return th_heapd_restart(c->d);
	th_heapd_kill(c->d);
	return th_heapd_start(c->d, c->heapd_args);
}

/* What the last recovery found. 0, or -1 (reported). */
static int status(struct crash_campaign *c, const char *what, uint64_t *live, uint64_t *freed,
		  uint64_t *nulled)
{
	static char out[1 << 16];
	int rc = th_heapctl(c->d, "status --json", out, sizeof(out));

	if (rc != 0 || th_find_u64(out, "live_objects", live) != 0 ||
	    th_find_u64(out, "freed_objects", freed) != 0 ||
	    th_find_u64(out, "nulled_refs", nulled) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapctl status --json (exit %d):\n%s", what, rc, out);
		return -1;
	}
	return 0;
}

/* After the restart that followed the crash: (kill_restart: that recovery
 * undid or redid the block in flight through its log, so its GC found no
 * garbage either: an object the code failed to free, or a reference it left
 * dangling, shows up here), the checker, then one more restart whose
 * recovery must find nothing to repair and (live_key) exactly the live
 * objects of the model. 0 when all passed. */
static int check_heap(struct crash_campaign *c, const char *what)
{
	static char out[1 << 16];
	char *argv[16];
	uint64_t want = 0, live = 0, freed = 0, nulled = 0, state = 0, acked = 0;

	if (c->kill_restart && status(c, what, &live, &freed, &nulled) != 0)
		return -1;
	if (freed || nulled) {
		th_fail(__FILE__, __LINE__, "%s: recovery after the crash freed %llu objects, "
			"nulled %llu references", what, (unsigned long long)freed,
			(unsigned long long)nulled);
		return -1;
	}
	c->check_argv(argv);
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0 || (c->live_key && th_find_u64(out, c->live_key, &want) != 0)) {
		th_fail(__FILE__, __LINE__, "%s: checker exit %d:\n%s", what, rc, out);
		th_heapd_log_tail(c->d, 3000);
		return -1;
	}
	if (th_find_u64(out, "state", &state) == 0 && th_find_u64(out, "acked", &acked) == 0)
		c->undone_done[state > acked]++;
	freed = nulled = 1;
	if (cc_restart(c) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd did not restart", what);
		return -1;
	}
	if (status(c, what, &live, &freed, &nulled) != 0)
		return -1;
	if (freed || nulled || (c->live_key && live != c->base_live + want)) {
		th_fail(__FILE__, __LINE__, "%s: second recovery freed %llu objects, nulled %llu "
			"refs, live %llu (model %llu); checker said: %s", what,
			(unsigned long long)freed, (unsigned long long)nulled,
			(unsigned long long)live, (unsigned long long)(c->base_live + want), out);
		return -1;
	}
	th_passed++;
	return 0;
}

/* 1 when fd became readable within ms and a byte was read. */
static int read_byte(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&p, 1, ms) == 1 && read(fd, &c, 1) == 1;
}

/* CC_FROZEN: once the workload is set up, SIGSTOP heapd and let the
 * workload go on. 1 when heapd was frozen; 0 when no byte came: the crash
 * point lies in the setup (heapd reaps it). Closes the pipes. */
static int freeze_heapd(struct crash_campaign *c, int *ready, int *go, const char *what)
{
	int frozen = 0;

	close(ready[1]);
	close(go[0]);
	if (read_byte(ready[0], 20000)) {
		kill(c->d->pid, SIGSTOP);
		frozen = 1;
		if (write(go[1], "g", 1) != 1)
			th_fail(__FILE__, __LINE__, "%s: go write", what);
	}
	close(ready[0]);
	close(go[1]);
	return frozen;
}

/* One crash point k in one mode: the workload must die by the hook's
 * SIGKILL; then heapd recovers and the heap is checked. */
static void crash_at(struct crash_campaign *c, long k, int mode)
{
	char what[64], env0[64], rfd[16], gfd[16];
	char *argv[16], *env[] = { env0, NULL };
	int ready[2] = { -1, -1 }, go[2] = { -1, -1 }, rc, frozen = 0;

	snprintf(what, sizeof(what), "k=%ld %s", k, mode == CC_FROZEN ? "frozen" : "live");
	snprintf(env0, sizeof(env0), "UH_CRASH_AT=%ld", k);
	if (fresh_heap(c) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd start", what);
		return;
	}
	if (mode == CC_FROZEN && (pipe(ready) != 0 || pipe(go) != 0)) {
		th_fail(__FILE__, __LINE__, "pipe: %s", strerror(errno));
		return;
	}
	snprintf(rfd, sizeof(rfd), "%d", ready[1]);
	snprintf(gfd, sizeof(gfd), "%d", go[0]);
	c->work_argv(argv, mode == CC_FROZEN ? rfd : NULL, gfd);
	pid_t pid = th_spawn(argv, env);
	if (mode == CC_FROZEN)
		frozen = freeze_heapd(c, ready, go, what);
	rc = th_wait_exit_timeout(pid, 20000);
	if (rc == -2)
		rc = th_kill(pid);
	if (rc == KILLED)
		th_passed++;
	else
		th_fail(__FILE__, __LINE__, "%s: workload exit %d, want SIGKILL (%d)", what, rc, KILLED);
	if (frozen) {
		th_heapd_kill(c->d);
		rc = th_heapd_start(c->d, c->heapd_args);
	} else {
		rc = cc_restart(c);
	}
	if (rc != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd did not restart", what);
		return;
	}
	check_heap(c, what);
}

/* Run the workload without the hook; return its barrier count or -1. */
static long count_barriers(struct crash_campaign *c)
{
	static char out[8192];
	char *argv[16];
	uint64_t n = 0;

	if (fresh_heap(c) != 0)
		return -1;
	c->work_argv(argv, NULL, NULL);
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0 || th_find_u64(out, "barriers", &n) != 0) {
		th_fail(__FILE__, __LINE__, "workload without crash: exit %d:\n%s", rc, out);
		return -1;
	}
	printf("workload: %s", out);
	if (c->on_work_out)
		c->on_work_out(out);
	if ((c->kill_restart && cc_restart(c) != 0) || check_heap(c, "no crash") != 0)
		return -1;
	return (long)n;
}

long cc_run(struct crash_campaign *c)
{
	const char *max_env = getenv("UH_CRASH_ENUM_MAX");
	long n = c->barriers = count_barriers(c);
	long max = max_env ? atol(max_env) : n;

	TH_CHECK(n > 0);
	if (max > n)
		max = n;
	if (n > 0)
		printf("crash points: 1..%ld of %ld barriers\n", max, n);
	for (long k = 1; k <= max; k++) {
		int before = th_failed;
		if (c->modes & CC_LIVE)
			crash_at(c, k, CC_LIVE);
		if ((c->modes & CC_FROZEN) && (!c->frozen_odd || k % 2))
			crash_at(c, k, CC_FROZEN);
		if (th_failed != before)
			fprintf(stderr, "crash point k=%ld failed (UH_CRASH_AT=%ld)\n", k, k);
		fflush(stdout);
	}
	return max > 0 ? max : 0;
}

void cc_parse_args(int argc, char **argv, struct cc_args *a)
{
	*a = (struct cc_args){ .ready_fd = -1, .go_fd = -1 };
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--setup") || !strcmp(o, "--work") || !strcmp(o, "--check"))
			a->mode = o;
		else if (v && !strcmp(o, "--socket") && ++i)
			a->sock = v;
		else if (v && !strcmp(o, "--ack") && ++i)
			a->ack = v;
		else if (v && !strcmp(o, "--n") && ++i)
			a->n = atol(v);
		else if (v && !strcmp(o, "--ready-fd") && ++i)
			a->ready_fd = atoi(v);
		else if (v && !strcmp(o, "--go-fd") && ++i)
			a->go_fd = atoi(v);
	}
}

void cc_prog_argv(char **argv, const char *prog, const char *mode, const char *sock,
		  const char *ack, const char *n, char *rfd, char *gfd)
{
	int i = 0;

	argv[i++] = (char *)th_bin(prog);
	argv[i++] = (char *)mode;
	argv[i++] = "--socket";
	argv[i++] = (char *)sock;
	argv[i++] = "--ack";
	argv[i++] = (char *)ack;
	if (n) {
		argv[i++] = "--n";
		argv[i++] = (char *)n;
	}
	if (rfd) {
		argv[i++] = "--ready-fd";
		argv[i++] = rfd;
		argv[i++] = "--go-fd";
		argv[i++] = gfd;
	}
	argv[i] = NULL;
}

const char *cc_run_ops(uh_heap *h, const char *ack, int ready_fd, int go_fd,
		       const uint32_t *slots, size_t nslots, uh_block_fn body,
		       const void *ops, size_t op_size, int nops, int *rc)
{
	static char zeros[4096];
	int fd = open(ack, O_WRONLY | O_CREAT | O_APPEND, 0600);
	char c = 'r', line[16];

	*rc = 0;
	if (fd < 0)
		return "open ack file";
	/* The arenas leased here stay: the ops in flight at a crash point do
	 * not depend on a lease round trip to heapd. */
	*rc = uh_begin(h);
	for (size_t i = 0; *rc == 0 && i < nslots; i++) {
		uh_off o;
		*rc = uh_bytes_new(h, zeros, slots[i] - 16, &o);
	}
	if (*rc)
		return "prelease";
	uh_abort(h);
	if (ready_fd >= 0 && (write(ready_fd, &c, 1) != 1 || read(go_fd, &c, 1) != 1))
		return "handshake with the test";
	for (int i = 0; i < nops; i++) {
		if ((*rc = uh_run(h, body, (char *)ops + (size_t)i * op_size, 0)) != 0)
			return "op";
		int n = snprintf(line, sizeof(line), "%d\n", i);
		if (write(fd, line, (size_t)n) != n)
			return "ack write";
		pl_mark(line, (size_t)n);	/* the power-loss test's copy */
	}
	close(fd);
	return NULL;
}

int cc_root_bytes(uh_heap *h, const char *name, const void *want, size_t len, int n, int say)
{
	const void *data;
	size_t got;
	uh_off o;
	int rc = uh_root_get(h, name, &o);

	if (!want) {
		if (rc != UH_ENOTFOUND && say)
			printf("after %d ops: root %s present\n", n, name);
		return rc == UH_ENOTFOUND;
	}
	if (rc != 0 || uh_bytes_get(h, o, &data, &got) != 0 || got != len ||
	    memcmp(data, want, len) != 0) {
		if (say)
			printf("after %d ops: root %s missing or wrong (%s)\n", n, name,
			       rc ? uh_errmsg() : "content");
		return 0;
	}
	return 1;
}

int cc_check_acked(uh_heap *h, const char *ack, int nops,
		   int (*matches)(uh_heap *h, int n, uint64_t *live, int say))
{
	int acked = (int)th_count_lines(ack);
	uint64_t live;

	for (int n = acked; n <= acked + 1 && n <= nops; n++)
		if (matches(h, n, &live, 0)) {
			printf("ops=%d acked=%d live=%llu\n", n, acked, (unsigned long long)live);
			return 0;
		}
	for (int n = acked; n <= acked + 1 && n <= nops; n++)
		matches(h, n, &live, 1);
	printf("FAIL state matches neither the model after %d acked ops nor after %d\n", acked,
	       acked + 1);
	return 1;
}

int cc_work_ops(uh_heap *h, const struct cc_args *a, uh_block_fn body, int nops)
{
	int *ops = calloc((size_t)nops, sizeof(int)), rc = 0;

	if (!ops) {
		printf("FAIL out of memory\n");
		return 1;
	}
	for (int i = 0; i < nops; i++)
		ops[i] = i;
	const char *what = cc_run_ops(h, a->ack, a->ready_fd, a->go_fd, NULL, 0, body, ops,
				      sizeof(int), nops, &rc);
	free(ops);
	if (what) {
		printf("FAIL %s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
		return 1;
	}
	uh_stats st;
	uh_stats_get(h, &st);
	printf("barriers=%llu ops=%d\n", (unsigned long long)st.barriers, nops);
	return 0;
}

int cc_ops_main(int argc, char **argv, const char *prog, int (*setup)(uh_heap *h),
		uh_block_fn body, int nops,
		int (*matches)(uh_heap *h, int n, uint64_t *live, int say))
{
	struct cc_args a;
	uh_heap *h;
	int rc = 0;

	cc_parse_args(argc, argv, &a);
	if (!a.mode || !a.sock || (strcmp(a.mode, "--setup") && !a.ack)) {
		fprintf(stderr, "usage: %s --setup|--work|--check --socket S [--ack F]\n", prog);
		return 1;
	}
	if ((rc = uh_connect(a.sock, 0, &h)) != 0) {
		printf("connect: %s\n", uh_errmsg());
		return 1;
	}
	if (!strcmp(a.mode, "--setup")) {
		rc = setup ? setup(h) : 0;
	} else if (!strcmp(a.mode, "--work")) {
		if (cc_work_ops(h, &a, body, nops) != 0)
			return 1;
	} else if (!strcmp(a.mode, "--check")) {
		rc = cc_check_acked(h, a.ack, nops, matches);
	}
	uh_disconnect(h);
	return rc;
}

/* cc_template_main's one campaign: the callbacks of struct crash_campaign
 * carry no context. */
static struct {
	const struct cc_template *t;
	struct th_heapd d;
	struct crash_campaign cc;
	char n[32];
} tm;

static void tm_prog_argv(char **argv, const char *mode, char *rfd, char *gfd)
{
	cc_prog_argv(argv, tm.t->prog, mode, tm.d.sock, tm.cc.ack_path, tm.n[0] ? tm.n : NULL,
		     rfd, gfd);
}

static void tm_work_argv(char **argv, char *rfd, char *gfd)
{
	tm_prog_argv(argv, "--work", rfd, gfd);
}

static void tm_check_argv(char **argv)
{
	tm_prog_argv(argv, "--check", NULL, NULL);
}

/* The template is a small heap: it is copied for every crash point. */
static int tm_make_template(void)
{
	static char out[4096];
	char *argv[] = { (char *)th_bin(tm.t->prog), "--setup", "--socket", NULL, NULL };

	if (th_heapd_start(&tm.d, tm.t->heapd_args) != 0)
		return -1;
	argv[3] = tm.d.sock;
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0) {
		fprintf(stderr, "setup: exit %d:\n%s", rc, out);
		return -1;
	}
	if (tm.t->on_setup && tm.t->on_setup(out, tm.n, sizeof(tm.n)) != 0) {
		fprintf(stderr, "setup:\n%s", out);
		return -1;
	}
	th_heapd_stop(&tm.d);
	return cc_save_template(&tm.cc, tm.t->ack_name);
}

int cc_template_main(const struct cc_template *t)
{
	int all = !t->full_env || getenv(t->full_env) != NULL;
	uint64_t t0 = th_now_ms();

	tm.t = t;
	/* heapd killed, not stopped, before a fresh heap: the file is replaced
	 * anyway. */
	tm.cc = (struct crash_campaign){ .d = &tm.d, .heapd_down = th_heapd_kill,
					 .modes = CC_LIVE | CC_FROZEN, .frozen_odd = !all,
					 .work_argv = tm_work_argv, .check_argv = tm_check_argv,
					 .on_work_out = t->on_work_out };
	printf("%s: seed 0 (deterministic)\n", t->suite);
	if (tm_make_template() != 0) {
		th_fail(__FILE__, __LINE__, "could not make the template heap");
		th_heapd_cleanup(&tm.d);
		return th_summary(t->suite);
	}
	long max = cc_run(&tm.cc);
	printf("%ld crash points (live all, frozen %s) in %llu ms; op in flight found undone %ld, "
	       "done %ld times\n", max, all ? "all" : "odd",
	       (unsigned long long)(th_now_ms() - t0), tm.cc.undone_done[0], tm.cc.undone_done[1]);
	/* Some crash fell after a commit point. */
	TH_CHECK(tm.cc.barriers <= 0 || tm.cc.undone_done[1] > 0);
	th_heapd_cleanup(&tm.d);
	return th_summary(t->suite);
}
