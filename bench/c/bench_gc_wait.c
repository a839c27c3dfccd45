/*
 * bench_gc_wait.c -- what the online GC costs clients that keep
 * committing while cycles run back to back: the distribution of their
 * commit (and pin) latencies with and without cycles, and of the waits
 * proper, the times a client waits for the collector (uh_stats
 * gc_wait_ns: a push that finds its grey ring full, a pin of an object
 * the sweep holds). Never a test (no pass/fail).
 *
 * A client never waits on a handshake itself: heapd waits for each
 * session to leave its busy section or to show it has seen the new
 * phase (FORMAT.md 9.3); heapd's own longest wait per cycle is
 * `max_handshake_ns`, reported too.
 *
 * Setup: heapd on tmpfs, durability memory, automatic cycles off, a live
 * random graph of LIVE objects (gc_graph.h; default 500,000, so that a
 * mark lasts tens of ms). THREADS client threads (default 2), a session
 * each, run the leak loop of issue 28: each step is one block that
 * allocates a record, sets its value and stores it in the thread's head
 * object (the previous record becomes garbage), then pins the new record
 * and unpins the previous one, as a binding's proxy would. Phases of SECS
 * seconds (default 3) alternate: without cycles, then with cycles back
 * to back (one `heapctl gc --wait --repeat 0` process, stopped by its pid
 * at the phase's end, after which the cycle it asked for is waited for);
 * twice each, so that drift of the machine's load falls on both. Environment:
 * BENCH_GC_WAIT_THREADS, BENCH_GC_WAIT_SECS, BENCH_GC_WAIT_LIVE, and
 * BENCH_GC_WAIT_PACE: steps per second per thread (default 0: as fast as
 * it can), for a client that also does other work between its blocks.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "gc_graph.h"

#define PROG "bench_gc_wait"
#define MAX_THREADS 16
#define PHASES 4		/* off, on, off, on */
#define SAMPLES_MAX (1u << 23)	/* latencies kept per thread and condition */

/* One condition's samples (ns, saturated at 2^32 - 1) of one thread. */
struct samples {
	uint32_t *v;
	size_t n;
};

struct client {
	pthread_t thread;
	int idx;
	uint32_t cls;
	uh_off head;
	struct samples commit[2], pin[2], wait[2];	/* [0] no GC, [1] GC loop */
	uint64_t steps[2], busy_ns[2];
	uh_stats st0, st[2];	/* uh_stats deltas per condition */
};

static struct th_heapd d;
static volatile int phase = -1;	/* -1: not started; PHASES: over */
static uint64_t pace_ns;	/* time between the starts of two steps, 0: none */
static uint64_t phase_ns[2];	/* wall time per condition */

static void sample_add(struct samples *s, uint64_t ns)
{
	if (s->n < SAMPLES_MAX)
		s->v[s->n++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

static void samples_alloc(struct samples *s)
{
	s->v = malloc(SAMPLES_MAX * sizeof(*s->v));
	if (!s->v) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		exit(1);
	}
}

struct step {
	struct client *c;
	uint64_t n;
	uh_off node;
};

/* The leak loop's block: head.cur = Node(v = n). */
static int step_block(uh_heap *h, void *arg)
{
	struct step *s = arg;
	int rc = uh_alloc(h, s->c->cls, &s->node);
	if (!rc)
		rc = uh_set_i64(h, s->node, 0, (int64_t)s->n);
	if (!rc)
		rc = uh_set_ref(h, s->c->head, 0, s->node);
	return rc;
}

static void stats_sub(uh_stats *acc, const uh_stats *now, const uh_stats *then)
{
	acc->gc_busy_waits += now->gc_busy_waits - then->gc_busy_waits;
	acc->gc_pin_waits += now->gc_pin_waits - then->gc_pin_waits;
	acc->gc_wait_ns += now->gc_wait_ns - then->gc_wait_ns;
	acc->gc_greys += now->gc_greys - then->gc_greys;
	acc->gc_greys_skipped += now->gc_greys_skipped - then->gc_greys_skipped;
	acc->gc_cycles += now->gc_cycles - then->gc_cycles;
	acc->retries += now->retries - then->retries;
	if (now->gc_wait_max_ns > acc->gc_wait_max_ns)
		acc->gc_wait_max_ns = now->gc_wait_max_ns;
}

/* With a pace: sleep until next (a step late by more than one period
 * starts at once, without catching up); returns the next step's start. */
static uint64_t pace_wait(uint64_t next)
{
	if (!pace_ns)
		return 0;
	uint64_t now = bench_now_ns();
	if (now < next) {
		struct timespec ts = { (time_t)((next - now) / 1000000000u),
				       (long)((next - now) % 1000000000u) };
		nanosleep(&ts, NULL);
	} else if (now - next > pace_ns) {
		next = now;
	}
	return next + pace_ns;
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	static const uh_field_spec nf[] = { { "v", UH_T_I64, 0 } };
	static const uh_field_spec hf[] = { { "cur", UH_T_REF, 0 } };
	uint32_t hcls, pin = 0;
	char root[32];
	uh_heap *h;
	if (th_connect(&d, 0, &h) != 0)
		exit(1);
	bench_must(PROG, uh_class_register(h, "GcWaitNode", nf, 1, &c->cls), "register");
	bench_must(PROG, uh_class_register(h, "GcWaitHead", hf, 1, &hcls), "register");
	snprintf(root, sizeof(root), "bench.wait.%d", c->idx);
	bench_must(PROG, uh_begin(h), "begin");
	bench_must(PROG, uh_alloc(h, hcls, &c->head), "alloc head");
	bench_must(PROG, uh_root_set(h, root, c->head), "root");
	bench_must(PROG, uh_commit(h), "commit");
	while (phase < 0)	/* until the main thread starts the clock */
		th_sleep_ms(1);
	uh_stats before, after;
	struct step s = { .c = c };
	int ph;
	uint64_t next = bench_now_ns();
	while ((ph = phase) < PHASES) {	/* until the last phase ends */
		int k = ph & 1;
		next = pace_wait(next);
		uh_stats_get(h, &before);
		uint64_t t0 = bench_now_ns();
		bench_must(PROG, uh_run(h, step_block, &s, 0), "step");
		uint64_t t1 = bench_now_ns();
		uint32_t old = pin;
		bench_must(PROG, uh_pin(h, s.node, &pin), "pin");
		bench_must(PROG, uh_unpin(h, old), "unpin");
		uint64_t t2 = bench_now_ns();
		uh_stats_get(h, &after);
		sample_add(&c->commit[k], t1 - t0);
		sample_add(&c->pin[k], t2 - t1);
		if (after.gc_wait_ns != before.gc_wait_ns)
			sample_add(&c->wait[k], after.gc_wait_ns - before.gc_wait_ns);
		stats_sub(&c->st[k], &after, &before);
		c->steps[k]++;
		c->busy_ns[k] += t2 - t0;
		s.n++;
	}
	uh_unpin(h, pin);
	uh_disconnect(h);
	return NULL;
}

/* The cycles of the phases with GC, from heapctl's answers. */
struct gcloop {
	uint64_t cycles, given_up, mark_ns, max_mark_ns, max_handshake_ns, freed;
};

/* Start `heapctl --json gc --wait --repeat 0`: cycles back to back from one
 * process, one JSON line per cycle into path. */
static pid_t gc_loop_start(const char *path)
{
	static char cmd[2048];
	snprintf(cmd, sizeof(cmd), "exec '%s' --socket '%s' --json gc --wait --repeat 0 > '%s'",
		 th_bin("heapctl"), d.sock, path);
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	pid_t pid = th_spawn(argv, NULL);
	if (pid < 0)
		exit(1);
	return pid;
}

/* Stop it (by its pid), let the cycle it may have asked for end (a Gc
 * --wait joins a running cycle), and add up the cycles it printed. */
static void gc_loop_stop(pid_t pid, const char *path, struct gcloop *g)
{
	static char out[16384];
	th_kill(pid);
	th_heapctl(&d, "--json gc --wait", out, sizeof(out));
	FILE *f = fopen(path, "r");
	char line[8192];
	while (f && fgets(line, sizeof(line), f)) {	/* a line per cycle */
		uint64_t v;
		const char *o = strstr(line, "\"outcome\":");	/* the cycle's, then recent ones */
		if (!o || !strchr(line, '\n'))
			continue;	/* cut short by the kill */
		if (strncmp(o + 10, "\"done\"", 6) != 0) {
			g->given_up++;
			continue;
		}
		g->cycles++;
		if (!th_find_u64(line, "mark_ns", &v)) {
			g->mark_ns += v;
			g->max_mark_ns = v > g->max_mark_ns ? v : g->max_mark_ns;
		}
		if (!th_find_u64(line, "max_handshake_ns", &v) && v > g->max_handshake_ns)
			g->max_handshake_ns = v;
		if (!th_find_u64(line, "freed", &v))
			g->freed += v;
	}
	if (f)
		fclose(f);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Every thread's samples of one condition, merged and sorted. */
static struct samples merge(struct client *cs, int n, size_t off, int k)
{
	struct samples m = { 0 };
	for (int i = 0; i < n; i++)
		m.n += ((struct samples *)((char *)&cs[i] + off))[k].n;
	m.v = malloc((m.n ? m.n : 1) * sizeof(*m.v));
	if (!m.v) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		exit(1);
	}
	size_t at = 0;
	for (int i = 0; i < n; i++) {	/* threads */
		struct samples *s = &((struct samples *)((char *)&cs[i] + off))[k];
		memcpy(m.v + at, s->v, s->n * sizeof(*s->v));
		at += s->n;
	}
	qsort(m.v, m.n, sizeof(*m.v), cmp_u32);
	return m;
}

static double pct_us(const struct samples *m, double p)
{
	if (!m->n)
		return 0;
	size_t i = (size_t)(p * (double)(m->n - 1) + 0.5);
	return m->v[i] / 1e3;
}

/* One line: count, per second (secs > 0), percentiles and max in us. */
static void print_row(const char *name, const struct samples *m, double secs)
{
	char rate[32] = "-";
	if (secs > 0)
		snprintf(rate, sizeof(rate), "%.0f", (double)m->n / secs);
	printf("  %-28s %9zu %9s %9.1f %9.1f %9.1f %10.1f\n", name, m->n, rate,
	       pct_us(m, 0.5), pct_us(m, 0.99), pct_us(m, 0.999),
	       m->n ? m->v[m->n - 1] / 1e3 : 0);
}

static void report(struct client *cs, int n, const struct gcloop *g)
{
	static const char *cond[2] = { "without cycles", "GC back to back" };
	printf("\n  %-28s %9s %9s %9s %9s %9s %10s\n", "(latency, us)", "count", "per s",
	       "p50", "p99", "p99.9", "max");
	for (int k = 0; k < 2; k++) {
		char name[64];
		struct samples m = merge(cs, n, offsetof(struct client, commit), k);
		snprintf(name, sizeof(name), "commit, %s", cond[k]);
		print_row(name, &m, (double)phase_ns[k] / 1e9);
		free(m.v);
		m = merge(cs, n, offsetof(struct client, pin), k);
		snprintf(name, sizeof(name), "pin+unpin, %s", cond[k]);
		print_row(name, &m, 0);
		free(m.v);
	}
	struct samples w = merge(cs, n, offsetof(struct client, wait), 1);
	print_row("waits of a step for the GC", &w, 0);
	free(w.v);
	uh_stats t[2];
	uint64_t steps[2] = { 0, 0 };
	memset(t, 0, sizeof(t));
	for (int k = 0; k < 2; k++) {
		uh_stats zero;
		memset(&zero, 0, sizeof(zero));
		for (int i = 0; i < n; i++) {	/* threads */
			stats_sub(&t[k], &cs[i].st[k], &zero);
			steps[k] += cs[i].steps[k];
		}
	}
	double secs = (double)phase_ns[1] / 1e9;
	printf("\nwith cycles: %llu cycles done, %llu given up, %llu objects freed; mark %.1f ms "
	       "on average, %.1f ms at most; heapd's longest handshake wait %.3f ms\n",
	       (unsigned long long)g->cycles, (unsigned long long)g->given_up,
	       (unsigned long long)g->freed, g->cycles ? (double)g->mark_ns / g->cycles / 1e6 : 0,
	       (double)g->max_mark_ns / 1e6, (double)g->max_handshake_ns / 1e6);
	printf("clients, with cycles: %llu greys pushed, %llu skipped (pushed already), "
	       "%llu marks seen; waits for the "
	       "collector: %llu on a full ring, %llu pins on the sweep's lock, %.3f ms in all, "
	       "the longest %.3f ms (%.4f%% of the clients' time)\n",
	       (unsigned long long)t[1].gc_greys, (unsigned long long)t[1].gc_greys_skipped,
	       (unsigned long long)t[1].gc_cycles,
	       (unsigned long long)t[1].gc_busy_waits, (unsigned long long)t[1].gc_pin_waits,
	       (double)t[1].gc_wait_ns / 1e6, (double)t[1].gc_wait_max_ns / 1e6,
	       secs > 0 ? 100.0 * (double)t[1].gc_wait_ns / 1e9 / (secs * n) : 0);
	if (phase_ns[0] && phase_ns[1] && steps[0])
		printf("steps per s: %.0f without cycles, %.0f with; ratio %.3f\n",
		       (double)steps[0] * 1e9 / (double)phase_ns[0],
		       (double)steps[1] * 1e9 / (double)phase_ns[1],
		       ((double)steps[1] / (double)phase_ns[1]) /
		       ((double)steps[0] / (double)phase_ns[0]));
}

static int env_int(const char *name, int dflt)
{
	const char *s = getenv(name);
	return s && atoi(s) > 0 ? atoi(s) : dflt;
}

int main(void)
{
	int n = env_int("BENCH_GC_WAIT_THREADS", 2), secs = env_int("BENCH_GC_WAIT_SECS", 3);
	uint64_t live = (uint64_t)env_int("BENCH_GC_WAIT_LIVE", 500000);
	int pace = env_int("BENCH_GC_WAIT_PACE", 0);
	pace_ns = pace > 0 ? 1000000000u / (uint64_t)pace : 0;
	if (n > MAX_THREADS)
		n = MAX_THREADS;
	if (live < 2)
		live = 2;
	char args[160];
	snprintf(args, sizeof(args), "--size %lluM --gc-every off --gc-fill off",
		 (unsigned long long)gc_graph_heap_mib(live) + 256);
	if (th_heapd_start(&d, args) != 0) {
		fprintf(stderr, "%s: heapd (%s) did not start\n", PROG, args);
		return 1;
	}
	gc_graph_build(&d, PROG, live);
	printf("%d client threads%s, %d s per phase, phases: without cycles, with, without, "
	       "with\n", n, pace_ns ? " at a pace" : "", secs);
	if (pace_ns)
		printf("pace: a step every %llu us per thread\n",
		       (unsigned long long)pace_ns / 1000);
	static struct client cs[MAX_THREADS];
	struct gcloop g = { 0 };
	char gc_out[600];
	snprintf(gc_out, sizeof(gc_out), "%s/gc-loop.json", d.dir);
	for (int i = 0; i < n; i++) {
		cs[i].idx = i;
		for (int k = 0; k < 2; k++) {
			samples_alloc(&cs[i].commit[k]);
			samples_alloc(&cs[i].pin[k]);
			samples_alloc(&cs[i].wait[k]);
		}
		pthread_create(&cs[i].thread, NULL, client_main, &cs[i]);
	}
	th_sleep_ms(500);	/* the clients attach and make their heads */
	for (int p = 0; p < PHASES; p++) {	/* PHASES */
		uint64_t t0 = bench_now_ns();
		pid_t loop = p & 1 ? gc_loop_start(gc_out) : 0;
		phase = p;
		th_sleep_ms((unsigned)secs * 1000);
		if (loop)	/* the cycle in progress counts in this phase */
			gc_loop_stop(loop, gc_out, &g);
		phase_ns[p & 1] += bench_now_ns() - t0;
	}
	phase = PHASES;
	for (int i = 0; i < n; i++)
		pthread_join(cs[i].thread, NULL);
	report(cs, n, &g);
	th_heapd_cleanup(&d);
	return 0;
}
