/*
 * test_crash_gc_sweep.c -- enumerated crash points in heapd's online GC
 * cycle (FORMAT.md 9.3): heapd is killed at every persist barrier of a
 * cycle that sweeps a prepared heap, and what must survive does.
 *
 * The template heap (prog_gc_sweep --setup) holds a list of live nodes, a
 * large live bytes object, a second list ("gc.pinned"), and what each run
 * makes garbage once heapd serves (prog_gc_sweep --drop deletes its roots;
 * garbage in the template itself would be collected by start-up
 * recovery): 6000 nodes (two sweep batches of 4096) and three large bytes
 * objects (regions the sweep gives back in libpmemobj transactions).
 * heapd's test hook UNIHEAP_GC_CRASH_AT_BARRIER=k SIGKILLs heapd right
 * before the k-th crash point of its first cycle (collector.c: the clock's
 * barrier at the start and at each batch, each batch's barrier after its
 * valid bits are cleared, the start of each large region's free); the
 * uncrashed run of each mode counts them (barriers=N in its gc_cycle line)
 * and every k in 1..N is run, in two modes:
 *   alone:  no client runs while heapd crashes;
 *   keeper: a client (prog_gc_sweep --keep) allocated nodes of its own
 *           that nothing reaches and pinned them, pinned every node of
 *           "gc.pinned" and deleted that root; it outlives heapd's crash
 *           and re-attaches to the restarted heapd. It also kept the
 *           references of the garbage list (unpinned): after the restart
 *           it pins every 7th (each must answer at once, 0 or
 *           UH_EFREED) and unpins it.
 * After each crash heapd restarts (start-up recovery) and: every live
 * object is there with its content (prog_gc_sweep --check; the keeper
 * reads its pinned nodes after re-attaching, and again after the next
 * cycle), uh_heap_check (heapctl check) is sound, the next cycle is done;
 * then the keeper ends (its pins go), one more cycle runs, heapd stops, and
 * the heap file holds exactly as many valid objects as the uncrashed
 * run's did after the same steps (nothing of the garbage left, nothing
 * live lost), none of them locked.
 *
 * Knobs: UH_GC_CRASH_GARBAGE=n garbage nodes (default 6000; more: more
 * batches, more crash points), UH_GC_CRASH_MAX=k only the first k crash
 * points of each mode (debugging).
 *
 * Known gap: the "gc.pinned" nodes are of the keeper's own node class, so
 * they lie in an arena the keeper leases again (its 300 nodes go there),
 * and start-up recovery keeps them as objects of a running client's arena
 * (FORMAT.md 9 step 2). UH_GC_CRASH_PINNED_APART=1 gives them a class of
 * their own: then start-up recovery frees them, because its mark does not
 * read the pins of the clients that outlive heapd (the GC file is opened
 * after it), and the keeper finds 200 pinned nodes freed. That run fails
 * until recovery honours those pins.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define SUITE "test_crash_gc_sweep"
#define HEAPD_ARGS "--size 32M --gc-every off --gc-fill off"
#define BIG_GARBAGE 3	/* prog_gc_sweep's */
#define KILLED (128 + SIGKILL)

enum { ALONE, KEEPER };
static const char *mode_name[] = { "alone", "keeper" };

static struct th_heapd d;
static char tmpl[700], garbage[32];
static char out[1 << 16];

static int make_template(void)
{
	char *argv[] = { (char *)th_bin("prog_gc_sweep"), "--setup", d.sock, garbage,
			 getenv("UH_GC_CRASH_PINNED_APART") ? "apart" : NULL, NULL };
	if (th_heapd_start(&d, HEAPD_ARGS) != 0)
		return -1;
	int rc = th_run_capture(argv, out, sizeof(out));
	printf("%s", out);
	th_heapd_stop(&d);
	snprintf(tmpl, sizeof(tmpl), "%s/template.uh", d.dir);
	return rc == 0 ? th_copy_file(d.heap, tmpl) : -1;
}

/* The keeper, spawned into its own sync dir. */
struct keeper {
	pid_t pid;
	char dir[700];
	int asked;
};

static int keeper_start(struct keeper *k, long point)
{
	snprintf(k->dir, sizeof(k->dir), "%s/keeper.%ld", d.dir, point);
	mkdir(k->dir, 0700);
	char *argv[] = { (char *)th_bin("prog_gc_sweep"), "--keep", d.sock, k->dir, NULL };
	k->asked = 0;
	k->pid = th_spawn(argv, NULL);
	return k->pid > 0 && th_wait_file(k->dir, "ready", 60000) == 0 ? 0 : -1;
}

/* The keeper commits a block and reads every node it pinned: 0 when all
 * are there with their content. */
static int keeper_check(struct keeper *k, const char *what)
{
	char name[32], path[800];
	size_t len;
	uint64_t bad = 1, commit = 1, stale = 1;
	snprintf(name, sizeof(name), "check.%d", ++k->asked);
	th_signal_file(k->dir, name, NULL);
	snprintf(name, sizeof(name), "checked.%d", k->asked);
	if (th_wait_file(k->dir, name, 30000) != 0) {
		th_fail(__FILE__, __LINE__, "%s: the keeper did not answer in 30 s", what);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", k->dir, name);
	char *text = th_read_file(path, &len);
	if (!text || th_find_u64(text, "bad", &bad) || th_find_u64(text, "commit", &commit) ||
	    th_find_u64(text, "stale", &stale) || bad || commit || stale) {
		th_fail(__FILE__, __LINE__, "%s: the keeper's pinned nodes: %s", what,
			text ? text : "(no answer)");
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

static void keeper_end(struct keeper *k)
{
	if (k->pid <= 0)
		return;
	th_signal_file(k->dir, "quit", NULL);
	int rc = th_wait_exit_timeout(k->pid, 30000);
	if (rc == -2)
		rc = th_kill(k->pid);
	if (rc != 0)
		th_fail(__FILE__, __LINE__, "keeper exit %d", rc);
	k->pid = 0;
}

/* One cycle, waited for: 0 if it was done. */
static int gc_wait(const char *what, uint64_t *freed)
{
	int rc = th_heapctl(&d, "--json gc --wait", out, sizeof(out));
	if (rc != 0 || !strstr(out, "\"outcome\":\"done\"")) {
		th_fail(__FILE__, __LINE__, "%s: gc --wait -> %d: %.600s", what, rc, out);
		return -1;
	}
	if (freed && th_find_u64(out, "freed", freed) != 0)
		*freed = 0;
	return 0;
}

/* The first gc_cycle line of the log (it starts empty with each run):
 * its crash points. */
static long logged_barriers(void)
{
	size_t len;
	char *log = th_read_file(d.log, &len), *p = log ? strstr(log, "event=gc_cycle ") : NULL;
	uint64_t n = 0;
	if (p && strchr(p, '\n'))
		*strchr(p, '\n') = '\0';
	long rc = p && th_find_u64(p, "barriers", &n) == 0 ? (long)n : -1;
	free(log);
	return rc;
}

static int log_has(const char *what)
{
	size_t len;
	char *log = th_read_file(d.log, &len);
	int has = log && strstr(log, what) != NULL;
	free(log);
	return has;
}

/* What happened in a failed run: heapd's starts, recoveries, cycles. */
static void print_log_events(void)
{
	size_t len;
	char *log = th_read_file(d.log, &len);
	for (char *p = log ? strtok(log, "\n") : NULL; p; p = strtok(NULL, "\n"))
		if (strstr(p, "event=start ") || strstr(p, "event=recovery ") ||
		    strstr(p, "event=gc_") || strstr(p, "level=warn") || strstr(p, "level=error"))
			fprintf(stderr, "  %s\n", p);
	free(log);
}

/* Valid and locked objects of the stopped heap's file. */
static int count_objects(uint64_t *valid, uint64_t *locked)
{
	size_t len;
	char *img = th_read_file(d.heap, &len);
	int rc = img ? th_count_objects(img, len, valid, locked) : -1;
	free(img);
	return rc;
}

struct run {
	int mode;
	long k;			/* 0: the uncrashed run */
	long barriers;		/* out (k = 0): crash points of the cycle */
	uint64_t freed;		/* out (k = 0): objects its cycle freed */
	uint64_t valid;		/* out: valid objects at the end */
};

/* Start heapd on a fresh copy of the template (with k, armed to crash). */
static int fresh_heapd(long k)
{
	char env[32];
	th_heapd_stop(&d);
	unlink(d.log);
	if (th_copy_file(tmpl, d.heap) != 0)
		return -1;
	snprintf(env, sizeof(env), "%ld", k);
	if (k)
		setenv("UNIHEAP_GC_CRASH_AT_BARRIER", env, 1);
	/* A copy put in place of the heap file: the full recovery (FORMAT.md
	 * 9.4), so that the cycle the hook counts is the test's, not one the
	 * recovery leaves to the collector. The restart after the crash takes
	 * the default path (same boot and file: an online recovery cycle). */
	int rc = th_heapd_start(&d, HEAPD_ARGS " --recovery-gc full");
	unsetenv("UNIHEAP_GC_CRASH_AT_BARRIER");
	return rc;
}

/* Make the garbage: its roots deleted. */
static int drop(void)
{
	char *argv[] = { (char *)th_bin("prog_gc_sweep"), "--drop", d.sock, NULL };
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc)
		fprintf(stderr, "prog_gc_sweep --drop: exit %d:\n%s", rc, out);
	return rc;
}

/* The cycle, crashed at r->k (or run whole); heapd serving after it. */
static int cycle(struct run *r, const char *what)
{
	char marker[64];
	if (!r->k) {
		if (gc_wait(what, &r->freed) != 0)
			return -1;
		r->barriers = logged_barriers();
		return 0;
	}
	th_heapctl(&d, "gc", out, sizeof(out));
	int rc = th_wait_exit_timeout(d.pid, 60000);
	if (rc == -2)
		rc = th_kill(d.pid);
	d.pid = 0;
	snprintf(marker, sizeof(marker), "event=gc_crash_at_barrier barrier=%ld", r->k);
	if (rc != KILLED || !log_has(marker)) {
		th_fail(__FILE__, __LINE__, "%s: heapd exit %d (want %d by the hook)", what, rc,
			KILLED);
		th_heapd_log_tail(&d, 3000);
		return -1;
	}
	th_passed++;
	if (th_heapd_start(&d, HEAPD_ARGS) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd did not restart", what);
		return -1;
	}
	return 0;
}

/* The live model is there (the pinned list rooted unless the keeper
 * dropped its root), the heap checks sound. */
static int live_ok(struct run *r, const char *what)
{
	char *argv[] = { (char *)th_bin("prog_gc_sweep"), "--check", d.sock,
			 r->mode == KEEPER ? "--no-pinned" : NULL, NULL };
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc != 0) {
		th_fail(__FILE__, __LINE__, "%s: live objects lost:\n%s", what, out);
		return -1;
	}
	rc = th_heapctl(&d, "check", out, sizeof(out));
	if (rc != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapctl check -> %d: %s", what, rc, out);
		return -1;
	}
	return 0;
}

static int run_one(struct run *r)
{
	char what[64];
	struct keeper k = { 0 };
	uint64_t locked = 0;
	int rc = -1;
	snprintf(what, sizeof(what), "%s k=%ld", mode_name[r->mode], r->k);
	if (fresh_heapd(r->k) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd start", what);
		return -1;
	}
	if (r->mode == KEEPER && keeper_start(&k, r->k) != 0) {
		th_fail(__FILE__, __LINE__, "%s: the keeper did not start", what);
		goto out;
	}
	if (drop() != 0) {
		th_fail(__FILE__, __LINE__, "%s: could not drop the garbage's roots", what);
		goto out;
	}
	if (cycle(r, what) != 0 || live_ok(r, what) != 0 ||
	    (r->mode == KEEPER && keeper_check(&k, what) != 0) || gc_wait(what, NULL) != 0 ||
	    (r->mode == KEEPER && keeper_check(&k, what) != 0))
		goto out;
	keeper_end(&k);
	if (gc_wait(what, NULL) != 0 || live_ok(r, what) != 0)
		goto out;
	th_heapd_stop(&d);
	if (count_objects(&r->valid, &locked) != 0 || locked) {
		th_fail(__FILE__, __LINE__, "%s: heap file: %llu objects locked", what,
			(unsigned long long)locked);
		goto out;
	}
	rc = 0;
out:
	keeper_end(&k);
	if (rc)
		print_log_events();
	return rc;
}

/* The uncrashed run, then every crash point of the mode. */
static long campaign(int mode, long max)
{
	struct run base = { mode, 0, 0, 0, 0 };
	long want_garbage = atol(garbage) + BIG_GARBAGE;
	if (run_one(&base) != 0)
		return 0;
	printf("%s: the uncrashed cycle freed %llu objects at %ld crash points; %llu valid "
	       "objects at the end\n", mode_name[mode], (unsigned long long)base.freed,
	       base.barriers, (unsigned long long)base.valid);
	/* The clock at the start, two barriers a batch, a free a region. */
	TH_CHECK_EQ(base.freed, (uint64_t)want_garbage);
	TH_CHECK(base.barriers >= 1 + 2 * ((want_garbage + 4095) / 4096) + BIG_GARBAGE);
	if (base.barriers <= 0)
		return 0;
	long n = max > 0 && max < base.barriers ? max : base.barriers;
	for (long k = 1; k <= n; k++) {
		struct run r = { mode, k, 0, 0, 0 };
		int before = th_failed;
		if (run_one(&r) == 0 && r.valid != base.valid)
			th_fail(__FILE__, __LINE__, "%s k=%ld: %llu valid objects at the end, want %llu",
				mode_name[mode], k, (unsigned long long)r.valid,
				(unsigned long long)base.valid);
		else if (th_failed == before)
			th_passed++;
		if (th_failed != before)
			fprintf(stderr, "crash point %s k=%ld failed "
				"(UNIHEAP_GC_CRASH_AT_BARRIER=%ld)\n", mode_name[mode], k, k);
		fflush(stdout);
	}
	return n;
}

int main(void)
{
	const char *g = getenv("UH_GC_CRASH_GARBAGE"), *m = getenv("UH_GC_CRASH_MAX");
	uint64_t t0 = th_now_ms();
	snprintf(garbage, sizeof(garbage), "%ld", g ? atol(g) : 6000);
	if (make_template() != 0) {
		th_fail(__FILE__, __LINE__, "could not make the template heap");
		th_heapd_cleanup(&d);
		return th_summary(SUITE);
	}
	long points = 0;
	for (int mode = ALONE; mode <= KEEPER; mode++)
		points += campaign(mode, m ? atol(m) : 0);
	printf("%ld crash points in the GC cycle checked in %llu ms\n", points,
	       (unsigned long long)(th_now_ms() - t0));
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
