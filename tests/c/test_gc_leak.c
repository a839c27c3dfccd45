/*
 * test_gc_leak.c -- heapd's online GC while clients run (FORMAT.md 9.3),
 * all on one 16 MiB heap, with the cycles a lease or an attach that finds
 * no space runs (each part's garbage fills arenas the next part needs:
 * the cycle gives them back, FORMAT.md 6.3):
 *   1. the leak loop (prog_gc_leaker: each block replaces the one node a
 *      root holds) runs for about 8 times what the heap holds, with
 *      `heapctl gc --wait` back to back meanwhile, and never meets a full
 *      heap nor a node other than the one it stored; the heap checks
 *      sound after it;
 *   2. the same loop in this process, pinning one replaced node in 5000
 *      (uh_pin): the pinned nodes survive the cycles with their content;
 *      after uh_unpin, two cycles free them (UH_EFREED);
 *   3. a leaker SIGKILLed at random moments while cycles run: the next
 *      cycle completes and the heap checks sound;
 *   4. heapd SIGKILLed while its collector is stopped in the mark, then in
 *      the sweep (UNIHEAP_GC_STOP_AT, after the first batch's valid bits
 *      are cleared and its locks are held): the restarted heapd finds
 *      every live object, the heap checks sound, and the garbage is gone
 *      after the next cycle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define SUITE "test_gc_leak"
#define LEAK_STEPS "500000"	/* 256-byte nodes: a 16 MiB heap holds ~60,000 */
#define PIN_STEPS 200000
#define PIN_EVERY 5000
#define LIVE 2000
#define GARBAGE 20000

static struct th_heapd d;
static char out[65536];

static int heap_check(const char *when)
{
	int rc = th_heapctl(&d, "check", out, sizeof(out));
	printf("heapctl check (%s) -> %d: %s", when, rc, out);
	return rc;
}

/* Run one cycle and wait; 0 if it was done (not given up). */
static int gc_wait(const char *when, uint64_t *freed)
{
	int rc = th_heapctl(&d, "--json gc --wait", out, sizeof(out));
	printf("gc --wait (%s) -> %d: %.400s\n", when, rc, out);
	if (freed)
		th_find_u64(out, "freed", freed);
	return rc == 0 && strstr(out, "\"outcome\":\"done\"") ? 0 : -1;
}

static int run_leaker(const char *steps, const char *syncdir, pid_t *pid)
{
	char *argv[] = { (char *)th_bin("prog_gc_leaker"), d.sock, (char *)steps,
			 (char *)syncdir, NULL };
	*pid = th_spawn(argv, NULL);
	return *pid > 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ */

/* The leaker runs while this process asks for cycles back to back. */
static void leak_loop(void)
{
	pid_t pid;
	int done = 0, given_up = 0, rc;
	TH_CHECK_EQ(run_leaker(LEAK_STEPS, NULL, &pid), 0);
	while ((rc = th_wait_exit_timeout(pid, 0)) == -2) {	/* until the leaker ends */
		int r = th_heapctl(&d, "--json gc --wait", out, sizeof(out));
		done += r == 0 && strstr(out, "\"outcome\":\"done\"") != NULL;
		given_up += r != 0;
	}
	TH_CHECK_EQ(rc, 0);
	printf("back-to-back cycles during the leak loop: %d done, %d given up\n", done,
	       given_up);
	TH_CHECK(done > 0);
	TH_CHECK_EQ(th_heapctl(&d, "status", out, sizeof(out)), 0);
	printf("%s", out);
	TH_CHECK(strstr(out, "last GC cycles") != NULL);
	TH_CHECK_EQ(gc_wait("after the leak loop", NULL), 0);
	TH_CHECK_EQ(heap_check("after the leak loop"), 0);
}

/* ------------------------------------------------------------------ */

struct pinned {
	uh_off ref;
	int64_t v;
	uint32_t pin;
};

struct pin_loop {
	uint32_t node_cls;
	uh_off holder;
	int64_t step;
};

static int pin_step(uh_heap *h, void *arg)
{
	struct pin_loop *l = arg;
	uh_off n;
	int rc = uh_alloc(h, l->node_cls, &n);
	if (!rc)
		rc = uh_set_i64(h, n, 0, l->step);
	if (!rc)
		rc = uh_set_ref(h, l->holder, 0, n);
	return rc;
}

static void pins_survive(void)
{
	static const uh_field_spec hf[] = { { "cur", UH_T_REF, 0 } };
	static const uh_field_spec nf[] = { { "v", UH_T_I64, 0 }, { "a", UH_T_I64, 0 },
					    { "b", UH_T_I64, 0 }, { "c", UH_T_I64, 0 } };
	static struct pinned p[PIN_STEPS / PIN_EVERY];
	struct pin_loop l = { 0 };
	uint32_t hcls, np = 0;
	uh_heap *h;
	if (th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"connect");
		return;
	}
	TH_CHECK_RC(uh_class_register(h, "GcPinHolder", hf, 1, &hcls));
	TH_CHECK_RC(uh_class_register(h, "GcPinNode", nf, 4, &l.node_cls));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_alloc(h, hcls, &l.holder));
	TH_CHECK_RC(uh_root_set(h, "pins.holder", l.holder));
	TH_CHECK_RC(uh_commit(h));
	int rc = 0;
	for (l.step = 1; l.step <= PIN_STEPS && !rc; l.step++) {	/* PIN_STEPS blocks */
		if ((rc = uh_run(h, pin_step, &l, 0)))
			break;
		if (l.step % PIN_EVERY || l.step == PIN_STEPS)
			continue;
		/* The node just stored; the next step makes it garbage. */
		TH_CHECK_RC(uh_get_ref(h, l.holder, 0, &p[np].ref));
		p[np].v = l.step;
		if ((rc = uh_pin(h, p[np].ref, &p[np].pin)) == 0)
			np++;
	}
	TH_CHECK_RC(rc);
	TH_CHECK_EQ(gc_wait("pins held", NULL), 0);
	uint32_t ok = 0;
	for (uint32_t i = 0; i < np; i++) {	/* every pinned node, as it was */
		int64_t v = -1;
		ok += uh_get_i64(h, p[i].ref, 0, &v) == 0 && v == p[i].v;
	}
	TH_CHECK_EQ(ok, np);
	printf("%u pinned nodes intact after the loop and a cycle\n", ok);
	for (uint32_t i = 0; i < np; i++)
		TH_CHECK_RC(uh_unpin(h, p[i].pin));
	TH_CHECK_EQ(gc_wait("unpinned, 1", NULL), 0);
	TH_CHECK_EQ(gc_wait("unpinned, 2", NULL), 0);
	uint32_t freed = 0;
	for (uint32_t i = 0; i < np; i++) {
		int64_t v;
		freed += uh_get_i64(h, p[i].ref, 0, &v) == UH_EFREED;
	}
	TH_CHECK_EQ(freed, np);
	uint64_t objs = 0;
	TH_CHECK_RC(uh_heap_check(h, &objs));
	uh_disconnect(h);
}

/* ------------------------------------------------------------------ */

static void client_killed(void)
{
	uint64_t seed = 0x2545f4914f6cdd1dull ^ (uint64_t)getpid();
	for (int k = 0; k < 3; k++) {
		char dir[700];
		snprintf(dir, sizeof(dir), "%s/kill%d", d.dir, k);
		TH_CHECK_EQ(mkdir(dir, 0700), 0);
		pid_t pid;
		TH_CHECK_EQ(run_leaker("0", dir, &pid), 0);
		TH_CHECK_EQ(th_wait_file(dir, "leaker.ready", 60000), 0);
		th_sleep_ms(50 + (unsigned)(th_xorshift64(&seed) % 400));
		TH_CHECK_EQ(th_kill(pid), 128 + 9);
	}
	th_sleep_ms(300);	/* heapd reaps the last one */
	TH_CHECK_EQ(gc_wait("after killed clients", NULL), 0);
	TH_CHECK_EQ(heap_check("after killed clients"), 0);
}

/* ------------------------------------------------------------------ */

struct graph {
	uint32_t cls;
	int garbage;
};

static int graph_fn(uh_heap *h, void *arg)
{
	struct graph *g = arg;
	uh_off head = 0, n;
	int rc = 0;
	for (int i = LIVE - 1; i >= 0 && !rc; i--) {
		if (!(rc = uh_alloc(h, g->cls, &n)) && !(rc = uh_set_i64(h, n, 0, i)) &&
		    !(rc = uh_set_ref(h, n, 1, head)))
			head = n;
	}
	if (!rc)
		rc = uh_root_set(h, "kill.list", head);
	for (int i = 0; i < g->garbage && !rc; i++)
		rc = uh_alloc(h, g->cls, &n);
	return rc;
}

static void check_graph(uh_heap *h)
{
	uh_off n = 0;
	int i = 0;
	TH_CHECK_RC(uh_root_get(h, "kill.list", &n));
	for (; n && i <= LIVE; i++) {	/* the list, in order */
		int64_t v = -1;
		if (uh_get_i64(h, n, 0, &v) || v != i || uh_get_ref(h, n, 1, &n))
			break;
	}
	TH_CHECK_EQ(i, LIVE);
}

static int log_has(const char *what)
{
	FILE *f = fopen(d.log, "r");
	static char buf[1 << 20];
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	return strstr(buf, what) != NULL;
}

static void heapd_killed(const char *step)
{
	static const uh_field_spec f[] = { { "v", UH_T_I64, 0 }, { "next", UH_T_REF, 0 } };
	char marker[64];
	uh_heap *h;
	struct graph g = { 0, GARBAGE };
	printf("--- heapd SIGKILLed with its collector stopped in the %s\n", step);
	th_heapd_stop(&d);
	setenv("UNIHEAP_GC_STOP_AT", step, 1);
	TH_CHECK_EQ(th_heapd_start(&d, "--gc-every off --gc-fill off"), 0);
	unsetenv("UNIHEAP_GC_STOP_AT");
	TH_CHECK_EQ(th_connect(&d, 0, &h), 0);
	TH_CHECK_RC(uh_class_register(h, "GcKillNode", f, 2, &g.cls));
	TH_CHECK_RC(uh_run(h, graph_fn, &g, 0));
	uh_disconnect(h);
	TH_CHECK_EQ(th_heapctl(&d, "gc", out, sizeof(out)), 0);
	snprintf(marker, sizeof(marker), "event=gc_stopped_at step=%s", step);
	for (int i = 0; i < 1000 && !log_has(marker); i++)	/* <= 10 s */
		th_sleep_ms(10);
	TH_CHECK(log_has(marker));
	th_heapd_kill(&d);
	TH_CHECK_EQ(th_heapd_start(&d, "--gc-every off --gc-fill off"), 0);
	TH_CHECK_EQ(th_connect(&d, 0, &h), 0);
	check_graph(h);
	uint64_t objs = 0, freed = 0;
	TH_CHECK_RC(uh_heap_check(h, &objs));
	uh_disconnect(h);
	TH_CHECK_EQ(heap_check(step), 0);
	TH_CHECK_EQ(gc_wait("after the restart", &freed), 0);
	TH_CHECK_EQ(th_connect(&d, 0, &h), 0);
	check_graph(h);
	TH_CHECK_RC(uh_root_del(h, "kill.list"));
	uh_disconnect(h);
	TH_CHECK_EQ(gc_wait("the list dropped", &freed), 0);
	TH_CHECK(freed >= LIVE);
}

/* All parts on one heap: the garbage each leaves fills arenas that the
 * next one's lease (another slot size for heapd_killed's nodes) or
 * session log needs; the cycle that lease or attach runs gives them back
 * (FORMAT.md 6.3). */
int main(void)
{
	if (th_heapd_start(&d, "--size 16M") != 0) {
		TH_CHECK(!"heapd start");
		return th_summary(SUITE);
	}
	leak_loop();
	pins_survive();
	client_killed();
	heapd_killed("mark");
	heapd_killed("sweep");
	if (th_failed)
		th_heapd_log_tail(&d, 4000);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
